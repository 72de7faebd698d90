"""Three Shuffles and a Draw end to end over HTTP, for real money: an operator deals each game
from a known deck or a seed (certification mode) for a funded player, who plays it through the
actions route (moves, the two seeded redeals, the once-per-game Draw) and collects. After every
game the wallet holds exactly what the paytable says; each redeal is re-derived here from the
seed the game reveals at its end, as an auditor would; the ledger and the betting history tell
the same story, and every game replays and verifies with every check passing."""

from __future__ import annotations

from typing import Any

from service.core import shuffle
from tests.api.client import assert_salted_commitment
from tests.api.play import legal, move, pile, refused, winnings
from tests.api.real_money import Session, check_books

GAME = "three-shuffles"
RANKS = "A23456789TJQK"
SUITS = "SHDC"
FANS = [f"fan:{i}" for i in range(16)]


def deck_of(fans: list[list[str]]) -> list[str]:
    """The 52-card deck that deals these 16 fans of 3 (bottom first) row by row; the Aces,
    which start the foundations, go last."""
    rows = [fans[c][r] for r in range(3) for c in range(16)]
    return [*rows, "AS", "AH", "AD", "AC"]


def climbing_fans() -> list[list[str]]:
    """Tops 2..5 of every suit, then 6..9 under them, then T..K at the bottom: taking the top
    cards fan by fan, three times round, plays every card up."""
    needed = [r + s for r in RANKS[1:] for s in SUITS]
    return [[needed[32 + c], needed[16 + c], needed[c]] for c in range(16)]


def deck_with_fans(known: dict[int, list[str]]) -> list[str]:
    """A deck that deals the ``known`` fans (bottom first) and fills the others with the
    remaining non-Ace cards in canonical order."""
    used = {c for cards in known.values() for c in cards}
    rest = iter(r + s for s in SUITS for r in RANKS[1:] if r + s not in used)
    return deck_of([known.get(c) or [next(rest) for _ in range(3)] for c in range(16)])


def fans_of(view: dict[str, Any]) -> list[list[str]]:
    return [pile(view, f)["cards"] for f in FANS]


