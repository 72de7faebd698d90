"""Upside-Down Pyramid (seed 004), rule by rule, refusals included, and its reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest

from events.catalog import CardDrawn, CardMoved, GameEvent, StockRecycled
from service import errors
from service.core import game_decider as g
from service.errors import RuleViolation
from service.games import upside_down_pyramid
from service.games import upside_down_pyramid as udp
from service.games.upside_down_pyramid import UPSIDE_DOWN_PYRAMID as UDP
from service.rtp.bots import upside_down_pyramid as bot
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove, Turn
from service.rules.building import same_suit_up
from service.rules.cards import Card, canonical_deck, is_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, seal
from tests.builders import pile, play, start
from tests.unit.rtp_support import bot_play_out

HEIGHTS = (1, 3, 5, 7, 9, 10, 8, 6, 4, 2)
TABLEAU_CARDS = 55
FULL_TWO_DECKS = Counter(canonical_deck(2))


def at(column: int, row: int) -> int:
    """The deal position of a column's card: row 0 is the bottom card."""
    return udp.POSITIONS[column][row]


def top(column: int, below: int = 0) -> int:
    """The deal position of a column's top card (``below``: that many cards under it)."""
    return udp.POSITIONS[column][-1 - below]


def stock_card(n: int) -> int:
    """The deal position of the ``n``-th card the stock gives (0: the first drawn)."""
    return TABLEAU_CARDS + n


def deck_with(placed: Mapping[int, Card]) -> tuple[Card, ...]:
    """A two-deck deck in deal order with the given cards at the given positions, the rest of
    the 104 (every code twice) filling the other positions in canonical order."""
    rest = Counter(canonical_deck(2))
    rest.subtract(Counter(placed.values()))
    assert all(n >= 0 for n in rest.values()), "a code placed more than twice"
    filler = iter(c for c in canonical_deck(1) for _ in range(rest[c]))
    deck = tuple(placed[i] if i in placed else next(filler) for i in range(104))
    assert is_deck(deck, 2)
    assert Counter(deck) == FULL_TWO_DECKS
    return deck


def dealt(placed: Mapping[int, Card]) -> tuple[Table, Reveal]:
    """The sealed table a deck with these cards deals, and the reveal for its stock."""
    table, hidden = seal(UDP.deal(deck_with(placed)))
    return table, lambda s: s if isinstance(s, str) else hidden[s]


def stacked(column: int, cards: str) -> dict[int, Card]:
    """Place ``cards`` (bottom first) as the top cards of ``column``."""
    codes = cards.split()
    return {top(column, len(codes) - 1 - k): code for k, code in enumerate(codes)}


def apply(table: Table, action: PlayAction, reveal: Reveal) -> tuple[Table, list[GameEvent]]:
    events = UDP.decide(table, action, reveal)
    for event in events:
        table = fold.apply(table, event)
    assert UDP.automatic(table, reveal) == []  # nothing is ever played by itself
    return table, events


def refused(table: Table, action: PlayAction, reveal: Reveal) -> RuleViolation:
    with pytest.raises(RuleViolation) as info:
        UDP.decide(table, action, reveal)
    return info.value


def code(table: Table, action: PlayAction, reveal: Reveal) -> str:
    return refused(table, action, reveal).code


def with_piles(table: Table, piles: Mapping[str, Pile]) -> Table:
    return table.with_piles({table.layout.index[p]: pile for p, pile in piles.items()})


def cards(text: str) -> Pile:
    """A face-up pile, bottom first."""
    return Pile(tuple(text.split()))


def move(source: str, target: str, count: int | None = None) -> MoveCards:
    return MoveCards(source, target, count)


def col(c: int) -> str:
    return f"tableau:{c}"


# --- declarations -------------------------------------------------------------------------------


