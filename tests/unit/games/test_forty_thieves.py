"""Forty Thieves (seed 004), rule by rule, and its reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from events.catalog import CardDrawn, CardMoved, CardTurned, GameEvent, Undone, UndoneMove
from service import errors
from service.core import game_decider as g
from service.core.shuffle import derive_deck
from service.errors import RuleViolation
from service.games import forty_thieves
from service.games.forty_thieves import (
    FORTY_THIEVES,
    FOUNDATION_PILES,
    LAYOUT,
    SOURCES,
    TABLEAU_PILES,
    TARGETS,
)
from service.rtp.bots import forty_thieves as bot
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove, Turn
from service.rules.building import same_suit_up
from service.rules.cards import Card, canonical_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, card_of, seal, table, unseal
from tests import builders
from tests.builders import play as play_game
from tests.builders import play_on, start
from tests.unit.rtp_support import bot_play_out

FT = FORTY_THIEVES

# --- helpers ------------------------------------------------------------------------------------


def position(column: int, row: int) -> int:
    """The deal position of column ``column``'s card ``row`` (row 0 at the bottom): the first
    40 cards fill the columns row by row, left to right."""
    return row * 10 + column


def deck_with(
    columns: Mapping[int, Sequence[Card]] | None = None, stock: Sequence[Card] = ()
) -> tuple[Card, ...]:
    """A full two-deck deck in deal order: column c holds ``columns[c]`` bottom first (up to 4
    cards, at its bottom), the stock's first cards are ``stock`` (the first on top), and every
    other position takes the remaining cards in canonical order."""
    placed: dict[int, Card] = {}
    for c, cards in (columns or {}).items():
        assert len(cards) <= 4
        placed |= {position(c, row): card for row, card in enumerate(cards)}
    placed |= {40 + i: card for i, card in enumerate(stock)}
    return builders.deck_with(placed, 2)


def full_columns(columns: Mapping[int, Sequence[Card]]) -> dict[int, tuple[Card, ...]]:
    """Columns given top part only, padded underneath with Kings to 4 cards (to keep the
    wanted cards on top). Uses at most 8 Kings in all."""
    kings = iter(c for c in canonical_deck(2) if c[0] == "K")
    return {
        c: (*[next(kings) for _ in range(4 - len(cards))], *cards) for c, cards in columns.items()
    }


def dealt(deck: Sequence[Card]) -> tuple[Table, Reveal]:
    """The sealed deal of ``deck`` and the reveal that shows its hidden cards."""
    sealed, hidden = seal(FT.deal(deck))
    return sealed, lambda slot: card_of(slot, hidden)


def hand_made(
    columns: Mapping[int, str] | None = None,
    foundations: Mapping[int, str] | None = None,
    stock: str = "",
    waste: str = "",
    others: str = "",
) -> Table:
    """A hand-made table: columns and foundations bottom first, the stock next card first
    (its top face up, the rest face down, written as codes), the waste bottom first; the
    columns not named hold ``others`` (empty by default)."""
    given = columns or {}
    piles = {TABLEAU_PILES[c]: Pile(tuple(given.get(c, others).split())) for c in range(10)}
    piles |= {FOUNDATION_PILES[f]: Pile(tuple(t.split())) for f, t in (foundations or {}).items()}
    stocked = tuple(stock.split())[::-1]
    piles["stock"] = Pile(stocked, max(len(stocked) - 1, 0))
    piles["waste"] = Pile(tuple(waste.split()))
    return table(LAYOUT, piles, passes_left=1, fan=1 if waste else 0)


def shown(slot: object) -> Card:
    assert isinstance(slot, str)  # hand-made tables hold codes
    return slot


def play(t: Table, reveal: Reveal, *actions: PlayAction) -> tuple[Table, list[GameEvent]]:
    return play_on(FT, t, reveal, *actions)


def refused(t: Table, action: PlayAction, reveal: Reveal = shown) -> str:
    with pytest.raises(RuleViolation) as info:
        FT.decide(t, action, reveal)
    return info.value.code


def move(source: str, target: str, count: int | None = None) -> MoveCards:
    return MoveCards(source, target, count)


# --- the deal -----------------------------------------------------------------------------------


def test_two_decks_deal_10_columns_of_4_face_up_cards_row_by_row() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    assert Counter(deck) == Counter(canonical_deck(2))  # every code exactly twice
    t = FT.deal(deck)
    for c in range(10):
        expected = (deck[c], deck[10 + c], deck[20 + c], deck[30 + c])  # bottom first
        assert t.pile(f"tableau:{c}") == Pile(expected, 0)
    assert sum(len(t.pile(p)) for p in TABLEAU_PILES) == 40


def test_the_stock_holds_the_other_64_next_card_on_top_and_face_up() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    t = FT.deal(deck)
    assert t.pile("stock") == Pile(tuple(reversed(deck[40:])), 63)
    assert t.pile("stock").top == deck[40]
    assert t.pile("waste") == Pile()
    assert all(t.pile(f) == Pile() for f in FOUNDATION_PILES)
    assert (t.passes_left, FT.units(t)) == (1, 0)
    sealed, hidden = seal(t)
    assert hidden == tuple(reversed(deck[41:]))  # only the stock's face-down cards are sealed
    assert sealed.pile("stock").top == deck[40]
    assert all(isinstance(s, int) for s in sealed.pile("stock").face_down)
    assert Counter(unseal(sealed, hidden).slots()) == Counter(deck)  # a full two-deck multiset


def test_game_declarations() -> None:
    assert (FT.id, FT.title, FT.family) == ("forty-thieves", "Forty Thieves", "forty-thieves")
    assert (FT.rules_version, FT.decks, FT.max_units) == ("forty-thieves/2", 2, 104)
    assert (FT.passes, FT.draw_count, FT.actions) == (1, 1, ("draw", "move", "undo"))
    assert LAYOUT.ids[:2] == ("stock", "waste")
    assert [LAYOUT.kind(p) for p in FOUNDATION_PILES] == ["foundation"] * 8
    assert [LAYOUT.kind(p) for p in TABLEAU_PILES] == ["tableau"] * 10
    assert any("stake x M x cards on foundations / 104" in line for line in FT.summary)


# --- the stock and the waste --------------------------------------------------------------------


def test_draw_puts_the_stocks_top_card_on_the_waste_and_the_next_turns_face_up() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    t, reveal = dealt(deck)
    events = FT.decide(t, Draw(), reveal)
    assert events == [CardDrawn("stock", "waste", (deck[40],))]
    t = g.apply_all(t, events)
    assert (t.pile("waste").top, t.pile("stock").top) == (deck[40], None)
    assert FT.automatic(t, reveal) == [CardTurned("stock", deck[41])]
    t = g.apply_all(t, FT.automatic(t, reveal))
    assert (t.pile("stock").top, t.pile("stock").down, len(t.pile("stock"))) == (deck[41], 62, 63)
    assert FT.automatic(t, reveal) == []


def test_one_pass_through_the_stock_and_no_recycle() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    t, reveal = dealt(deck)
    t, _ = play(t, reveal, *[Draw()] * 64)
    assert t.pile("waste").cards == deck[40:]
    assert t.pile("stock") == Pile()
    assert FT.automatic(t, reveal) == []
    assert Draw() not in FT.legal_actions(t)
    assert refused(t, Draw(), reveal) == errors.STOCK_EMPTY
    assert refused(t, Recycle(), reveal) == errors.ACTION_NOT_ALLOWED


def test_the_stocks_top_card_plays_to_a_foundation_and_the_next_turns_face_up() -> None:
    deck = deck_with(stock=["AH", "7C"])
    t, reveal = dealt(deck)
    assert move("stock", "foundation:0", 1) in FT.legal_actions(t)
    t, events = play(t, reveal, move("stock", "foundation:0"))
    assert events == [CardMoved("stock", "foundation:0", ("AH",)), CardTurned("stock", "7C")]
    assert (t.pile("foundation:0").cards, t.pile("stock").top, FT.units(t)) == (("AH",), "7C", 1)


def test_the_stocks_top_card_plays_onto_a_column() -> None:
    deck = deck_with(full_columns({3: ["8C"]}), stock=["7C", "2D"])
    t, reveal = dealt(deck)
    t, events = play(t, reveal, move("stock", "tableau:3"))
    assert events == [CardMoved("stock", "tableau:3", ("7C",)), CardTurned("stock", "2D")]
    assert t.pile("tableau:3").cards[-2:] == ("8C", "7C")


def test_the_wastes_top_card_plays_to_a_foundation_and_onto_a_column() -> None:
    t = hand_made({0: "9S 8D"}, stock="7D AS 3C")
    t, _ = play(t, shown, Draw())
    assert (t.pile("waste").cards, t.pile("stock").top) == (("7D",), "AS")
    t, events = play(t, shown, move("waste", "tableau:0"))
    assert events == [CardMoved("waste", "tableau:0", ("7D",))]
    t, _ = play(t, shown, Draw())
    t, events = play(t, shown, move("waste", "foundation:5"))
    assert events == [CardMoved("waste", "foundation:5", ("AS",))]
    assert t.pile("waste") == Pile()


def test_only_the_top_card_of_the_stock_or_the_waste_moves() -> None:
    t = hand_made({0: "9S 8D"}, stock="AS", waste="2H 7D")
    assert refused(t, move("waste", "tableau:0", 2)) == errors.INVALID_COUNT
    assert refused(t, move("stock", "foundation:0", 2)) == errors.INVALID_COUNT
    assert move("waste", "tableau:0", 1) in FT.legal_actions(t)
    assert move("waste", "tableau:0", 2) not in FT.legal_actions(t)


# --- building in the columns --------------------------------------------------------------------


def test_columns_build_down_by_suit() -> None:
    t = hand_made({0: "KC 9S", 1: "8S", 2: "8H", 3: "7S"})
    t, events = play(t, shown, move("tableau:1", "tableau:0"))
    assert events == [CardMoved("tableau:1", "tableau:0", ("8S",))]
    assert refused(t, move("tableau:2", "tableau:0")) == errors.NOT_ONE_RANK_LOWER  # 8H on 8S
    assert refused(t, move("tableau:3", "tableau:2")) == errors.NOT_SAME_SUIT  # 7S on 8H
    assert refused(t, move("tableau:2", "tableau:3")) == errors.NOT_ONE_RANK_LOWER  # 8H on 7S
    t, _ = play(t, shown, move("tableau:3", "tableau:0"))
    assert t.pile("tableau:0").cards == ("KC", "9S", "8S", "7S")


def test_a_same_suit_descending_run_moves_as_a_group() -> None:
    t = hand_made({0: "2D 6H 5H 4H", 1: "QC 7H", 2: "KS 5C"})
    # without a count, the part of the run that fits the destination moves
    t2, events = play(t, shown, move("tableau:0", "tableau:1"))
    assert events == [CardMoved("tableau:0", "tableau:1", ("6H", "5H", "4H"))]
    assert (t2.pile("tableau:0").cards, t2.pile("tableau:1").cards) == (
        ("2D",),
        ("QC", "7H", "6H", "5H", "4H"),
    )
    assert FT.decide(t, move("tableau:0", "tableau:1", 3), shown) == events
    assert move("tableau:0", "tableau:1", 3) in FT.legal_actions(t)
    # a count the fitting card does not head is refused for the card it names
    assert refused(t, move("tableau:0", "tableau:1", 2)) == errors.NOT_ONE_RANK_LOWER
    assert refused(t, move("tableau:0", "tableau:1", 1)) == errors.NOT_ONE_RANK_LOWER


def test_only_the_top_part_of_a_run_moves_with_the_cards_on_it() -> None:
    t = hand_made({0: "2D 6H 5H 4H", 1: "QC 6H"})
    t, events = play(t, shown, move("tableau:0", "tableau:1"))
    assert events == [CardMoved("tableau:0", "tableau:1", ("5H", "4H"))]
    assert t.pile("tableau:0").cards == ("2D", "6H")  # the run's bottom part stays


def test_cards_that_are_not_a_same_suit_run_do_not_move_together() -> None:
    t = hand_made({0: "2D 6S 5H 4H", 1: "7S", 2: ""}, others="KC")
    assert refused(t, move("tableau:0", "tableau:1", 3)) == errors.NOT_A_RUN  # 6S under 5H
    assert refused(t, move("tableau:0", "tableau:2", 3)) == errors.NOT_A_RUN
    assert refused(t, move("tableau:0", "tableau:2", 5)) == errors.INVALID_COUNT  # 4 cards there
    assert refused(t, move("tableau:0", "tableau:2", 0)) == errors.INVALID_COUNT
    from_these = ("tableau:0", "tableau:1")
    assert [
        m for m in FT.legal_actions(t) if isinstance(m, MoveCards) and m.source in from_these
    ] == [
        move("tableau:0", "tableau:2", 1),
        move("tableau:0", "tableau:2", 2),
        move("tableau:1", "tableau:2", 1),
    ]


def test_an_empty_column_takes_any_available_card_or_run() -> None:
    t = hand_made({0: "KD 6H 5H 4H", 1: "", 2: "9C"}, stock="5C 2S", waste="QS")
    # the whole run without a count; any top part of it with one
    t2, events = play(t, shown, move("tableau:0", "tableau:1"))
    assert events == [CardMoved("tableau:0", "tableau:1", ("6H", "5H", "4H"))]
    assert t2.pile("tableau:0").cards == ("KD",)
    _, events = play(t, shown, move("tableau:0", "tableau:1", 2))
    assert events == [CardMoved("tableau:0", "tableau:1", ("5H", "4H"))]
    # any single card too: not only a King
    _, events = play(t, shown, move("tableau:2", "tableau:1"))
    assert events == [CardMoved("tableau:2", "tableau:1", ("9C",))]
    _, events = play(t, shown, move("waste", "tableau:1"))
    assert events == [CardMoved("waste", "tableau:1", ("QS",))]
    _, events = play(t, shown, move("stock", "tableau:1"))
    assert events == [CardMoved("stock", "tableau:1", ("5C",)), CardTurned("stock", "2S")]
    listed = {(m.source, m.count) for m in FT.legal_actions(t) if isinstance(m, MoveCards)}
    assert {("tableau:0", 1), ("tableau:0", 2), ("tableau:0", 3), ("stock", 1), ("waste", 1)} <= (
        listed
    )


def test_two_decks_a_card_may_fit_two_twin_columns() -> None:
    t = hand_made({0: "6H", 1: "6H", 2: "KS 5H"}, others="KC")
    moves = [m for m in FT.legal_actions(t) if isinstance(m, MoveCards)]
    assert moves == [move("tableau:2", "tableau:0", 1), move("tableau:2", "tableau:1", 1)]
    t, _ = play(t, shown, move("tableau:2", "tableau:1"))
    assert t.pile("tableau:1").cards == ("6H", "5H")
    assert t.pile("tableau:0").cards == ("6H",)


# --- the foundations ----------------------------------------------------------------------------


def test_eight_foundations_build_ace_to_king_by_suit_two_of_each_suit() -> None:
    t = hand_made({0: "AH", 1: "AH", 2: "2H", 3: "3S", 4: "3H", 5: "5H"})
    t, _ = play(t, shown, move("tableau:0", "foundation:0"), move("tableau:1", "foundation:4"))
    assert t.pile("foundation:0").cards == t.pile("foundation:4").cards == ("AH",)
    assert refused(t, move("tableau:3", "foundation:0")) == errors.FOUNDATION_WRONG_SUIT
    assert refused(t, move("tableau:4", "foundation:0")) == errors.FOUNDATION_WRONG_RANK
    assert refused(t, move("tableau:2", "foundation:1")) == errors.FOUNDATION_NEEDS_ACE
    assert move("tableau:2", "foundation:0", 1) in FT.legal_actions(t)
    assert move("tableau:2", "foundation:4", 1) in FT.legal_actions(t)
    t, _ = play(t, shown, move("tableau:2", "foundation:4"), move("tableau:4", "foundation:4"))
    assert t.pile("foundation:4").cards == ("AH", "2H", "3H")
    assert FT.units(t) == 4


def test_foundation_means_the_first_foundation_that_fits() -> None:
    t = hand_made({0: "3S", 1: "2S", 2: "9D"}, foundations={0: "AH", 3: "AS"})
    _, events = play(t, shown, move("tableau:1", "foundation"))
    assert events == [CardMoved("tableau:1", "foundation:3", ("2S",))]
    assert refused(t, move("tableau:0", "foundation")) == errors.NO_FOUNDATION_FITS
    assert refused(t, move("tableau:2", "foundation")) == errors.NO_FOUNDATION_FITS


def test_a_same_suit_run_moves_to_a_foundation_as_a_group_lowest_card_first() -> None:
    t = hand_made({0: "KC 5H 4H 3H", 1: ""}, foundations={2: "AH 2H"})
    event = CardMoved("tableau:0", "foundation:2", ("3H", "4H", "5H"))  # in the order they land
    t2, events = play(t, shown, move("tableau:0", "foundation:2"))
    assert events == [event]
    # the fold appends the listed cards in order: the foundation ends on the run's highest card
    assert fold.apply(t, event) == t2
    assert t2.pile("foundation:2").cards == ("AH", "2H", "3H", "4H", "5H")
    assert t2.pile("foundation:2").top == "5H"
    assert t2.pile("tableau:0").cards == ("KC",)
    assert FT.units(t2) == 5
    # a top part of the run fits as well, still lowest first
    _, events = play(t, shown, move("tableau:0", "foundation:2", 2))
    assert events == [CardMoved("tableau:0", "foundation:2", ("3H", "4H"))]
    listed = [
        m for m in FT.legal_actions(t) if isinstance(m, MoveCards) and m.target == "foundation:2"
    ]
    assert listed == [move("tableau:0", "foundation:2", n) for n in (1, 2, 3)]
    # the run's lowest card must be the one the foundation needs
    assert refused(t, move("tableau:0", "foundation:0")) == errors.FOUNDATION_NEEDS_ACE
    assert refused(t, move("tableau:0", "foundation:2", 4)) == errors.NOT_A_RUN


def test_a_run_goes_up_and_the_undo_puts_it_back_in_column_order() -> None:
    game, _ = start(deck_with(full_columns({0: ["5H", "4H", "3H", "2H"]}), stock=["AH"]),
                    variant="forty-thieves")  # fmt: skip
    game, _ = play_game(game, move("stock", "foundation:0"))
    assert game.undo is None  # the move from the stock turned the next stock card
    game, events = play_game(game, move("tableau:0", "foundation:0"))
    assert events == [CardMoved("tableau:0", "foundation:0", ("2H", "3H", "4H", "5H"))]
    assert game.table is not None
    assert game.table.pile("foundation:0").cards == ("AH", "2H", "3H", "4H", "5H")
    assert game.units == 5
    before = game.undo.before if game.undo else None
    game, events = play_game(game, g.Undo())
    assert events == [
        Undone("move", (UndoneMove("tableau:0", "foundation:0", ("2H", "3H", "4H", "5H")),))
    ]
    assert game.table == before
    assert game.table is not None
    assert game.table.pile("tableau:0").cards[-4:] == ("5H", "4H", "3H", "2H")


def test_no_card_comes_back_off_a_foundation() -> None:
    t = hand_made({0: "3H", 1: ""}, foundations={0: "AH 2H"})
    assert refused(t, move("foundation:0", "tableau:0")) == errors.INVALID_SOURCE
    assert refused(t, move("foundation:0", "tableau:1")) == errors.INVALID_SOURCE
    assert refused(t, move("foundation:0", "foundation:1")) == errors.INVALID_SOURCE
    assert not any(
        m.source.startswith("foundation") for m in FT.legal_actions(t) if isinstance(m, MoveCards)
    )


# --- refusals -----------------------------------------------------------------------------------


def test_move_refusals_name_the_problem() -> None:
    t = hand_made({0: "9S", 1: ""}, stock="")
    assert refused(t, move("tableau:10", "tableau:0")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "foundation:8")) == errors.UNKNOWN_PILE
    assert refused(t, move("pyramid:0", "tableau:0")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "tableau:0")) == errors.SAME_PILE
    assert refused(t, move("tableau:0", "waste")) == errors.INVALID_DESTINATION
    assert refused(t, move("tableau:0", "stock")) == errors.INVALID_DESTINATION
    assert refused(t, move("tableau:1", "tableau:0")) == errors.SOURCE_EMPTY
    assert refused(t, move("stock", "tableau:1")) == errors.SOURCE_EMPTY
    assert refused(t, move("waste", "tableau:1")) == errors.WASTE_EMPTY
    face_down = table(LAYOUT, {"stock": Pile(("AS",), 1)}, passes_left=1)
    assert refused(face_down, move("stock", "foundation:0")) == errors.SOURCE_FACE_DOWN
    assert refused(t, Turn("tableau:0")) == errors.ACTION_NOT_ALLOWED
    assert refused(t, Remove(("tableau:0",))) == errors.ACTION_NOT_ALLOWED


def test_refusals_never_name_a_face_down_card() -> None:
    deck = derive_deck(bytes([7]) * 32, None, 2)
    t, reveal = dealt(deck)
    hidden = set(deck[41:]) - set(deck[:41])
    details: list[str] = []
    for source in SOURCES:
        for target in (*TARGETS, "waste", "stock", "foundation"):
            for count in (None, 1, 2, 5):
                try:
                    FT.decide(t, move(source, target, count), reveal)
                except RuleViolation as exc:
                    details.append(exc.detail)
    assert len(details) > 100
    assert [d for d in details if any(c in d for c in hidden)] == []


# --- legal actions ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_legal_moves_are_exactly_what_decide_accepts(seed: int) -> None:
    t, reveal = dealt(derive_deck(bytes([seed]) * 32, None, 2))
    for step in range(400):
        legal = FT.legal_actions(t)
        listed = [a for a in legal if isinstance(a, MoveCards)]
        assert len(set(listed)) == len(listed)
        if step % 10 == 0:
            assert set(listed) == builders.accepted_moves(FT, t, reveal, 14)
        # an omitted count resolves to one of the listed moves
        for a in listed:
            (event,) = FT.decide(t, move(a.source, a.target), reveal)[:1]
            assert isinstance(event, CardMoved)
            assert move(event.source, event.target, len(event.cards)) in listed
        action = bot.choose(FT, t, legal)
        if action is None:
            break
        t, _ = play(t, reveal, action)


# --- undo ---------------------------------------------------------------------------------------


def test_undo_takes_back_a_move_that_turned_no_card() -> None:
    t = hand_made({0: "9S", 1: "8S", 2: ""}, stock="AS 7D", waste="2C")
    (between_columns,) = FT.decide(t, move("tableau:1", "tableau:0"), shown)
    assert FT.undoable(between_columns, t)
    (from_waste,) = FT.decide(t, move("waste", "tableau:2"), shown)
    assert FT.undoable(from_waste, t)
    (drawn,) = FT.decide(t, Draw(), shown)
    assert not FT.undoable(drawn, t)
    assert not FT.undoable(CardTurned("stock", "7D"), t)


def test_a_draw_or_a_move_from_the_stock_that_turned_a_card_cannot_be_undone() -> None:
    deck = deck_with(full_columns({0: ["9S", "8S"], 1: ["9C"]}), stock=["AS", "8C", "2S"])
    game, _ = start(deck, variant="forty-thieves")
    game, events = play_game(game, move("stock", "foundation:0"))
    assert events == [CardMoved("stock", "foundation:0", ("AS",)), CardTurned("stock", "8C")]
    assert g.Undo() not in g.legal_commands(game)
    with pytest.raises(RuleViolation) as refusal:
        g.decide(game, g.Undo())
    assert refusal.value.code == errors.UNDO_NOT_ALLOWED
    assert FT.undo_rule in refusal.value.detail
    game, _ = play_game(game, Draw())
    with pytest.raises(RuleViolation):
        g.decide(game, g.Undo())
    # a move between open piles is taken back, single level
    before = game.table
    game, _ = play_game(game, move("waste", "tableau:1"), g.Undo())
    assert game.table == before
    with pytest.raises(RuleViolation):
        g.decide(game, g.Undo())


# --- units, won and over ------------------------------------------------------------------------


def test_units_are_cards_on_the_foundations_and_all_104_is_a_win() -> None:
    suits = {f: " ".join(r + "SHDC"[f % 4] for r in "A23456789TJQK") for f in range(8)}
    won = hand_made(foundations=suits)
    assert (FT.units(won), FT.is_won(won)) == (104, True)
    assert FT.legal_actions(won) == []
    one_left = hand_made({0: "KC"}, foundations={**suits, 3: suits[3][:-3]}, others="QS")
    assert (FT.units(one_left), FT.is_won(one_left)) == (103, False)
    assert FT.legal_actions(one_left) == [move("tableau:0", "foundation:3", 1)]


def test_the_game_is_over_when_the_stock_is_empty_and_nothing_plays() -> None:
    over = hand_made({0: "2S", 1: "2S"}, waste="QH 3H", others="KC")
    assert FT.legal_actions(over) == []
    assert not FT.is_won(over)


# --- the reference bot --------------------------------------------------------------------------


def test_bot_plays_to_the_foundations_first_the_whole_run() -> None:
    t = hand_made({0: "KC 3H 2H", 1: "3C", 2: "4C"}, foundations={0: "AH"}, stock="AS")
    assert bot.choose(FT, t, FT.legal_actions(t)) == move("tableau:0", "foundation:0", 2)


def test_bot_moves_a_run_that_uncovers_a_card_then_draws_then_stops() -> None:
    t = hand_made({0: "2H 6S 5S", 1: "KD 7S"}, foundations={0: "AH"}, stock="9D")
    assert bot.choose(FT, t, FT.legal_actions(t)) == move("tableau:0", "tableau:1", 2)
    t, _ = play(t, shown, move("tableau:0", "tableau:1", 2))
    assert bot.choose(FT, t, FT.legal_actions(t)) == move("tableau:0", "foundation:0", 1)
    stuck = hand_made({0: "2S", 1: "9H"}, stock="5D", others="KC")
    assert bot.choose(FT, stuck, FT.legal_actions(stuck)) == Draw()
    over = hand_made({0: "2S", 1: "9H"}, waste="5D", others="KC")
    assert bot.choose(FT, over, FT.legal_actions(over)) is None


def blinded(t: Table) -> Table:
    """``t`` with every sealed number replaced by -1: what a bot that cannot cheat sees."""
    piles = (Pile(tuple(-1 if isinstance(s, int) else s for s in p.cards), p.down) for p in t.piles)
    return t.but(piles=tuple(piles))


@pytest.mark.parametrize("seed", range(6))
def test_the_bot_stops_only_once_the_stock_is_spent(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.)"""
    t = bot_play_out(FT, seed)[-1]
    assert t.pile("stock") == Pile()
    assert FT.units(t) == sum(len(t.pile(f)) for f in FOUNDATION_PILES) > 0


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    stock = table.pile(forty_thieves.STOCK)
    assert stock.down == max(len(stock.cards) - 1, 0)  # its top card always face up
    for i in forty_thieves.F:
        pile = table.piles[i].cards
        assert pile == table.piles[i].up
        for n, card in enumerate(pile):  # each foundation: one suit, Ace up
            assert same_suit_up(str(card), str(pile[n - 1]) if n else None), pile
    assert all(table.piles[i].down == 0 for i in forty_thieves.T)
