"""Scorpion and Super Scorpion (seed 004; GAMES.md), rule by rule, refusals included, and their
reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest

from events.catalog import CardDrawn, CardMoved, CardTurned, GameEvent, Undone
from service import errors
from service.core import game_decider as g
from service.core.shuffle import derive_deck
from service.errors import RuleViolation
from service.games.scorpion import SCORPION, SUPER_SCORPION, Scorpion
from service.rtp.bots import scorpion as bot
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove, Turn, Undo
from service.rules.cards import Card, canonical_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, seal, table
from tests import builders
from tests.unit.rtp_support import bot_play_out

BOTH = pytest.mark.parametrize("rules", [SCORPION, SUPER_SCORPION], ids=["scorpion", "super"])


def at(rules: Scorpion, column: int, row: int) -> int:
    """The deal position of a column's card: row 0 is the bottom card."""
    return row * rules.columns + column


def top(rules: Scorpion, column: int) -> int:
    return at(rules, column, rules.rows - 1)


def stock_at(rules: Scorpion, k: int) -> int:
    """The deal position of the stock's k-th card to be dealt (0: the next one)."""
    return rules.tableau_cards + k


def deck_with(rules: Scorpion, placed: Mapping[int, Card]) -> tuple[Card, ...]:
    return builders.deck_with(placed, rules.decks)


def dealt(rules: Scorpion, placed: Mapping[int, Card]) -> tuple[Table, Reveal]:
    """The sealed table a deck with these cards deals, and the reveal for its sealed cards."""
    sealed, hidden = seal(rules.deal(deck_with(rules, placed)))
    return sealed, lambda s: s if isinstance(s, str) else hidden[s]


def play(
    rules: Scorpion, t: Table, reveal: Reveal, *actions: PlayAction
) -> tuple[Table, list[GameEvent]]:
    """Decide and fold each action, then what the rules play by themselves, as the engine does."""
    events: list[GameEvent] = []
    for action in actions:
        new = rules.decide(t, action, reveal)
        while new:
            for event in new:
                t = fold.apply(t, event)
            events.extend(new)
            new = rules.automatic(t, reveal)
    return t, events


def refused(rules: Scorpion, t: Table, action: PlayAction, reveal: Reveal = str) -> str:
    with pytest.raises(RuleViolation) as info:
        rules.decide(t, action, reveal)
    return info.value.code


def columns(rules: Scorpion, *texts: str, stock: str = "") -> Table:
    """A hand-made table: column c written as ``"4S 9D|KH QC"`` (face-down cards, a bar, face-up
    cards, bottom first); ``stock`` lists the next card dealt first."""
    piles = {f"tableau:{c}": builders.column(text) for c, text in enumerate(texts)}
    stocked = tuple(stock.split())[::-1]
    piles["stock"] = Pile(stocked, len(stocked))
    return table(rules.layout, piles, passes_left=1)


def move(source: int, target: int, count: int | None = None) -> MoveCards:
    return MoveCards(f"tableau:{source}", f"tableau:{target}", count)


# --- declarations -------------------------------------------------------------------------------


def test_scorpion_declares_its_piles_and_counters() -> None:
    assert (SCORPION.id, SCORPION.title, SCORPION.family) == ("scorpion", "Scorpion", "scorpion")
    assert SCORPION.rules_version == "scorpion/2"
    assert (SCORPION.decks, SCORPION.max_units, SCORPION.passes, SCORPION.draw_count) == (
        1,
        52,
        1,
        3,
    )
    assert SCORPION.layout.ids == ("stock", *(f"tableau:{c}" for c in range(7)))
    assert SCORPION.layout.kind("stock") == "stock"
    assert SCORPION.layout.of_kind("waste") == SCORPION.layout.of_kind("foundation") == ()
    assert SCORPION.actions == ("draw", "move", "undo")
    assert any("/ 52" in line for line in SCORPION.summary)


