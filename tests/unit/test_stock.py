"""Stock and waste: drawing one or three, the draw-3 fan, recycling and the passes allowed."""

from __future__ import annotations

import pytest

from events.catalog import CardDrawn, CardMoved, StockRecycled
from service import errors
from service.core import game_decider as g
from service.core.game_views import player_view
from service.errors import RuleViolation
from service.games.klondike import VEGAS_DRAW3
from service.rules.cards import Card
from service.rules.table import Table
from tests.builders import column, easy_deck, game_on, layout, pile, play, start, stock_order

# A face-down card keeps auto-complete out of the way in hand-made layouts.
HIDDEN = "4S 9D|"


def _table(game: g.Game) -> Table:
    assert game.table is not None
    return game.table


def _draw3(lay: Table) -> g.Game:
    """A Vegas draw-three game in progress on ``lay``."""
    return game_on(lay, variant="vegas-draw3")


def _draw3_layout(**kwargs: object) -> Table:
    """A draw-three table (three passes unless told) with the face-down column first."""
    kwargs.setdefault("passes_left", 3)
    return layout([HIDDEN], rules=VEGAS_DRAW3, **kwargs)  # type: ignore[arg-type]


def _waste(game: g.Game) -> tuple[object, ...]:
    """Every waste card, bottom first (the last is the playable top card)."""
    return pile(game, "waste").cards


def _visible_waste(game: g.Game) -> list[Card]:
    """What the player sees of the waste: the latest draw's fan, else the top card."""
    shown: list[Card] = player_view(game)["waste"]
    return shown


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


def drawn(*cards: Card) -> CardDrawn:
    return CardDrawn("stock", "waste", cards)


# --- drawing ------------------------------------------------------------------------------------


def test_draw1_draws_one_card_from_the_front_of_the_stock() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S"))
    game, events = play(game, g.Draw())
    assert events == [drawn("AS")]
    assert stock_order(game) == ("2S", "3S")
    assert _waste(game) == ("AS",)
    assert _visible_waste(game) == ["AS"]
    assert (len(pile(game, "stock")), _table(game).passes_left) == (2, 1)


def test_draw1_second_draw_puts_the_next_card_on_top() -> None:
    game = game_on(layout([HIDDEN], stock="AS 2S 3S"))
    game, events = play(game, g.Draw(), g.Draw())
    assert events == [drawn("AS"), drawn("2S")]
    assert _waste(game) == ("AS", "2S")
    assert pile(game, "waste").top == "2S"
    assert _visible_waste(game) == ["2S"]
    assert stock_order(game) == ("3S",)


def test_draw3_draws_three_cards_first_one_ends_deepest() -> None:
    game = _draw3(_draw3_layout(stock="AS 2S 3S 4S 5S"))
    game, events = play(game, g.Draw())
    assert events == [drawn("AS", "2S", "3S")]
    assert _waste(game) == ("AS", "2S", "3S")
    assert pile(game, "waste").top == "3S"  # the last one drawn is the playable top card
    assert stock_order(game) == ("4S", "5S")
    assert _table(game).fan == 3
    assert _visible_waste(game) == ["AS", "2S", "3S"]
    assert (len(pile(game, "stock")), _table(game).passes_left) == (2, 3)


def test_draw3_draws_only_the_cards_left_when_fewer_than_three_remain() -> None:
    game = _draw3(_draw3_layout(stock="AS 2S 3S 4S 5S"))
    game, events = play(game, g.Draw(), g.Draw())
    assert events == [drawn("AS", "2S", "3S"), drawn("4S", "5S")]
    assert stock_order(game) == ()
    assert _waste(game) == ("AS", "2S", "3S", "4S", "5S")
    assert _table(game).fan == 2
    assert _visible_waste(game) == ["4S", "5S"]
    assert (len(pile(game, "stock")), _table(game).passes_left) == (0, 3)


def test_draw3_with_one_card_left_draws_one() -> None:
    game = _draw3(_draw3_layout(stock="KH"))
    game, events = play(game, g.Draw())
    assert events == [drawn("KH")]
    assert _visible_waste(game) == ["KH"]


def test_draw_from_an_empty_stock_is_refused_stock_empty() -> None:
    game = _draw3(_draw3_layout(stock="", waste="AS 2S"))
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


def test_draw_from_an_empty_stock_with_no_passes_left_is_refused_stock_empty() -> None:
    game = game_on(layout([HIDDEN], stock="", waste="AS", passes_left=1))
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


# --- the draw-3 fan -----------------------------------------------------------------------------


def _fan_game() -> g.Game:
    """Draw-3 after two draws: waste AS 2S 3S | 5S 6H 7C, the latest three fanned.

    7C, 6H and 5S cascade onto the 8H of tableau:2; 3S can go on the 4D of tableau:1."""
    lay = layout(
        [HIDDEN, "2C|4D", "3D|8H"],
        stock="AS 2S 3S 5S 6H 7C KD",
        passes_left=3,
        rules=VEGAS_DRAW3,
    )
    game, _ = play(_draw3(lay), g.Draw(), g.Draw())
    return game


def test_draw3_fan_shows_the_latest_draw() -> None:
    game = _fan_game()
    assert _waste(game) == ("AS", "2S", "3S", "5S", "6H", "7C")
    assert _table(game).fan == 3
    assert _visible_waste(game) == ["5S", "6H", "7C"]
    assert stock_order(game) == ("KD",)