def test_upside_down_pyramid_declares_its_piles_and_counters() -> None:
    assert UDP.id == "upside-down-pyramid"
    assert UDP.family == "upside-down-pyramid"
    assert UDP.rules_version == "upside-down-pyramid/2"
    assert (UDP.decks, UDP.passes, UDP.draw_count, UDP.max_units) == (2, 3, 3, 104)
    assert UDP.actions == ("draw", "recycle", "move", "undo")
    assert UDP.layout.ids == (
        "stock",
        "waste",
        *(f"foundation:{i}" for i in range(8)),
        *(f"tableau:{i}" for i in range(10)),
    )
    assert [UDP.layout.kind(p) for p in ("stock", "waste", "foundation:7", "tableau:9")] == [
        "stock",
        "waste",
        "foundation",
        "tableau",
    ]
    assert any("104" in line for line in UDP.summary)


# --- deal ---------------------------------------------------------------------------------------


def test_the_deal_lays_ten_face_up_columns_of_1_3_5_7_9_10_8_6_4_2() -> None:
    deck = canonical_deck(2)
    table = UDP.deal(deck)
    assert [len(table.pile(col(c))) for c in range(10)] == list(HEIGHTS)
    assert all(table.pile(col(c)).down == 0 for c in range(10))
    assert table.count("tableau") == 55


def test_the_deal_goes_row_by_row_over_the_columns_that_still_need_a_card() -> None:
    deck = canonical_deck(2)
    table = UDP.deal(deck)
    # Row 0 gives every column a card, row 1 the nine columns of 2 or more, ... row 9 only the
    # column of 10.
    assert [table.pile(col(c)).cards[0] for c in range(10)] == list(deck[:10])
    assert [table.pile(col(c)).cards[1] for c in range(1, 10)] == list(deck[10:19])
    assert [table.pile(col(c)).cards[2] for c in range(1, 9)] == list(deck[19:27])
    assert table.pile(col(5)).cards[9] == deck[54]
    assert table.pile(col(9)).cards == (deck[9], deck[18])
    assert table.pile(col(0)).cards == (deck[0],)
    positions = sorted(i for column in udp.POSITIONS for i in column)
    assert positions == list(range(55))


def test_the_stock_holds_the_other_49_face_down_next_card_on_top() -> None:
    deck = canonical_deck(2)
    table = UDP.deal(deck)
    stock = table.pile("stock")
    assert (len(stock), stock.down) == (49, 49)
    assert stock.cards == tuple(reversed(deck[55:]))
    assert stock.cards[-1] == deck[stock_card(0)]
    assert table.passes_left == 3
    assert table.fan == 0
    assert table.count("waste") == table.count("foundation") == 0


def test_sealing_the_deal_hides_only_the_stock_and_every_code_is_there_twice() -> None:
    deck = deck_with({})
    table, hidden = seal(UDP.deal(deck))
    assert hidden == tuple(reversed(deck[55:]))
    assert all(isinstance(s, int) for s in table.pile("stock").cards)
    assert Counter([*hidden, *(s for s in table.slots() if isinstance(s, str))]) == FULL_TWO_DECKS


def test_a_one_deck_deck_is_refused_invalid_deck() -> None:
    with pytest.raises(RuleViolation) as info:
        start(canonical_deck(1), variant="upside-down-pyramid")
    assert info.value.code == errors.INVALID_DECK


# --- building down in alternating colours -------------------------------------------------------


def test_a_card_goes_on_one_rank_higher_of_the_other_colour() -> None:
    table, reveal = dealt({top(0): "8H", top(2): "9S", top(2, 1): "4D"})
    after, events = apply(table, move(col(0), col(2)), reveal)
    assert events == [CardMoved(col(0), col(2), ("8H",))]
    assert after.pile(col(2)).cards[-2:] == ("9S", "8H")
    assert after.pile(col(0)).cards == ()


@pytest.mark.parametrize("onto", ["TS", "8S", "7S", "KC"])
def test_a_card_not_one_rank_lower_is_refused(onto: Card) -> None:
    table, reveal = dealt({top(0): "8H", top(9): onto})
    assert code(table, move(col(0), col(9)), reveal) == errors.NOT_ONE_RANK_LOWER


@pytest.mark.parametrize("onto", ["9H", "9D"])
def test_a_card_of_the_same_colour_is_refused(onto: Card) -> None:
    table, reveal = dealt({top(0): "8H", top(9): onto})
    assert code(table, move(col(0), col(9)), reveal) == errors.NOT_OPPOSITE_COLOUR