def test_super_scorpion_declares_two_decks_and_ten_columns() -> None:
    assert (SUPER_SCORPION.id, SUPER_SCORPION.title) == ("super-scorpion", "Super Scorpion")
    assert (SUPER_SCORPION.family, SUPER_SCORPION.rules_version) == ("scorpion", "scorpion/2")
    assert (SUPER_SCORPION.decks, SUPER_SCORPION.max_units, SUPER_SCORPION.draw_count) == (
        2,
        104,
        10,
    )
    assert SUPER_SCORPION.layout.ids == ("stock", *(f"tableau:{c}" for c in range(10)))
    assert any("/ 104" in line for line in SUPER_SCORPION.summary)


# --- the deal -----------------------------------------------------------------------------------


def test_scorpion_deals_seven_columns_of_seven_row_by_row() -> None:
    deck = canonical_deck()
    dealt_table = SCORPION.deal(deck)
    for c in range(7):
        column = dealt_table.pile(f"tableau:{c}")
        assert column.cards == tuple(deck[r * 7 + c] for r in range(7))
    assert dealt_table.pile("tableau:0").cards == deck[0:49:7]
    assert dealt_table.count("tableau") == 49


def test_scorpion_columns_0_to_3_have_three_face_down_and_4_to_6_none() -> None:
    dealt_table = SCORPION.deal(canonical_deck())
    assert [dealt_table.pile(f"tableau:{c}").down for c in range(7)] == [3, 3, 3, 3, 0, 0, 0]
    assert all(len(dealt_table.pile(f"tableau:{c}").up) == 4 for c in range(4))


def test_scorpion_keeps_the_last_three_cards_as_a_face_down_reserve() -> None:
    deck = canonical_deck()
    reserve = SCORPION.deal(deck).pile("stock")
    assert reserve == Pile(tuple(reversed(deck[49:])), 3)
    assert reserve.cards[-1] == deck[49]  # the next card in deal order is dealt first


def test_super_scorpion_deals_ten_columns_of_eight_from_two_decks() -> None:
    deck = derive_deck(bytes(32), None, 2)
    assert Counter(deck) == Counter(canonical_deck(2))
    dealt_table = SUPER_SCORPION.deal(deck)
    for c in range(10):
        column = dealt_table.pile(f"tableau:{c}")
        assert column.cards == tuple(deck[r * 10 + c] for r in range(8))
        assert column.down == (3 if c < 5 else 0)
    hand = dealt_table.pile("stock")
    assert hand == Pile(tuple(reversed(deck[80:])), 24)
    assert Counter(dealt_table.slots()) == Counter(deck)


@BOTH
def test_sealing_hides_the_stock_and_the_face_down_column_cards(rules: Scorpion) -> None:
    sealed, hidden = seal(rules.deal(canonical_deck(rules.decks)))
    assert len(hidden) == rules.stock_cards + 3 * rules.closed_columns
    for pile in sealed.piles:
        assert all(isinstance(s, int) for s in pile.face_down)
        assert all(isinstance(s, str) for s in pile.up)


# --- moves --------------------------------------------------------------------------------------


@BOTH
def test_any_face_up_card_moves_with_every_card_on_it(rules: Scorpion) -> None:
    # Column 6 (all face up) holds 8H in the middle; column 5's top card is the 9H.
    t, reveal = dealt(rules, {at(rules, 6, 3): "8H", top(rules, 5): "9H"})
    before = t.pile("tableau:6").up
    carried = before[3:]
    after, events = play(rules, t, reveal, move(6, 5, len(carried)))
    assert events == [CardMoved("tableau:6", "tableau:5", carried)]
    assert after.pile("tableau:6").cards == before[:3]
    assert after.pile("tableau:5").cards[-len(carried) :] == carried


@BOTH
def test_a_move_with_no_count_takes_the_card_that_fits(rules: Scorpion) -> None:
    t, reveal = dealt(rules, {at(rules, 6, 4): "8H", top(rules, 5): "9H"})
    carried = t.pile("tableau:6").up[4:]
    _, events = play(rules, t, reveal, move(6, 5))
    assert events == [CardMoved("tableau:6", "tableau:5", carried)]


