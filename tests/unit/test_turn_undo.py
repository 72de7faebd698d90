"""Turning face-down cards (never undoable) and the single-level undo."""

from __future__ import annotations

import pytest

from events.catalog import CardDrawn, CardTurned, Undone
from service import errors
from service import game as g
from service.errors import RuleViolation
from service.klondike import Column, Layout
from tests.builders import game_on, layout, play, start


def _layout(game: g.Game) -> Layout:
    assert game.layout is not None
    return game.layout


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


# --- turning ------------------------------------------------------------------------------------


def test_turn_reveals_the_face_down_top_card() -> None:
    game = game_on(layout(["4S 9D|", "|KH"], stock="2C"))
    game, events = play(game, g.Turn(0))
    assert events == [CardTurned(column=0, card="9D")]
    assert _layout(game).tableau[0] == Column(("4S",), ("9D",))
    assert _layout(game).tableau[1] == Column((), ("KH",))


def test_turn_reveals_only_the_top_one_of_several_face_down_cards() -> None:
    game = game_on(layout(["|KH", "", "", "", "", "", "2S 3S 4S|"], stock="2C"))
    game, events = play(game, g.Turn(6))
    assert events == [CardTurned(column=6, card="4S")]
    assert _layout(game).tableau[6] == Column(("2S", "3S"), ("4S",))


def test_turn_of_an_empty_column_is_refused_nothing_to_turn() -> None:
    game = game_on(layout(["4S 9D|", ""], stock="2C"))
    assert _refused(game, g.Turn(1)) == errors.NOTHING_TO_TURN


def test_turn_of_a_face_up_top_card_is_refused_top_card_face_up() -> None:
    game = game_on(layout(["4S 9D|", "5S|8H"], stock="2C"))
    assert _refused(game, g.Turn(1)) == errors.TOP_CARD_FACE_UP


@pytest.mark.parametrize("column", [7, -1, 100])
def test_turn_of_a_column_that_does_not_exist_is_refused_unknown_pile(column: int) -> None:
    game = game_on(layout(["4S 9D|"] * 7, stock="2C"))
    assert _refused(game, g.Turn(column)) == errors.UNKNOWN_PILE


def test_turn_cannot_be_undone() -> None:
    game, _ = play(game_on(layout(["4S 9D|"], stock="2C")), g.Turn(0))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_turn_after_a_draw_still_leaves_nothing_to_undo() -> None:
    game = game_on(layout(["4S 9D|"], stock="2C 3C"))
    game, _ = play(game, g.Draw(), g.Turn(0))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
    assert _layout(game).waste == ("2C",)


# --- undo allowed -------------------------------------------------------------------------------


def test_undo_draw1_puts_the_card_back_on_the_stock_front() -> None:
    lay = layout(["4S 9D|"], stock="2C 3C", waste="AH")
    game, events = play(game_on(lay), g.Draw(), g.Undo())
    assert events[1] == Undone("draw", "stock", "waste", ("2C",), 1)
    assert _layout(game) == lay
    assert (len(_layout(game).stock), _layout(game).passes_left) == (2, 1)


def test_undo_draw3_restores_the_stock_order_and_the_previous_fan() -> None:
    lay = layout(["4S 9D|", "3D|4H"], stock="AS 2S 3S 4C 5C 6C 7C", passes_left=3, draw_count=3)
    game, _ = play(game_on(lay), g.Draw(), g.MoveCards("waste", "tableau:1"))
    before = _layout(game)
    assert before.visible_waste == ("AS", "2S")
    game, events = play(game, g.Draw(), g.Undo())
    assert events == [
        CardDrawn(("4C", "5C", "6C")),
        Undone("draw", "stock", "waste", ("4C", "5C", "6C"), 2),
    ]
    after = _layout(game)
    assert after == before
    assert after.stock == ("4C", "5C", "6C", "7C")
    assert after.waste == ("AS", "2S")
    assert after.visible_waste == ("AS", "2S")
    assert after.waste_fan == 2


def test_undo_of_the_first_draw_leaves_an_empty_waste() -> None:
    lay = layout(["4S 9D|"], stock="AS 2S 3S", passes_left=3, draw_count=3)
    game, events = play(game_on(lay), g.Draw(), g.Undo())
    assert events[1] == Undone("draw", "stock", "waste", ("AS", "2S", "3S"), 0)
    assert _layout(game) == lay
    assert _layout(game).visible_waste == ()