# --- a sequence may not be split ----------------------------------------------------------------


def run_table() -> tuple[Table, Reveal]:
    """tableau:4 ends in 4D | 9S 8H 7C (a run of three on a 4D it is not built on);
    tableau:8 ends in TD, tableau:9 in TH 8D, tableau:1 in 3S 8S."""
    placed = stacked(4, "4D 9S 8H 7C") | stacked(8, "5C TD") | stacked(9, "TH 8D")
    return dealt(placed | stacked(1, "QD 3S 8S"))


def test_the_movable_unit_is_the_whole_built_run() -> None:
    table, reveal = run_table()
    assert udp.run_of(table.pile(col(4))) == ("9S", "8H", "7C")
    after, events = apply(table, move(col(4), col(8)), reveal)
    assert events == [CardMoved(col(4), col(8), ("9S", "8H", "7C"))]
    assert after.pile(col(4)).top == "4D"
    assert after.pile(col(8)).cards[-4:] == ("TD", "9S", "8H", "7C")


def test_a_count_equal_to_the_run_is_accepted() -> None:
    table, reveal = run_table()
    _, events = apply(table, move(col(4), col(8), 3), reveal)
    assert events == [CardMoved(col(4), col(8), ("9S", "8H", "7C"))]


@pytest.mark.parametrize("count", [1, 2])
def test_part_of_a_run_is_refused_cannot_split_run(count: int) -> None:
    table, reveal = run_table()
    # 7C alone would fit the 8D of tableau:9, and 8H 7C the 9S... but a run moves whole.
    problem = refused(table, move(col(4), col(9), count), reveal)
    assert problem.code == errors.CANNOT_SPLIT_RUN
    assert "may not be split" in problem.detail


def test_more_than_the_run_is_refused_invalid_count() -> None:
    table, reveal = run_table()
    assert code(table, move(col(4), col(8), 4), reveal) == errors.INVALID_COUNT
    assert code(table, move(col(4), col(8), 10), reveal) == errors.INVALID_COUNT
    assert code(table, move(col(4), col(8), 0), reveal) == errors.INVALID_COUNT
    assert code(table, move(col(4), col(8), -1), reveal) == errors.INVALID_COUNT


def test_with_no_count_the_whole_run_is_judged_by_its_bottom_card() -> None:
    table, reveal = run_table()
    # 7C would fit the 8D, but the run's bottom card 9S does not.
    assert code(table, move(col(4), col(9)), reveal) == errors.NOT_ONE_RANK_LOWER


def test_a_top_card_not_built_on_the_one_below_moves_alone() -> None:
    table, reveal = run_table()
    assert udp.run_of(table.pile(col(1))) == ("8S",)  # 8S is not built on 3S
    table = with_piles(table, {col(0): cards("9D")})
    after, events = apply(table, move(col(1), col(0)), reveal)
    assert events == [CardMoved(col(1), col(0), ("8S",))]
    assert after.pile(col(1)).top == "3S"


def test_the_top_card_of_a_run_goes_to_a_foundation_alone() -> None:
    table, reveal = run_table()
    table = with_piles(table, {"foundation:3": cards("AC 2C 3C 4C 5C 6C")})
    after, events = apply(table, move(col(4), "foundation:3"), reveal)
    assert events == [CardMoved(col(4), "foundation:3", ("7C",))]
    assert udp.run_of(after.pile(col(4))) == ("9S", "8H")
    assert code(table, move(col(4), "foundation:3", 3), reveal) == errors.INVALID_COUNT


# --- empty columns ------------------------------------------------------------------------------


def test_an_empty_column_takes_a_king() -> None:
    table, reveal = dealt({top(1): "KH", top(1, 1): "2C"})
    table = with_piles(table, {col(0): Pile()})
    after, events = apply(table, move(col(1), col(0)), reveal)
    assert events == [CardMoved(col(1), col(0), ("KH",))]
    assert after.pile(col(0)).cards == ("KH",)


