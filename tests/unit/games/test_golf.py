"""Golf (seed 004), rule by rule, refusals included, and its reference bot."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from events.catalog import CardDrawn, CardMoved, GameEvent
from service import errors
from service.errors import RuleViolation
from service.games import golf
from service.games.golf import GOLF
from service.rtp.bots import golf as bot
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove, Turn, Undo
from service.rules.cards import CANONICAL_DECK, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, seal
from tests import builders
from tests.unit.rtp_support import bot_play_out

WASTE_CARD = 35  # deal position of the card the deal turns onto the waste
NEXT_STOCK_CARD = 36


def at(column: int, row: int) -> int:
    """The deal position of a column's card: row 0 is the bottom, row 4 the top card."""
    return row * golf.COLUMNS + column


def top(column: int) -> int:
    return at(column, golf.ROWS - 1)


def deck_with(placed: Mapping[int, Card]) -> tuple[Card, ...]:
    return builders.deck_with(placed)


def dealt(placed: Mapping[int, Card]) -> tuple[Table, Reveal]:
    """The sealed table a deck with these cards deals, and the reveal for its stock."""
    table, hidden = seal(GOLF.deal(deck_with(placed)))
    return table, lambda s: s if isinstance(s, str) else hidden[s]


def play(table: Table, action: PlayAction, reveal: Reveal) -> tuple[Table, list[GameEvent]]:
    events = GOLF.decide(table, action, reveal)
    for event in events:
        table = fold.apply(table, event)
    return table, events


def refused(table: Table, action: PlayAction, reveal: Reveal) -> str:
    with pytest.raises(RuleViolation) as info:
        GOLF.decide(table, action, reveal)
    return info.value.code


def with_piles(table: Table, piles: Mapping[str, Pile]) -> Table:
    return table.with_piles({table.layout.index[p]: pile for p, pile in piles.items()})


def to_waste(column: int) -> MoveCards:
    return MoveCards(f"tableau:{column}", "waste", 1)


# --- declarations -------------------------------------------------------------------------------


def test_golf_declares_its_piles_and_counters() -> None:
    assert GOLF.id == "golf"
    assert GOLF.family == "golf"
    assert GOLF.rules_version == "golf/3"
    assert (GOLF.decks, GOLF.passes, GOLF.draw_count, GOLF.max_units) == (1, 1, 1, 35)
    assert GOLF.layout.ids == ("stock", "waste", *(f"tableau:{i}" for i in range(7)))
    assert GOLF.layout.kind("stock") == "stock"
    assert GOLF.layout.kind("waste") == "waste"
    assert GOLF.layout.kind("tableau:6") == "tableau"
    assert any("35" in line for line in GOLF.summary)


# --- deal ---------------------------------------------------------------------------------------


def test_the_deal_lays_seven_face_up_columns_of_five_row_by_row() -> None:
    deck = CANONICAL_DECK
    table = GOLF.deal(deck)
    for c in range(7):
        column = table.pile(f"tableau:{c}")
        assert column.down == 0
        assert column.cards == tuple(deck[at(c, r)] for r in range(5))
    assert table.pile("tableau:0").cards == (deck[0], deck[7], deck[14], deck[21], deck[28])
    assert table.count("tableau") == 35


def test_the_deal_turns_the_next_card_onto_the_waste() -> None:
    table = GOLF.deal(CANONICAL_DECK)
    assert table.pile("waste") == Pile((CANONICAL_DECK[WASTE_CARD],), 0)


def test_the_stock_holds_the_other_sixteen_face_down_next_card_on_top() -> None:
    table = GOLF.deal(CANONICAL_DECK)
    stock = table.pile("stock")
    assert len(stock) == 16
    assert stock.down == 16
    assert stock.cards == tuple(reversed(CANONICAL_DECK[36:]))
    assert stock.cards[-1] == CANONICAL_DECK[NEXT_STOCK_CARD]
    assert table.passes_left == 1


def test_sealing_the_deal_hides_only_the_stock() -> None:
    table, hidden = seal(GOLF.deal(CANONICAL_DECK))
    assert hidden == tuple(reversed(CANONICAL_DECK[36:]))
    assert all(isinstance(s, int) for s in table.pile("stock").cards)
    assert all(isinstance(s, str) for p in table.piles[1:] for s in p.cards)


# --- moving a column's top card onto the waste --------------------------------------------------


def test_a_card_one_rank_below_the_waste_moves_onto_it() -> None:
    table, reveal = dealt({top(2): "6S", WASTE_CARD: "7H"})
    below = table.pile("tableau:2").cards[:-1]
    after, events = play(table, to_waste(2), reveal)
    assert events == [CardMoved("tableau:2", "waste", ("6S",))]
    assert after.pile("tableau:2").cards == below
    assert after.pile("waste").cards == ("7H", "6S")


def test_a_card_one_rank_above_the_waste_moves_onto_it() -> None:
    table, reveal = dealt({top(5): "8C", WASTE_CARD: "7H"})
    after, events = play(table, to_waste(5), reveal)
    assert events == [CardMoved("tableau:5", "waste", ("8C",))]
    assert after.pile("waste").top == "8C"


