"""Whole games played command by command on known decks, checked card by card.

The worked example's seed (service/core/SHUFFLE.md) deals, face-down cards bottom first then a bar
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
    UndoneMove,
)
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.errors import RuleViolation
from service.rules.cards import Card
from service.rules.table import Pile, Table, unseal
from tests.builders import SEED, column, easy_deck, layout, play, sealed_of, start, stock_order

Move = g.MoveCards
TABLEAU = [f"tableau:{i}" for i in range(7)]
FOUNDATIONS = [f"foundation:{i}" for i in range(4)]


def _table(game: g.Game) -> Table:
    """The table as the fold holds it: face-down cards sealed (numbers, not codes)."""
    assert game.table is not None
    return game.table


def _seen(game: g.Game) -> Table:
    """The table with every sealed card filled in from the deck the game was dealt (what only
    the server knows), so a test can check card by card where each one lies."""
    return unseal(_table(game), sealed_of(game))


def _waste(game: g.Game) -> tuple[Card, ...]:
    return _table(game).pile("waste").up


def _visible_waste(game: g.Game) -> tuple[Card, ...]:
    """The fan: the latest draw's cards still on the waste, else the one card beneath."""
    table = _table(game)
    up = table.pile("waste").up
    return up[-table.fan :] if table.fan else up[-1:]


def _foundations(game: g.Game) -> tuple[tuple[Card, ...], ...]:
    return tuple(_table(game).pile(f).up for f in FOUNDATIONS)


def _stock_codes(game: g.Game) -> tuple[Card, ...]:
    """The stock, next card drawn first, as codes."""
    return tuple(str(c) for c in _seen(game).pile("stock").cards[::-1])


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


