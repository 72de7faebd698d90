"""Stock and waste: drawing one or three, the draw-3 fan, recycling and the passes allowed."""

from __future__ import annotations

import pytest

from events.catalog import CardDrawn, CardMoved, StockRecycled
from service import errors
from service import game as g
from service.errors import RuleViolation
from service.klondike import Layout
from tests.builders import easy_deck, game_on, layout, play, start

# A face-down card keeps auto-complete out of the way in hand-made layouts.
HIDDEN = "4S 9D|"


def _layout(game: g.Game) -> Layout:
    assert game.layout is not None
    return game.layout


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


# --- drawing ------------------------------------------------------------------------------------


def test_draw1_draws_one_card_from_the_front_of_the_stock() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S"))
    game, events = play(game, g.Draw())
    assert events == [CardDrawn(("AS",))]
    lay = _layout(game)
    assert lay.stock == ("2S", "3S")
    assert lay.waste == ("AS",)
    assert lay.visible_waste == ("AS",)
    assert (len(lay.stock), lay.passes_left) == (2, 1)


def test_draw1_second_draw_puts_the_next_card_on_top() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S"))
    game, events = play(game, g.Draw(), g.Draw())
    assert events == [CardDrawn(("AS",)), CardDrawn(("2S",))]
    lay = _layout(game)
    assert lay.waste == ("AS", "2S")
    assert lay.waste[-1] == "2S"
    assert lay.visible_waste == ("2S",)
    assert lay.stock == ("3S",)


def test_draw3_draws_three_cards_first_one_ends_deepest() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S 4S 5S", passes_left=3, draw_count=3))
    game, events = play(game, g.Draw())
    assert events == [CardDrawn(("AS", "2S", "3S"))]
    lay = _layout(game)
    assert lay.waste == ("AS", "2S", "3S")
    assert lay.waste[-1] == "3S"  # the last one drawn is the playable top card
    assert lay.stock == ("4S", "5S")
    assert lay.waste_fan == 3
    assert lay.visible_waste == ("AS", "2S", "3S")
    assert (len(lay.stock), lay.passes_left) == (2, 3)


def test_draw3_draws_only_the_cards_left_when_fewer_than_three_remain() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S 4S 5S", passes_left=3, draw_count=3))
    game, events = play(game, g.Draw(), g.Draw())
    assert events == [CardDrawn(("AS", "2S", "3S")), CardDrawn(("4S", "5S"))]
    lay = _layout(game)
    assert lay.stock == ()
    assert lay.waste == ("AS", "2S", "3S", "4S", "5S")
    assert lay.waste_fan == 2
    assert lay.visible_waste == ("4S", "5S")
    assert (len(lay.stock), lay.passes_left) == (0, 3)


def test_draw3_with_one_card_left_draws_one() -> None:
    game = game_on(layout([HIDDEN], stock="KH", passes_left=3, draw_count=3))
    game, events = play(game, g.Draw())
    assert events == [CardDrawn(("KH",))]
    assert _layout(game).visible_waste == ("KH",)


def test_draw_from_an_empty_stock_is_refused_stock_empty() -> None:
    game = game_on(layout([HIDDEN], stock="", waste="AS 2S", passes_left=3, draw_count=3))
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


def test_draw_from_an_empty_stock_with_no_passes_left_is_refused_stock_empty() -> None:
    game = game_on(layout([HIDDEN], stock="", waste="AS", passes_left=1))
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


# --- the draw-3 fan -----------------------------------------------------------------------------


def _fan_game() -> g.Game:
    """Draw-3 after two draws: waste AS 2S 3S | 5S 6H 7C, the latest three fanned.

    7C, 6H and 5S cascade onto the 8H of tableau:0; 3S can go on the 4D of tableau:1."""
    lay = layout(
        [HIDDEN, "2C|4D", "3D|8H"],
        stock="AS 2S 3S 5S 6H 7C KD",
        passes_left=3,
        draw_count=3,
    )
    game, _ = play(game_on(lay), g.Draw(), g.Draw())
    return game


def test_draw3_fan_shows_the_latest_draw() -> None:
    lay = _layout(_fan_game())
    assert lay.waste == ("AS", "2S", "3S", "5S", "6H", "7C")
    assert lay.waste_fan == 3
    assert lay.visible_waste == ("5S", "6H", "7C")
    assert lay.stock == ("KD",)


def test_draw3_fan_shrinks_as_its_top_cards_are_played() -> None:
    game, events = play(_fan_game(), g.MoveCards("waste", "tableau:2"))
    assert events == [CardMoved("waste", "tableau:2", ("7C",))]
    assert _layout(game).visible_waste == ("5S", "6H")
    assert _layout(game).waste_fan == 2
    game, _ = play(game, g.MoveCards("waste", "tableau:2"))
    assert _layout(game).visible_waste == ("5S",)
    assert _layout(game).waste_fan == 1