@BOTH
def test_the_target_is_the_same_suit_one_rank_higher(rules: Scorpion) -> None:
    t = columns(rules, "|4S 7C", "|8C", "|8D", "|9C", "|8S 7S", "|AH", "|KS")
    assert rules.decide(t, move(0, 1, 1), str) == [CardMoved("tableau:0", "tableau:1", ("7C",))]
    assert refused(rules, t, move(0, 2, 1)) == errors.NOT_SAME_SUIT  # 7C on 8D
    assert refused(rules, t, move(0, 3, 1)) == errors.NOT_ONE_RANK_LOWER  # 7C on 9C
    assert refused(rules, t, move(0, 4, 1)) == errors.NOT_ONE_RANK_LOWER  # 7C on 7S
    assert refused(rules, t, move(0, 1, 2)) == errors.NOT_ONE_RANK_LOWER  # 4S on 8C


@BOTH
def test_nothing_goes_on_an_ace(rules: Scorpion) -> None:
    t = columns(rules, "|2H", "|AH", "|KS", "|KH", "|KD", "|KC", "|QS")
    with pytest.raises(RuleViolation) as info:
        rules.decide(t, move(0, 1, 1), str)
    assert info.value.code == errors.NOTHING_ON_AN_ACE
    assert "nothing goes on an Ace" in info.value.detail
    assert move(0, 1, 1) not in rules.legal_actions(t)


@BOTH
def test_an_empty_column_takes_only_a_king_with_what_lies_on_it(rules: Scorpion) -> None:
    t = columns(rules, "|5D KH QH 3C", "", "|QS", "|AD", "|AS", "|AC", "|AH")
    assert refused(rules, t, move(0, 1, 2)) == errors.ONLY_KING_TO_EMPTY_COLUMN  # QH 3C
    assert refused(rules, t, move(2, 1, 1)) == errors.ONLY_KING_TO_EMPTY_COLUMN  # a Queen
    after, events = play(rules, t, str, move(0, 1, 3))
    assert events == [CardMoved("tableau:0", "tableau:1", ("KH", "QH", "3C"))]
    assert after.pile("tableau:1").cards == ("KH", "QH", "3C")
    _, events = play(rules, t, str, move(0, 1))  # no count: the King and what lies on it
    assert events == [CardMoved("tableau:0", "tableau:1", ("KH", "QH", "3C"))]


@BOTH
@pytest.mark.parametrize("count", [0, -1, 4])
def test_a_count_must_be_one_to_the_face_up_cards(rules: Scorpion, count: int) -> None:
    t = columns(rules, "4S 9D|KH QC 7S", "|8S")
    with pytest.raises(RuleViolation) as info:
        rules.decide(t, move(0, 1, count), str)
    assert info.value.code == errors.INVALID_COUNT
    assert "9D" not in info.value.detail  # a face-down card is never named
    assert "4S" not in info.value.detail


@BOTH
def test_moves_are_between_columns_only(rules: Scorpion) -> None:
    t = columns(rules, "|7S", "|8S", stock="9S TS JS")
    assert refused(rules, t, MoveCards("tableau:0", "tableau:0", 1)) == errors.SAME_PILE
    assert refused(rules, t, MoveCards("stock", "tableau:1", 1)) == errors.INVALID_SOURCE
    assert refused(rules, t, MoveCards("tableau:0", "stock", 1)) == errors.INVALID_DESTINATION


@BOTH
@pytest.mark.parametrize("pile", ["waste", "foundation:0", "tableau:10", "hand"])
def test_an_unknown_pile_is_refused(rules: Scorpion, pile: str) -> None:
    t = columns(rules, "|7S", "|8S")
    with pytest.raises(RuleViolation) as info:
        rules.decide(t, MoveCards(pile, "tableau:1", 1), str)
    assert info.value.code == errors.UNKNOWN_PILE
    assert "stock, tableau:0..tableau:" in info.value.detail
    assert refused(rules, t, MoveCards("tableau:0", pile, 1)) == errors.UNKNOWN_PILE