def test_undo_waste_to_column_puts_the_card_back_on_the_waste() -> None:
    lay = layout(["4S 9D|", "3D|8H"], stock="2C", waste="AS 5S 7C", waste_fan=3, draw_count=3)
    game, events = play(game_on(lay), g.MoveCards("waste", "tableau:1"), g.Undo())
    assert events[1] == Undone("move", "waste", "tableau:1", ("7C",), 3)
    assert _layout(game) == lay
    assert _layout(game).visible_waste == ("AS", "5S", "7C")


def test_undo_waste_to_foundation_restores_the_waste_and_the_winnings() -> None:
    lay = layout(["4S 9D|"], foundations=["AH"], stock="2C", waste="KS 2H")
    game = game_on(lay)
    assert game.winnings == 50
    game, _ = play(game, g.MoveCards("waste", "foundation"))
    assert game.winnings == 100
    game, events = play(game, g.Undo())
    assert events == [Undone("move", "waste", "foundation:0", ("2H",), 1)]
    assert _layout(game) == lay
    assert game.winnings == 50


def test_undo_column_to_foundation_restores_the_column_and_the_winnings() -> None:
    lay = layout(["4S 9D|", "5D|2S"], foundations=["AS"], stock="2C")
    game, _ = play(game_on(lay), g.MoveCards("tableau:1", "foundation:0"))
    assert (game.winnings, _layout(game).tableau[1]) == (100, Column(("5D",), ()))
    game, events = play(game, g.Undo())
    assert events == [Undone("move", "tableau:1", "foundation:0", ("2S",), 0)]
    assert _layout(game) == lay
    assert game.winnings == 50


def test_undo_foundation_to_column_puts_the_card_back_and_restores_the_winnings() -> None:
    lay = layout(["4S 9D|", "|4H"], foundations=["AS 2S 3S"], stock="2C")
    game, _ = play(game_on(lay), g.MoveCards("foundation:0", "tableau:1"))
    assert game.winnings == 100
    game, events = play(game, g.Undo())
    assert events == [Undone("move", "foundation:0", "tableau:1", ("3S",), 0)]
    assert _layout(game) == lay
    assert game.winnings == 150


def test_undo_keeps_the_waste_fan_of_an_unrelated_foundation_move() -> None:
    lay = layout(["4S 9D|", "5D|2S"], foundations=["AS"], stock="2C", waste="3H 4H", waste_fan=2)
    game, events = play(game_on(lay), g.MoveCards("tableau:1", "foundation"), g.Undo())
    assert events[1] == Undone("move", "tableau:1", "foundation:0", ("2S",), 2)
    assert _layout(game) == lay


# --- undo refused -------------------------------------------------------------------------------


def test_undo_right_after_the_deal_is_refused() -> None:
    game, _ = start()
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_of_a_column_to_column_move_is_refused() -> None:
    game = game_on(layout(["4S 5C|", "3S|9D 8C", "|9H"], stock="2C"))
    game, _ = play(game, g.MoveCards("tableau:1", "tableau:2", 1))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_of_a_king_to_an_empty_column_is_refused() -> None:
    game = game_on(layout(["4S 9D|", "3S|KD QC", ""], stock="2C"))
    game, _ = play(game, g.MoveCards("tableau:1", "tableau:2"))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_of_a_recycle_is_refused() -> None:
    lay = layout(["4S 9D|"], stock="2C", passes_left=3, draw_count=3)
    game, _ = play(game_on(lay), g.Draw(), g.Recycle())
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
    assert _layout(game).stock == ("2C",)


def test_undo_twice_in_a_row_is_refused() -> None:
    game = game_on(layout(["4S 9D|"], stock="2C 3C"))
    game, _ = play(game, g.Draw(), g.Draw(), g.Undo())
    assert _layout(game).waste == ("2C",)
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED


def test_undo_reaches_only_the_last_action() -> None:
    # A draw followed by a column move: the draw is no longer the last action.
    game = game_on(layout(["4S 5C|", "3S|9D 8C", "|9H"], stock="2C"))
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:1", "tableau:2", 1))
    assert _refused(game, g.Undo()) == errors.UNDO_NOT_ALLOWED