@pytest.mark.parametrize("card", ["8H", "6D", "8S", "6C"])
def test_suits_are_ignored(card: Card) -> None:
    table, reveal = dealt({top(0): card, WASTE_CARD: "7H"})
    _, events = play(table, to_waste(0), reveal)
    assert events == [CardMoved("tableau:0", "waste", (card,))]


def test_the_card_under_a_moved_card_becomes_the_columns_top() -> None:
    table, reveal = dealt({at(3, 3): "5D", top(3): "6S", WASTE_CARD: "7H"})
    after, _ = play(table, to_waste(3), reveal)
    after, events = play(after, to_waste(3), reveal)
    assert events == [CardMoved("tableau:3", "waste", ("5D",))]
    assert len(after.pile("tableau:3")) == 3


def test_a_move_with_no_count_moves_the_top_card() -> None:
    table, reveal = dealt({top(1): "6S", WASTE_CARD: "7H"})
    _, events = play(table, MoveCards("tableau:1", "waste"), reveal)
    assert events == [CardMoved("tableau:1", "waste", ("6S",))]


@pytest.mark.parametrize("card", ["9H", "5S", "7C", "KD"])
def test_a_card_not_one_rank_apart_is_refused(card: Card) -> None:
    table, reveal = dealt({top(0): card, WASTE_CARD: "7H"})
    assert refused(table, to_waste(0), reveal) == errors.NOT_ONE_RANK_APART


def test_nothing_goes_on_a_king_not_even_a_queen() -> None:
    table, reveal = dealt({top(0): "QH", top(1): "AS", WASTE_CARD: "KS"})
    assert refused(table, to_waste(0), reveal) == errors.NOTHING_ON_A_KING
    assert refused(table, to_waste(1), reveal) == errors.NOTHING_ON_A_KING


def test_an_ace_takes_only_a_two() -> None:
    table, reveal = dealt({top(0): "2D", top(1): "KD", top(2): "3C", WASTE_CARD: "AS"})
    _, events = play(table, to_waste(0), reveal)
    assert events == [CardMoved("tableau:0", "waste", ("2D",))]
    assert refused(table, to_waste(1), reveal) == errors.NOT_ONE_RANK_APART  # no wrapping
    assert refused(table, to_waste(2), reveal) == errors.NOT_ONE_RANK_APART


def test_a_card_goes_on_the_waste_one_at_a_time() -> None:
    table, reveal = dealt({top(0): "6S", WASTE_CARD: "7H"})
    assert refused(table, MoveCards("tableau:0", "waste", 2), reveal) == errors.INVALID_COUNT
    assert refused(table, MoveCards("tableau:0", "waste", 0), reveal) == errors.INVALID_COUNT


def test_cards_go_only_onto_the_waste() -> None:
    table, reveal = dealt({top(0): "6S", top(1): "7S", WASTE_CARD: "7H"})
    move = MoveCards("tableau:0", "tableau:1", 1)
    assert refused(table, move, reveal) == errors.INVALID_DESTINATION
    assert refused(table, MoveCards("tableau:0", "stock"), reveal) == errors.INVALID_DESTINATION


def test_cards_leave_only_the_columns() -> None:
    table, reveal = dealt({})
    assert refused(table, MoveCards("waste", "waste"), reveal) == errors.INVALID_SOURCE
    assert refused(table, MoveCards("stock", "waste"), reveal) == errors.INVALID_SOURCE


@pytest.mark.parametrize(
    ("source", "target"), [("tableau:7", "waste"), ("tableau:0", "foundation"), ("hand", "waste")]
)
def test_an_unknown_pile_is_refused(source: str, target: str) -> None:
    table, reveal = dealt({})
    with pytest.raises(RuleViolation) as info:
        GOLF.decide(table, MoveCards(source, target), reveal)
    assert info.value.code == errors.UNKNOWN_PILE
    assert "tableau:0..tableau:6" in info.value.detail


def test_an_empty_column_has_nothing_to_move() -> None:
    table, reveal = dealt({WASTE_CARD: "7H"})
    table = with_piles(table, {"tableau:4": Pile()})
    assert refused(table, to_waste(4), reveal) == errors.SOURCE_EMPTY


def test_an_empty_waste_takes_nothing() -> None:
    table, reveal = dealt({top(0): "6S"})
    table = with_piles(table, {"waste": Pile()})
    assert refused(table, to_waste(0), reveal) == errors.WASTE_EMPTY


# --- drawing ------------------------------------------------------------------------------------