def test_draw3_fan_shrinks_as_its_top_cards_are_played() -> None:
    game, events = play(_fan_game(), g.MoveCards("waste", "tableau:2"))
    assert events == [CardMoved("waste", "tableau:2", ("7C",))]
    assert _visible_waste(game) == ["5S", "6H"]
    assert _table(game).fan == 2
    game, _ = play(game, g.MoveCards("waste", "tableau:2"))
    assert _visible_waste(game) == ["5S"]
    assert _table(game).fan == 1


def test_draw3_after_the_whole_latest_draw_is_played_the_card_beneath_shows_alone() -> None:
    game, _ = play(_fan_game(), *[g.MoveCards("waste", "tableau:2")] * 3)
    assert pile(game, "tableau:2") == column("3D|8H 7C 6H 5S")
    assert _waste(game) == ("AS", "2S", "3S")
    assert _table(game).fan == 0
    assert _visible_waste(game) == ["3S"]
    assert pile(game, "waste").top == "3S"


def test_draw3_each_earlier_card_shows_in_turn_as_the_one_above_is_played() -> None:
    game, _ = play(_fan_game(), *[g.MoveCards("waste", "tableau:2")] * 3)
    game, events = play(game, g.MoveCards("waste", "tableau:1"))
    assert events == [CardMoved("waste", "tableau:1", ("3S",))]
    assert _visible_waste(game) == ["2S"]
    assert _waste(game) == ("AS", "2S")


def test_draw3_a_new_draw_fans_only_its_own_cards() -> None:
    game, _ = play(_fan_game(), g.MoveCards("waste", "tableau:2"), g.Draw())
    assert _waste(game) == ("AS", "2S", "3S", "5S", "6H", "KD")
    assert _table(game).fan == 1
    assert _visible_waste(game) == ["KD"]


def test_empty_waste_shows_nothing() -> None:
    game = _draw3(_draw3_layout(stock="AS"))
    assert _visible_waste(game) == []


# --- recycling ----------------------------------------------------------------------------------


def test_recycle_turns_the_waste_back_into_the_stock() -> None:
    game = _draw3(_draw3_layout(stock="", waste="AS 2S 3S", waste_fan=3))
    game, events = play(game, g.Recycle())
    assert events == [StockRecycled(cards=3, passes_left=2)]
    assert stock_order(game) == ("AS", "2S", "3S")
    assert pile(game, "stock").top is None  # the recycled stock lies face down
    assert _waste(game) == ()
    assert _table(game).fan == 0
    assert _visible_waste(game) == []
    assert (len(pile(game, "stock")), _table(game).passes_left) == (3, 2)


def test_recycle_keeps_order_so_the_first_card_drawn_is_drawn_first_again() -> None:
    game = _draw3(_draw3_layout(stock="AS 2S 3S 4S"))
    _, events = play(game, g.Draw(), g.Draw(), g.Recycle(), g.Draw(), g.Draw())
    assert events == [
        drawn("AS", "2S", "3S"),
        drawn("4S"),
        StockRecycled(cards=4, passes_left=2),
        drawn("AS", "2S", "3S"),
        drawn("4S"),
    ]


def test_recycle_with_cards_in_the_stock_is_refused_stock_not_empty() -> None:
    game = _draw3(_draw3_layout(stock="AS", waste="2S"))
    assert _refused(game, g.Recycle()) == errors.STOCK_NOT_EMPTY


def test_recycle_of_an_empty_waste_is_refused_waste_empty() -> None:
    game = _draw3(_draw3_layout(stock="", waste=""))
    assert _refused(game, g.Recycle()) == errors.WASTE_EMPTY


def test_recycle_on_the_last_pass_is_refused_no_passes_left() -> None:
    game = _draw3(_draw3_layout(stock="", waste="AS 2S", passes_left=1))
    assert _refused(game, g.Recycle()) == errors.NO_PASSES_LEFT


# --- passes over a whole dealt game -------------------------------------------------------------


def test_draw1_has_one_pass_and_recycle_is_refused_no_passes_left() -> None:
    game, _ = start(easy_deck(), variant="vegas-draw1")
    stock = easy_deck()[28:]
    assert (len(pile(game, "stock")), _table(game).passes_left) == (24, 1)
    for i, left in enumerate(range(23, -1, -1)):
        game, events = play(game, g.Draw())
        assert events == [drawn(stock[i])]
        assert (len(pile(game, "stock")), _table(game).passes_left) == (left, 1)
    assert _waste(game) == stock
    assert _refused(game, g.Recycle()) == errors.NO_PASSES_LEFT
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY


def test_draw3_allows_exactly_two_recycles_then_no_passes_left() -> None:
    game, _ = start(easy_deck(), variant="vegas-draw3")
    stock = easy_deck()[28:]
    assert (len(pile(game, "stock")), _table(game).passes_left) == (24, 3)
    for passes_left in (3, 2, 1):
        for i, left in enumerate(range(21, -1, -3)):
            game, events = play(game, g.Draw())
            assert events == [drawn(*stock[3 * i : 3 * i + 3])]
            assert (len(pile(game, "stock")), _table(game).passes_left) == (left, passes_left)
        assert _waste(game) == stock
        if passes_left > 1:
            game, events = play(game, g.Recycle())
            assert events == [StockRecycled(cards=24, passes_left=passes_left - 1)]
            assert (len(pile(game, "stock")), _table(game).passes_left) == (24, passes_left - 1)
            assert stock_order(game) == stock
    assert _refused(game, g.Recycle()) == errors.NO_PASSES_LEFT
    assert _refused(game, g.Draw()) == errors.STOCK_EMPTY
    assert (len(pile(game, "stock")), _table(game).passes_left) == (0, 1)