def test_an_empty_column_takes_a_run_headed_by_a_king() -> None:
    table, reveal = dealt(stacked(3, "2C KH QS JD"))
    table = with_piles(table, {col(0): Pile()})
    _, events = apply(table, move(col(3), col(0)), reveal)
    assert events == [CardMoved(col(3), col(0), ("KH", "QS", "JD"))]


def test_an_empty_column_refuses_anything_else() -> None:
    table, reveal = dealt(stacked(3, "2C QS JD") | {top(9): "QH"})
    table = with_piles(table, {col(0): Pile(), "waste": cards("JC")})
    assert code(table, move(col(3), col(0)), reveal) == errors.ONLY_KING_TO_EMPTY_COLUMN
    assert code(table, move(col(9), col(0)), reveal) == errors.ONLY_KING_TO_EMPTY_COLUMN
    assert code(table, move("waste", col(0)), reveal) == errors.ONLY_KING_TO_EMPTY_COLUMN


def test_an_empty_column_has_nothing_to_move() -> None:
    table, reveal = dealt({})
    table = with_piles(table, {col(0): Pile()})
    assert code(table, move(col(0), col(1)), reveal) == errors.SOURCE_EMPTY


# --- draw three, three passes -------------------------------------------------------------------


def draw_table() -> tuple[Table, Reveal, tuple[Card, ...]]:
    deck = deck_with({})
    table, hidden = seal(UDP.deal(deck))
    return table, lambda s: s if isinstance(s, str) else hidden[s], deck[55:]


