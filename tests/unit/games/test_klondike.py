"""Klondike (seed 004's): draw three, unlimited passes, cards turn by themselves, M from the RTP
lab. The moves and refusals it shares with Vegas are tested in tests/unit/test_moves.py."""

from __future__ import annotations

import itertools

import pytest

from events.catalog import CardMoved, CardTurned, StockRecycled
from service import errors
from service.core import game_decider as g
from service.core.paytable import winnings
from service.errors import RuleViolation
from service.games.klondike import KLONDIKE
from service.rules.building import alternate_colour_down, same_suit_up
from service.rules.cards import Card
from service.rules.game import GameRules
from service.rules.table import Table
from tests.builders import game_on, layout, pile, play

HIDDEN = "4C|9C"  # a face-down card keeps auto-complete away


def _klondike(**kwargs: object) -> g.Game:
    return game_on(layout(rules=KLONDIKE, **kwargs), variant="klondike")  # type: ignore[arg-type]


def test_a_card_left_face_down_on_top_turns_by_itself() -> None:
    game = _klondike(tableau=["3S|9D", "|TC", HIDDEN], stock="JC", passes_left=None)
    game, events = play(game, g.MoveCards("tableau:0", "tableau:1"))
    assert events == [CardMoved("tableau:0", "tableau:1", ("9D",)), CardTurned("tableau:0", "3S")]
    assert pile(game, "tableau:0").up == ("3S",)


def test_the_player_never_turns_a_card() -> None:
    game = _klondike(tableau=["3S|9D", HIDDEN], stock="JC", passes_left=None)
    with pytest.raises(RuleViolation) as refused:
        g.decide(game, g.Turn("tableau:0"))
    assert refused.value.code == errors.ACTION_NOT_ALLOWED
    assert all(not isinstance(c, g.Turn) for c in g.legal_commands(game))


def test_a_move_that_turned_a_card_cannot_be_undone() -> None:
    game = _klondike(tableau=["3S|9D", "|TC", HIDDEN], stock="JC", passes_left=None)
    game, _ = play(game, g.MoveCards("tableau:0", "tableau:1"))
    with pytest.raises(RuleViolation) as refused:
        g.decide(game, g.Undo())
    assert refused.value.code == errors.UNDO_NOT_ALLOWED


def test_the_stock_can_be_recycled_again_and_again() -> None:
    game = _klondike(tableau=[HIDDEN], waste="2H 3H 4H", passes_left=None)
    for _ in range(5):
        game, events = play(game, g.Recycle())
        assert events == [StockRecycled(3, None)]
        assert game.table is not None
        assert game.table.passes_left is None
        game, _ = play(game, g.Draw())


def test_klondike_draws_three() -> None:
    game = _klondike(tableau=[HIDDEN], stock="2H 3H 4H 5H", passes_left=None)
    game, _ = play(game, g.Draw())
    assert pile(game, "waste").cards == ("2H", "3H", "4H")


def test_klondike_pays_its_own_multiple_per_card() -> None:
    game = _klondike(tableau=[HIDDEN], foundations=["AH 2H"], stock="JC", passes_left=None)
    assert game.units == 2
    assert game.winnings == winnings(2, 520, KLONDIKE.multiplier, 52)
    assert game.info is not None
    assert game.info.multiplier == KLONDIKE.multiplier


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    for i in table.layout.of_kind("foundation"):
        pile = table.piles[i].cards
        assert pile == table.piles[i].up
        for n, card in enumerate(pile):
            assert same_suit_up(str(card), str(pile[n - 1]) if n else None), pile
    for i in table.layout.of_kind("tableau"):
        up = table.piles[i].up
        for lower, upper in itertools.pairwise(up):
            assert alternate_colour_down(upper, lower), up