@BOTH
def test_an_empty_or_face_down_column_has_nothing_to_move(rules: Scorpion) -> None:
    t = columns(rules, "", "|8S", "7S|", "|8H", "|7H")
    assert refused(rules, t, move(0, 1, 1)) == errors.SOURCE_EMPTY
    assert refused(rules, t, move(2, 1, 1)) == errors.SOURCE_FACE_DOWN
    assert refused(rules, t, move(4, 2, 1)) == errors.DESTINATION_FACE_DOWN


# --- auto-turn ----------------------------------------------------------------------------------


@BOTH
def test_a_face_down_card_turns_face_up_when_it_becomes_the_top(rules: Scorpion) -> None:
    # Column 0's four face-up cards go onto a 9H: the card under them turns at once.
    t, reveal = dealt(rules, {at(rules, 0, 2): "2C", at(rules, 0, 3): "8H", top(rules, 4): "9H"})
    carried = t.pile("tableau:0").up
    after, events = play(rules, t, reveal, move(0, 4, len(carried)))
    assert events == [
        CardMoved("tableau:0", "tableau:4", carried),
        CardTurned("tableau:0", "2C"),
    ]
    assert after.pile("tableau:0") == Pile(after.pile("tableau:0").cards, 2)
    assert after.pile("tableau:0").top == "2C"
    assert rules.automatic(after, reveal) == []


# --- the reserve (Scorpion) ---------------------------------------------------------------------


def test_the_reserve_is_dealt_face_up_one_card_onto_each_of_columns_0_1_2() -> None:
    rules = SCORPION
    t, reveal = dealt(rules, {stock_at(rules, 0): "5H", stock_at(rules, 1): "JC", 51: "2D"})
    assert Draw() in rules.legal_actions(t)
    after, events = play(rules, t, reveal, Draw())
    assert events == [
        CardDrawn("stock", "tableau:0", ("5H",)),
        CardDrawn("stock", "tableau:1", ("JC",)),
        CardDrawn("stock", "tableau:2", ("2D",)),
    ]
    assert [after.pile(f"tableau:{c}").top for c in range(3)] == ["5H", "JC", "2D"]
    assert [len(after.pile(f"tableau:{c}").up) for c in range(4)] == [5, 5, 5, 4]
    assert after.pile("stock").cards == ()


def test_the_reserve_is_dealt_only_once() -> None:
    t, reveal = dealt(SCORPION, {})
    after, _ = play(SCORPION, t, reveal, Draw())
    assert refused(SCORPION, after, Draw(), reveal) == errors.STOCK_EMPTY
    assert Draw() not in SCORPION.legal_actions(after)


# --- dealing from the hand (Super Scorpion) -----------------------------------------------------


def test_the_hand_deals_one_card_face_up_onto_each_column_left_to_right() -> None:
    rules = SUPER_SCORPION
    placed = {
        stock_at(rules, k): card for k, card in enumerate("AS KS 5H 5H 9C QD 2S 2S 7D TC".split())
    }
    t, reveal = dealt(rules, placed)
    after, events = play(rules, t, reveal, Draw())
    assert events == [
        CardDrawn("stock", f"tableau:{c}", (card,)) for c, card in enumerate(placed.values())
    ]
    assert [after.pile(f"tableau:{c}").top for c in range(10)] == list(placed.values())
    assert len(after.pile("stock")) == 14


def test_the_hand_deals_ten_ten_then_four_for_columns_0_to_3() -> None:
    rules = SUPER_SCORPION
    deck = deck_with(rules, {})
    t, reveal = dealt(rules, {})
    for first in (0, 10):
        t, events = play(rules, t, reveal, Draw())
        assert [e.target for e in events if isinstance(e, CardDrawn)] == [
            f"tableau:{c}" for c in range(10)
        ]
        assert [e.cards[0] for e in events if isinstance(e, CardDrawn)] == list(
            deck[80 + first : 90 + first]
        )
    t, events = play(rules, t, reveal, Draw())
    assert events[:4] == [CardDrawn("stock", f"tableau:{c}", (deck[100 + c],)) for c in range(4)]
    assert len([e for e in events if isinstance(e, CardDrawn)]) == 4
    assert refused(rules, t, Draw(), reveal) == errors.STOCK_EMPTY
    assert Counter(reveal(slot) for slot in t.slots()) == Counter(deck)  # no card lost