def test_a_draw_shows_the_stocks_next_three_cards_onto_the_waste() -> None:
    table, reveal, stock = draw_table()
    after, events = apply(table, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", stock[:3])]
    assert after.pile("waste").cards == stock[:3]
    assert after.pile("waste").top == stock[2]  # the last one drawn is playable
    assert after.fan == 3
    assert len(after.pile("stock")) == 46


def test_the_last_draw_of_a_pass_shows_what_is_left() -> None:
    table, reveal, stock = draw_table()
    for n in range(16):
        table, events = apply(table, Draw(), reveal)
        assert events == [CardDrawn("stock", "waste", stock[3 * n : 3 * n + 3])]
    table, events = apply(table, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", stock[48:])]  # 49 = 16 x 3 + 1
    assert table.fan == 1
    problem = refused(table, Draw(), reveal)
    assert (problem.code, problem.detail) == (
        errors.STOCK_EMPTY,
        "the stock is empty; recycle the waste first",
    )


def test_three_passes_two_recycles_keeping_the_order_then_no_passes_left() -> None:
    table, reveal, stock = draw_table()
    for passes_left in (3, 2, 1):
        assert table.passes_left == passes_left
        while table.pile("stock").cards:
            table, _ = apply(table, Draw(), reveal)
        assert table.pile("waste").cards == stock
        if passes_left > 1:
            assert code(table, Draw(), reveal) == errors.STOCK_EMPTY
            table, events = apply(table, Recycle(), reveal)
            assert events == [StockRecycled(cards=49, passes_left=passes_left - 1)]
            assert table.pile("stock").down == 49
            assert (table.count("waste"), table.fan) == (0, 0)
            table, events = apply(table, Draw(), reveal)
            assert events == [CardDrawn("stock", "waste", stock[:3])]  # the same order again
    assert code(table, Recycle(), reveal) == errors.NO_PASSES_LEFT
    problem = refused(table, Draw(), reveal)
    assert problem.detail == "the stock is empty; no passes through the stock are left"
    assert Recycle() not in UDP.legal_actions(table)


def test_a_recycle_with_cards_in_the_stock_is_refused_stock_not_empty() -> None:
    table, reveal, _ = draw_table()
    table, _ = apply(table, Draw(), reveal)
    assert code(table, Recycle(), reveal) == errors.STOCK_NOT_EMPTY


def test_a_recycle_of_an_empty_waste_is_refused_waste_empty() -> None:
    table, reveal, _ = draw_table()
    table = with_piles(table, {"stock": Pile()})
    assert code(table, Recycle(), reveal) == errors.WASTE_EMPTY


def test_the_fan_shrinks_as_the_waste_top_is_played() -> None:
    table, reveal = dealt(
        {stock_card(0): "2C", stock_card(1): "7C", stock_card(2): "6H", top(2): "8H"}
    )
    table, _ = apply(table, Draw(), reveal)
    assert (table.pile("waste").cards, table.fan) == (("2C", "7C", "6H"), 3)
    assert code(table, move("waste", col(2)), reveal) == errors.NOT_ONE_RANK_LOWER  # 6H on 8H
    table = with_piles(table, {col(0): cards("7S")})
    table, events = apply(table, move("waste", col(0)), reveal)
    assert events == [CardMoved("waste", col(0), ("6H",))]
    table, events = apply(table, move("waste", col(2)), reveal)
    assert events == [CardMoved("waste", col(2), ("7C",))]
    assert (table.pile("waste").cards, table.fan) == (("2C",), 1)


# --- the waste's top card -----------------------------------------------------------------------


def test_the_waste_top_card_is_playable_to_a_column_and_a_foundation() -> None:
    table, reveal = dealt({stock_card(2): "AH", top(4): "2S"})
    table, _ = apply(table, Draw(), reveal)
    table, events = apply(table, move("waste", "foundation:5"), reveal)
    assert events == [CardMoved("waste", "foundation:5", ("AH",))]
    table = with_piles(table, {"waste": cards("9D 5D"), col(0): cards("6C")})
    _, events = apply(table, move("waste", col(0), 1), reveal)
    assert events == [CardMoved("waste", col(0), ("5D",))]


def test_only_the_waste_top_card_moves() -> None:
    table, reveal = dealt({})
    table = with_piles(table, {"waste": cards("4D 5D"), col(0): cards("6C")})
    assert code(table, move("waste", col(0), 2), reveal) == errors.INVALID_COUNT


def test_an_empty_waste_has_nothing_to_play() -> None:
    table, reveal = dealt({})
    assert code(table, move("waste", "foundation:0"), reveal) == errors.WASTE_EMPTY


# --- foundations --------------------------------------------------------------------------------


def test_an_ace_starts_any_of_the_eight_foundations() -> None:
    table, reveal = dealt({top(0): "AD"})
    for n in range(8):
        after, events = apply(table, move(col(0), f"foundation:{n}"), reveal)
        assert events == [CardMoved(col(0), f"foundation:{n}", ("AD",))]
        assert UDP.units(after) == 1


def test_a_foundation_builds_up_by_suit() -> None:
    table, reveal = dealt({top(0): "3S", top(1): "3H", top(2): "4S"})
    table = with_piles(table, {"foundation:2": cards("AS 2S")})
    _, events = apply(table, move(col(0), "foundation:2"), reveal)
    assert events == [CardMoved(col(0), "foundation:2", ("3S",))]
    assert code(table, move(col(1), "foundation:2"), reveal) == errors.FOUNDATION_WRONG_SUIT
    assert code(table, move(col(2), "foundation:2"), reveal) == errors.FOUNDATION_WRONG_RANK
    assert code(table, move(col(0), "foundation:3"), reveal) == errors.FOUNDATION_NEEDS_ACE


def test_two_foundations_of_one_suit_grow_side_by_side() -> None:
    table, reveal = dealt({top(0): "2S", top(9): "2S"})
    table = with_piles(table, {"foundation:0": cards("AS"), "foundation:6": cards("AS")})
    table, _ = apply(table, move(col(0), "foundation:0"), reveal)
    table, events = apply(table, move(col(9), "foundation:6"), reveal)
    assert events == [CardMoved(col(9), "foundation:6", ("2S",))]
    assert table.pile("foundation:0").cards == table.pile("foundation:6").cards == ("AS", "2S")


def test_foundation_as_a_destination_is_the_first_that_fits() -> None:
    table, reveal = dealt({top(0): "2S", top(1): "9D"})
    table = with_piles(table, {"foundation:1": cards("AH"), "foundation:4": cards("AS")})
    _, events = apply(table, move(col(0), "foundation"), reveal)
    assert events == [CardMoved(col(0), "foundation:4", ("2S",))]
    assert code(table, move(col(1), "foundation"), reveal) == errors.NO_FOUNDATION_FITS


def test_no_card_comes_back_off_a_foundation() -> None:
    table, reveal = dealt({top(0): "3D"})
    table = with_piles(table, {"foundation:0": cards("AS 2S")})
    problem = refused(table, move("foundation:0", col(0)), reveal)
    assert problem.code == errors.INVALID_SOURCE
    assert code(table, move("foundation:0", "foundation:1"), reveal) == errors.INVALID_SOURCE


# --- other refusals -----------------------------------------------------------------------------


def test_cards_never_go_to_the_stock_or_the_waste() -> None:
    table, reveal = dealt({})
    assert code(table, move(col(0), "waste"), reveal) == errors.INVALID_DESTINATION
    assert code(table, move(col(0), "stock"), reveal) == errors.INVALID_DESTINATION


def test_cards_leave_the_stock_only_by_drawing() -> None:
    table, reveal = dealt({})
    assert code(table, move("stock", col(0)), reveal) == errors.INVALID_SOURCE


def test_a_pile_cannot_be_both_source_and_destination() -> None:
    table, reveal = dealt({})
    assert code(table, move(col(3), col(3)), reveal) == errors.SAME_PILE


@pytest.mark.parametrize(
    ("source", "target"),
    [("tableau:10", "tableau:0"), ("tableau:0", "foundation:8"), ("foundation", "tableau:0")],
)
def test_an_unknown_pile_is_refused(source: str, target: str) -> None:
    table, reveal = dealt({})
    problem = refused(table, move(source, target), reveal)
    assert problem.code == errors.UNKNOWN_PILE
    assert "tableau:0..tableau:9" in problem.detail


@pytest.mark.parametrize("action", [Turn("tableau:0"), Remove(("tableau:0",))])
def test_there_is_no_turn_or_remove(action: PlayAction) -> None:
    table, reveal = dealt({})
    assert code(table, action, reveal) == errors.ACTION_NOT_ALLOWED


# --- units, won ---------------------------------------------------------------------------------


def test_units_are_the_cards_on_the_foundations() -> None:
    table, reveal = dealt({top(0): "AS", top(1): "2S"})
    assert UDP.units(table) == 0
    table, _ = apply(table, move(col(0), "foundation:0"), reveal)
    table, _ = apply(table, move(col(1), "foundation:0"), reveal)
    assert UDP.units(table) == 2
    table, _ = apply(table, Draw(), reveal)
    assert UDP.units(table) == 2


def test_won_when_all_104_are_on_the_foundations() -> None:
    table, reveal = dealt({})
    suit_run = "A 2 3 4 5 6 7 8 9 T J Q K".split()
    full = {
        f"foundation:{n}": cards(" ".join(r + "SHDC"[n % 4] for r in suit_run)) for n in range(8)
    }
    empty = {p: Pile() for p in udp.LAYOUT.ids if not p.startswith("foundation")}
    won = with_piles(table, full | empty)
    assert UDP.units(won) == 104
    assert UDP.is_won(won)
    one_left = with_piles(won, {"foundation:7": cards(" ".join(r + "C" for r in suit_run[:-1]))})
    one_left = with_piles(one_left, {col(0): cards("KC")})
    assert not UDP.is_won(one_left)
    after, _ = apply(one_left, move(col(0), "foundation:7"), reveal)
    assert UDP.is_won(after)


# --- undo ---------------------------------------------------------------------------------------


def test_any_move_can_be_undone_never_a_draw_or_a_recycle() -> None:
    table, _ = dealt({})
    assert UDP.undoable(CardMoved(col(0), col(1), ("8H",)), table)
    assert UDP.undoable(CardMoved("waste", col(1), ("8H",)), table)
    assert UDP.undoable(CardMoved(col(0), "foundation:0", ("AS",)), table)
    assert not UDP.undoable(CardDrawn("stock", "waste", ("2C", "3C", "4C")), table)
    assert not UDP.undoable(StockRecycled(49, 2), table)
    assert "never a draw or a recycle" in UDP.undo_rule


def test_undo_takes_back_the_last_move_on_a_dealt_game() -> None:
    deck = deck_with({top(0): "AS", stock_card(0): "KD"})
    game, _ = start(deck, variant="upside-down-pyramid")
    before = game.table
    game, events = play(game, g.MoveCards(col(0), "foundation:0"))
    assert events == [CardMoved(col(0), "foundation:0", ("AS",))]
    assert game.units == 1
    game, _ = play(game, g.Undo())
    assert game.table == before
    assert game.units == 0
    game, _ = play(game, g.Draw())
    assert pile(game, "waste").cards[0] == "KD"
    with pytest.raises(RuleViolation) as info:
        play(game, g.Undo())
    assert info.value.code == errors.UNDO_NOT_ALLOWED
    assert info.value.detail.endswith(UDP.undo_rule)


# --- legal actions ------------------------------------------------------------------------------


def test_legal_actions_are_exactly_what_the_rules_accept() -> None:
    table, reveal = run_table()
    table = with_piles(
        table,
        {
            col(0): Pile(),
            "waste": cards("KS"),
            "foundation:3": cards("AC 2C 3C 4C 5C 6C"),
            "foundation:5": cards("AD 2D 3D"),
        },
    )
    legal = UDP.legal_actions(table)
    assert legal[0] == Draw()
    ids = udp.LAYOUT.ids
    for source in ids:
        for target in ids:
            for count in (None, *range(0, len(table.pile(source).cards) + 2)):
                action = move(source, target, count)
                try:
                    events = UDP.decide(table, action, reveal)
                except RuleViolation:
                    assert count is None or action not in legal, action
                    continue
                (moved,) = events
                assert isinstance(moved, CardMoved)
                assert move(moved.source, moved.target, len(moved.cards)) in legal, action
    for offered in legal:
        UDP.decide(table, offered, reveal)
    assert move(col(4), col(8), 3) in legal
    assert move(col(4), "foundation:3", 1) in legal
    assert move("waste", col(0), 1) in legal
    assert move(col(4), col(9), 1) not in legal


# --- the reference bot --------------------------------------------------------------------------


def test_the_bot_plays_a_card_to_a_foundation_first() -> None:
    table, _ = run_table()
    table = with_piles(table, {"foundation:3": cards("AC 2C 3C 4C 5C 6C")})
    assert bot.choose(UDP, table, UDP.legal_actions(table)) == move(col(4), "foundation:3", 1)


def test_the_bot_uncovers_a_card_then_draws_then_recycles_then_stops() -> None:
    table, _ = dealt(stacked(0, "8C") | stacked(2, "4H 7D") | stacked(9, "QS JD"))
    table = with_piles(table, {col(c): Pile() for c in (1, 3, 4, 5, 6, 7, 8)})
    legal = UDP.legal_actions(table)
    assert bot.choose(UDP, table, legal) == move(col(2), col(0), 1)  # 7D on 8C uncovers 4H
    assert bot.choose(UDP, table, [Draw()]) == Draw()
    assert bot.choose(UDP, table, [Recycle()]) == Recycle()
    assert bot.choose(UDP, table, []) is None
    assert bot.BOT_VERSION == "upside-down-pyramid-bot/1"


@pytest.mark.parametrize("seed", range(1, 5))
def test_the_bot_plays_a_whole_game_never_losing_a_card_from_the_foundations(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.) It stops after its one redeal or won."""
    tables = bot_play_out(UDP, seed)
    units = [UDP.units(t) for t in tables]
    assert units == sorted(units)
    assert tables[-1].passes_left == 1 or UDP.is_won(tables[-1])


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    stock = table.pile(upside_down_pyramid.STOCK)
    assert stock.down == len(stock.cards)  # drawn three at a time, never turned
    for i in upside_down_pyramid.F:
        pile = table.piles[i].cards
        assert pile == table.piles[i].up
        for n, card in enumerate(pile):  # each foundation: one suit, Ace up
            assert same_suit_up(str(card), str(pile[n - 1]) if n else None), pile
    for i in upside_down_pyramid.T:
        assert table.piles[i].down == 0  # every column card lies face up
        # What is left of the deal (at most 10 cards), then a run built down on it.
        assert len(table.piles[i].cards) <= max(upside_down_pyramid.HEIGHTS) + 12