def test_a_draw_turns_the_stocks_next_card_onto_the_waste() -> None:
    table, reveal = dealt({WASTE_CARD: "7H", NEXT_STOCK_CARD: "2C", NEXT_STOCK_CARD + 1: "JD"})
    after, events = play(table, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", ("2C",))]
    assert after.pile("waste").cards == ("7H", "2C")
    assert len(after.pile("stock")) == 15
    _, events = play(after, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", ("JD",))]


def test_one_pass_the_empty_stock_refuses_a_draw() -> None:
    deck = deck_with({})
    table, reveal = dealt({})
    for n in range(16):
        table, events = play(table, Draw(), reveal)
        assert events == [CardDrawn("stock", "waste", (deck[36 + n],))]
    assert refused(table, Draw(), reveal) == errors.STOCK_EMPTY


@pytest.mark.parametrize("action", [Recycle(), Turn("tableau:0"), Remove(("tableau:0",)), Undo()])
def test_golf_has_no_other_action(action: PlayAction) -> None:
    table, reveal = dealt({})
    assert refused(table, action, reveal) == errors.ACTION_NOT_ALLOWED


def test_golf_plays_nothing_by_itself() -> None:
    table, reveal = dealt({})
    assert GOLF.automatic(table, reveal) == []


# --- units, won, undo ---------------------------------------------------------------------------


def test_units_are_the_cards_cleared_from_the_columns() -> None:
    table, reveal = dealt({top(0): "6S", WASTE_CARD: "7H"})
    assert GOLF.units(table) == 0
    after, _ = play(table, to_waste(0), reveal)
    assert GOLF.units(after) == 1
    after, _ = play(after, Draw(), reveal)
    assert GOLF.units(after) == 1  # a draw clears nothing
    three_left = with_piles(table, {f"tableau:{c}": Pile() for c in range(1, 7)})
    assert GOLF.units(three_left.with_piles({2: Pile(("AS", "2S", "3S"))})) == 32


def test_won_when_all_35_are_cleared() -> None:
    table, _ = dealt({})
    cleared = with_piles(table, {f"tableau:{c}": Pile() for c in range(7)})
    assert GOLF.units(cleared) == 35
    assert GOLF.is_won(cleared)
    one_left = with_piles(cleared, {"tableau:6": Pile(("KS",))})
    assert not GOLF.is_won(one_left)


def test_only_a_column_to_waste_move_can_be_undone() -> None:
    table, _ = dealt({})
    assert GOLF.undoable(CardMoved("tableau:0", "waste", ("6S",)), table)
    assert not GOLF.undoable(CardDrawn("stock", "waste", ("2C",)), table)
    assert "never a draw" in GOLF.undo_rule


# --- legal actions ------------------------------------------------------------------------------


def test_legal_actions_are_the_draw_and_every_fitting_column_top() -> None:
    tops = {0: "6S", 1: "KD", 2: "9C", 3: "8C", 4: "2S", 5: "JH", 6: "6H"}
    table, _ = dealt({top(c): card for c, card in tops.items()} | {WASTE_CARD: "7H"})
    assert GOLF.legal_actions(table) == [Draw(), to_waste(0), to_waste(3), to_waste(6)]


def test_no_draw_is_legal_once_the_stock_is_empty_and_nothing_on_a_king() -> None:
    table, _ = dealt({})
    king_on_waste = with_piles(table, {"stock": Pile(), "waste": Pile(("KH",))})
    assert GOLF.legal_actions(king_on_waste) == []


# --- the reference bot --------------------------------------------------------------------------


def columns(*cards: str) -> dict[str, Pile]:
    """Columns 0.. with the given cards, bottom first, written as ``"KS 9D 8C"``."""
    return {f"tableau:{c}": Pile(tuple(col.split())) for c, col in enumerate(cards)}


def test_the_bot_plays_the_move_that_starts_the_longest_chain() -> None:
    # 6S leads nowhere; after 8C the 9D under it follows, then the TS under that.
    table, _ = dealt({WASTE_CARD: "7H"})
    table = with_piles(table, columns("KS 6S", "TS 9D 8C", "KH", "KD", "KC", "QS", "QH"))
    assert bot.choose(GOLF, table, GOLF.legal_actions(table)) == to_waste(1)


def test_the_bot_breaks_ties_leftmost_then_draws_then_stops() -> None:
    table, _ = dealt({WASTE_CARD: "7H"})
    table = with_piles(table, columns("6S", "8C", "KH", "KD", "KC", "QS", "QH"))
    assert bot.choose(GOLF, table, GOLF.legal_actions(table)) == to_waste(0)
    assert bot.choose(GOLF, table, [Draw()]) == Draw()
    assert bot.choose(GOLF, table, []) is None


@pytest.mark.parametrize("seed", range(1, 9))
def test_the_bot_plays_a_whole_game_never_losing_a_card_from_the_foundation(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.) Golf's bot plays until nothing is
    left, every move raising its units."""
    tables = bot_play_out(GOLF, seed)
    units = [GOLF.units(t) for t in tables]
    assert units == sorted(units)
    assert GOLF.legal_actions(tables[-1]) == []
    assert not tables[-1].pile("stock").cards


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    assert all(len(table.piles[i].cards) <= golf.ROWS for i in golf.T)
    assert all(table.piles[i].down == 0 for i in golf.T)