def test_the_hand_deals_onto_an_empty_column_too() -> None:
    t = columns(SUPER_SCORPION, "", "|8S", stock="KD 2C")
    after, events = play(SUPER_SCORPION, t, str, Draw())
    assert events == [
        CardDrawn("stock", "tableau:0", ("KD",)),
        CardDrawn("stock", "tableau:1", ("2C",)),
    ]
    assert after.pile("tableau:0") == Pile(("KD",), 0)


def test_two_decks_a_card_may_go_on_either_twin() -> None:
    t = columns(SUPER_SCORPION, "|8H", "|9H", "|3C 9H", "|9D")
    assert SUPER_SCORPION.legal_moves(t) == [move(0, 1, 1), move(0, 2, 1)]
    assert refused(SUPER_SCORPION, t, move(0, 3, 1)) == errors.NOT_SAME_SUIT


# --- other actions ------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("action", [Recycle(), Turn("tableau:0"), Remove(("tableau:0",)), Undo()])
def test_there_is_no_other_action(rules: Scorpion, action: PlayAction) -> None:
    t, reveal = dealt(rules, {})
    assert refused(rules, t, action, reveal) == errors.ACTION_NOT_ALLOWED


# --- units and won ------------------------------------------------------------------------------


@BOTH
def test_units_are_the_same_suit_run_up_from_a_king_at_the_bottom(rules: Scorpion) -> None:
    t = columns(
        rules,
        "|KS QS JS 9S",  # K Q J: 3 (the 9S breaks the run)
        "|KH QD",  # K alone: 1
        "|QC JC TC",  # no King at the bottom: 0
        "2C|KD QD",  # the bottom card is face down: 0
        "|5H KC QC",  # a King not at the bottom: 0
        "",
    )
    assert rules.units(t) == 4
    assert not rules.is_won(t)


def test_scorpion_is_won_with_four_columns_king_to_ace_by_suit() -> None:
    runs = ["|" + " ".join(r + s for r in "KQJT98765432A") for s in "SHDC"]
    t = columns(SCORPION, *runs, "", "", "")
    assert (SCORPION.units(t), SCORPION.is_won(t)) == (52, True)
    broken = columns(SCORPION, *runs[:3], runs[3][:-3], "|AC")
    assert (SCORPION.units(broken), SCORPION.is_won(broken)) == (51, False)


def test_super_scorpion_is_won_with_eight_king_to_ace_runs() -> None:
    runs = ["|" + " ".join(r + s for r in "KQJT98765432A") for s in "SHDC"] * 2
    t = columns(SUPER_SCORPION, *runs, "", "")
    assert (SUPER_SCORPION.units(t), SUPER_SCORPION.is_won(t)) == (104, True)


# --- undo ---------------------------------------------------------------------------------------


@BOTH
def test_undo_takes_back_a_move_never_a_draw(rules: Scorpion) -> None:
    t, _ = dealt(rules, {})
    assert rules.undoable(CardMoved("tableau:0", "tableau:1", ("8H",)), t)
    assert not rules.undoable(CardDrawn("stock", "tableau:0", ("8H",)), t)
    assert not rules.undoable(CardTurned("tableau:0", "8H"), t)
    assert "made no card turn" in rules.undo_rule