def test_three_shuffles_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token

    # 1. The deal, then a deck won by taking the tops fan by fan: every card face up.
    deck = deck_of(climbing_fans())
    first, view = session.deal(GAME, 520, deck=deck)
    assert_salted_commitment(view, deck)
    for i, suit in enumerate(SUITS):
        assert pile(view, f"foundation:{i}")["cards"] == ["A" + suit]
    for c, fan in enumerate(FANS):
        assert pile(view, fan) == {
            "id": fan,
            "kind": "tableau",
            "count": 3,
            "face_down": 0,
            "cards": [deck[c], deck[16 + c], deck[32 + c]],
        }
    assert view["counters"] == {"stock": 0, "passes_left": 3, "picks_left": 1}
    assert {"action": "redeal"} in view["legal_moves"]
    for n in range(48):
        view = session.play(first, **move(FANS[n % 16], "foundation"))
        assert view["units"] == n + 1
    assert (view["status"], view["winnings"]) == ("complete", winnings(GAME, 48, 520))
    refused(http, token, first, {"action": "redeal"}, "game-complete")
    done = session.collect(first, GAME, 520, 48)
    assert done["revealed_deck"] == deck

    # 2. Moves between fans, undo, the Draw, and the refusals.
    known = {
        0: ["9C", "5H", "3S"],
        1: ["KS", "QD", "6H"],
        2: ["4D", "8D", "2S"],
        3: ["JC", "7C", "KD"],
        4: ["TC", "9H", "4H"],
    }
    second, view = session.deal(GAME, 1_040, deck=deck_with_fans(known))
    refused(http, token, second, move("fan:0", "fan:4"), "not-same-suit")  # 3S onto 4H
    refused(http, token, second, {**move("fan:0", "fan:4"), "count": 2}, "invalid-count")
    refused(http, token, second, move("foundation:0", "fan:1"), "invalid-source")
    refused(http, token, second, move("fan:0", "foundation:0"), "foundation-wrong-rank")
    view = session.play(second, **move("fan:2", "foundation"))  # 2S
    view = session.play(second, **move("fan:0", "foundation"))  # 3S
    assert view["can_undo"] is True
    view = session.play(second, action="undo")
    assert pile(view, "fan:0")["cards"] == ["9C", "5H", "3S"]
    refused(http, token, second, {"action": "undo"}, "undo-not-allowed")  # single level
    view = session.play(second, **move("fan:0", "foundation"))
    view = session.play(second, **move("fan:0", "fan:1"))  # 5H onto 6H
    assert pile(view, "fan:1")["cards"] == ["KS", "QD", "6H", "5H"]
    draw = {"action": "pick", "from": "fan:1", "card": "QD", "to": "fan:3"}
    refused(http, token, second, {**draw, "card": "5H"}, "not-buried")
    refused(http, token, second, {**draw, "card": "7C"}, "card-not-in-pile")
    refused(http, token, second, {**draw, "to": "fan:4"}, "not-one-rank-lower")
    refused(http, token, second, {"action": "pick", "from": "fan:1"}, None, slug="validation-error")
    assert draw in legal(view, "pick")
    view = session.play(second, **draw)  # QD onto KD
    assert pile(view, "fan:3")["cards"] == ["JC", "7C", "KD", "QD"]
    assert pile(view, "fan:1")["cards"] == ["KS", "6H", "5H"]
    assert (view["counters"]["picks_left"], legal(view, "pick")) == (0, [])
    refused(http, token, second, {**draw, "card": "KS", "to": "foundation"}, "no-picks-left")
    refused(http, token, second, {"action": "undo"}, "undo-not-allowed")
    second_units = view["units"]
    assert second_units == 2
    session.collect(second, GAME, 1_040, second_units)

    # 3. Both redeals, each re-derived from the seed the game reveals at its end.
    third, view = session.deal(GAME, 208, deck=deck_of(climbing_fans()))
    view = session.play(third, **move("fan:0", "foundation"))
    gathered: list[list[str]] = []
    redealt: list[list[list[str]]] = []
    for label_left in (2, 1):
        gathered.append([c for fan in fans_of(view) for c in fan])
        view = session.play(third, action="redeal")
        assert view["counters"]["passes_left"] == label_left
        assert view["can_undo"] is False
        redealt.append(fans_of(view))
        assert sorted(c for fan in redealt[-1] for c in fan) == sorted(gathered[-1])
    assert legal(view, "redeal") == []
    refused(http, token, third, {"action": "redeal"}, "no-passes-left")
    units = view["units"]
    done = session.collect(third, GAME, 208, units)
    salt = bytes.fromhex(done["server_seed"])
    for n, (cards, fans_after) in enumerate(zip(gathered, redealt, strict=True), start=1):
        shuffled = shuffle.redeal(salt, None, f"redeal-{n}", cards)
        expected = [list(shuffled[i : i + 3]) for i in range(0, len(shuffled), 3)]
        assert fans_after == expected + [[]] * (16 - len(expected))

    # 4. A seeded deal: greedy play, then a redeal, to the end.
    fourth, view = session.deal(GAME, 520, seed="ab" * 32)
    while True:
        moves = legal(view, "move")
        if moves:
            view = session.play(fourth, **moves[0])
        elif legal(view, "redeal"):
            view = session.play(fourth, action="redeal")
        else:
            break
    seeded_units = view["units"]
    assert view["winnings"] == winnings(GAME, seeded_units, 520)
    done = session.collect(fourth, GAME, 520, seeded_units)
    assert done["server_seed"] == "ab" * 32

    check_books(
        session,
        [
            (first, GAME, 520, 48),
            (second, GAME, 1_040, second_units),
            (third, GAME, 208, units),
            (fourth, GAME, 520, seeded_units),
        ],
    )
