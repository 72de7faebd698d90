"""Whole games played command by command on known decks, checked card by card.

The worked example's seed (service/SHUFFLE.md) deals, face-down cards bottom first then a bar
then the face-up card:

    tableau:0  |2C               tableau:4  7S 7D TD QD|TH
    tableau:1  6S|JC             tableau:5  5D 3D AD 9D 8C|3S
    tableau:2  9H 2D|KC          tableau:6  3C 5S 6D 8D 4C AS|JD
    tableau:3  5H JH 4S|AC       stock      3H 4H KD AH 8S 5C JS 6H 9S 8H 4D QC KS 2H 7H TS ...
"""

from __future__ import annotations

import pytest

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    GameEvent,
    StockRecycled,
    Undone,
)
from service import errors
from service import game as g
from service.errors import RuleViolation
from service.klondike import Column, Layout
from tests.builders import SEED, easy_deck, layout, play, start

Move = g.MoveCards


def _layout(game: g.Game) -> Layout:
    assert game.layout is not None
    return game.layout


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


def test_the_worked_example_seed_deals_the_documented_layout() -> None:
    game, _ = start()
    assert _layout(game) == layout(
        [
            "|2C",
            "6S|JC",
            "9H 2D|KC",
            "5H JH 4S|AC",
            "7S 7D TD QD|TH",
            "5D 3D AD 9D 8C|3S",
            "3C 5S 6D 8D 4C AS|JD",
        ],
        stock="3H 4H KD AH 8S 5C JS 6H 9S 8H 4D QC KS 2H 7H TS TC 6C KH 9C 2S 7C QS QH",
        waste_fan=0,
    )


def test_scripted_draw_one_game_on_the_worked_example_seed() -> None:
    game, _ = start(seed=SEED)

    game, events = play(
        game,
        Move("tableau:3", "foundation"),  # AC starts a foundation
        Move("tableau:0", "foundation"),  # 2C follows it; tableau:0 is empty
        g.Turn(3),  # 4S
        Move("tableau:4", "tableau:1"),  # TH onto JC
        g.Turn(4),  # QD
        Move("tableau:2", "tableau:0"),  # KC to the empty column
        g.Turn(2),  # 2D
        Move("tableau:4", "tableau:0"),  # QD onto KC
        g.Turn(4),  # TD
    )
    assert events == [
        CardMoved("tableau:3", "foundation:0", ("AC",)),
        CardMoved("tableau:0", "foundation:0", ("2C",)),
        CardTurned(3, "4S"),
        CardMoved("tableau:4", "tableau:1", ("TH",)),
        CardTurned(4, "QD"),
        CardMoved("tableau:2", "tableau:0", ("KC",)),
        CardTurned(2, "2D"),
        CardMoved("tableau:4", "tableau:0", ("QD",)),
        CardTurned(4, "TD"),
    ]
    assert game.winnings == 100

    game, events = play(game, g.Draw(), g.Draw(), g.Draw(), g.Draw())
    assert events == [
        CardDrawn(("3H",)),
        CardDrawn(("4H",)),
        CardDrawn(("KD",)),
        CardDrawn(("AH",)),
    ]
    game, events = play(game, Move("waste", "foundation"), g.Undo())
    assert events == [
        CardMoved("waste", "foundation:1", ("AH",)),
        Undone("move", "waste", "foundation:1", ("AH",), waste_fan=1),
    ]
    assert game.winnings == 100  # the undo took the Ace's 50 back off
    assert _layout(game).waste == ("3H", "4H", "KD", "AH")
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED

    game, events = play(
        game,
        Move("waste", "foundation:1"),  # AH again, to a named foundation
        g.Draw(),  # 8S
        g.Draw(),  # 5C
        g.Draw(),  # JS
        Move("waste", "tableau:0"),  # JS onto QD
        Move("tableau:4", "tableau:0"),  # TD onto JS
        g.Turn(4),  # 7D
        g.Draw(),  # 6H
        Move("tableau:2", "tableau:5"),  # 2D onto 3S
        g.Turn(2),  # 9H, the last card of tableau:2
    )
    assert events == [
        CardMoved("waste", "foundation:1", ("AH",)),
        CardDrawn(("8S",)),
        CardDrawn(("5C",)),
        CardDrawn(("JS",)),
        CardMoved("waste", "tableau:0", ("JS",)),
        CardMoved("tableau:4", "tableau:0", ("TD",)),
        CardTurned(4, "7D"),
        CardDrawn(("6H",)),
        CardMoved("tableau:2", "tableau:5", ("2D",)),
        CardTurned(2, "9H"),
    ]

    lay = _layout(game)
    assert lay.tableau == (
        Column((), ("KC", "QD", "JS", "TD")),
        Column(("6S",), ("JC", "TH")),
        Column((), ("9H",)),
        Column(("5H", "JH"), ("4S",)),
        Column(("7S",), ("7D",)),
        Column(("5D", "3D", "AD", "9D", "8C"), ("3S", "2D")),
        Column(("3C", "5S", "6D", "8D", "4C", "AS"), ("JD",)),
    )
    assert lay.foundations == (("AC", "2C"), ("AH",), (), ())
    assert len(lay.stock) == 16
    assert lay.stock[:3] == ("9S", "8H", "4D")
    assert lay.waste == ("3H", "4H", "KD", "8S", "5C", "6H")
    assert lay.visible_waste == ("6H",)
    assert lay.waste_fan == 1
    assert lay.passes_left == 1
    assert lay.draw_count == 1
    assert game.status == "in_progress"
    assert game.version == 2 + 9 + 4 + 2 + 10
    assert game.foundation_count == 3
    assert game.winnings == 150
    assert game.undo is None  # a turn was the last action
    assert g.legal_commands(game) == [g.Draw(), g.Collect()]

    game, events = play(game, g.Collect(server_seed=SEED.hex()))
    assert events == [Collected("player", 150, "GBP", 3, SEED.hex())]
    assert game.status == "collected"
    assert game.payout == 150


