"""Salic Law end to end over HTTP, for real money: an operator deals each game from a known
two-deck deck or a seed (certification mode) for a funded player, who plays it through the
actions route and collects. After every game the wallet holds exactly what the paytable says; at
the end the ledger and the betting history tell the same story, and every game replays and
verifies with every check passing."""

from __future__ import annotations

from typing import Any

from service.core import shuffle
from tests.api.client import assert_salted_commitment
from tests.api.play import legal, move, pile, refused, winnings
from tests.api.real_money import Session, check_books
from tests.unit.games.test_salic_law import spaces_deck, winning_deck

GAME = "salic-law"
TABLEAU = [f"tableau:{c}" for c in range(8)]


def hand_order(deck: list[str]) -> list[str]:
    """The hand, next card first: the deck less its Queens and its first King of spades."""
    first_king = deck.index("KS")
    return [c for i, c in enumerate(deck) if i != first_king and c[0] != "Q"]


def to_foundations(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in legal(view, "move") if m["to"].startswith("foundation")]


def test_four_salic_law_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token

    # 1. Every card drawn goes straight up, Ace to Jack eight times: a full win.
    deck = list(winning_deck())
    first, view = session.deal(GAME, 520, deck=deck)
    assert_salted_commitment(view, deck)
    assert pile(view, "queens") == {
        "id": "queens",
        "kind": "discard",
        "count": 8,
        "face_down": 0,
        "cards": [c for c in deck if c[0] == "Q"],  # set aside face up, in deck order
    }
    assert pile(view, "tableau:0")["cards"] == ["KS"]
    hand = pile(view, "hand")
    assert (hand["kind"], hand["count"], hand["face_down"], hand["cards"]) == ("stock", 95, 95, [])
    assert (view["stock_count"], legal(view, "move")) == (95, [])
    view = session.play(first, action="draw")
    assert (pile(view, "tableau:0")["cards"], view["can_undo"]) == (["KS", "AS"], False)
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")  # a draw shows a card
    assert len(to_foundations(view)) == 8  # an Ace starts any empty foundation
    view = session.play(first, **move("tableau:0", "foundation"))
    assert (view["units"], view["can_undo"], view["foundations"][0]) == (1, True, "AS")
    view = session.play(first, action="undo")
    assert (view["units"], pile(view, "tableau:0")["cards"]) == (0, ["KS", "AS"])
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")  # single level
    view = session.play(first, **move("tableau:0", "foundation:0", 1))
    for n in range(87):
        session.play(first, action="draw")
        view = session.play(first, **move("tableau:0", "foundation"))
        assert view["units"] == n + 2
    assert (view["status"], view["units"], view["winnings"]) == (
        "complete",
        88,
        winnings(GAME, 88, 520),
    )
    assert view["foundations"] == ["JS", "JH", "JD", "JC"] * 2  # regardless of suit, to Jack
    assert view["stock_count"] == 7  # the other Kings never had to come
    refused(http, token, first, {"action": "draw"}, "game-complete")
    done = session.collect(first, GAME, 520, 88)
    assert done["revealed_deck"] == deck

    # 2. Kings start columns; with the hand out, a column holding only its King is a space.
    deck = list(spaces_deck())
    second, view = session.deal(GAME, 1_040, deck=deck)
    for _ in range(80):  # 2 to Jack, all onto column 0
        view = session.play(second, action="draw")
    view = session.play(second, action="draw")  # a King: column 1
    assert pile(view, "tableau:1")["cards"] == ["KH"]
    refused(http, token, second, move("tableau:0", "tableau:1"), "stock-not-empty")
    refused(http, token, second, move("tableau:1", "foundation:0"), "king-never-moves")
    refused(http, token, second, move("tableau:0", "foundation:0"), "foundation-needs-ace")
    refused(http, token, second, move("tableau:0", "foundation:0", 2), "invalid-count")
    refused(http, token, second, move("queens", "tableau:0"), "invalid-source")
    refused(http, token, second, move("foundation:0", "tableau:0"), "invalid-source")
    refused(http, token, second, move("tableau:0", "queens"), "invalid-destination")
    refused(http, token, second, {"action": "recycle"}, "action-not-allowed")
    for _ in range(6):
        view = session.play(second, action="draw")
    for _ in range(8):  # the Aces come onto the last column and go straight up
        view = session.play(second, action="draw")
        assert pile(view, "tableau:7")["cards"][-1][0] == "A"
        view = session.play(second, **move("tableau:7", "foundation"))
    assert (view["stock_count"], view["units"], legal(view, "draw")) == (0, 8, [])
    refused(http, token, second, {"action": "draw"}, "stock-empty")
    assert [pile(view, t)["count"] for t in TABLEAU] == [81, 1, 1, 1, 1, 1, 1, 1]
    assert pile(view, "tableau:0")["cards"][-1] == "5S"  # over the 2s
    assert [m["to"] for m in legal(view, "move")] == TABLEAU[1:]  # into any space
    view = session.play(second, **move("tableau:0", "tableau:1"))
    assert pile(view, "tableau:1")["cards"] == ["KH", "5S"]
    refused(http, token, second, move("tableau:0", "tableau:1"), "not-a-space")
    refused(http, token, second, move("tableau:2", "tableau:3"), "king-never-moves")
    view = session.play(second, action="undo")
    assert pile(view, "tableau:0")["cards"][-1] == "5S"
    view = session.play(second, **move("tableau:0", "tableau:2"))
    while up := to_foundations(view):
        view = session.play(second, **up[0])
    assert (view["status"], view["units"]) == ("complete", 88)
    session.collect(second, GAME, 1_040, 88)

    # 3. A seeded deal played greedily: every foundation move, else a draw, to the end.
    seed = "55" * 32
    third, view = session.deal(GAME, 208, seed=seed)
    drawn: list[str] = []
    while True:
        if up := to_foundations(view):
            view = session.play(third, **up[0])
        elif legal(view, "draw"):
            before = {t: pile(view, t)["cards"] for t in TABLEAU}
            view = session.play(third, action="draw")
            drawn += [c for t in TABLEAU for c in pile(view, t)["cards"][len(before[t]) :]]
        else:
            break
    dealt = list(shuffle.derive_deck(bytes.fromhex(seed), None, 2))
    assert drawn == hand_order(dealt)  # the hand, in deal order, each card once
    assert [pile(view, t)["cards"][0] for t in TABLEAU] == [
        "KS",
        *[c for c in drawn if c[0] == "K"],
    ]
    greedy = view["units"]
    assert greedy == sum(pile(view, f"foundation:{f}")["count"] for f in range(8))
    assert view["winnings"] == winnings(GAME, greedy, 208)
    done = session.collect(third, GAME, 208, greedy)
    assert done["server_seed"] == seed

    # 4. Three draws and collected: the hand's first three cards shown, nothing on foundations.
    seed = "66" * 32
    fourth, view = session.deal(GAME, 104, seed=seed)
    dealt = list(shuffle.derive_deck(bytes.fromhex(seed), None, 2))
    for _ in range(3):
        view = session.play(fourth, action="draw")
    shown = [c for t in TABLEAU for c in pile(view, t)["cards"]]
    assert sorted(shown) == sorted(["KS", *hand_order(dealt)[:3]])
    assert (view["stock_count"], view["units"], view["winnings"]) == (92, 0, 0)
    session.collect(fourth, GAME, 104, 0)

    check_books(
        session,
        [
            (first, GAME, 520, 88),
            (second, GAME, 1_040, 88),
            (third, GAME, 208, greedy),
            (fourth, GAME, 104, 0),
        ],
    )
