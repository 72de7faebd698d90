"""Upside-Down Pyramid end to end over HTTP, for real money: an operator deals each game from a
known two-deck deck or a seed (certification mode) for a funded player, who plays it through the
actions route and collects. After every game the wallet holds exactly what the paytable says;
at the end the ledger and the betting history tell the same story, and every game replays and
verifies with every check passing."""

from __future__ import annotations

from service.games.upside_down_pyramid import POSITIONS
from tests import builders
from tests.api.client import assert_salted_commitment
from tests.api.play import legal, move, pile, refused, winnings
from tests.api.real_money import Session, check_books

RANKS = "A23456789TJQK"
GAME = "upside-down-pyramid"
HEIGHTS = (1, 3, 5, 7, 9, 10, 8, 6, 4, 2)
TABLEAU_CARDS = 55


def deal_order(columns: dict[int, list[str]], stock: list[str]) -> list[str]:
    """The 104-card deck that deals ``columns`` (their top cards, bottom first) and then the
    stock (its first card drawn first); every other position takes the remaining cards in
    canonical order. Each code is in it exactly twice."""
    placed: dict[int, str] = {}
    for c, cards in columns.items():
        for k, card in enumerate(reversed(cards)):
            placed[POSITIONS[c][-1 - k]] = card
    placed |= {TABLEAU_CARDS + i: card for i, card in enumerate(stock)}
    return list(builders.deck_with(placed, 2))


#: The 104 cards in the order the foundations take them: rank by rank, each suit twice.
NEEDED = [r + s for r in RANKS for s in "SHDCSHDC"]


def winning_deck() -> list[str]:
    """Ace to 6 and one 7 (49 cards) in the stock, each draw of three holding the next three
    cards the foundations need, the one needed first drawn last (so it lies on top); the other
    7s to Kings in the columns, the cards needed first nearest the top: every column's cards
    rise in rank from its top card down."""
    stock: list[str] = []
    for k in range(0, 48, 3):
        stock += reversed(NEEDED[k : k + 3])
    stock.append(NEEDED[48])
    # Slots by depth under the top, then column: the shallowest slots take the lowest cards.
    slots = sorted((depth, c) for c, height in enumerate(HEIGHTS) for depth in range(height))
    columns: dict[int, list[str]] = {c: [""] * h for c, h in enumerate(HEIGHTS)}
    for card, (depth, c) in zip(NEEDED[49:], slots, strict=True):
        columns[c][HEIGHTS[c] - 1 - depth] = card
    return deal_order(columns, stock)


def test_the_deal_shows_ten_face_up_columns_and_a_face_down_stock(session: Session) -> None:
    deck = winning_deck()
    game, view = session.deal(GAME, 104, deck=deck)
    assert_salted_commitment(view, deck)
    for c, positions in enumerate(POSITIONS):
        assert pile(view, f"tableau:{c}") == {
            "id": f"tableau:{c}",
            "kind": "tableau",
            "count": HEIGHTS[c],
            "face_down": 0,
            "cards": [deck[i] for i in positions],
        }
    stock = pile(view, "stock")
    assert (stock["count"], stock["face_down"], stock["cards"]) == (49, 49, [])
    assert (view["stock_count"], view["passes_left"], view["waste"]) == (49, 3, [])
    assert view["counters"] == {"stock": 49, "passes_left": 3}
    assert [p["id"] for p in view["piles"] if p["kind"] == "foundation"] == [
        f"foundation:{n}" for n in range(8)
    ]
    session.collect(game, GAME, 104, 0)
    check_books(session, [(game, GAME, 104, 0)])


