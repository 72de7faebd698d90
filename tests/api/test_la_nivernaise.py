"""La Nivernaise end to end over HTTP, for real money: an operator deals each game from a known
two-deck deck or a seed (certification mode) for a funded player, who plays it through the
actions route (Deals, moves to the flanks and the foundations, redeals) and collects. After every
game the wallet holds exactly what the paytable says; at the end the ledger and the betting
history tell the same story, and every game replays and verifies with every check passing."""

from __future__ import annotations

from typing import Any

from service.core import shuffle
from tests.api.client import assert_salted_commitment
from tests.api.play import assert_none_of, legal, move, pile, refused, winnings
from tests.api.real_money import Session, check_books
from tests.unit.games.test_la_nivernaise import NEEDED, deck_of, winning_deck

GAME = "la-nivernaise"
LINE = [f"line:{c}" for c in range(6)]


def line_counts(view: dict[str, Any]) -> list[int]:
    return [pile(view, p)["count"] for p in LINE]


def units_seen(view: dict[str, Any]) -> int:
    return sum(pile(view, f"foundation:{f}")["count"] for f in range(8))


def test_four_la_nivernaise_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token

    # 1. A deck won outright: the flanks up, then line:0 cleared and refilled 18 times, then
    #    the rest of the Line, top card first.
    deck = list(winning_deck())
    first, view = session.deal(GAME, 520, deck=deck)
    assert_salted_commitment(view, deck)
    assert pile(view, "flank:0") == {
        "id": "flank:0",
        "kind": "flank",
        "count": 1,
        "face_down": 0,
        "cards": ["AS"],
    }
    assert [pile(view, f"flank:{i}")["cards"] for i in range(8)] == [[c] for c in deck[:8]]
    for c in range(6):  # the Line: 6 columns of 4 face-up cards, dealt row by row
        assert pile(view, f"line:{c}") == {
            "id": f"line:{c}",
            "kind": "tableau",
            "count": 4,
            "face_down": 0,
            "cards": [deck[8 + c], deck[14 + c], deck[20 + c], deck[26 + c]],
        }
    stock = pile(view, "stock")
    assert (stock["count"], stock["face_down"], stock["cards"]) == (72, 72, [])
    assert (view["stock_count"], view["counters"]["passes_left"]) == (72, 3)
    assert_none_of(set(deck[32:]) - set(deck[:32]), view, "the deal")
    refused(http, token, first, move("flank:1", "flank:2"), "invalid-destination")
    refused(http, token, first, move("line:0", "flank:1"), "invalid-destination")  # occupied
    refused(http, token, first, move("line:0", "line:1"), "invalid-destination")
    refused(http, token, first, {"action": "redeal"}, "stock-not-empty")
    for n, f in enumerate(f"flank:{i}" for i in range(8)):
        view = session.play(first, **move(f, "foundation"))
        assert view["units"] == n + 1
    assert view["foundations"] == NEEDED[:8]  # Aces up on 0-3, Kings down on 4-7
    view = session.play(first, **move("line:0", "flank:5"))  # a move that dealt nothing
    assert (view["can_undo"], pile(view, "flank:5")["cards"]) == (True, [NEEDED[8]])
    view = session.play(first, action="undo")
    assert (pile(view, "flank:5")["count"], line_counts(view)) == (0, [4] * 6)
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")  # single level
    for _ in range(4):
        view = session.play(first, **move("line:0", "foundation"))
    # the fourth emptied line:0, and the refill dealt it the stock's next four at once
    assert (view["units"], view["stock_count"], line_counts(view)) == (12, 68, [4] * 6)
    assert pile(view, "line:0")["cards"] == deck[32:36]
    assert view["can_undo"] is False  # the refill showed new cards
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")
    for _ in range(72):
        view = session.play(first, **move("line:0", "foundation"))
    assert (view["stock_count"], line_counts(view)) == (0, [0, 4, 4, 4, 4, 4])
    for line in LINE[1:]:
        for _ in range(4):
            view = session.play(first, **move(line, "foundation"))
    assert (view["status"], view["units"], view["winnings"]) == (
        "complete",
        104,
        winnings(GAME, 104, 520),
    )
    refused(http, token, first, {"action": "draw"}, "game-complete")
    done = session.collect(first, GAME, 520, 104)
    assert done["revealed_deck"] == deck

    # 2. The foundations' rules and the flanks: each suit one up foundation and one down.
    second_deck = list(
        deck_of(
            flanks=["2S", "AD", "KD", "9C", "5H", "6H", "QS"],
            line={0: ["AD", "KD", "3D", "2D"], 1: ["4C", "4C", "TC", "JD"]},
        )
    )
    second, view = session.deal(GAME, 1_040, deck=second_deck)
    view = session.play(second, **move("flank:0", "foundation"))  # AS up on foundation:0
    view = session.play(second, **move("flank:1", "foundation"))  # 2S on it
    view = session.play(second, **move("flank:2", "foundation:2"))  # AD up on foundation:2
    refused(http, token, second, move("flank:3", "foundation:1"), "foundation-needs-ace")
    refused(http, token, second, move("flank:4", "foundation:4"), "foundation-needs-king")
    refused(http, token, second, move("flank:4", "foundation:0"), "foundation-wrong-suit")
    view = session.play(second, **move("flank:3", "foundation:6"))  # KD down on foundation:6
    view = session.play(second, **move("line:0", "foundation:2"))  # 2D up
    view = session.play(second, **move("line:0", "foundation"))  # 3D up
    assert pile(view, "foundation:2")["cards"] == ["AD", "2D", "3D"]
    # the second King of diamonds cannot start another down foundation, nor the Ace an up one
    refused(http, token, second, move("line:0", "foundation:7"), "foundation-suit-taken")
    refused(http, token, second, move("line:0", "foundation"), "no-foundation-fits")
    refused(http, token, second, move("flank:2", "foundation:6"), "source-empty")
    refused(http, token, second, move("foundation:2", "flank:1"), "invalid-source")
    refused(http, token, second, move("line:1", "flank:1", 2), "invalid-count")
    refused(http, token, second, move("line:0", "foundation:6"), "foundation-wrong-rank")
    view = session.play(second, **move("line:1", "flank:1"))  # JD to a freed flank
    assert (pile(view, "flank:1")["cards"], pile(view, "line:1")["cards"][-1]) == (["JD"], "TC")
    refused(http, token, second, move("line:1", "flank:1"), "invalid-destination")
    assert view["units"] == 6
    session.collect(second, GAME, 1_040, 6)

    # 3. A seeded deal dealt out and redealt twice without a move: nothing won, nothing paid.
    seed = "66" * 32
    third, view = session.deal(GAME, 208, seed=seed)
    dealt = shuffle.derive_deck(bytes.fromhex(seed), None, 2)
    for left in (3, 2, 1):
        for stock_count in (48, 24, 0):
            before = line_counts(view)
            view = session.play(third, action="draw")  # 4 cards onto each Line column
            assert view["stock_count"] == stock_count
            assert line_counts(view) == [n + 4 for n in before]
            assert view["can_undo"] is False
        refused(http, token, third, {"action": "draw"}, "stock-empty")
        assert view["counters"]["passes_left"] == left
        if left == 1:
            break
        view = session.play(third, action="redeal")
        # the 96 Line cards became the stock; the refill dealt 4 onto each column again
        assert (view["stock_count"], line_counts(view)) == (72, [4] * 6)
        assert view["counters"]["passes_left"] == left - 1
        refused(http, token, third, {"action": "undo"}, "undo-not-allowed")
        refused(http, token, third, {"action": "redeal"}, "stock-not-empty")
    refused(http, token, third, {"action": "redeal"}, "no-passes-left")
    first_ace = dealt.index("AS")
    rest = dealt[:first_ace] + dealt[first_ace + 1 :]
    flanks = [pile(view, f"flank:{i}")["cards"] for i in range(8)]
    assert flanks == [["AS"], *([card] for card in rest[:7])]  # the redeals left them be
    session.collect(third, GAME, 208, 0)

    # 4. A seeded deal played greedily: every foundation move, else a Deal, else a redeal.
    fourth, view = session.deal(GAME, 520, seed="77" * 32)
    redeals = 0
    while True:
        up = [m for m in legal(view, "move") if m["to"].startswith("foundation")]
        if up:
            view = session.play(fourth, **up[0])
        elif legal(view, "draw"):
            view = session.play(fourth, action="draw")
        elif legal(view, "redeal"):
            view = session.play(fourth, action="redeal")
            redeals += 1
        else:
            break
    assert (redeals, view["stock_count"], view["counters"]["passes_left"]) == (2, 0, 1)
    units = view["units"]
    assert units == units_seen(view) > 0
    assert view["winnings"] == winnings(GAME, units, 520)
    done = session.collect(fourth, GAME, 520, units)
    assert done["server_seed"] == "77" * 32

    check_books(
        session,
        [
            (first, GAME, 520, 104),
            (second, GAME, 1_040, 6),
            (third, GAME, 208, 0),
            (fourth, GAME, 520, units),
        ],
    )
