"""Pyramid (seed 004), rule by rule, and its reference bot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import pytest

from events.catalog import CardDrawn, CardTurned, GameEvent, PairRemoved, RemovedCard
from service import errors
from service.core import game_decider as g
from service.core.shuffle import derive_deck
from service.errors import RuleViolation
from service.games import pyramid
from service.games.pyramid import (
    COVERED_BY,
    LAYOUT,
    PLAYABLE,
    PYRAMID,
    PYRAMID_PILES,
    position,
)
from service.rtp.bots import pyramid as bot
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove
from service.rules.cards import CANONICAL_DECK, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, card_of, seal, table
from tests import builders
from tests.builders import play_on
from tests.unit.rtp_support import bot_play_out

# --- helpers ------------------------------------------------------------------------------------


def deck_with(placed: Mapping[int, Card]) -> tuple[Card, ...]:
    """A full deck with the given cards at the given deal positions (0..27 the pyramid row by
    row, 28 the stock's first card, 29 its next), the others filled in canonical order."""
    return builders.deck_with(placed)


def dealt(deck: Sequence[Card]) -> tuple[Table, Reveal]:
    """The sealed deal of ``deck`` and the reveal that shows its hidden cards."""
    sealed, hidden = seal(PYRAMID.deal(deck))
    return sealed, lambda slot: card_of(slot, hidden)


def play(t: Table, reveal: Reveal, *actions: PlayAction) -> tuple[Table, list[GameEvent]]:
    return play_on(PYRAMID, t, reveal, *actions)


def refused(t: Table, action: PlayAction, reveal: Reveal) -> str:
    with pytest.raises(RuleViolation) as info:
        PYRAMID.decide(t, action, reveal)
    return info.value.code


def removed(*cards: tuple[str, Card]) -> PairRemoved:
    return PairRemoved(tuple(RemovedCard(pile, card) for pile, card in cards), "foundation")


def remove(*piles: str) -> Remove:
    return Remove(piles)


# --- the deal -----------------------------------------------------------------------------------


def test_deal_lays_28_cards_in_a_pyramid_of_seven_rows_all_face_up_row_by_row() -> None:
    deck = derive_deck(bytes([4]) * 32)
    t = PYRAMID.deal(deck)
    rows = [[PYRAMID_PILES[position(r, i)] for i in range(r + 1)] for r in range(7)]
    assert [len(row) for row in rows] == [1, 2, 3, 4, 5, 6, 7]
    assert rows[0] == ["pyramid:0"]
    assert rows[6] == [f"pyramid:{n}" for n in range(21, 28)]
    for n in range(28):
        assert t.pile(f"pyramid:{n}") == Pile((deck[n],), 0)


def test_row_r_card_i_is_covered_by_row_r_plus_1_cards_i_and_i_plus_1() -> None:
    assert COVERED_BY[0] == (1, 2)  # the apex, by the second row
    assert COVERED_BY[1] == (3, 4)
    assert COVERED_BY[2] == (4, 5)  # neighbours share a cover
    assert COVERED_BY[15] == (21, 22)  # row 5's first card, by the bottom row's first two
    assert COVERED_BY[20] == (26, 27)
    assert all(COVERED_BY[n] == () for n in range(21, 28))  # nothing covers the bottom row


def test_stock_holds_the_other_24_next_card_on_top_and_face_up() -> None:
    deck = derive_deck(bytes([4]) * 32)
    t = PYRAMID.deal(deck)
    assert t.pile("stock") == Pile(tuple(reversed(deck[28:])), 23)
    assert t.pile("stock").top == deck[28]
    assert t.pile("waste") == Pile()
    assert t.pile("foundation") == Pile()
    assert (t.passes_left, PYRAMID.units(t)) == (1, 0)
    sealed, hidden = seal(t)
    assert hidden == tuple(reversed(deck[29:]))  # only the stock's face-down cards are sealed
    assert sealed.pile("stock").top == deck[28]
    assert all(isinstance(s, int) for s in sealed.pile("stock").face_down)


def test_game_declarations() -> None:
    assert (PYRAMID.id, PYRAMID.title, PYRAMID.family) == ("pyramid", "Pyramid", "pyramid")
    assert (PYRAMID.rules_version, PYRAMID.decks, PYRAMID.max_units) == ("pyramid/2", 1, 52)
    assert (PYRAMID.passes, PYRAMID.draw_count) == (1, 1)
    assert LAYOUT.kind("foundation") == "foundation"
    assert LAYOUT.kind("pyramid:27") == "pyramid"
    assert any("stake x M x cards removed / 52" in line for line in PYRAMID.summary)


# --- removing cards -----------------------------------------------------------------------------


def test_two_uncovered_cards_totalling_13_are_removed_to_the_foundation() -> None:
    t, reveal = dealt(deck_with({21: "6H", 22: "7C"}))
    t, events = play(t, reveal, remove("pyramid:21", "pyramid:22"))
    assert events == [removed(("pyramid:21", "6H"), ("pyramid:22", "7C"))]
    assert t.pile("pyramid:21") == t.pile("pyramid:22") == Pile()
    assert t.pile("foundation").cards == ("6H", "7C")
    assert PYRAMID.units(t) == 2


def test_removing_both_covers_uncovers_the_card_above() -> None:
    t, reveal = dealt(deck_with({15: "KD", 21: "6H", 22: "7C"}))
    assert refused(t, remove("pyramid:15"), reveal) == errors.CARD_COVERED
    t, _ = play(t, reveal, remove("pyramid:21", "pyramid:22"))
    t, events = play(t, reveal, remove("pyramid:15"))
    assert events == [removed(("pyramid:15", "KD"))]


def test_ranks_count_ace_1_jack_11_queen_12() -> None:
    t, reveal = dealt(deck_with({21: "AH", 22: "QC", 23: "2D", 24: "JS"}))
    t, _ = play(t, reveal, remove("pyramid:21", "pyramid:22"), remove("pyramid:23", "pyramid:24"))
    assert t.pile("foundation").cards == ("AH", "QC", "2D", "JS")


def test_a_king_is_removed_alone() -> None:
    t, reveal = dealt(deck_with({27: "KS"}))
    t, events = play(t, reveal, remove("pyramid:27"))
    assert events == [removed(("pyramid:27", "KS"))]
    assert PYRAMID.units(t) == 1


def test_a_single_card_that_is_not_a_king_is_refused() -> None:
    t, reveal = dealt(deck_with({27: "QS"}))
    assert refused(t, remove("pyramid:27"), reveal) == errors.ONLY_KING_ALONE


def test_two_cards_not_totalling_13_are_refused() -> None:
    t, reveal = dealt(deck_with({21: "6H", 22: "8C", 27: "KS"}))
    assert refused(t, remove("pyramid:21", "pyramid:22"), reveal) == errors.PAIR_NOT_THIRTEEN
    assert refused(t, remove("pyramid:27", "pyramid:21"), reveal) == errors.PAIR_NOT_THIRTEEN


def test_a_covered_card_is_refused() -> None:
    t, reveal = dealt(deck_with({0: "KH", 15: "6H", 23: "7C"}))
    assert (
        refused(t, remove("pyramid:0"), reveal) == errors.CARD_COVERED
    )  # the apex, under 27 cards
    # pyramid:15 lies under pyramid:21 and pyramid:22; pyramid:23 is no cover of it
    assert refused(t, remove("pyramid:15", "pyramid:23"), reveal) == errors.CARD_COVERED
    assert refused(t, remove("pyramid:23", "pyramid:15"), reveal) == errors.CARD_COVERED


def test_seed_004_a_card_pairs_with_the_only_card_still_covering_it() -> None:
    t, reveal = dealt(deck_with({15: "8D", 21: "KS", 22: "5C", 28: "5H"}))
    # while both covers remain, pairing with one of them is not enough
    assert refused(t, remove("pyramid:15", "pyramid:22"), reveal) == errors.CARD_COVERED
    t, _ = play(t, reveal, remove("pyramid:21"))
    # the only card left covering pyramid:15 is pyramid:22, the one it pairs with
    assert remove("pyramid:15", "pyramid:22") in PYRAMID.legal_actions(t)
    assert PYRAMID.decide(t, remove("pyramid:22", "pyramid:15"), reveal) == [
        removed(("pyramid:22", "5C"), ("pyramid:15", "8D"))
    ]
    t, events = play(t, reveal, remove("pyramid:15", "pyramid:22"))
    assert events == [removed(("pyramid:15", "8D"), ("pyramid:22", "5C"))]


def test_seed_004_exception_is_for_the_partner_only() -> None:
    t, reveal = dealt(deck_with({15: "8D", 21: "KS", 22: "5C", 28: "5H"}))
    t, _ = play(t, reveal, remove("pyramid:21"))
    # the stock's 5H pairs with 8D too, but pyramid:22 still covers it
    assert refused(t, remove("pyramid:15", "stock"), reveal) == errors.CARD_COVERED
    assert remove("pyramid:15", "stock") not in PYRAMID.legal_actions(t)


def test_the_stocks_top_card_pairs_and_the_next_one_turns_face_up() -> None:
    deck = deck_with({21: "6H", 28: "7C"})
    t, reveal = dealt(deck)
    events = PYRAMID.decide(t, remove("pyramid:21", "stock"), reveal)
    assert events == [removed(("pyramid:21", "6H"), ("stock", "7C"))]
    t = g.apply_all(t, events)
    assert t.pile("stock").top is None  # the next card is still face down ...
    assert PYRAMID.automatic(t, reveal) == [CardTurned("stock", deck[29])]  # ... and turns
    t = g.apply_all(t, PYRAMID.automatic(t, reveal))
    assert (t.pile("stock").top, t.pile("stock").down, len(t.pile("stock"))) == (deck[29], 22, 23)
    assert PYRAMID.automatic(t, reveal) == []


def test_the_wastes_top_card_pairs() -> None:
    t, reveal = dealt(deck_with({21: "6H", 28: "7C"}))
    t, _ = play(t, reveal, Draw())
    t, events = play(t, reveal, remove("waste", "pyramid:21"))
    assert events == [removed(("waste", "7C"), ("pyramid:21", "6H"))]
    assert t.pile("waste") == Pile()


def test_the_stocks_top_card_pairs_with_the_wastes() -> None:
    deck = deck_with({28: "6H", 29: "7C"})
    t, reveal = dealt(deck)
    t, _ = play(t, reveal, Draw())
    t, events = play(t, reveal, remove("waste", "stock"))
    assert events == [removed(("waste", "6H"), ("stock", "7C")), CardTurned("stock", deck[30])]


def test_removal_refusals_name_the_problem() -> None:
    t, reveal = dealt(deck_with({21: "6H", 22: "7C", 27: "KS"}))
    assert refused(t, remove("tableau:0"), reveal) == errors.UNKNOWN_PILE
    assert refused(t, remove(), reveal) == errors.INVALID_COUNT
    three = remove("pyramid:21", "pyramid:22", "pyramid:27")
    assert refused(t, three, reveal) == errors.INVALID_COUNT
    assert refused(t, remove("pyramid:27", "pyramid:27"), reveal) == errors.SAME_PILE
    assert refused(t, remove("waste"), reveal) == errors.SOURCE_EMPTY
    t, _ = play(t, reveal, remove("pyramid:27"))
    assert refused(t, remove("pyramid:27"), reveal) == errors.SOURCE_EMPTY
    assert refused(t, remove("foundation"), reveal) == errors.INVALID_SOURCE


# --- the stock ----------------------------------------------------------------------------------


def test_draw_puts_the_stocks_top_card_on_the_waste_and_the_next_turns_face_up() -> None:
    deck = derive_deck(bytes([4]) * 32)
    t, reveal = dealt(deck)
    events = PYRAMID.decide(t, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", (deck[28],))]
    t = g.apply_all(t, events)
    assert t.pile("waste").top == deck[28]
    assert t.pile("stock").top is None
    assert PYRAMID.automatic(t, reveal) == [CardTurned("stock", deck[29])]
    t = g.apply_all(t, PYRAMID.automatic(t, reveal))
    assert t.pile("stock").top == deck[29]


def test_one_pass_through_the_stock_and_no_recycle() -> None:
    deck = derive_deck(bytes([4]) * 32)
    t, reveal = dealt(deck)
    t, _ = play(t, reveal, *[Draw()] * 24)
    assert t.pile("waste").cards == deck[28:]
    assert t.pile("stock") == Pile()
    assert PYRAMID.automatic(t, reveal) == []
    assert Draw() not in PYRAMID.legal_actions(t)
    assert refused(t, Draw(), reveal) == errors.STOCK_EMPTY
    assert refused(t, Recycle(), reveal) == errors.ACTION_NOT_ALLOWED
    assert refused(t, MoveCards("waste", "pyramid:0"), reveal) == errors.ACTION_NOT_ALLOWED


# --- legal actions ------------------------------------------------------------------------------


def test_legal_actions_are_draw_and_every_removal_once() -> None:
    bottom = {21: "AS", 22: "2S", 23: "3S", 24: "4S", 25: "5S", 26: "6S", 27: "AH"}
    t, _ = dealt(deck_with({**bottom, 28: "7C"}))
    assert PYRAMID.legal_actions(t) == [Draw(), remove("pyramid:26", "stock")]


def test_legal_actions_list_kings_alone_and_pairs_in_a_stable_order() -> None:
    bottom = {21: "KS", 22: "6H", 23: "7C", 24: "2D", 25: "7D", 26: "3C", 27: "AC"}
    t, _ = dealt(deck_with({**bottom, 28: "KH"}))
    assert PYRAMID.legal_actions(t) == [
        Draw(),
        remove("pyramid:21"),
        remove("pyramid:22", "pyramid:23"),
        remove("pyramid:22", "pyramid:25"),
        remove("stock"),
    ]


def accepted_removals(t: Table, reveal: Reveal) -> set[frozenset[str]]:
    """Every removal ``decide`` accepts, by trying every one or two playable piles."""
    tries = [(p,) for p in PLAYABLE] + list(combinations(PLAYABLE, 2))
    found: set[frozenset[str]] = set()
    for piles in tries:
        try:
            PYRAMID.decide(t, Remove(piles), reveal)
        except RuleViolation:
            continue
        found.add(frozenset(piles))
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_legal_removals_are_exactly_what_decide_accepts(seed: int) -> None:
    t, reveal = dealt(derive_deck(bytes([seed]) * 32))
    for _ in range(300):
        legal = PYRAMID.legal_actions(t)
        listed = [frozenset(a.piles) for a in legal if isinstance(a, Remove)]
        assert len(set(listed)) == len(listed)
        assert set(listed) == accepted_removals(t, reveal)
        action = bot.choose(PYRAMID, t, legal)
        if action is None:
            break
        t, _ = play(t, reveal, action)


# --- undo ---------------------------------------------------------------------------------------


def test_undo_takes_back_a_removal_that_used_no_stock_card() -> None:
    t, reveal = dealt(deck_with({21: "6H", 22: "7C", 23: "6D", 28: "7S", 29: "KH"}))
    (pyramid_pair,) = PYRAMID.decide(t, remove("pyramid:21", "pyramid:22"), reveal)
    assert PYRAMID.undoable(pyramid_pair, t)
    (with_stock,) = PYRAMID.decide(t, remove("pyramid:23", "stock"), reveal)
    assert not PYRAMID.undoable(with_stock, t)
    (drawn,) = PYRAMID.decide(t, Draw(), reveal)
    assert not PYRAMID.undoable(drawn, t)
    t2, _ = play(t, reveal, Draw())
    (king_from_stock,) = PYRAMID.decide(t2, remove("stock"), reveal)  # the KH that turned up
    assert not PYRAMID.undoable(king_from_stock, t2)
    (with_waste,) = PYRAMID.decide(t2, remove("waste", "pyramid:23"), reveal)
    assert PYRAMID.undoable(with_waste, t2)  # the card under it on the waste was seen already
    assert not PYRAMID.undoable(CardTurned("stock", "KH"), t2)


# --- units, won and over ------------------------------------------------------------------------


def test_units_are_cards_removed_and_all_52_is_a_win() -> None:
    won = table(LAYOUT, {"foundation": Pile(CANONICAL_DECK)}, passes_left=1)
    assert (PYRAMID.units(won), PYRAMID.is_won(won)) == (52, True)
    assert PYRAMID.legal_actions(won) == []
    one_left = table(LAYOUT, {"foundation": Pile(CANONICAL_DECK[:51]), "pyramid:0": Pile(("KC",))})
    assert (PYRAMID.units(one_left), PYRAMID.is_won(one_left)) == (51, False)
    assert PYRAMID.legal_actions(one_left) == [remove("pyramid:0")]


def test_the_game_is_over_when_the_stock_is_empty_and_no_pair_is_exposed() -> None:
    over = table(LAYOUT, {"pyramid:27": Pile(("2S",)), "waste": Pile(("QH", "3H"))})
    assert PYRAMID.legal_actions(over) == []
    assert not PYRAMID.is_won(over)


# --- the reference bot --------------------------------------------------------------------------


def test_bot_takes_a_king_first_then_pyramid_cards_before_stock_cards() -> None:
    bottom = {21: "6H", 22: "7C", 23: "AS", 24: "2S", 25: "3S", 26: "4S", 27: "KS"}
    t, reveal = dealt(deck_with({**bottom, 28: "6D"}))
    assert bot.choose(PYRAMID, t, PYRAMID.legal_actions(t)) == remove("pyramid:27")
    t, _ = play(t, reveal, remove("pyramid:27"))
    # 7C pairs with the pyramid's 6H or the stock's 6D: the pyramid card goes first
    assert bot.choose(PYRAMID, t, PYRAMID.legal_actions(t)) == remove("pyramid:21", "pyramid:22")


def test_bot_draws_when_nothing_pairs_and_stops_when_nothing_is_left() -> None:
    bottom = {21: "AS", 22: "2S", 23: "3S", 24: "4S", 25: "5S", 26: "6S", 27: "AH"}
    t, _ = dealt(deck_with({**bottom, 28: "2C"}))
    assert PYRAMID.legal_actions(t) == [Draw()]
    assert bot.choose(PYRAMID, t, PYRAMID.legal_actions(t)) == Draw()
    over = table(LAYOUT, {"pyramid:27": Pile(("2S",)), "waste": Pile(("QH", "3H"))})
    assert bot.choose(PYRAMID, over, PYRAMID.legal_actions(over)) is None


def blinded(t: Table) -> Table:
    """``t`` with every sealed number replaced by -1: what a bot that cannot cheat sees."""
    piles = (Pile(tuple(-1 if isinstance(s, int) else s for s in p.cards), p.down) for p in t.piles)
    return t.but(piles=tuple(piles))


@pytest.mark.parametrize("seed", range(8))
def test_the_bot_stops_only_when_nothing_is_left(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.)"""
    t = bot_play_out(PYRAMID, seed)[-1]
    assert PYRAMID.legal_actions(t) == []
    assert PYRAMID.units(t) == len(t.pile("foundation")) > 0


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    for n, i in enumerate(pyramid.P):
        assert len(table.piles[i].cards) <= 1
        assert table.piles[i].down == 0
        if not table.piles[i].cards:  # a card leaves only once nothing covers it
            assert pyramid.covers(table, n) == [], n