@BOTH
def test_a_move_that_turned_no_card_is_undone_one_that_did_is_not(rules: Scorpion) -> None:
    r = rules
    placed = {
        top(r, 6): "8H",  # onto the 9H: turns nothing
        top(r, 5): "9H",
        at(r, 1, 2): "2C",  # under column 1's face-up cards, which go onto the KS
        at(r, 1, 3): "QS",
        top(r, 4): "KS",
    }
    game, _ = builders.start(deck_with(r, placed), variant=r.id)
    assert game.table is not None
    moved, events = builders.play(game, move(6, 5, 1))
    assert events == [CardMoved("tableau:6", "tableau:5", ("8H",))]
    assert g.Undo() in g.legal_commands(moved)
    undone, events = builders.play(moved, g.Undo())
    assert isinstance(events[0], Undone)
    assert undone.table == game.table

    turned, events = builders.play(game, move(1, 4, r.rows - 3))
    assert events[-1] == CardTurned("tableau:1", "2C")
    assert g.Undo() not in g.legal_commands(turned)
    with pytest.raises(RuleViolation) as info:
        g.decide(turned, g.Undo())
    assert info.value.code == errors.UNDO_NOT_ALLOWED
    drawn, _ = builders.play(game, g.Draw())
    assert g.Undo() not in g.legal_commands(drawn)


# --- legal actions ------------------------------------------------------------------------------


@BOTH
def test_legal_actions_are_the_draw_and_every_fitting_move(rules: Scorpion) -> None:
    t = columns(rules, "|9H 8H 3C", "|4C KD", "|9H", "", "|AD", stock="2D")
    empty = [c for c in range(rules.columns) if not t.pile(f"tableau:{c}").cards]
    assert empty[0] == 3
    assert rules.legal_actions(t) == [
        Draw(),
        move(0, 2, 2),  # 8H (with the 3C on it) onto the other 9H
        *(move(1, c, 1) for c in empty),  # the King to any empty column
    ]
    dealt_out = columns(rules, "|9H 8H 3C", "|4C KD", "|9H", "", "|AD")
    assert Draw() not in rules.legal_actions(dealt_out)


# --- the reference bot --------------------------------------------------------------------------


@BOTH
def test_the_bot_turns_a_card_before_anything_else(rules: Scorpion) -> None:
    t = columns(rules, "|KS", "2C|8H", "|9H", "|3D 8H", "|9S", "|KC 8S", "", stock="2D")
    legal = rules.legal_actions(t)
    assert bot.choose(rules, t, legal) == move(1, 2, 1)


@BOTH
def test_the_bot_never_moves_a_bottom_king_or_a_card_on_its_parent(rules: Scorpion) -> None:
    t = columns(rules, "|KS QS", "", "|KH", stock="2D")
    legal = rules.legal_actions(t)
    assert move(0, 1, 2) in legal
    assert bot.choose(rules, t, legal) == Draw()
    assert bot.choose(rules, t, [m for m in legal if m != Draw()]) is None


@BOTH
def test_the_bot_frees_a_king_above_face_down_cards_into_an_empty_column(rules: Scorpion) -> None:
    t = columns(rules, "|5D KC", "3H 4H|KH 2S", "", "|6D", "|AS")
    assert bot.choose(rules, t, rules.legal_actions(t)) == move(1, 2, 2)


@BOTH
@pytest.mark.parametrize("seed", range(1, 5))
def test_the_bot_never_breaks_a_run_in_order_and_deals_the_whole_stock(
    rules: Scorpion, seed: int
) -> None:
    """(The bots' contract is tests/unit/test_bots.py.)"""
    tables = bot_play_out(rules, seed)
    units = [rules.units(t) for t in tables]
    assert units == sorted(units)
    assert not tables[-1].pile("stock").cards


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    assert isinstance(rules, Scorpion)
    (stock,) = [table.piles[i] for i in table.layout.of_kind("stock")]
    assert stock.down == len(stock.cards)  # the stock is dealt out, never turned
    # Dealt a whole row at a time (Super Scorpion's last row: what is left).
    assert len(stock.cards) in {0, *range(rules.stock_cards, 0, -rules.draw_count)}
    for c, i in enumerate(rules.t):
        column = table.piles[i]
        # Face-down cards are only the deal's, and never the top (auto-turn).
        assert column.down <= (3 if c < rules.closed_columns else 0)
        assert not column.cards or column.top is not None