def test_three_upside_down_pyramid_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token

    # 1. A deck won outright: each draw of three played up card by card, then the columns.
    deck = winning_deck()
    first, view = session.deal(GAME, 520, deck=deck)
    units = 0
    for k in range(17):  # 16 draws of three, then the last card alone
        view = session.play(first, action="draw")
        fan = NEEDED[3 * k : 3 * k + 3][::-1] if k < 16 else [NEEDED[48]]
        assert view["waste"] == fan  # the latest draw fans, the first one drawn deepest
        for _ in fan:
            view = session.play(first, **move("waste", "foundation"))
            units += 1
            assert (view["units"], view["can_undo"]) == (units, True)
        if k == 0:
            view = session.play(first, action="undo")  # the last move comes back
            assert (view["units"], view["waste"]) == (2, [NEEDED[2]])
            refused(http, token, first, {"action": "undo"}, "undo-not-allowed")  # single level
            view = session.play(first, **move("waste", "foundation"))
    assert (view["stock_count"], view["waste_count"], units) == (0, 0, 49)
    assert legal(view, "draw") == legal(view, "recycle") == []
    while view["status"] == "in_progress":
        up = [m for m in legal(view, "move") if m["to"].startswith("foundation")]
        view = session.play(first, **up[0])
    assert (view["units"], view["winnings"]) == (104, winnings(GAME, 104, 520))
    assert [pile(view, f"foundation:{n}")["count"] for n in range(8)] == [13] * 8
    refused(http, token, first, {"action": "draw"}, "game-complete")
    done = session.collect(first, GAME, 520, 104)
    assert done["revealed_deck"] == deck

    # 2. Runs never split; an empty column takes a King-headed run; three passes.
    columns = {
        0: ["AS"],
        1: ["TD"],
        2: ["KD", "QC", "JH"],
        3: ["4D", "9S", "8H", "7C"],
        4: ["5S", "8D"],
    }
    second, view = session.deal(GAME, 1_040, deck=deal_order(columns, ["2C", "3C", "2S"]))
    refused(http, token, second, move("tableau:3", "tableau:4", 1), "cannot-split-run")
    refused(http, token, second, move("tableau:3", "tableau:1", 2), "cannot-split-run")
    refused(http, token, second, move("tableau:3", "tableau:1", 4), "invalid-count")
    refused(http, token, second, move("tableau:2", "tableau:4"), "not-one-rank-lower")
    view = session.play(second, **move("tableau:0", "foundation"))
    assert (view["units"], pile(view, "foundation:0")["cards"]) == (1, ["AS"])
    refused(http, token, second, move("foundation:0", "tableau:0"), "invalid-source")
    refused(http, token, second, move("tableau:3", "tableau:0"), "only-king-to-empty-column")
    view = session.play(second, **move("tableau:3", "tableau:1"))  # the whole run of three
    assert pile(view, "tableau:1")["cards"][-4:] == ["TD", "9S", "8H", "7C"]
    assert pile(view, "tableau:3")["cards"][-1] == "4D"
    view = session.play(second, action="undo")
    assert pile(view, "tableau:3")["cards"][-4:] == ["4D", "9S", "8H", "7C"]
    view = session.play(second, **move("tableau:3", "tableau:1", 3))
    view = session.play(second, **move("tableau:2", "tableau:0", 3))  # K-headed run: empty col
    assert pile(view, "tableau:0")["cards"] == ["KD", "QC", "JH"]
    view = session.play(second, action="draw")
    assert view["waste"] == ["2C", "3C", "2S"]
    refused(http, token, second, {"action": "undo"}, "undo-not-allowed")  # a draw shows cards
    refused(http, token, second, move("waste", "foundation:0", 2), "invalid-count")
    view = session.play(second, **move("waste", "foundation:0"))
    assert (view["units"], view["waste"]) == (2, ["2C", "3C"])
    refused(http, token, second, {"action": "recycle"}, "stock-not-empty")
    refused(http, token, second, {"action": "turn", "pile": "tableau:0"}, "action-not-allowed")
    for passes_left in (3, 2, 1):
        while view["stock_count"]:
            view = session.play(second, action="draw")
        assert view["passes_left"] == passes_left
        if passes_left > 1:
            view = session.play(second, action="recycle")
            assert (view["stock_count"], view["waste_count"]) == (48, 0)
            refused(http, token, second, {"action": "undo"}, "undo-not-allowed")
    refused(http, token, second, {"action": "recycle"}, "no-passes-left")
    refused(http, token, second, {"action": "draw"}, "stock-empty")
    session.collect(second, GAME, 1_040, 2)

    # 3. A seeded deal played greedily: every foundation move, else a draw, else a recycle.
    third, view = session.deal(GAME, 208, seed="55" * 32)
    while True:
        up = [m for m in legal(view, "move") if m["to"].startswith("foundation")]
        if up:
            view = session.play(third, **up[0])
        elif legal(view, "draw"):
            view = session.play(third, action="draw")
        elif legal(view, "recycle"):
            view = session.play(third, action="recycle")
        else:
            break
    assert (view["stock_count"], view["passes_left"]) == (0, 1)
    units = view["units"]
    assert units == sum(pile(view, f"foundation:{n}")["count"] for n in range(8)) == 3
    assert view["winnings"] == winnings(GAME, units, 208)
    done = session.collect(third, GAME, 208, units)
    assert done["server_seed"] == "55" * 32

    check_books(
        session,
        [(first, GAME, 520, 104), (second, GAME, 1_040, 2), (third, GAME, 208, units)],
    )
