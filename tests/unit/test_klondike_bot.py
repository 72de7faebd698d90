"""The Klondike reference bot: its main preferences on hand-made tables, and fair play on
seeded deals (only legal actions, never a sealed card read, every game ends)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.games.klondike import KLONDIKE, VEGAS_DRAW1, VEGAS_DRAW3
from service.rtp import simulate
from service.rtp.bots.klondike import choose
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Turn
from service.rules.game import GameRules
from service.rules.table import Pile, Slot, Table
from tests.builders import layout

KLONDIKE_GAMES = ("vegas-draw1", "vegas-draw3", "klondike")


def _sealed(lay: Table) -> Table:
    """The table as the player sees it: every face-down card a sealed number."""
    n = 0
    piles = []
    for pile in lay.piles:
        cards: list[Slot] = []
        for i, slot in enumerate(pile.cards):
            if i < pile.down:
                cards.append(n)
                n += 1
            else:
                cards.append(slot)
        piles.append(Pile(tuple(cards), pile.down))
    return replace(lay, piles=tuple(piles))


def _renumbered(lay: Table) -> Table:
    """Every sealed number changed: a fair bot cannot tell the difference."""
    piles = tuple(
        Pile(tuple(s * 7 + 1000 if isinstance(s, int) else s for s in p.cards), p.down)
        for p in lay.piles
    )
    return replace(lay, piles=piles)


def _choice(lay: Table, rules: GameRules = VEGAS_DRAW1) -> PlayAction | None:
    table = _sealed(lay)
    legal = rules.legal_actions(table)
    action = choose(rules, table, legal)
    assert action is None or action in legal
    assert choose(rules, _renumbered(table), legal) == action
    return action


def test_a_face_down_top_card_is_turned_first() -> None:
    lay = layout(["|AS", "4C 9C", "|KH"], stock="JC")
    assert _choice(lay) == Turn("tableau:1")


def test_an_ace_goes_up_before_anything_else() -> None:
    lay = layout(["4C|8H", "|7S", "|AD"], stock="JC")
    assert _choice(lay) == MoveCards("tableau:2", "foundation:0", 1)


def test_the_column_with_the_most_face_down_cards_is_uncovered_first() -> None:
    # 7S (on one face-down card) and 7C (on three) both fit on 8H: 7C goes.
    lay = layout(["|8H", "2D|7S", "3D 4D 5D|7C"], stock="JC")
    assert _choice(lay) == MoveCards("tableau:2", "tableau:0", 1)


def test_a_king_goes_to_the_empty_column_from_the_deepest_column() -> None:
    lay = layout(["", "2D|KS QH", "3D 4D 5D|KC"], stock="JC")
    assert _choice(lay) == MoveCards("tableau:2", "tableau:0", 1)


def test_a_king_alone_in_its_column_stays_put() -> None:
    lay = layout(["", "|KS QH", "|9C"], stock="JC")
    assert _choice(lay) == Draw()


def test_the_waste_card_goes_to_a_column_before_the_next_draw() -> None:
    lay = layout(["|8H", "|KS"], stock="JC", waste="7S")
    assert _choice(lay) == MoveCards("waste", "tableau:0", 1)


def test_an_unsafe_card_stays_down_while_the_stock_lasts_then_goes_up() -> None:
    # 7H fits the hearts, but the black foundations are only at Two: a black Six may want it.
    foundations = ["AH 2H 3H 4H 5H 6H", "AS 2S", "AC 2C"]
    lay = layout(["|9S 8D", "|8S 7H"], foundations, stock="JC")
    assert _choice(lay) == Draw()
    end = layout(["|9S 8D", "|8S 7H"], foundations, waste="JC", passes_left=1)
    assert _choice(end) == MoveCards("tableau:1", "foundation:0", 1)


def test_with_unlimited_passes_every_card_that_fits_goes_up() -> None:
    foundations = ["AH 2H 3H 4H 5H 6H", "AS 2S", "AC 2C"]
    lay = layout(["|9S 8D", "|8S 7H"], foundations, stock="JC", rules=KLONDIKE, passes_left=None)
    assert _choice(lay, KLONDIKE) == MoveCards("tableau:1", "foundation:0", 1)


def test_part_of_a_run_moves_when_the_card_beneath_then_goes_up() -> None:
    # Moving 2S onto 3D leaves 3H on top, and it goes up (the black foundations are empty,
    # but a Three is within three ranks of them).
    lay = layout(["|3D", "|4C 3H 2S"], ["AH 2H"], stock="JC")
    assert _choice(lay) == MoveCards("tableau:1", "tableau:0", 1)


def test_a_card_comes_off_a_foundation_to_take_the_waste_card() -> None:
    # 4H waits in the waste; 5C comes down onto 6H so 4H can follow.
    foundations = ["AC 2C 3C 4C 5C", "AS"]
    lay = layout(["|6H", "|KS"], foundations, stock="JC", waste="4H")
    assert _choice(lay) == MoveCards("foundation:0", "tableau:0", 1)


def test_no_run_moves_between_columns_without_a_reason() -> None:
    # 7S could go on 8H, but its column has nothing under it and no King waits.
    lay = layout(["|8H", "|7S"], stock="JC")
    assert _choice(lay) == Draw()


def test_a_column_empties_for_a_waiting_king() -> None:
    # Every column holds cards; moving 7S onto 8H empties one for the King on face-down cards.
    cols = ["|8H", "|7S", "2D|KC", "|9D", "|TS", "|JH", "|QS"]
    assert _choice(layout(cols, stock="JC")) == MoveCards("tableau:1", "tableau:0", 1)


def test_it_recycles_then_stops_when_nothing_is_left() -> None:
    assert _choice(layout(["|KS"], waste="JC", rules=VEGAS_DRAW3, passes_left=3), VEGAS_DRAW3) == (
        Recycle()
    )
    assert _choice(layout(["|KS"], waste="JC", rules=VEGAS_DRAW3, passes_left=1), VEGAS_DRAW3) is (
        None
    )


@pytest.mark.parametrize("game_id", KLONDIKE_GAMES)
def test_on_seeded_deals_it_plays_only_legal_actions_blind_to_sealed_cards(game_id: str) -> None:
    """Plays deals as the simulator does (stopping after a pass that changed nothing) and
    checks every choice; each game ends well before the simulator's action limit."""
    rules = game_named(game_id)
    for index in range(4):
        deck = shuffle.derive_deck(simulate.deal_seed(game_id, index), None, rules.decks)
        start = g.StartGame("sim", "bot", game_id, 520, simulate._TABLE, deck, "x", "", None, False)
        state = g.fold(g.decide(g.INITIAL, start))
        sealed = g.hidden_cards(rules, deck)
        at_recycle: tuple[int, ...] | None = None
        for _ in range(simulate.MAX_ACTIONS // 4):
            table = state.table
            assert table is not None
            if state.status != "in_progress":
                break
            legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect | g.Undo)]
            action = choose(rules, table, legal)
            assert action == choose(rules, _renumbered(table), legal)
            if action is None:
                break
            assert action in legal
            if isinstance(action, Recycle):
                progress = (state.units, *(len(p.cards) for p in table.piles))
                if progress == at_recycle:
                    break
                at_recycle = progress
            state = g.fold(g.decide(state, action, sealed), state)
        else:
            pytest.fail(f"deal {index} of {game_id} ran {simulate.MAX_ACTIONS // 4} actions")
