"""Turning face-down cards (never undoable) and the single-level undo, which restores the table
the undone action left."""

from __future__ import annotations

import pytest

from events.catalog import CardDrawn, CardTurned, Undone, UndoneMove
from service import errors
from service.core import game_decider as g
from service.core.game_views import player_view
from service.errors import RuleViolation
from service.games.klondike import VEGAS_DRAW1, VEGAS_DRAW3
from service.rules.cards import Card
from service.rules.table import Table
from tests.builders import (
    column,
    easy_deck,
    game_on,
    layout,
    pile,
    play,
    start,
    stock_order,
    turnable_deck,
)


def _table(game: g.Game) -> Table:
    assert game.table is not None
    return game.table


def _visible_waste(game: g.Game) -> list[Card]:
    """What the player sees of the waste: the latest draw's fan, else the top card."""
    shown: list[Card] = player_view(game)["waste"]
    return shown


def _violation(game: g.Game, command: g.Command) -> RuleViolation:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value


def _refused(game: g.Game, command: g.Command) -> str:
    return _violation(game, command).code


def _undone(action: str, source: str, target: str, *cards: Card) -> Undone:
    return Undone(action, (UndoneMove(source, target, cards),))


# --- turning ------------------------------------------------------------------------------------


def test_turn_reveals_the_face_down_top_card() -> None:
    game = game_on(layout(["4S 9D|", "|KH"], stock="2C"))
    game, events = play(game, g.Turn("tableau:0"))
    assert events == [CardTurned(pile="tableau:0", card="9D")]
    assert pile(game, "tableau:0") == column("4S|9D")
    assert pile(game, "tableau:1") == column("|KH")


def test_turn_reveals_only_the_top_one_of_several_face_down_cards() -> None:
    game = game_on(layout(["|KH", "", "", "", "", "", "2S 3S 4S|"], stock="2C"))
    game, events = play(game, g.Turn("tableau:6"))
    assert events == [CardTurned(pile="tableau:6", card="4S")]
    assert pile(game, "tableau:6") == column("2S 3S|4S")


def test_turn_of_a_dealt_column_shows_its_sealed_card() -> None:
    # Column 1 is one face-down card (the second dealt) under the Ace of spades.
    deck = turnable_deck()
    game, _ = start(deck)
    game, _ = play(game, g.MoveCards("tableau:1", "foundation"))
    (sealed,) = pile(game, "tableau:1").cards
    assert isinstance(sealed, int)  # nobody has seen it yet
    game, events = play(game, g.Turn("tableau:1"))
    assert events == [CardTurned(pile="tableau:1", card=deck[1])]
    assert pile(game, "tableau:1") == column(f"|{deck[1]}")
    assert _refused(game, g.Turn("tableau:1")) == errors.TOP_CARD_FACE_UP


def test_turn_of_an_empty_column_is_refused_nothing_to_turn() -> None:
    game = game_on(layout(["4S 9D|", ""], stock="2C"))
    assert _refused(game, g.Turn("tableau:1")) == errors.NOTHING_TO_TURN


def test_turn_of_a_face_up_top_card_is_refused_top_card_face_up() -> None:
    game = game_on(layout(["4S 9D|", "5S|8H"], stock="2C"))
    assert _refused(game, g.Turn("tableau:1")) == errors.TOP_CARD_FACE_UP


@pytest.mark.parametrize("pile_id", ["tableau:7", "tableau:-1", "tableau:100", "hand"])
def test_turn_of_a_column_that_does_not_exist_is_refused_unknown_pile(pile_id: str) -> None:
    game = game_on(layout(["4S 9D|"] * 7, stock="2C"))
    assert _refused(game, g.Turn(pile_id)) == errors.UNKNOWN_PILE


def test_turn_cannot_be_undone() -> None:
    game, _ = play(game_on(layout(["4S 9D|"], stock="2C")), g.Turn("tableau:0"))
    refusal = _violation(game, g.Undo())
    assert refusal.code == errors.UNDO_NOT_ALLOWED
    assert refusal.detail.endswith(VEGAS_DRAW1.undo_rule)


def test_turn_after_a_draw_still_leaves_nothing_to_undo() -> None:
    game = game_on(layout(["4S 9D|"], stock="2C 3C"))
    game, _ = play(game, g.Draw(), g.Turn("tableau:0"))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
    assert pile(game, "waste").cards == ("2C",)


# --- undo allowed -------------------------------------------------------------------------------


def test_undo_draw1_puts_the_card_back_on_the_stock_front() -> None:
    lay = layout(["4S 9D|"], stock="2C 3C", waste="AH")
    game, events = play(game_on(lay), g.Draw(), g.Undo())
    assert events[1] == _undone("draw", "stock", "waste", "2C")
    assert _table(game) == lay
    assert stock_order(game) == ("2C", "3C")
    assert (len(pile(game, "stock")), _table(game).passes_left) == (2, 1)


def test_undo_draw_of_a_dealt_game_restores_the_sealed_stock() -> None:
    deck = easy_deck()
    dealt, _ = start(deck)
    game, events = play(dealt, g.Draw(), g.Undo())
    assert events == [
        CardDrawn("stock", "waste", (deck[28],)),
        _undone("draw", "stock", "waste", deck[28]),
    ]
    assert game.table == dealt.table
    assert stock_order(game) == stock_order(dealt)
    _, events = play(game, g.Draw())  # the same card comes again
    assert events == [CardDrawn("stock", "waste", (deck[28],))]


