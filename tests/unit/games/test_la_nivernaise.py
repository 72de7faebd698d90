"""La Nivernaise (seed 004; GAMES.md), rule by rule, refusals included, recorded streams (one
with redeals) that fold and verify, and the reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from events.catalog import (
    CardDrawn,
    CardMoved,
    GameEvent,
    PilesGathered,
    Undone,
    UndoneMove,
)
from service import errors
from service.core import game_decider as g
from service.core.game_verification import CHECKS, verify_game
from service.core.paytable import default_paytables, winnings
from service.core.shuffle import derive_deck
from service.errors import RuleViolation
from service.games import la_nivernaise
from service.games.la_nivernaise import (
    FLANK_PILES,
    FOUNDATION_PILES,
    LA_NIVERNAISE,
    LAYOUT,
    LINE_PILES,
    fitting_foundation,
    wanted,
)
from service.rtp.bots import la_nivernaise as bot
from service.rules.actions import Draw, MoveCards, Pick, PlayAction, Recycle, Redeal, Remove, Turn
from service.rules.building import same_suit_down, same_suit_up
from service.rules.cards import Card, canonical_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, card_of, seal, table, unseal
from tests import builders
from tests.builders import SEED, play_on, postings_for, recorded, start
from tests.builders import play as play_game
from tests.unit.rtp_support import bot_play_out

LN = LA_NIVERNAISE
PAYTABLES = default_paytables()
RANKS = "A23456789TJQK"

# --- helpers ------------------------------------------------------------------------------------


def line_position(column: int, row: int) -> int:
    """The deal position of Line column ``column``'s card ``row`` (row 0 at the bottom), for a
    deck whose first card is the Ace of spades: flank cards 1-7, then the Line row by row."""
    return 8 + 6 * row + column


def deck_of(
    flanks: Sequence[Card] = (),
    line: Mapping[int, Sequence[Card]] | None = None,
    stock: Sequence[Card] = (),
) -> tuple[Card, ...]:
    """A full two-deck deck in deal order, the Ace of spades first (so it is flank:0's):
    ``flanks`` for flank:1 on, Line column c holding ``line[c]`` bottom first, the stock's
    first cards ``stock`` (the first drawn first); every other position takes the remaining
    cards in canonical order."""
    placed = {0: "AS"} | {1 + i: card for i, card in enumerate(flanks)}
    for c, cards in (line or {}).items():
        placed |= {line_position(c, row): card for row, card in enumerate(cards)}
    placed |= {32 + i: card for i, card in enumerate(stock)}
    return builders.deck_with(placed, 2)


#: The 104 cards in an order the foundations take them, each to the first that fits: the up
#: foundations a rank higher for every suit, then the down ones a rank lower, and so on.
NEEDED = [
    card
    for step in range(13)
    for card in (*(RANKS[step] + s for s in "SHDC"), *(RANKS[12 - step] + s for s in "SHDC"))
]


def winning_deck() -> tuple[Card, ...]:
    """A deal won by playing every top card up in turn: the flanks (the 8 cards needed first),
    then line:0 again and again (each time it is emptied the refill deals it the next 4
    needed, the top one first), then, the stock spent, line:1 to line:5 top card first."""
    deck: list[Card] = [""] * 104
    deck[:8] = NEEDED[:8]
    for row in range(4):
        deck[line_position(0, row)] = NEEDED[11 - row]  # the top (row 3) is needed first
        for c in range(1, 6):
            deck[line_position(c, row)] = NEEDED[84 + 4 * (c - 1) + 3 - row]
    for refill in range(18):
        for k in range(4):  # dealt bottom first: the last of the four is played first
            deck[32 + 4 * refill + k] = NEEDED[12 + 4 * refill + 3 - k]
    assert Counter(deck) == Counter(canonical_deck(2))
    return tuple(deck)


def winning_moves() -> list[MoveCards]:
    """The 104 moves that win ``winning_deck``."""
    plays = [move(f, "foundation") for f in FLANK_PILES]
    plays += [move("line:0", "foundation")] * (4 + 72)
    plays += [move(line, "foundation") for line in LINE_PILES[1:] for _ in range(4)]
    return plays


def dealt(deck: Sequence[Card]) -> tuple[Table, Reveal]:
    """The sealed deal of ``deck`` and the reveal that shows its hidden cards."""
    sealed, hidden = seal(LN.deal(deck))
    return sealed, lambda slot: card_of(slot, hidden)


def hand_made(
    line: Mapping[int, str] | None = None,
    flanks: Mapping[int, str] | None = None,
    foundations: Mapping[int, str] | None = None,
    stock: str = "",
    passes_left: int = 3,
) -> Table:
    """A hand-made table: Line columns and foundations bottom first, one card per flank, the
    stock next card first (face down, written as codes); unnamed piles are empty."""
    piles = {LINE_PILES[c]: Pile(tuple(t.split())) for c, t in (line or {}).items()}
    piles |= {FLANK_PILES[i]: Pile(tuple(t.split())) for i, t in (flanks or {}).items()}
    piles |= {FOUNDATION_PILES[f]: Pile(tuple(t.split())) for f, t in (foundations or {}).items()}
    stocked = tuple(stock.split())[::-1]
    piles["stock"] = Pile(stocked, len(stocked))
    return table(LAYOUT, piles, passes_left=passes_left)


def shown(slot: object) -> Card:
    assert isinstance(slot, str)  # hand-made tables hold codes
    return slot


def play(t: Table, *actions: PlayAction, reveal: Reveal = shown) -> tuple[Table, list[GameEvent]]:
    return play_on(LN, t, reveal, *actions)


def refused(t: Table, action: PlayAction, reveal: Reveal = shown) -> str:
    with pytest.raises(RuleViolation) as info:
        LN.decide(t, action, reveal)
    return info.value.code


def refusal(t: Table, action: PlayAction) -> RuleViolation:
    with pytest.raises(RuleViolation) as info:
        LN.decide(t, action, shown)
    return info.value


def move(source: str, target: str, count: int | None = None) -> MoveCards:
    return MoveCards(source, target, count)


def moves(t: Table) -> list[MoveCards]:
    return [a for a in LN.legal_actions(t) if isinstance(a, MoveCards)]


def climb(suit: str, ranks: str) -> str:
    return " ".join(r + suit for r in ranks)


# --- the deal -----------------------------------------------------------------------------------


def test_the_first_ace_of_spades_goes_to_flank_0_and_the_rest_deals_in_order() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    first = deck.index("AS")
    assert first > 0  # the Ace is taken out from wherever it lies
    rest = deck[:first] + deck[first + 1 :]
    t = LN.deal(deck)
    assert t.pile("flank:0") == Pile(("AS",))
    for i in range(1, 8):  # the next 7 cards: one to each other flank
        assert t.pile(f"flank:{i}") == Pile((rest[i - 1],))
    for c in range(6):  # the next 24: the Line, row by row, bottom first, all face up
        expected = (rest[7 + c], rest[13 + c], rest[19 + c], rest[25 + c])
        assert t.pile(f"line:{c}") == Pile(expected, 0)
    # the other 72 are the stock, face down, the next card in deal order on top
    assert t.pile("stock") == Pile(tuple(reversed(rest[31:])), 72)
    assert all(t.pile(f) == Pile() for f in FOUNDATION_PILES)
    assert (t.passes_left, t.fan, LN.units(t)) == (3, 0, 0)
    sealed, hidden = seal(t)
    assert hidden == tuple(reversed(rest[31:]))  # only the stock is sealed
    assert all(isinstance(s, int) for s in sealed.pile("stock").cards)
    assert Counter(unseal(sealed, hidden).slots()) == Counter(deck)  # a full two-deck multiset


def test_only_the_first_ace_of_spades_is_taken_out_the_second_deals_where_it_falls() -> None:
    deck = builders.deck_with({0: "2S", 40: "AS", 10: "AS"}, 2)  # the first one in the Line
    rest = deck[:10] + deck[11:]
    t = LN.deal(deck)
    assert t.pile("flank:0").cards == ("AS",)
    assert t.pile("flank:1").cards == ("2S",)
    assert [t.pile(f"flank:{i}").cards[0] for i in range(1, 8)] == list(rest[:7])
    assert t.pile("stock").cards[::-1][40 - 32] == "AS"  # the second one, in the stock
    assert Counter(t.slots()) == Counter(deck)


def test_game_declarations() -> None:
    assert (LN.id, LN.title, LN.family) == ("la-nivernaise", "La Nivernaise", "la-nivernaise")
    assert (LN.rules_version, LN.decks, LN.max_units) == ("la-nivernaise/2", 2, 104)
    assert (LN.passes, LN.actions) == (3, ("draw", "move", "redeal", "undo"))
    assert LAYOUT.ids == (
        "stock",
        *(f"foundation:{f}" for f in range(8)),
        *(f"flank:{i}" for i in range(8)),
        *(f"line:{c}" for c in range(6)),
    )
    kinds = [s.kind for s in LAYOUT.specs]
    assert kinds == ["stock"] + ["foundation"] * 8 + ["flank"] * 8 + ["tableau"] * 6
    assert any("stake x M x cards on foundations / 104" in line for line in LN.summary)


# --- the foundations ----------------------------------------------------------------------------


def test_four_foundations_build_up_by_suit_and_four_build_down() -> None:
    t = hand_made(
        {0: "3H", 1: "2H", 2: "AH", 3: "QC", 4: "KC", 5: "JC"},
        foundations={0: "AS", 4: "KS"},
    )
    t, events = play(t, move("line:2", "foundation:1"), move("line:1", "foundation:1"))
    assert events == [
        CardMoved("line:2", "foundation:1", ("AH",)),
        CardMoved("line:1", "foundation:1", ("2H",)),
    ]
    t, _ = play(t, move("line:0", "foundation:1"))
    t, _ = play(t, move("line:4", "foundation:7"), move("line:3", "foundation:7"))
    t, _ = play(t, move("line:5", "foundation:7"))
    assert t.pile("foundation:1").cards == ("AH", "2H", "3H")
    assert t.pile("foundation:7").cards == ("KC", "QC", "JC")
    assert LN.units(t) == 8


def test_an_empty_up_foundation_takes_only_an_ace_an_empty_down_one_only_a_king() -> None:
    t = hand_made({0: "2H", 1: "AH", 2: "KH", 3: "QH"})
    assert refused(t, move("line:0", "foundation:0")) == errors.FOUNDATION_NEEDS_ACE
    assert refused(t, move("line:2", "foundation:3")) == errors.FOUNDATION_NEEDS_ACE
    assert refused(t, move("line:3", "foundation:4")) == errors.FOUNDATION_NEEDS_KING
    assert refused(t, move("line:1", "foundation:7")) == errors.FOUNDATION_NEEDS_KING
    # an Ace may start any empty up foundation, a King any empty down one
    up = [m for m in moves(t) if m.target in FOUNDATION_PILES]
    assert up == [move("line:1", f, 1) for f in FOUNDATION_PILES[:4]] + [
        move("line:2", f, 1) for f in FOUNDATION_PILES[4:]
    ]


def test_the_first_ace_or_king_of_a_suit_starts_its_foundation_the_other_finishes() -> None:
    t = hand_made(
        {0: "AD", 1: "AD", 2: "KD", 3: "KD", 4: "2D"},
        foundations={0: "AS", 4: "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S"},
    )
    t, _ = play(t, move("line:0", "foundation:2"))
    # one up foundation per suit: the second Ace of diamonds cannot start another
    problem = refusal(t, move("line:1", "foundation:1"))
    assert problem.code == errors.FOUNDATION_SUIT_TAKEN
    assert "foundation:1" in problem.detail
    assert [m for m in moves(t) if m.source == "line:1" and m.target in FOUNDATION_PILES] == []
    assert refused(t, move("line:1", "foundation")) == errors.NO_FOUNDATION_FITS
    t, _ = play(t, move("line:2", "foundation:6"))
    assert refused(t, move("line:3", "foundation:4")) == errors.FOUNDATION_WRONG_SUIT  # on 3S
    assert refused(t, move("line:3", "foundation:5")) == errors.FOUNDATION_SUIT_TAKEN
    # spades: the second Ace finishes the down foundation; it may not start an up one
    spades = hand_made({0: "AS"}, foundations={0: "AS", 4: climb("S", "KQJT98765432")})
    assert refused(spades, move("line:0", "foundation:1")) == errors.FOUNDATION_SUIT_TAKEN
    spades, events = play(spades, move("line:0", "foundation"))
    assert events == [CardMoved("line:0", "foundation:4", ("AS",))]
    assert spades.pile("foundation:4").top == "AS"


def test_wrong_suit_and_wrong_rank_are_refused_both_ways() -> None:
    t = hand_made({0: "2H", 1: "3S", 2: "QH", 3: "JS"}, foundations={0: "AS", 4: "KS"})
    assert refused(t, move("line:0", "foundation:0")) == errors.FOUNDATION_WRONG_SUIT
    assert refused(t, move("line:1", "foundation:0")) == errors.FOUNDATION_WRONG_RANK
    assert refused(t, move("line:2", "foundation:4")) == errors.FOUNDATION_WRONG_SUIT
    assert refused(t, move("line:3", "foundation:4")) == errors.FOUNDATION_WRONG_RANK


def test_a_full_up_foundation_ends_at_the_king_a_full_down_one_at_the_ace() -> None:
    t = hand_made(
        {0: "AS", 1: "KS", 2: "KH"},
        foundations={0: climb("S", RANKS), 4: climb("S", RANKS[::-1]), 5: climb("H", "K")},
    )
    assert refused(t, move("line:0", "foundation:0")) == errors.FOUNDATION_WRONG_RANK
    assert refused(t, move("line:1", "foundation:4")) == errors.FOUNDATION_WRONG_RANK
    assert [m for m in moves(t) if m.target in FOUNDATION_PILES] == []
    # the King of hearts cannot start an up foundation, nor a second down one
    assert refused(t, move("line:2", "foundation:1")) == errors.FOUNDATION_NEEDS_ACE
    assert refused(t, move("line:2", "foundation:6")) == errors.FOUNDATION_SUIT_TAKEN


def test_foundation_means_the_first_foundation_that_fits() -> None:
    t = hand_made(
        {0: "7S", 1: "KD", 2: "9H", 3: "AC"},
        foundations={0: "AS 2S 3S 4S 5S 6S", 4: "KS QS JS TS 9S 8S"},
    )
    _, events = play(t, move("line:0", "foundation"))
    assert events == [CardMoved("line:0", "foundation:0", ("7S",))]  # up first, then down
    _, events = play(t, move("line:1", "foundation"))
    assert events == [CardMoved("line:1", "foundation:5", ("KD",))]
    _, events = play(t, move("line:3", "foundation"))
    assert events == [CardMoved("line:3", "foundation:1", ("AC",))]
    assert refused(t, move("line:2", "foundation")) == errors.NO_FOUNDATION_FITS
    for card in ("7S", "KD", "9H", "AC", "8S", "6S", "AS", "KS"):
        assert wanted(t).get(card) == fitting_foundation(t, card)


def test_no_card_comes_back_off_a_foundation() -> None:
    t = hand_made({0: "5C"}, foundations={0: "AH 2H", 4: "KH"})
    for target in ("line:1", "flank:0", "foundation:1", "foundation:5"):
        assert refused(t, move("foundation:0", target)) == errors.INVALID_SOURCE
        assert refused(t, move("foundation:4", target)) == errors.INVALID_SOURCE
    assert not any(m.source.startswith("foundation") for m in moves(t))


# --- the flanks and the Line --------------------------------------------------------------------


def test_a_flank_card_goes_to_a_foundation_and_nowhere_else() -> None:
    t = hand_made({0: "9C"}, flanks={0: "AS", 1: "2S", 2: "QD"})
    assert refused(t, move("flank:1", "flank:3")) == errors.INVALID_DESTINATION
    assert refused(t, move("flank:2", "line:0")) == errors.INVALID_DESTINATION
    assert refused(t, move("flank:2", "line:1")) == errors.INVALID_DESTINATION  # even empty
    t, events = play(t, move("flank:0", "foundation"), move("flank:1", "foundation:0"))
    assert events == [
        CardMoved("flank:0", "foundation:0", ("AS",)),
        CardMoved("flank:1", "foundation:0", ("2S",)),
    ]
    assert (t.pile("flank:0"), t.pile("flank:1")) == (Pile(), Pile())
    assert LN.units(t) == 2


def test_a_line_top_card_goes_to_an_empty_flank_and_uncovers_the_card_beneath() -> None:
    t = hand_made({0: "AD 9C", 1: "5H"}, flanks={0: "KS", 2: "QD"})
    assert move("line:0", "foundation:0", 1) not in moves(t)  # the Ace is covered
    assert refused(t, move("line:0", "foundation:0")) == errors.FOUNDATION_NEEDS_ACE  # 9C's
    # an occupied flank takes nothing, not even a card that would fit a foundation
    problem = refusal(t, move("line:0", "flank:0"))
    assert (problem.code, "holds KS" in problem.detail) == (errors.INVALID_DESTINATION, True)
    assert [m for m in moves(t) if m.source == "line:0"] == [
        move("line:0", f, 1) for f in FLANK_PILES if f not in ("flank:0", "flank:2")
    ]
    t, events = play(t, move("line:0", "flank:1"))
    assert events == [CardMoved("line:0", "flank:1", ("9C",))]
    assert (t.pile("flank:1").cards, t.pile("line:0").cards) == (("9C",), ("AD",))
    t, _ = play(t, move("line:0", "foundation:3"))
    assert t.pile("foundation:3").cards == ("AD",)


def test_nothing_is_built_on_the_line() -> None:
    t = hand_made({0: "9C", 1: "TC", 2: ""}, flanks={0: "8C"})
    assert refused(t, move("line:0", "line:1")) == errors.INVALID_DESTINATION
    assert refused(t, move("line:0", "line:2")) == errors.INVALID_DESTINATION  # even empty
    assert refused(t, move("flank:0", "line:0")) == errors.INVALID_DESTINATION
    assert not any(m.target in LINE_PILES for m in moves(t))


def test_only_the_top_card_of_a_line_column_moves() -> None:
    t = hand_made({0: "AH 2H 3H"}, foundations={1: "AH"})
    assert refused(t, move("line:0", "flank:0", 2)) == errors.INVALID_COUNT
    assert refused(t, move("line:0", "foundation:1", 3)) == errors.INVALID_COUNT
    assert refused(t, move("line:0", "flank:0", 0)) == errors.INVALID_COUNT
    assert all(m.count == 1 for m in moves(t))
    _, events = play(t, move("line:0", "flank:0", 1))
    assert events == [CardMoved("line:0", "flank:0", ("3H",))]


# --- the Deal and the refill --------------------------------------------------------------------


def test_draw_deals_4_stock_cards_onto_each_line_column_from_the_left() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    t, reveal = dealt(deck)
    before = [t.pile(line).cards for line in LINE_PILES]
    nxt = [str(c) for c in LN.deal(deck).pile("stock").cards[::-1]]  # next card first
    events = LN.decide(t, Draw(), reveal)
    assert events == [
        CardDrawn("stock", f"line:{c}", tuple(nxt[4 * c : 4 * c + 4])) for c in range(6)
    ]
    t = g.apply_all(t, events)
    for c, line in enumerate(LINE_PILES):  # the first card dealt lies lowest
        assert t.pile(line).cards == (*before[c], *nxt[4 * c : 4 * c + 4])
        assert t.pile(line).top == nxt[4 * c + 3]
    assert (len(t.pile("stock")), t.pile("stock").down) == (48, 48)
    assert LN.automatic(t, reveal) == []


def test_the_last_deal_deals_what_is_left_from_the_left() -> None:
    t = hand_made({c: "K" + "SHDC"[c % 4] for c in range(6)}, stock="2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    t, events = play(t, Draw())
    assert events == [
        CardDrawn("stock", "line:0", ("2S", "3S", "4S", "5S")),
        CardDrawn("stock", "line:1", ("6S", "7S", "8S", "9S")),
        CardDrawn("stock", "line:2", ("TS", "JS")),
    ]
    assert [len(t.pile(line)) for line in LINE_PILES] == [5, 5, 3, 1, 1, 1]
    assert t.pile("stock") == Pile()
    assert Draw() not in LN.legal_actions(t)


def test_an_empty_stock_refuses_a_draw_saying_whether_a_redeal_is_left() -> None:
    t = hand_made({0: "9C"})
    problem = refusal(t, Draw())
    assert problem.code == errors.STOCK_EMPTY
    assert "redeal the Line (2 redeal(s) left)" in problem.detail
    last = hand_made({0: "9C"}, passes_left=1)
    problem = refusal(last, Draw())
    assert (problem.code, "both redeals have been used" in problem.detail) == (
        errors.STOCK_EMPTY,
        True,
    )
    assert refused(last, Recycle()) == errors.ACTION_NOT_ALLOWED


def test_an_emptied_line_column_is_refilled_at_once_with_4_stock_cards() -> None:
    full = dict.fromkeys(range(2, 6), "QH")
    t = hand_made({0: "5H", 1: "9C 8D"} | full, stock="2C 3C 4C 5C 6C")
    t, events = play(t, move("line:0", "flank:0"))
    assert events == [
        CardMoved("line:0", "flank:0", ("5H",)),
        CardDrawn("stock", "line:0", ("2C", "3C", "4C", "5C")),
    ]
    assert (t.pile("line:0").cards, t.pile("stock").cards) == (("2C", "3C", "4C", "5C"), ("6C",))
    # what is left when fewer than 4 remain; then nothing once the stock is empty
    t, events = play(t, move("line:1", "flank:1"), move("line:1", "flank:2"))
    assert events[-1] == CardDrawn("stock", "line:1", ("6C",))
    t, events = play(t, move("line:1", "flank:3"))
    assert events == [CardMoved("line:1", "flank:3", ("6C",))]
    assert t.pile("line:1") == Pile()
    assert LN.automatic(t, shown) == []


def _flanks_freed(deck: Sequence[Card]) -> g.Game:
    """A game on ``deck`` (made by ``deck_of`` without flank cards: its flanks hold the Ace to
    the 8 of spades) with the flanks played up to foundation:0, so all 8 are empty."""
    game, _ = start(deck, variant="la-nivernaise")
    game, _ = play_game(game, *[move(f, "foundation:0") for f in FLANK_PILES])
    assert game.units == 8
    return game


def test_a_refill_from_the_sealed_stock_shows_exactly_the_cards_it_deals() -> None:
    deck = deck_of(line={0: ["AH", "2H", "3H", "4H"]})
    game = _flanks_freed(deck)
    game, _ = play_game(game, *[move("line:0", f"flank:{i}") for i in range(3)])
    game, events = play_game(game, move("line:0", "foundation"))
    assert events == [
        CardMoved("line:0", "foundation:1", ("AH",)),
        CardDrawn("stock", "line:0", deck[32:36]),  # the stock's next four, first drawn lowest
    ]
    assert builders.pile(game, "line:0") == Pile(deck[32:36])
    assert len(builders.pile(game, "stock")) == 68


# --- the redeal ---------------------------------------------------------------------------------


def test_a_redeal_gathers_the_line_last_column_first_each_bottom_to_top() -> None:
    t = hand_made(
        {0: "2H 3H", 1: "4D", 3: "9S 8S 7S", 5: "KC"}, flanks={0: "QD", 4: "JC"}, passes_left=3
    )
    assert Redeal() in LN.legal_actions(t)
    assert Draw() not in LN.legal_actions(t)
    t, events = play(t, Redeal())
    gathered = ("KC", "9S", "8S", "7S", "4D", "2H", "3H")
    assert events == [
        PilesGathered(tuple(reversed(LINE_PILES)), "stock", gathered, 2),
        # then the refill deals the Line again, 4 to a column, the lowest numbered first
        CardDrawn("stock", "line:0", ("KC", "9S", "8S", "7S")),
        CardDrawn("stock", "line:1", ("4D", "2H", "3H")),
    ]
    assert [t.pile(line).cards for line in LINE_PILES] == [
        ("KC", "9S", "8S", "7S"),
        ("4D", "2H", "3H"),
        (),
        (),
        (),
        (),
    ]
    assert (t.pile("flank:0").cards, t.pile("flank:4").cards) == (("QD",), ("JC",))  # they stay
    assert (t.passes_left, t.pile("stock")) == (2, Pile())


def test_the_redealt_stock_is_dealt_in_the_order_gathered() -> None:
    line = {c: " ".join(f"{r}{'SHDC'[c % 4]}" for r in RANKS[2 * c : 2 * c + 3]) for c in range(6)}
    t = hand_made(line)
    t, events = play(t, Redeal())
    gathered = events[0]
    assert isinstance(gathered, PilesGathered)
    assert gathered.cards == tuple(c for i in range(5, -1, -1) for c in line[i].split())
    assert [e.cards for e in events[1:] if isinstance(e, CardDrawn)] == [
        gathered.cards[4 * c : 4 * c + 4] for c in range(5)
    ]
    assert len(t.pile("stock")) == 0  # 18 cards: four columns of 4, one of 2


def test_a_redeal_needs_an_empty_stock_a_redeal_left_and_cards_on_the_line() -> None:
    assert refused(hand_made({0: "9C"}, stock="2C"), Redeal()) == errors.STOCK_NOT_EMPTY
    assert refused(hand_made({0: "9C"}, passes_left=1), Redeal()) == errors.NO_PASSES_LEFT
    assert refused(hand_made(flanks={0: "9C"}), Redeal()) == errors.SOURCE_EMPTY
    # in that order
    assert refused(hand_made(stock="2C", passes_left=1), Redeal()) == errors.STOCK_NOT_EMPTY
    assert refused(hand_made(passes_left=1), Redeal()) == errors.NO_PASSES_LEFT
    for t in (hand_made({0: "9C"}, stock="2C"), hand_made({0: "9C"}, passes_left=1)):
        assert Redeal() not in LN.legal_actions(t)


def test_twice_per_game() -> None:
    t = hand_made({0: "9C 8C"})
    t, _ = play(t, Redeal())
    assert t.passes_left == 2
    t, _ = play(t, Redeal())
    assert t.passes_left == 1
    assert t.pile("line:0").cards == ("9C", "8C")  # gathered and dealt back twice
    assert refused(t, Redeal()) == errors.NO_PASSES_LEFT
    assert LN.legal_actions(t) == [move("line:0", f, 1) for f in FLANK_PILES]


def test_a_whole_game_deals_out_redeals_twice_and_then_stops() -> None:
    game, _ = start(seed=SEED, variant="la-nivernaise")
    game, events = play_game(game, Draw(), Draw(), Draw())
    assert len(events) == 18
    assert all(isinstance(e, CardDrawn) for e in events)
    assert builders.pile(game, "stock") == Pile()
    for left in (2, 1):
        line = sum(len(builders.pile(game, p)) for p in LINE_PILES)
        game, events = play_game(game, Redeal())
        assert isinstance(events[0], PilesGathered)
        assert (events[0].passes_left, len(events[0].cards)) == (left, line)
        assert game.table is not None
        assert game.table.passes_left == left
        # the refill dealt 24 of the 96 gathered: three Deals spend the rest
        game, _ = play_game(game, Draw(), Draw())
        assert len(builders.pile(game, "stock")) == 24
        game, _ = play_game(game, Draw())
    with pytest.raises(RuleViolation) as refusal_:
        g.decide(game, Redeal(), builders.sealed_of(game))
    assert refusal_.value.code == errors.NO_PASSES_LEFT


# --- refusals -----------------------------------------------------------------------------------


def test_move_refusals_name_the_problem() -> None:
    t = hand_made({0: "9S"}, flanks={0: "2D"}, stock="AH")
    assert refused(t, move("line:6", "flank:1")) == errors.UNKNOWN_PILE
    assert refused(t, move("line:0", "flank:8")) == errors.UNKNOWN_PILE
    assert refused(t, move("line:0", "foundation:8")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "flank:1")) == errors.UNKNOWN_PILE
    assert refused(t, move("waste", "flank:1")) == errors.UNKNOWN_PILE
    assert refused(t, move("foundation", "flank:1")) == errors.UNKNOWN_PILE
    assert refused(t, move("line:0", "line:0")) == errors.SAME_PILE
    assert refused(t, move("flank:0", "flank:0")) == errors.SAME_PILE
    assert refused(t, move("stock", "line:0")) == errors.INVALID_SOURCE
    assert refused(t, move("stock", "foundation")) == errors.INVALID_SOURCE
    assert refused(t, move("line:0", "stock")) == errors.INVALID_DESTINATION
    assert refused(t, move("line:1", "flank:1")) == errors.SOURCE_EMPTY
    assert refused(t, move("flank:1", "foundation")) == errors.SOURCE_EMPTY
    for action in (Turn("line:0"), Remove(("line:0",)), Pick("line:0", "9S", "flank:1")):
        assert refused(t, action) == errors.ACTION_NOT_ALLOWED


def test_refusals_never_name_a_face_down_card() -> None:
    deck = derive_deck(bytes([7]) * 32, None, 2)
    t, reveal = dealt(deck)
    seen = {c for c in t.slots() if isinstance(c, str)}
    hidden = set(deck) - seen
    details: list[str] = []
    for source in (*LAYOUT.ids, "foundation"):
        for target in (*LAYOUT.ids, "foundation"):
            for count in (None, 1, 2):
                try:
                    LN.decide(t, move(source, target, count), reveal)
                except RuleViolation as exc:
                    details.append(exc.detail)
    for action in (Redeal(), Recycle()):
        with pytest.raises(RuleViolation) as info:
            LN.decide(t, action, reveal)
        details.append(info.value.detail)
    assert len(details) > 500
    assert [d for d in details if any(c in d for c in hidden)] == []


# --- legal actions ------------------------------------------------------------------------------


def accepted(t: Table, reveal: Reveal) -> set[PlayAction]:
    """Every move with a count, draw and redeal that ``decide`` accepts, by trying them all."""
    found: set[PlayAction] = set()
    tries: list[PlayAction] = [Draw(), Redeal()]
    tries += [move(s, d, n) for s in LAYOUT.ids for d in LAYOUT.ids for n in (1, 2)]
    for action in tries:
        try:
            LN.decide(t, action, reveal)
        except RuleViolation:
            continue
        found.add(action)
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_legal_actions_are_exactly_what_decide_accepts(seed: int) -> None:
    t, reveal = dealt(derive_deck(bytes([seed]) * 32, None, 2))
    redealt = False
    for step in range(600):
        legal = LN.legal_actions(t)
        assert len(set(legal)) == len(legal)
        if step % 5 == 0 or Redeal() in legal:
            assert set(legal) == accepted(t, reveal)
        for a in legal:  # "foundation" resolves to one of the listed moves
            if isinstance(a, MoveCards) and a.target in FOUNDATION_PILES:
                (event,) = LN.decide(t, move(a.source, "foundation"), reveal)[:1]
                assert isinstance(event, CardMoved)
                assert move(event.source, event.target, 1) in legal
        action = bot.choose(LN, t, legal)
        if action is None:
            break
        redealt = redealt or isinstance(action, Redeal)
        t, _ = play(t, action, reveal=reveal)
    assert redealt


# --- undo ---------------------------------------------------------------------------------------


def test_undo_takes_back_a_move_that_dealt_no_card() -> None:
    game = _flanks_freed(deck_of(line={0: ["9C", "8C", "7C", "6C"]}))
    assert game.undo is not None  # the last flank card up
    before = game.table
    game, events = play_game(game, move("line:0", "flank:0"))
    assert events == [CardMoved("line:0", "flank:0", ("6C",))]
    assert g.Undo() in g.legal_commands(game)
    game, events = play_game(game, g.Undo())
    assert events == [Undone("move", (UndoneMove("line:0", "flank:0", ("6C",)),))]
    assert game.table == before
    with pytest.raises(RuleViolation) as refusal_:  # single level
        g.decide(game, g.Undo())
    assert refusal_.value.code == errors.UNDO_NOT_ALLOWED


def test_only_a_move_is_undoable_never_a_draw_a_refill_or_a_redeal() -> None:
    t = hand_made({0: "5H"} | dict.fromkeys(range(1, 6), "QH"), stock="2C 3C 4C 5C")
    _, (moved, drawn) = play(t, move("line:0", "flank:0"))
    assert LN.undoable(moved, t)
    assert not LN.undoable(drawn, t)
    assert not any(LN.undoable(e, t) for e in LN.decide(t, Draw(), shown))
    redealt = LN.decide(hand_made({0: "5H"}), Redeal(), shown)
    assert not any(LN.undoable(e, t) for e in redealt)


def test_the_engine_never_undoes_a_move_followed_by_its_refill_or_a_draw_or_a_redeal() -> None:
    game = _flanks_freed(deck_of(line={0: ["9C", "8C", "7C", "6C"]}))
    game, _ = play_game(game, *[move("line:0", f"flank:{i}") for i in range(3)])
    game, events = play_game(game, move("line:0", "flank:3"))
    assert events[0] == CardMoved("line:0", "flank:3", ("9C",))
    assert isinstance(events[1], CardDrawn)
    assert game.undo is None
    with pytest.raises(RuleViolation) as refusal_:
        g.decide(game, g.Undo())
    assert refusal_.value.code == errors.UNDO_NOT_ALLOWED
    assert LN.undo_rule in refusal_.value.detail
    game, _ = play_game(game, Draw())
    assert g.Undo() not in g.legal_commands(game)
    game, _ = play_game(game, Draw(), Draw())
    game, events = play_game(game, Redeal())
    assert isinstance(events[0], PilesGathered)
    with pytest.raises(RuleViolation) as refusal_:
        g.decide(game, g.Undo())
    assert refusal_.value.code == errors.UNDO_NOT_ALLOWED
    assert LN.undo_rule in refusal_.value.detail


# --- units, won and over ------------------------------------------------------------------------


def test_units_are_cards_on_the_foundations_and_all_104_is_a_win() -> None:
    ups = {f: climb("SHDC"[f], RANKS) for f in range(4)}
    downs = {4 + f: climb("SHDC"[f], RANKS[::-1]) for f in range(4)}
    won = hand_made(foundations=ups | downs)
    assert (LN.units(won), LN.is_won(won)) == (104, True)
    assert LN.legal_actions(won) == []
    one_left = hand_made(
        flanks={5: "AC"}, foundations=ups | downs | {7: climb("C", "KQJT98765432")}
    )
    assert (LN.units(one_left), LN.is_won(one_left)) == (103, False)
    assert LN.legal_actions(one_left) == [move("flank:5", "foundation:7", 1)]


def test_a_won_game_on_a_given_deck_refuses_all_but_collect() -> None:
    game, _ = start(winning_deck(), variant="la-nivernaise")
    game, events = play_game(game, *winning_moves())
    assert (game.status, game.units) == ("complete", 104)
    assert sum(isinstance(e, CardDrawn) for e in events) == 18  # every refill
    assert g.legal_commands(game) == [g.Collect()]
    with pytest.raises(RuleViolation) as refusal_:
        g.decide(game, Redeal(), builders.sealed_of(game))
    assert refusal_.value.code == errors.GAME_COMPLETE
    assert game.winnings == winnings(104, 520, LN.multiplier, 104)


def test_the_game_is_over_when_nothing_plays_and_no_redeal_is_left() -> None:
    over = hand_made({0: "2S", 1: "9H"}, flanks=dict.fromkeys(range(8), "5C"), passes_left=1)
    assert LN.legal_actions(over) == []
    assert not LN.is_won(over)


# --- recorded streams fold and verify -----------------------------------------------------------


def _verified(events: list[GameEvent]) -> None:
    result = verify_game(recorded("g1", events), postings_for("g1", events), PAYTABLES)
    assert result.findings == []
    assert result.checks == dict.fromkeys(CHECKS, "pass")
    assert result.state == g.fold(events)


def test_a_won_game_on_a_given_deck_folds_and_verifies() -> None:
    deck = winning_deck()
    game, events = start(deck, variant="la-nivernaise")
    game, more = play_game(game, *winning_moves(), g.Collect(server_seed=SEED.hex(), deck=deck))
    events += more
    assert (game.status, game.payout) == ("collected", winnings(104, 520, LN.multiplier, 104))
    assert g.fold(events) == game
    _verified(events)


def test_a_seeded_game_with_both_redeals_folds_and_verifies() -> None:
    game, events = start(variant="la-nivernaise", seed=SEED)
    while game.table is not None:
        legal = [c for c in g.legal_commands(game) if not isinstance(c, g.Collect | g.Undo)]
        action = bot.choose(LN, game.table, legal)
        if action is None:
            break
        game, more = play_game(game, action)
        events += more
    assert sum(isinstance(e, PilesGathered) for e in events) == 2
    game, more = play_game(game, g.Collect(server_seed=SEED.hex()))
    events += more
    assert g.fold(events) == game
    _verified(events)


def test_a_redeal_recorded_out_of_order_does_not_verify() -> None:
    game, events = start(variant="la-nivernaise", seed=SEED)
    game, more = play_game(game, Draw(), Draw(), Draw(), Redeal())
    events += more
    i = next(i for i, e in enumerate(events) if isinstance(e, PilesGathered))
    gathered = events[i]
    assert isinstance(gathered, PilesGathered)
    events[i] = PilesGathered(
        LINE_PILES, gathered.target, gathered.cards, gathered.passes_left
    )  # the first column first: its cards no longer match the order named
    game, more = play_game(game, g.Collect(server_seed=SEED.hex()))
    result = verify_game(
        recorded("g1", events + more), postings_for("g1", events + more), PAYTABLES
    )
    assert result.findings != []


# --- the reference bot --------------------------------------------------------------------------


def test_bot_plays_a_flank_card_up_first_then_a_line_card() -> None:
    t = hand_made({0: "AH", 1: "9C"}, flanks={3: "AS"}, stock="2C")
    assert bot.choose(LN, t, LN.legal_actions(t)) == move("flank:3", "foundation:0", 1)
    t, _ = play(t, move("flank:3", "foundation:0"))
    assert bot.choose(LN, t, LN.legal_actions(t)) == move("line:0", "foundation:1", 1)


def test_bot_digs_when_the_cards_beneath_then_play() -> None:
    t = hand_made({0: "2H AH 9C", 1: "5D 7S"}, stock="2C 3C 4C 5C")
    assert bot.choose(LN, t, LN.legal_actions(t)) == move("line:0", "flank:0", 1)
    # one card freed does not pay for a flank while the game goes on ...
    one = hand_made({0: "7D AH 9C", 1: "5D 7S"}, stock="2C 3C 4C 5C")
    assert bot.choose(LN, one, LN.legal_actions(one)) == Draw()
    # ... but it does once the stock and the redeals are spent
    end = hand_made({0: "7D AH 9C", 1: "5D 7S"}, passes_left=1)
    assert bot.choose(LN, end, LN.legal_actions(end)) == move("line:0", "flank:0", 1)


def test_bot_draws_then_redeals_then_stops() -> None:
    t = hand_made({0: "9C", 1: "5D"}, stock="2C")
    assert bot.choose(LN, t, LN.legal_actions(t)) == Draw()
    t = hand_made({0: "9C", 1: "5D"})
    assert bot.choose(LN, t, LN.legal_actions(t)) == Redeal()
    t = hand_made({0: "9C", 1: "5D"}, passes_left=1)
    assert bot.choose(LN, t, LN.legal_actions(t)) is None


def blinded(t: Table) -> Table:
    """``t`` with every sealed number replaced by -1: what a bot that cannot cheat sees."""
    piles = (Pile(tuple(-1 if isinstance(s, int) else s for s in p.cards), p.down) for p in t.piles)
    return t.but(piles=tuple(piles))


@pytest.mark.parametrize("seed", range(4))
def test_the_bot_stops_only_once_the_stock_and_the_redeals_are_spent(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.)"""
    t = bot_play_out(LN, seed)[-1]
    assert t.pile("stock") == Pile()
    assert LN.is_won(t) or t.passes_left == 1
    assert LN.units(t) == sum(len(t.pile(f)) for f in FOUNDATION_PILES) > 0


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    stock = table.pile(la_nivernaise.STOCK)
    assert stock.down == len(stock.cards)  # dealt onto the Line, never turned
    founded: list[tuple[bool, str]] = []
    for f, i in enumerate(la_nivernaise.F):
        pile = table.piles[i].up
        assert pile == table.piles[i].cards
        rising = la_nivernaise.builds_up(f)
        builds = same_suit_up if rising else same_suit_down
        for n, card in enumerate(pile):  # one suit: Ace up (0-3) or King down (4-7)
            assert builds(card, pile[n - 1]) if n else card[0] == ("A" if rising else "K")
        founded.extend((rising, pile[0][1]) for _ in pile[:1])
    assert len(set(founded)) == len(founded)  # each suit: one up, one down at most
    for i in la_nivernaise.FL:
        assert len(table.piles[i].cards) <= 1  # a flank holds one card
        assert table.piles[i].down == 0
    for i in la_nivernaise.L:
        assert table.piles[i].down == 0  # the Line lies face up
        assert table.piles[i].cards or not stock.cards  # an emptied column refills