def test_scripted_draw_three_game_recycles_in_order() -> None:
    game, _ = start(variant="vegas-draw3")
    game, events = play(game, g.Draw(), g.Draw(), g.Draw())
    assert events == [
        CardDrawn(("3H", "4H", "KD")),
        CardDrawn(("AH", "8S", "5C")),
        CardDrawn(("JS", "6H", "9S")),
    ]
    assert _layout(game).visible_waste == ("JS", "6H", "9S")

    game, events = play(game, Move("waste", "tableau:4"))  # 9S onto TH
    assert events == [CardMoved("waste", "tableau:4", ("9S",))]
    assert _layout(game).visible_waste == ("JS", "6H")
    game, events = play(game, g.Undo())
    assert events == [Undone("move", "waste", "tableau:4", ("9S",), waste_fan=3)]
    assert _layout(game).visible_waste == ("JS", "6H", "9S")
    assert _layout(game).tableau[4] == Column(("7S", "7D", "TD", "QD"), ("TH",))

    game, _ = play(game, Move("waste", "tableau:4"), *[g.Draw()] * 5)
    lay = _layout(game)
    assert lay.stock == ()
    assert len(lay.waste) == 23
    assert lay.visible_waste == ("7C", "QS", "QH")
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY

    game, events = play(game, g.Recycle())
    assert events == [StockRecycled(cards=23, passes_left=2)]
    lay = _layout(game)
    assert lay.stock == (
        *("3H", "4H", "KD", "AH", "8S", "5C", "JS", "6H", "8H", "4D", "QC", "KS"),
        *("2H", "7H", "TS", "TC", "6C", "KH", "9C", "2S", "7C", "QS", "QH"),
    )
    assert (lay.waste, lay.waste_fan, lay.passes_left) == ((), 0, 2)
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED

    game, events = play(game, g.Draw())
    assert events == [CardDrawn(("3H", "4H", "KD"))]
    assert _layout(game).tableau[4] == Column(("7S", "7D", "TD", "QD"), ("TH", "9S"))
    assert game.winnings == 0