def test_undo_draw3_restores_the_stock_order_and_the_previous_fan() -> None:
    lay = layout(
        ["4S 9D|", "3D|4H"], stock="AS 2S 3S 4C 5C 6C 7C", passes_left=3, rules=VEGAS_DRAW3
    )
    game, _ = play(game_on(lay, variant="vegas-draw3"), g.Draw(), g.MoveCards("waste", "tableau:1"))
    before = _table(game)
    assert _visible_waste(game) == ["AS", "2S"]
    game, events = play(game, g.Draw(), g.Undo())
    assert events == [
        CardDrawn("stock", "waste", ("4C", "5C", "6C")),
        _undone("draw", "stock", "waste", "4C", "5C", "6C"),
    ]
    assert _table(game) == before
    assert stock_order(game) == ("4C", "5C", "6C", "7C")
    assert pile(game, "waste").cards == ("AS", "2S")
    assert _visible_waste(game) == ["AS", "2S"]
    assert _table(game).fan == 2


def test_undo_of_the_first_draw_leaves_an_empty_waste() -> None:
    lay = layout(["4S 9D|"], stock="AS 2S 3S", passes_left=3, rules=VEGAS_DRAW3)
    game, events = play(game_on(lay, variant="vegas-draw3"), g.Draw(), g.Undo())
    assert events[1] == _undone("draw", "stock", "waste", "AS", "2S", "3S")
    assert _table(game) == lay
    assert _visible_waste(game) == []


def test_undo_waste_to_column_puts_the_card_back_on_the_waste() -> None:
    lay = layout(["4S 9D|", "3D|8H"], stock="2C", waste="AS 5S 7C", waste_fan=3, rules=VEGAS_DRAW3)
    game, events = play(
        game_on(lay, variant="vegas-draw3"), g.MoveCards("waste", "tableau:1"), g.Undo()
    )
    assert events[1] == _undone("move", "waste", "tableau:1", "7C")
    assert _table(game) == lay
    assert _visible_waste(game) == ["AS", "5S", "7C"]


def test_undo_waste_to_foundation_restores_the_waste_and_the_winnings() -> None:
    lay = layout(["4S 9D|"], foundations=["AH"], stock="2C", waste="KS 2H")
    game = game_on(lay)
    assert game.winnings == 50
    game, _ = play(game, g.MoveCards("waste", "foundation"))
    assert game.winnings == 100
    game, events = play(game, g.Undo())
    assert events == [_undone("move", "waste", "foundation:0", "2H")]
    assert _table(game) == lay
    assert (game.units, game.winnings) == (1, 50)


def test_undo_column_to_foundation_restores_the_column_and_the_winnings() -> None:
    lay = layout(["4S 9D|", "5D|2S"], foundations=["AS"], stock="2C")
    game, _ = play(game_on(lay), g.MoveCards("tableau:1", "foundation:0"))
    assert (game.winnings, pile(game, "tableau:1")) == (100, column("5D|"))
    game, events = play(game, g.Undo())
    assert events == [_undone("move", "tableau:1", "foundation:0", "2S")]
    assert _table(game) == lay
    assert game.winnings == 50


def test_undo_foundation_to_column_puts_the_card_back_and_restores_the_winnings() -> None:
    lay = layout(["4S 9D|", "|4H"], foundations=["AS 2S 3S"], stock="2C")
    game, _ = play(game_on(lay), g.MoveCards("foundation:0", "tableau:1"))
    assert game.winnings == 100
    game, events = play(game, g.Undo())
    assert events == [_undone("move", "foundation:0", "tableau:1", "3S")]
    assert _table(game) == lay
    assert game.winnings == 150


def test_undo_keeps_the_waste_fan_of_an_unrelated_foundation_move() -> None:
    lay = layout(["4S 9D|", "5D|2S"], foundations=["AS"], stock="2C", waste="3H 4H", waste_fan=2)
    game, events = play(game_on(lay), g.MoveCards("tableau:1", "foundation"), g.Undo())
    assert events[1] == _undone("move", "tableau:1", "foundation:0", "2S")
    assert _table(game) == lay
    assert _table(game).fan == 2


# --- undo refused -------------------------------------------------------------------------------


def test_undo_right_after_the_deal_is_refused() -> None:
    game, _ = start()
    refusal = _violation(game, g.Undo())
    assert refusal.code == errors.UNDO_NOT_ALLOWED
    assert refusal.detail.endswith(VEGAS_DRAW1.undo_rule)


def test_undo_of_a_column_to_column_move_is_refused() -> None:
    game = game_on(layout(["4S 5C|", "3S|9D 8C", "|9H"], stock="2C"))
    game, _ = play(game, g.MoveCards("tableau:1", "tableau:2", 1))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_of_a_king_to_an_empty_column_is_refused() -> None:
    game = game_on(layout(["4S 9D|", "3S|KD QC", ""], stock="2C"))
    game, _ = play(game, g.MoveCards("tableau:1", "tableau:2"))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_of_a_recycle_is_refused() -> None:
    lay = layout(["4S 9D|"], stock="2C", passes_left=3, rules=VEGAS_DRAW3)
    game, _ = play(game_on(lay, variant="vegas-draw3"), g.Draw(), g.Recycle())
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
    assert stock_order(game) == ("2C",)


def test_undo_twice_in_a_row_is_refused() -> None:
    game = game_on(layout(["4S 9D|"], stock="2C 3C"))
    game, _ = play(game, g.Draw(), g.Draw(), g.Undo())
    assert pile(game, "waste").cards == ("2C",)
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_reaches_only_the_last_action() -> None:
    # A draw followed by a column move: the draw is no longer the last action.
    game = game_on(layout(["4S 5C|", "3S|9D 8C", "|9H"], stock="2C"))
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:1", "tableau:2", 1))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
