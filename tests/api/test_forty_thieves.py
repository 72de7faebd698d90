"""Forty Thieves end to end over HTTP, for real money: an operator deals each game from a known
two-deck deck or a seed (certification mode) for a funded player, who plays it through the
actions route (the stock's face-up top card moved by name) and collects. After every game the
wallet holds exactly what the paytable says; at the end the ledger and the betting history tell
the same story, and every game replays and verifies with every check passing."""

from __future__ import annotations

from tests import builders
from tests.api.client import assert_salted_commitment
from tests.api.play import legal, move, pile, refused, winnings
from tests.api.real_money import Session, check_books

RANKS = "A23456789TJQK"
GAME = "forty-thieves"


def deal_order(columns: dict[int, list[str]], stock: list[str]) -> list[str]:
    """The 104-card deck that deals ``columns`` (column c bottom first, 4 cards) and then the
    stock (its first card on top); every other position takes the remaining cards in canonical
    order. Each code is in it exactly twice."""
    placed = {row * 10 + c: card for c, cards in columns.items() for row, card in enumerate(cards)}
    placed |= {40 + i: card for i, card in enumerate(stock)}
    return list(builders.deck_with(placed, 2))


#: The 104 cards in the order the foundations take them: rank by rank, spades, hearts,
#: diamonds, clubs, twice (the "foundation" destination fills foundation:0..7 in that order).
NEEDED = [r + s for r in RANKS for s in "SHDCSHDC"]


def winning_deck() -> list[str]:
    """Ace to 8 (64 cards) in the stock in the order the foundations need them; 9 to King in
    the columns, the top row needed first, then the row under it, and so on."""
    columns = {c: [NEEDED[64 + 10 * (3 - row) + c] for row in range(4)] for c in range(10)}
    return deal_order(columns, NEEDED[:64])


def test_three_forty_thieves_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token

    # 1. A deck won outright: the stock's top card up each time, then the columns row by row.
    deck = winning_deck()
    first, view = session.deal(GAME, 520, deck=deck)
    assert_salted_commitment(view, deck)
    for c in range(10):  # 10 columns of 4 face-up cards, dealt row by row
        assert pile(view, f"tableau:{c}") == {
            "id": f"tableau:{c}",
            "kind": "tableau",
            "count": 4,
            "face_down": 0,
            "cards": [deck[c], deck[10 + c], deck[20 + c], deck[30 + c]],
        }
    stock = pile(view, "stock")
    assert (stock["count"], stock["face_down"], stock["cards"]) == (64, 63, [deck[40]])
    assert view["stock_count"] == 64
    assert {"action": "move", "from": "stock", "to": "foundation:0", "count": 1} in legal(
        view, "move"
    )
    for n in range(64):
        view = session.play(first, **move("stock", "foundation"))
        assert view["units"] == n + 1
        # each one turned the next stock card, but the last: that one may be taken back
        assert view["can_undo"] is (n == 63)
    assert (view["stock_count"], legal(view, "draw")) == (0, [])
    assert view["foundations"] == ["8S", "8H", "8D", "8C"] * 2  # two foundations per suit
    assert pile(view, "foundation:4")["cards"] == [f"{r}S" for r in RANKS[:8]]
    view = session.play(first, **move("tableau:0", "foundation", 1))
    assert (view["units"], view["can_undo"]) == (65, True)
    view = session.play(first, action="undo")
    assert (view["units"], pile(view, "tableau:0")["count"]) == (64, 4)
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")  # single level
    for _row in range(4):
        for c in range(10):
            view = session.play(first, **move(f"tableau:{c}", "foundation", 1))
    assert (view["status"], view["units"], view["winnings"]) == (
        "complete",
        104,
        winnings(GAME, 104, 520),
    )
    refused(http, token, first, {"action": "draw"}, "game-complete")
    done = session.collect(first, GAME, 520, 104)
    assert done["revealed_deck"] == deck

    # 2. Runs: to a foundation as one group, lowest card first, and between columns.
    columns = {
        0: ["5H", "4H", "3H", "2H"],
        1: ["QD", "TD", "8S", "7S"],
        2: ["JC", "KC", "2D", "9S"],
        3: ["KS", "QS", "9D", "8D"],
    }
    second, view = session.deal(GAME, 1_040, deck=deal_order(columns, ["AH", "6C", "4S"]))
    view = session.play(second, **move("stock", "foundation:0"))
    assert pile(view, "stock")["cards"] == ["6C"]  # the next stock card turned face up
    refused(http, token, second, move("tableau:0", "foundation:0", 5), "invalid-count")
    view = session.play(second, **move("tableau:0", "foundation:0"))
    assert pile(view, "foundation:0")["cards"] == ["AH", "2H", "3H", "4H", "5H"]
    assert (pile(view, "tableau:0")["count"], view["units"]) == (0, 5)
    refused(http, token, second, move("foundation:0", "tableau:0"), "invalid-source")
    refused(http, token, second, move("tableau:1", "tableau:2", 3), "not-a-run")
    refused(http, token, second, move("tableau:1", "tableau:3", 1), "not-same-suit")
    view = session.play(second, **move("tableau:1", "tableau:2"))
    assert pile(view, "tableau:2")["cards"] == ["JC", "KC", "2D", "9S", "8S", "7S"]
    assert view["can_undo"] is True
    view = session.play(second, action="undo")
    assert pile(view, "tableau:1")["cards"] == ["QD", "TD", "8S", "7S"]
    view = session.play(second, **move("tableau:1", "tableau:2", 2))
    assert pile(view, "tableau:1")["cards"] == ["QD", "TD"]
    view = session.play(second, **move("stock", "tableau:0"))  # an empty column takes any card
    assert pile(view, "tableau:0")["cards"] == ["6C"]
    assert pile(view, "stock")["cards"] == ["4S"]
    view = session.play(second, action="draw")
    assert (view["waste"], view["waste_count"], view["stock_count"]) == (["4S"], 1, 61)
    refused(http, token, second, {"action": "undo"}, "undo-not-allowed")  # a draw shows a card
    refused(http, token, second, {"action": "recycle"}, "action-not-allowed")
    session.collect(second, GAME, 1_040, 5)

    # 3. A seeded deal played greedily: every foundation move, else a draw, to the end.
    third, view = session.deal(GAME, 208, seed="55" * 32)
    draws = from_stock = from_waste = 0
    while True:
        up = [m for m in legal(view, "move") if m["to"].startswith("foundation")]
        if up:
            view = session.play(third, **up[0])
            from_stock += up[0]["from"] == "stock"
            from_waste += up[0]["from"] == "waste"
        elif legal(view, "draw"):
            view = session.play(third, action="draw")
            draws += 1
        else:
            break
    assert (draws + from_stock, view["stock_count"]) == (64, 0)  # one pass: each card once
    assert view["waste_count"] == draws - from_waste
    refused(http, token, third, {"action": "draw"}, "stock-empty")
    units = view["units"]
    assert units == sum(pile(view, f"foundation:{f}")["count"] for f in range(8))
    assert view["winnings"] == winnings(GAME, units, 208)
    done = session.collect(third, GAME, 208, units)
    assert done["server_seed"] == "55" * 32

    check_books(
        session,
        [(first, GAME, 520, 104), (second, GAME, 1_040, 5), (third, GAME, 208, units)],
    )