# --- a whole winning game ---------------------------------------------------------------------


def _finish_tableau(game: g.Game) -> tuple[g.Game, list[GameEvent]]:
    """Turn a face-down top if there is one, else send the leftmost tableau top that fits to the
    foundations; stop when the server auto-completes."""
    emitted: list[GameEvent] = []
    for _ in range(100):
        legal = g.legal_commands(game)
        turns = [c for c in legal if isinstance(c, g.Turn)]
        ups = [
            c
            for c in legal
            if isinstance(c, Move)
            and c.source.startswith("tableau:")
            and c.target.startswith("foundation:")
        ]
        assert turns or ups, f"stuck: {game.layout}"
        command = turns[0] if turns else Move(ups[0].source, "foundation")
        game, events = play(game, command)
        emitted.extend(events)
        if isinstance(events[-1], AutoCompleted):
            return game, emitted
    raise AssertionError("auto-complete never came")


def test_easy_deck_wins_all_52_cards_and_pays_five_times_the_stake() -> None:
    game, _ = start(easy_deck(), variant="vegas-draw1")
    assert game.seed_commitment is None
    assert game.win_rate == 50

    for i in range(24):
        game, events = play(game, g.Draw(), Move("waste", "foundation"))
        drawn = events[0]
        assert isinstance(drawn, CardDrawn)
        assert events[1] == CardMoved("waste", f"foundation:{i % 4}", drawn.cards)
        assert game.winnings == (i + 1) * 50
    lay = _layout(game)
    assert (lay.stock, lay.waste) == ((), ())
    assert [f[-1] for f in lay.foundations] == ["6S", "6H", "6D", "6C"]
    assert game.winnings == 24 * 50

    game, events = _finish_tableau(game)
    *played, auto = events
    assert events[:4] == [
        CardMoved("tableau:0", "foundation:0", ("7S",)),
        CardMoved("tableau:1", "foundation:1", ("7H",)),
        CardTurned(1, "8C"),
        CardMoved("tableau:2", "foundation:2", ("7D",)),
    ]
    assert sum(isinstance(e, CardTurned) for e in played) == 21
    assert sum(isinstance(e, CardMoved) for e in played) == 27
    assert len(played) == 48
    # Turning KC, the last face-down card, leaves only it: the server plays it up.
    assert played[-1] == CardTurned(6, "KC")
    assert auto == AutoCompleted((AutoMove("tableau:6", "foundation:3", "KC"),))

    lay = _layout(game)
    assert game.status == "complete"
    assert game.last_action == "auto-complete"
    assert game.foundation_count == 52
    assert all(col == Column() for col in lay.tableau)
    assert [f[-1] for f in lay.foundations] == ["KS", "KH", "KD", "KC"]
    assert all(len(f) == 13 for f in lay.foundations)
    assert game.winnings == 52 * game.win_rate == 5 * game.stake == 2600
    assert g.legal_commands(game) == [g.Collect()]
    assert _refused(game, g.Draw()) == errors.GAME_COMPLETE
    assert _refused(game, g.Undo()) == errors.GAME_COMPLETE

    # A certification deck has no commitment: collecting reveals no seed.
    assert _refused(game, g.Collect(server_seed=SEED.hex())) == errors.SEED_MISMATCH
    game, events = play(game, g.Collect())
    assert events == [
        Collected(reason="player", winnings=2600, currency="GBP", foundation_count=52)
    ]
    collected = events[0]
    assert isinstance(collected, Collected)
    assert collected.winnings == 2600
    assert collected.server_seed is None
    assert game.status == "collected"
    assert game.payout == 2600
    assert game.server_seed is None
    assert _refused(game, g.Collect()) == errors.GAME_OVER