def test_draw3_after_the_whole_latest_draw_is_played_the_card_beneath_shows_alone() -> None:
    game, _ = play(_fan_game(), *[g.MoveCards("waste", "tableau:2")] * 3)
    lay = _layout(game)
    assert lay.tableau[2].up == ("8H", "7C", "6H", "5S")
    assert lay.waste == ("AS", "2S", "3S")
    assert lay.waste_fan == 0
    assert lay.visible_waste == ("3S",)
    assert lay.waste[-1] == "3S"


def test_draw3_each_earlier_card_shows_in_turn_as_the_one_above_is_played() -> None:
    game, _ = play(_fan_game(), *[g.MoveCards("waste", "tableau:2")] * 3)
    game, events = play(game, g.MoveCards("waste", "tableau:1"))
    assert events == [CardMoved("waste", "tableau:1", ("3S",))]
    assert _layout(game).visible_waste == ("2S",)
    assert _layout(game).waste == ("AS", "2S")


def test_draw3_a_new_draw_fans_only_its_own_cards() -> None:
    game, _ = play(_fan_game(), g.MoveCards("waste", "tableau:2"), g.Draw())
    lay = _layout(game)
    assert lay.waste == ("AS", "2S", "3S", "5S", "6H", "KD")
    assert lay.waste_fan == 1
    assert lay.visible_waste == ("KD",)


def test_empty_waste_shows_nothing() -> None:
    lay = layout([HIDDEN], stock="AS", passes_left=3, draw_count=3)
    assert lay.visible_waste == ()


# --- recycling ----------------------------------------------------------------------------------


def test_recycle_turns_the_waste_back_into_the_stock() -> None:
    lay = layout([HIDDEN], stock="", waste="AS 2S 3S", waste_fan=3, passes_left=3, draw_count=3)
    game, events = play(game_on(lay), g.Recycle())
    assert events == [StockRecycled(cards=3, passes_left=2)]
    after = _layout(game)
    assert after.stock == ("AS", "2S", "3S")
    assert after.waste == ()
    assert after.waste_fan == 0
    assert after.visible_waste == ()
    assert (len(after.stock), after.passes_left) == (3, 2)


def test_recycle_keeps_order_so_the_first_card_drawn_is_drawn_first_again() -> None:
    lay = layout([HIDDEN], stock="AS 2S 3S 4S", passes_left=3, draw_count=3)
    _, events = play(game_on(lay), g.Draw(), g.Draw(), g.Recycle(), g.Draw(), g.Draw())
    assert events == [
        CardDrawn(("AS", "2S", "3S")),
        CardDrawn(("4S",)),
        StockRecycled(cards=4, passes_left=2),
        CardDrawn(("AS", "2S", "3S")),
        CardDrawn(("4S",)),
    ]


def test_recycle_with_cards_in_the_stock_is_refused_stock_not_empty() -> None:
    lay = layout([HIDDEN], stock="AS", waste="2S", passes_left=3, draw_count=3)
    assert _refused(game_on(lay), g.Recycle()) == errors.STOCK_NOT_EMPTY


def test_recycle_of_an_empty_waste_is_refused_waste_empty() -> None:
    lay = layout([HIDDEN], stock="", waste="", passes_left=3, draw_count=3)
    assert _refused(game_on(lay), g.Recycle()) == errors.WASTE_EMPTY


def test_recycle_on_the_last_pass_is_refused_no_passes_left() -> None:
    lay = layout([HIDDEN], stock="", waste="AS 2S", passes_left=1, draw_count=3)
    assert _refused(game_on(lay), g.Recycle()) == errors.NO_PASSES_LEFT


# --- passes over a whole dealt game -------------------------------------------------------------


def test_draw1_has_one_pass_and_recycle_is_refused_no_passes_left() -> None:
    game, _ = start(easy_deck(), variant="vegas-draw1")
    assert (len(_layout(game).stock), _layout(game).passes_left) == (24, 1)
    for left in range(23, -1, -1):
        game, events = play(game, g.Draw())
        assert len(events) == 1
        assert (len(_layout(game).stock), _layout(game).passes_left) == (left, 1)
    assert len(_layout(game).waste) == 24
    assert _refused(game, g.Recycle()) == errors.NO_PASSES_LEFT
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


def test_draw3_allows_exactly_two_recycles_then_no_passes_left() -> None:
    game, _ = start(easy_deck(), variant="vegas-draw3")
    stock = easy_deck()[28:]
    assert (len(_layout(game).stock), _layout(game).passes_left) == (24, 3)
    for passes_left in (3, 2, 1):
        for i, left in enumerate(range(21, -1, -3)):
            game, events = play(game, g.Draw())
            assert events == [CardDrawn(stock[3 * i : 3 * i + 3])]
            assert (len(_layout(game).stock), _layout(game).passes_left) == (left, passes_left)
        assert _layout(game).waste == stock
        if passes_left > 1:
            game, events = play(game, g.Recycle())
            assert events == [StockRecycled(cards=24, passes_left=passes_left - 1)]
            assert (len(_layout(game).stock), _layout(game).passes_left) == (24, passes_left - 1)
            assert _layout(game).stock == stock
    assert _refused(game, g.Recycle()) == errors.NO_PASSES_LEFT
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY
    assert (len(_layout(game).stock), _layout(game).passes_left) == (0, 1)