def test_the_worked_example_seed_deals_the_documented_layout() -> None:
    game, _ = start()
    assert _seen(game) == layout(
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
    # The fold holds none of the 45 face-down cards: each is a sealed number, given in layout
    # order (stock first, then the columns), bottom to top.
    face_down = [s for p in _table(game).piles for s in p.face_down]
    assert face_down == list(range(21 + 24))
    assert all(isinstance(c, str) for p in _table(game).piles for c in p.up)
    assert stock_order(game)[0] == 23  # the next card drawn is the stock's top slot
    assert sealed_of(game)[23] == "3H"


def test_scripted_draw_one_game_on_the_worked_example_seed() -> None:
    game, _ = start(seed=SEED)

    game, events = play(
        game,
        Move("tableau:3", "foundation"),  # AC starts a foundation
        Move("tableau:0", "foundation"),  # 2C follows it; tableau:0 is empty
        g.Turn("tableau:3"),  # 4S
        Move("tableau:4", "tableau:1"),  # TH onto JC
        g.Turn("tableau:4"),  # QD
        Move("tableau:2", "tableau:0"),  # KC to the empty column
        g.Turn("tableau:2"),  # 2D
        Move("tableau:4", "tableau:0"),  # QD onto KC
        g.Turn("tableau:4"),  # TD
    )
    assert events == [
        CardMoved("tableau:3", "foundation:0", ("AC",)),
        CardMoved("tableau:0", "foundation:0", ("2C",)),
        CardTurned("tableau:3", "4S"),
        CardMoved("tableau:4", "tableau:1", ("TH",)),
        CardTurned("tableau:4", "QD"),
        CardMoved("tableau:2", "tableau:0", ("KC",)),
        CardTurned("tableau:2", "2D"),
        CardMoved("tableau:4", "tableau:0", ("QD",)),
        CardTurned("tableau:4", "TD"),
    ]
    assert game.winnings == 100

    game, events = play(game, g.Draw(), g.Draw(), g.Draw(), g.Draw())
    assert events == [
        CardDrawn("stock", "waste", ("3H",)),
        CardDrawn("stock", "waste", ("4H",)),
        CardDrawn("stock", "waste", ("KD",)),
        CardDrawn("stock", "waste", ("AH",)),
    ]
    game, events = play(game, Move("waste", "foundation"), g.Undo())
    assert events == [
        CardMoved("waste", "foundation:1", ("AH",)),
        Undone("move", (UndoneMove("waste", "foundation:1", ("AH",)),)),
    ]
    assert game.winnings == 100  # the undo took the Ace's 50 back off
    assert _waste(game) == ("3H", "4H", "KD", "AH")
    assert _table(game).pile("foundation:1").cards == ()
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED

    game, events = play(
        game,
        Move("waste", "foundation:1"),  # AH again, to a named foundation
        g.Draw(),  # 8S
        g.Draw(),  # 5C
        g.Draw(),  # JS
        Move("waste", "tableau:0"),  # JS onto QD
        Move("tableau:4", "tableau:0"),  # TD onto JS
        g.Turn("tableau:4"),  # 7D
        g.Draw(),  # 6H
        Move("tableau:2", "tableau:5"),  # 2D onto 3S
        g.Turn("tableau:2"),  # 9H, the last card of tableau:2
    )
    assert events == [
        CardMoved("waste", "foundation:1", ("AH",)),
        CardDrawn("stock", "waste", ("8S",)),
        CardDrawn("stock", "waste", ("5C",)),
        CardDrawn("stock", "waste", ("JS",)),
        CardMoved("waste", "tableau:0", ("JS",)),
        CardMoved("tableau:4", "tableau:0", ("TD",)),
        CardTurned("tableau:4", "7D"),
        CardDrawn("stock", "waste", ("6H",)),
        CardMoved("tableau:2", "tableau:5", ("2D",)),
        CardTurned("tableau:2", "9H"),
    ]

    seen = _seen(game)
    assert [seen.pile(t) for t in TABLEAU] == [
        column("|KC QD JS TD"),
        column("6S|JC TH"),
        column("|9H"),
        column("5H JH|4S"),
        column("7S|7D"),
        column("5D 3D AD 9D 8C|3S 2D"),
        column("3C 5S 6D 8D 4C AS|JD"),
    ]
    assert _foundations(game) == (("AC", "2C"), ("AH",), (), ())
    assert len(_table(game).pile("stock")) == 16
    assert _stock_codes(game)[:3] == ("9S", "8H", "4D")
    assert _waste(game) == ("3H", "4H", "KD", "8S", "5C", "6H")
    assert _visible_waste(game) == ("6H",)
    assert _table(game).fan == 1
    assert _table(game).passes_left == 1
    assert game.rules is not None
    assert game.rules.draw_count == 1
    assert game.status == "in_progress"
    assert game.version == 2 + 9 + 4 + 2 + 10
    assert game.units == 3
    assert game.winnings == 150
    assert game.undo is None  # a turn was the last action
    assert g.legal_commands(game) == [g.Draw(), g.Collect()]

    game, events = play(game, g.Collect(server_seed=SEED.hex()))
    assert events == [Collected("player", 150, "GBP", 3, SEED.hex(), None)]
    assert game.status == "collected"
    assert game.payout == 150


def test_scripted_draw_three_game_recycles_in_order() -> None:
    game, _ = start(variant="vegas-draw3")
    game, events = play(game, g.Draw(), g.Draw(), g.Draw())
    assert events == [
        CardDrawn("stock", "waste", ("3H", "4H", "KD")),
        CardDrawn("stock", "waste", ("AH", "8S", "5C")),
        CardDrawn("stock", "waste", ("JS", "6H", "9S")),
    ]
    assert _visible_waste(game) == ("JS", "6H", "9S")

    game, events = play(game, Move("waste", "tableau:4"))  # 9S onto TH
    assert events == [CardMoved("waste", "tableau:4", ("9S",))]
    assert _visible_waste(game) == ("JS", "6H")
    game, events = play(game, g.Undo())
    assert events == [Undone("move", (UndoneMove("waste", "tableau:4", ("9S",)),))]
    assert _visible_waste(game) == ("JS", "6H", "9S")
    assert _table(game).fan == 3
    assert _seen(game).pile("tableau:4") == column("7S 7D TD QD|TH")

    game, _ = play(game, Move("waste", "tableau:4"), *[g.Draw()] * 5)
    assert _table(game).pile("stock").cards == ()
    assert len(_waste(game)) == 23
    assert _visible_waste(game) == ("7C", "QS", "QH")
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY

    game, events = play(game, g.Recycle())
    assert events == [StockRecycled(cards=23, passes_left=2)]
    # Every recycled card has been seen, so the stock now holds codes, not sealed numbers.
    assert stock_order(game) == (
        *("3H", "4H", "KD", "AH", "8S", "5C", "JS", "6H", "8H", "4D", "QC", "KS"),
        *("2H", "7H", "TS", "TC", "6C", "KH", "9C", "2S", "7C", "QS", "QH"),
    )
    assert _table(game).pile("stock").down == 23
    table = _table(game)
    assert (table.pile("waste").cards, table.fan, table.passes_left) == ((), 0, 2)
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED

    game, events = play(game, g.Draw())
    assert events == [CardDrawn("stock", "waste", ("3H", "4H", "KD"))]
    assert _seen(game).pile("tableau:4") == column("7S 7D TD QD|TH 9S")
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
        assert turns or ups, f"stuck: {game.table}"
        command = turns[0] if turns else Move(ups[0].source, "foundation")
        game, events = play(game, command)
        emitted.extend(events)
        if isinstance(events[-1], AutoCompleted):
            return game, emitted
    raise AssertionError("auto-complete never came")


def test_easy_deck_wins_all_52_cards_and_pays_five_times_the_stake() -> None:
    deck = easy_deck()
    game, _ = start(deck, variant="vegas-draw1")
    assert game.info is not None
    assert game.info.shuffle_algorithm == shuffle.CERTIFICATION_DECK
    assert game.seed_commitment == shuffle.deck_commitment(deck, SEED)
    assert game.win_rate == 50

    for i in range(24):
        game, events = play(game, g.Draw(), Move("waste", "foundation"))
        drawn = events[0]
        assert isinstance(drawn, CardDrawn)
        assert drawn.cards == (deck[28 + i],)
        assert events[1] == CardMoved("waste", f"foundation:{i % 4}", drawn.cards)
        assert game.winnings == (i + 1) * 50
    table = _table(game)
    assert (table.pile("stock").cards, table.pile("waste").cards) == ((), ())
    assert [f[-1] for f in _foundations(game)] == ["6S", "6H", "6D", "6C"]
    assert game.winnings == 24 * 50

    game, events = _finish_tableau(game)
    *played, auto = events
    assert events[:4] == [
        CardMoved("tableau:0", "foundation:0", ("7S",)),
        CardMoved("tableau:1", "foundation:1", ("7H",)),
        CardTurned("tableau:1", "8C"),
        CardMoved("tableau:2", "foundation:2", ("7D",)),
    ]
    assert sum(isinstance(e, CardTurned) for e in played) == 21
    assert sum(isinstance(e, CardMoved) for e in played) == 27
    assert len(played) == 48
    # Turning KC, the last face-down card, leaves only it: the server plays it up.
    assert played[-1] == CardTurned("tableau:6", "KC")
    assert auto == AutoCompleted((AutoMove("tableau:6", "foundation:3", "KC"),))

    assert game.status == "complete"
    assert game.last_action == "auto-complete"
    assert game.units == 52
    assert all(_table(game).pile(t) == Pile() for t in TABLEAU)
    assert [f[-1] for f in _foundations(game)] == ["KS", "KH", "KD", "KC"]
    assert all(len(f) == 13 for f in _foundations(game))
    assert game.winnings == 52 * game.win_rate == 5 * game.stake == 2600
    assert g.legal_commands(game) == [g.Collect()]
    assert _refused(game, g.Draw()) == errors.GAME_COMPLETE
    assert _refused(game, g.Undo()) == errors.GAME_COMPLETE

    # A game dealt from a given deck committed to that deck salted with its seed: collecting
    # reveals both, and neither the seed alone, nothing, nor another deck will do.
    assert _refused(game, g.Collect(server_seed=SEED.hex())) == errors.SEED_REQUIRED
    assert _refused(game, g.Collect()) == errors.SEED_REQUIRED
    assert (
        _refused(game, g.Collect(server_seed=SEED.hex(), deck=deck[::-1])) == errors.SEED_MISMATCH
    )
    game, events = play(game, g.Collect(server_seed=SEED.hex(), deck=deck))
    assert events == [Collected("player", 2600, "GBP", 52, server_seed=SEED.hex(), deck=deck)]
    collected = events[0]
    assert isinstance(collected, Collected)
    assert collected.winnings == 2600
    assert collected.server_seed == SEED.hex()  # the salt of the deck's commitment
    assert game.status == "collected"
    assert game.payout == 2600
    assert game.server_seed == SEED.hex()
    assert game.revealed_deck == deck
    assert _refused(game, g.Collect(server_seed=SEED.hex(), deck=deck)) == errors.GAME_OVER
