"""Salic Law (seed 004; GAMES.md), rule by rule, refusals included, a recorded stream that folds
and verifies, and the reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from events.catalog import CardDrawn, CardMoved, Dealt, DealtPile, GameEvent, Undone, UndoneMove
from service import errors
from service.core import game_decider as g
from service.core.game_verification import CHECKS, verify_game
from service.core.paytable import default_paytables, winnings
from service.core.shuffle import derive_deck
from service.errors import RuleViolation
from service.games import salic_law
from service.games.salic_law import (
    FOUNDATION_PILES,
    LAYOUT,
    SALIC_LAW,
    TABLEAU_PILES,
    builds_up_to_jack,
)
from service.rtp.bots import salic_law as bot
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Remove, Turn
from service.rules.cards import Card, canonical_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, card_of, seal, table, unseal
from tests import builders
from tests.builders import SEED, play_on, postings_for, recorded, start
from tests.builders import play as play_game
from tests.unit.rtp_support import bot_play_out

SL = SALIC_LAW
PAYTABLES = default_paytables()

# --- helpers ------------------------------------------------------------------------------------


def of_rank(rank: str) -> list[Card]:
    """The eight cards of a rank in two decks, suit by suit, twice."""
    return [rank + s for s in "SHDC"] * 2


def deck_of(hand: Sequence[Card], queens_at: Sequence[int] = ()) -> tuple[Card, ...]:
    """A full two-deck deck in deal order: the King of spades first, then ``hand`` (the hand's
    first cards, the first drawn first), then every other card in canonical order; the Queens
    are moved to the positions ``queens_at`` (the first ones), the rest stay where they fall."""
    placed = {0: "KS", **{1 + i: card for i, card in enumerate(hand)}}
    deck = [c for c in builders.deck_with(placed, 2) if c[0] != "Q"]
    for n, at in enumerate(sorted(queens_at)):
        deck.insert(at, of_rank("Q")[n])
    deck += of_rank("Q")[len(queens_at) :]
    assert Counter(deck) == Counter(canonical_deck(2))
    return tuple(deck)


#: Ace to Jack, eight of each, in the order the foundations take them.
CLIMB = [card for rank in "A23456789TJ" for card in of_rank(rank)]
OTHER_KINGS = of_rank("K")[1:]


def winning_deck() -> tuple[Card, ...]:
    """Each card drawn goes straight up: the 88 cards Ace to Jack, then the other seven Kings
    (the game is won before they are drawn); the Queens lie among them."""
    return deck_of([*CLIMB, *OTHER_KINGS], queens_at=(1, 5, 30, 31, 60, 88, 90, 103))


def spaces_deck() -> tuple[Card, ...]:
    """Column 0 takes 2 to Jack, the Jacks at the bottom and one 5 on top of the 2s; then the
    seven other Kings each start a column; then the Aces, onto the last column, go straight up.
    With the hand out, the 5 goes into a space and everything plays."""
    low_to_high = [card for rank in "23456789TJ" for card in of_rank(rank)]
    five = low_to_high.pop(low_to_high.index("5S"))
    column0 = [*reversed(low_to_high), five]  # drawn first = bottom of the column
    return deck_of([*column0, *OTHER_KINGS, *of_rank("A")])


def dealt(deck: Sequence[Card]) -> tuple[Table, Reveal]:
    """The sealed deal of ``deck`` and the reveal that shows its hidden cards."""
    sealed, hidden = seal(SL.deal(deck))
    return sealed, lambda slot: card_of(slot, hidden)


def hand_made(
    columns: Mapping[int, str] | None = None,
    foundations: Mapping[int, str] | None = None,
    hand: str = "",
) -> Table:
    """A hand-made table: columns and foundations bottom first, the hand next card first (face
    down, written as codes); the Queens set aside."""
    piles = {TABLEAU_PILES[c]: Pile(tuple(t.split())) for c, t in (columns or {}).items()}
    piles |= {FOUNDATION_PILES[f]: Pile(tuple(t.split())) for f, t in (foundations or {}).items()}
    cards = tuple(hand.split())[::-1]
    piles["hand"] = Pile(cards, len(cards))
    piles["queens"] = Pile(tuple(of_rank("Q")))
    return table(LAYOUT, piles, passes_left=1)


def shown(slot: object) -> Card:
    assert isinstance(slot, str)  # hand-made tables hold codes
    return slot


def play(t: Table, reveal: Reveal, *actions: PlayAction) -> tuple[Table, list[GameEvent]]:
    return play_on(SL, t, reveal, *actions)


def refused(t: Table, action: PlayAction, reveal: Reveal = shown) -> str:
    with pytest.raises(RuleViolation) as info:
        SL.decide(t, action, reveal)
    return info.value.code


def move(source: str, target: str, count: int | None = None) -> MoveCards:
    return MoveCards(source, target, count)


def moves(t: Table) -> list[MoveCards]:
    return [a for a in SL.legal_actions(t) if isinstance(a, MoveCards)]


# --- the deal -----------------------------------------------------------------------------------


def test_game_declarations() -> None:
    assert (SL.id, SL.title, SL.family) == ("salic-law", "Salic Law", "salic-law")
    assert (SL.rules_version, SL.decks, SL.max_units) == ("salic-law/2", 2, 88)
    assert (SL.passes, SL.draw_count, SL.actions) == (1, 1, ("draw", "move", "undo"))
    assert LAYOUT.ids[:2] == ("hand", "queens")
    assert (LAYOUT.kind("hand"), LAYOUT.kind("queens")) == ("stock", "discard")
    assert [LAYOUT.kind(p) for p in FOUNDATION_PILES] == ["foundation"] * 8
    assert [LAYOUT.kind(p) for p in TABLEAU_PILES] == ["tableau"] * 8
    assert any("stake x M x cards on foundations / 88" in line for line in SL.summary)


@pytest.mark.parametrize("seed", [4, 5])
def test_the_queens_are_set_aside_the_first_king_of_spades_starts_column_0(seed: int) -> None:
    deck = derive_deck(bytes([seed]) * 32, None, 2)
    first_king = deck.index("KS")
    t = SL.deal(deck)
    assert t.pile("queens") == Pile(tuple(c for c in deck if c[0] == "Q"), 0)  # in deck order
    assert t.pile("tableau:0") == Pile(("KS",), 0)
    assert all(t.pile(p) == Pile() for p in (*TABLEAU_PILES[1:], *FOUNDATION_PILES))
    rest = [c for i, c in enumerate(deck) if i != first_king and c[0] != "Q"]
    assert t.pile("hand") == Pile(tuple(reversed(rest)), 95)  # the next card in deal order on top
    assert "KS" in rest  # the second King of spades stays in the hand
    assert (t.passes_left, SL.units(t)) == (1, 0)


def test_only_the_hand_is_sealed_and_the_deal_shows_the_queens_and_the_king() -> None:
    deck = derive_deck(bytes([4]) * 32, None, 2)
    sealed, hidden = seal(SL.deal(deck))
    assert len(hidden) == 95
    assert all(isinstance(s, int) for s in sealed.pile("hand").cards)
    assert Counter(unseal(sealed, hidden).slots()) == Counter(deck)  # a full two-deck multiset
    game, events = start(deck, variant="salic-law")
    deal = events[1]
    assert isinstance(deal, Dealt)
    assert deal.piles == (
        DealtPile("hand", 95, ()),
        DealtPile("queens", 0, tuple(c for c in deck if c[0] == "Q")),
        DealtPile("tableau:0", 0, ("KS",)),
    )
    assert game.units == 0


# --- the hand -----------------------------------------------------------------------------------


def test_a_drawn_card_goes_onto_the_last_column_and_a_king_starts_a_new_one() -> None:
    deck = deck_of(["5H", "KD", "9C", "2S", "KH", "KC", "JD"])
    t, reveal = dealt(deck)
    t, events = play(t, reveal, *[Draw()] * 7)
    assert events == [
        CardDrawn("hand", "tableau:0", ("5H",)),
        CardDrawn("hand", "tableau:1", ("KD",)),
        CardDrawn("hand", "tableau:1", ("9C",)),
        CardDrawn("hand", "tableau:1", ("2S",)),
        CardDrawn("hand", "tableau:2", ("KH",)),
        CardDrawn("hand", "tableau:3", ("KC",)),
        CardDrawn("hand", "tableau:3", ("JD",)),
    ]
    assert [t.pile(p).cards for p in TABLEAU_PILES[:4]] == [
        ("KS", "5H"),
        ("KD", "9C", "2S"),
        ("KH",),
        ("KC", "JD"),
    ]
    assert len(t.pile("hand")) == 95 - 7


def test_the_whole_hand_is_drawn_once_and_an_empty_hand_refuses_a_draw() -> None:
    deck = derive_deck(bytes([9]) * 32, None, 2)
    t, reveal = dealt(deck)
    t, events = play(t, reveal, *[Draw()] * 95)
    assert [e.cards[0] for e in events if isinstance(e, CardDrawn)] == [
        c for i, c in enumerate(deck) if i != deck.index("KS") and c[0] != "Q"
    ]
    assert t.pile("hand") == Pile()
    assert [len(t.pile(p)) > 0 for p in TABLEAU_PILES] == [True] * 8  # one column per King
    assert Draw() not in SL.legal_actions(t)
    assert refused(t, Draw(), reveal) == errors.STOCK_EMPTY
    assert refused(t, Recycle(), reveal) == errors.ACTION_NOT_ALLOWED


def test_an_ace_goes_up_the_moment_it_is_drawn() -> None:
    t, reveal = dealt(deck_of(["AH", "2C"]))
    t, _ = play(t, reveal, Draw())
    assert moves(t) == [move("tableau:0", f, 1) for f in FOUNDATION_PILES]
    t, events = play(t, reveal, move("tableau:0", "foundation:3"))
    assert events == [CardMoved("tableau:0", "foundation:3", ("AH",))]
    t, _ = play(t, reveal, Draw(), move("tableau:0", "foundation"))
    assert t.pile("foundation:3").cards == ("AH", "2C")
    assert SL.units(t) == 2


# --- the foundations ----------------------------------------------------------------------------


def test_foundations_build_ace_to_jack_regardless_of_suit() -> None:
    t = hand_made({0: "KS 3D", 1: "KH 2H", 2: "KD 4S", 3: "KC AS"}, hand="7C")
    assert refused(t, move("tableau:1", "foundation:0")) == errors.FOUNDATION_NEEDS_ACE
    t, _ = play(t, shown, move("tableau:3", "foundation:0"), move("tableau:1", "foundation:0"))
    assert refused(t, move("tableau:2", "foundation:0")) == errors.FOUNDATION_WRONG_RANK
    t, _ = play(t, shown, move("tableau:0", "foundation:0"), move("tableau:2", "foundation:0"))
    assert t.pile("foundation:0").cards == ("AS", "2H", "3D", "4S")  # any suit on any suit
    assert SL.units(t) == 4


def test_a_foundation_is_complete_at_its_jack() -> None:
    assert builds_up_to_jack("JC", "TH")
    assert not builds_up_to_jack("QH", "JC")
    assert not builds_up_to_jack("KH", "QC")
    assert builds_up_to_jack("AD", None)
    assert not builds_up_to_jack("2D", None)
    full = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS"
    t = hand_made({0: "KS TD", 1: "KH JD"}, foundations={0: full, 1: "AH 2H 3H 4H 5H 6H 7H 8H 9H"})
    assert refused(t, move("tableau:1", "foundation:0")) == errors.FOUNDATION_WRONG_RANK
    assert moves(t) == [move("tableau:0", "foundation:1", 1)]


def test_foundation_means_the_first_foundation_that_fits() -> None:
    t = hand_made({0: "KS 3S", 1: "KH 2S", 2: "KD 9D"}, foundations={0: "AH", 3: "AS", 5: "AC"})
    _, events = play(t, shown, move("tableau:1", "foundation"))
    assert events == [CardMoved("tableau:1", "foundation:0", ("2S",))]
    assert refused(t, move("tableau:0", "foundation")) == errors.NO_FOUNDATION_FITS
    assert refused(t, move("tableau:2", "foundation")) == errors.NO_FOUNDATION_FITS
    assert moves(t) == [move("tableau:1", f"foundation:{f}", 1) for f in (0, 3, 5)]


def test_any_columns_top_card_plays_at_any_time_but_kings_never_move() -> None:
    t = hand_made({0: "KS AD 5C", 1: "KH", 2: "KD 2C AC"}, hand="9H 3D")
    assert refused(t, move("tableau:1", "foundation:0")) == errors.KING_NEVER_MOVES
    t, _ = play(t, shown, move("tableau:2", "foundation:0"), move("tableau:2", "foundation:0"))
    assert t.pile("tableau:2").cards == ("KD",)  # the column keeps its King
    assert refused(t, move("tableau:2", "foundation:0")) == errors.KING_NEVER_MOVES
    assert moves(t) == []  # 5C does not fit, and the AD under it is not a top card


def test_nothing_comes_back_off_a_foundation_nor_out_of_the_queens_or_the_hand() -> None:
    t = hand_made({0: "KS", 1: "KH 7C"}, foundations={0: "AH 2H"}, hand="9H")
    assert refused(t, move("foundation:0", "tableau:0")) == errors.INVALID_SOURCE
    assert refused(t, move("foundation:0", "foundation:1")) == errors.INVALID_SOURCE
    assert refused(t, move("queens", "tableau:0")) == errors.INVALID_SOURCE
    assert refused(t, move("hand", "tableau:0")) == errors.INVALID_SOURCE
    assert refused(t, move("tableau:1", "queens")) == errors.INVALID_DESTINATION
    assert refused(t, move("tableau:1", "hand")) == errors.INVALID_DESTINATION


# --- spaces -------------------------------------------------------------------------------------


def test_nothing_moves_between_columns_while_the_hand_holds_cards() -> None:
    t = hand_made({0: "KS 5H", 1: "KD", 2: "KC 9S 8S"}, hand="4C")
    assert refused(t, move("tableau:0", "tableau:1")) == errors.STOCK_NOT_EMPTY
    assert refused(t, move("tableau:2", "tableau:0")) == errors.STOCK_NOT_EMPTY
    assert moves(t) == []


def test_once_the_hand_is_out_a_column_holding_only_its_king_takes_any_top_card() -> None:
    t = hand_made({0: "KS 5H 9C", 1: "KD", 2: "KC 9S 8S", 3: "KH"})
    assert moves(t) == [
        move("tableau:0", "tableau:1", 1),
        move("tableau:0", "tableau:3", 1),
        move("tableau:2", "tableau:1", 1),
        move("tableau:2", "tableau:3", 1),
    ]
    t, events = play(t, shown, move("tableau:0", "tableau:3"))
    assert events == [CardMoved("tableau:0", "tableau:3", ("9C",))]
    assert (t.pile("tableau:0").cards, t.pile("tableau:3").cards) == (("KS", "5H"), ("KH", "9C"))
    # tableau:3 is no longer a space; a column with cards on its King never was
    assert refused(t, move("tableau:2", "tableau:3")) == errors.NOT_A_SPACE
    assert refused(t, move("tableau:2", "tableau:0")) == errors.NOT_A_SPACE
    assert refused(t, move("tableau:2", "tableau:5")) == errors.NOT_A_SPACE  # no King there
    assert refused(t, move("tableau:1", "tableau:0")) == errors.KING_NEVER_MOVES  # a lone King
    # the card put into a space goes on again: to a foundation, or to another space
    t, _ = play(t, shown, move("tableau:3", "tableau:1"))
    assert (t.pile("tableau:1").cards, t.pile("tableau:3").cards) == (("KD", "9C"), ("KH",))


def test_a_dealt_game_is_won_through_a_space() -> None:
    deck = spaces_deck()
    t, reveal = dealt(deck)
    for _ in range(95):  # nothing plays until the Aces come, onto the last column
        t, _ = play(t, reveal, Draw())
        top = t.pile("tableau:7").top
        if top is not None and top[0] == "A":
            t, _ = play(t, reveal, move("tableau:7", "foundation"))
    assert (t.pile("hand"), SL.units(t)) == (Pile(), 8)
    assert t.pile("tableau:0").up[-2:] == ("2S", "5S")
    assert [len(t.pile(p)) for p in TABLEAU_PILES[1:]] == [1] * 7  # seven spaces
    t, _ = play(t, reveal, move("tableau:0", "tableau:1"))
    while SL.legal_actions(t):
        t, _ = play(t, reveal, moves(t)[0])
    assert (SL.units(t), SL.is_won(t)) == (88, True)


# --- refusals -----------------------------------------------------------------------------------


def test_move_refusals_in_order() -> None:
    t = hand_made({0: "KS 9S 4D", 1: "KH"}, hand="2C")
    assert refused(t, move("tableau:8", "tableau:0")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "foundation:8")) == errors.UNKNOWN_PILE
    assert refused(t, move("stock", "foundation")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "waste")) == errors.UNKNOWN_PILE
    assert refused(t, move("tableau:0", "tableau:0")) == errors.SAME_PILE
    assert refused(t, move("foundation:2", "queens")) == errors.INVALID_SOURCE
    assert refused(t, move("tableau:3", "queens")) == errors.INVALID_DESTINATION
    assert refused(t, move("tableau:3", "foundation")) == errors.SOURCE_EMPTY
    assert refused(t, move("tableau:0", "foundation", 2)) == errors.INVALID_COUNT
    assert refused(t, move("tableau:0", "foundation:0", 0)) == errors.INVALID_COUNT
    assert refused(t, move("tableau:1", "foundation:0", 2)) == errors.INVALID_COUNT
    assert refused(t, move("tableau:1", "tableau:0")) == errors.KING_NEVER_MOVES
    assert refused(t, move("tableau:0", "foundation:0")) == errors.FOUNDATION_NEEDS_ACE
    assert refused(t, move("tableau:0", "tableau:1")) == errors.STOCK_NOT_EMPTY
    assert refused(t, Turn("tableau:0")) == errors.ACTION_NOT_ALLOWED
    assert refused(t, Remove(("tableau:0",))) == errors.ACTION_NOT_ALLOWED
    # a move takes one card, the top one: with count 1 or without a count
    up = hand_made({0: "KS 9S AD"})
    for count in (None, 1):
        assert SL.decide(up, move("tableau:0", "foundation", count), shown) == [
            CardMoved("tableau:0", "foundation:0", ("AD",))
        ]


def test_refusals_never_name_a_face_down_card() -> None:
    deck = derive_deck(bytes([7]) * 32, None, 2)
    t, reveal = dealt(deck)
    t, _ = play(t, reveal, *[Draw()] * 10)
    seen = {c for c in t.slots() if isinstance(c, str)}
    hidden = {card_of(s, seal(SL.deal(deck))[1]) for s in t.pile("hand").cards} - seen
    details: list[str] = []
    for source in (*LAYOUT.ids, "foundation"):
        for target in (*LAYOUT.ids, "foundation"):
            for count in (None, 1, 2):
                try:
                    SL.decide(t, move(source, target, count), reveal)
                except RuleViolation as exc:
                    details.append(exc.detail)
    for action in (Recycle(), Turn("hand"), Remove(("hand",))):
        with pytest.raises(RuleViolation) as info:
            SL.decide(t, action, reveal)
        details.append(info.value.detail)
    assert len(details) > 300
    assert [d for d in details if any(c in d for c in hidden)] == []


# --- legal actions ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_legal_moves_are_exactly_what_decide_accepts(seed: int) -> None:
    t, reveal = dealt(derive_deck(bytes([seed]) * 32, None, 2))
    for step in range(400):
        legal = SL.legal_actions(t)
        listed = [a for a in legal if isinstance(a, MoveCards)]
        assert len(set(listed)) == len(listed)
        assert (Draw() in legal) == bool(t.pile("hand").cards)
        if step % 5 == 0 or not t.pile("hand").cards:
            assert set(listed) == builders.accepted_moves(SL, t, reveal, 3)
        for a in listed:  # an omitted count is the one card
            assert SL.decide(t, move(a.source, a.target), reveal) == [
                CardMoved(a.source, a.target, (t.pile(a.source).up[-1],))
            ]
        action = bot.choose(SL, t, legal)
        if action is None:
            break
        t, _ = play(t, reveal, action)


# --- undo ---------------------------------------------------------------------------------------


def test_undo_takes_back_a_move_never_a_draw() -> None:
    t = hand_made({0: "KS AH", 1: "KD"}, hand="2S")
    (to_foundation,) = SL.decide(t, move("tableau:0", "foundation"), shown)
    assert SL.undoable(to_foundation, t)
    (drawn,) = SL.decide(t, Draw(), shown)
    assert not SL.undoable(drawn, t)
    assert SL.automatic(t, shown) == []


def test_a_move_is_undone_single_level_and_a_draw_is_not() -> None:
    game, _ = start(deck_of(["AH", "AS", "9C"]), variant="salic-law")
    game, _ = play_game(game, Draw())
    assert g.Undo() not in g.legal_commands(game)
    with pytest.raises(RuleViolation) as refusal:
        g.decide(game, g.Undo())
    assert refusal.value.code == errors.UNDO_NOT_ALLOWED
    assert SL.undo_rule in refusal.value.detail
    before = game.table
    game, events = play_game(game, move("tableau:0", "foundation"))
    assert (game.units, g.Undo() in g.legal_commands(game)) == (1, True)
    game, events = play_game(game, g.Undo())
    assert events == [Undone("move", (UndoneMove("tableau:0", "foundation:0", ("AH",)),))]
    assert (game.table, game.units) == (before, 0)
    with pytest.raises(RuleViolation):
        g.decide(game, g.Undo())  # single level


# --- units, won and over ------------------------------------------------------------------------


def test_units_are_cards_on_the_foundations_and_every_foundation_at_its_jack_wins() -> None:
    climbs = {f: " ".join(of_rank(r)[f] for r in "A23456789TJ") for f in range(8)}
    won = hand_made({0: "KS"}, foundations=climbs, hand="KH")
    assert (SL.units(won), SL.is_won(won)) == (88, True)
    one_left = hand_made({0: "KS JC"}, foundations={**climbs, 3: climbs[3][:-3]})
    assert (SL.units(one_left), SL.is_won(one_left)) == (87, False)
    assert moves(one_left) == [move("tableau:0", "foundation:3", 1)]


def test_a_won_game_refuses_all_but_collect_even_with_kings_in_the_hand() -> None:
    deck = winning_deck()
    game, _ = start(deck, variant="salic-law")
    for _ in range(88):
        game, _ = play_game(game, Draw(), move("tableau:0", "foundation"))
    assert (game.status, game.units, len(builders.pile(game, "hand"))) == ("complete", 88, 7)
    assert g.legal_commands(game) == [g.Collect()]
    with pytest.raises(RuleViolation) as refusal:
        g.decide(game, Draw(), builders.sealed_of(game))
    assert refusal.value.code == errors.GAME_COMPLETE
    assert game.winnings == winnings(88, 520, SL.multiplier, 88)


def test_the_game_is_over_when_the_hand_is_out_and_nothing_plays() -> None:
    over = hand_made({0: "KS 5C 3H", 1: "KD 9S"}, foundations={0: "AH"})
    assert SL.legal_actions(over) == []
    assert not SL.is_won(over)


# --- a recorded stream folds and verifies -------------------------------------------------------


def _verified(events: list[GameEvent]) -> None:
    result = verify_game(recorded("g1", events), postings_for("g1", events), PAYTABLES)
    assert result.findings == []
    assert result.checks == dict.fromkeys(CHECKS, "pass")
    assert result.state == g.fold(events)


def test_a_won_game_on_a_given_deck_folds_and_verifies() -> None:
    deck = winning_deck()
    game, events = start(deck, variant="salic-law")
    for _ in range(88):
        game, more = play_game(game, Draw(), move("tableau:0", "foundation"))
        events += more
    game, more = play_game(game, g.Collect(server_seed=SEED.hex(), deck=deck))
    events += more
    assert (game.status, game.payout) == ("collected", winnings(88, 520, SL.multiplier, 88))
    assert g.fold(events) == game
    _verified(events)


def test_a_seeded_game_played_by_the_bot_folds_and_verifies() -> None:
    game, events = start(variant="salic-law", seed=SEED)
    while game.table is not None:
        legal = [c for c in g.legal_commands(game) if not isinstance(c, g.Collect | g.Undo)]
        action = bot.choose(SL, game.table, legal)
        if action is None:
            break
        game, more = play_game(game, action)
        events += more
    drawn = [e for e in events if isinstance(e, CardDrawn)]
    assert len(drawn) == 95
    game, more = play_game(game, g.Collect(server_seed=SEED.hex()))
    events += more
    assert game.payout == winnings(game.units, 520, SL.multiplier, 88)
    _verified(events)


# --- the reference bot --------------------------------------------------------------------------


def test_bot_plays_to_a_foundation_first_the_one_that_uncovers_another_play() -> None:
    t = hand_made({0: "KS 9C 2D", 1: "KH AC 2H", 2: "KD 2S"}, foundations={0: "AD"}, hand="5C")
    assert bot.choose(SL, t, SL.legal_actions(t)) == move("tableau:1", "foundation:0", 1)
    t = hand_made({0: "KS 9C 2D", 1: "KH 5C 2H"}, foundations={0: "AD"}, hand="5C")
    assert bot.choose(SL, t, SL.legal_actions(t)) == move("tableau:0", "foundation:0", 1)
    stuck = hand_made({0: "KS 9C"}, foundations={0: "AD"}, hand="5C")
    assert bot.choose(SL, stuck, SL.legal_actions(stuck)) == Draw()


def test_bot_digs_into_the_spaces_towards_the_nearest_card_that_plays_then_stops() -> None:
    t = hand_made({0: "KS 2C 9D 8D", 1: "KH 2H 7S", 2: "KD", 3: "KC"}, foundations={0: "AS"})
    assert bot.choose(SL, t, SL.legal_actions(t)) == move("tableau:1", "tableau:2", 1)
    t, _ = play(t, shown, move("tableau:1", "tableau:2"))
    assert bot.choose(SL, t, SL.legal_actions(t)) == move("tableau:1", "foundation:0", 1)
    # a card too deep for the spaces: stop rather than fill them for nothing
    deep = hand_made({0: "KS 2C 9D 8D 7D", 1: "KH", 2: "KD"}, foundations={0: "AS"})
    assert bot.choose(SL, deep, SL.legal_actions(deep)) is None


def blinded(t: Table) -> Table:
    """``t`` with every sealed number replaced by -1: what a bot that cannot cheat sees."""
    piles = (Pile(tuple(-1 if isinstance(s, int) else s for s in p.cards), p.down) for p in t.piles)
    return t.but(piles=tuple(piles))


@pytest.mark.parametrize("seed", range(6))
def test_the_bot_stops_only_once_the_hand_is_out_and_nothing_goes_up(seed: int) -> None:
    """(The bots' contract is tests/unit/test_bots.py.)"""
    t = bot_play_out(SL, seed)[-1]
    assert t.pile("hand") == Pile()
    assert SL.units(t) == sum(len(t.pile(f)) for f in FOUNDATION_PILES) > 0
    assert not any(m.target in FOUNDATION_PILES for m in moves(t))  # nothing left to play up


def test_bot_wins_the_spaces_deck() -> None:
    t, reveal = dealt(spaces_deck())
    while (action := bot.choose(SL, t, SL.legal_actions(t))) is not None:
        t, _ = play(t, reveal, action)
    assert SL.is_won(t)


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    hand = table.pile(salic_law.HAND)
    assert hand.down == len(hand.cards)  # drawn one at a time, never turned
    queens = table.pile(salic_law.QUEENS)  # set aside at the deal, in deck order, for good
    assert (queens.cards, queens.down) == (tuple(c for c in deck if c[0] == "Q"), 0)
    for i in salic_law.F:
        pile = table.piles[i].cards
        assert pile == table.piles[i].up
        for n, card in enumerate(pile):  # each foundation: Ace up to Jack, any suit
            assert salic_law.builds_up_to_jack(str(card), str(pile[n - 1]) if n else None)
    columns = [table.piles[i] for i in salic_law.T]
    used = [bool(column.cards) for column in columns]
    assert used == sorted(used, reverse=True)  # started left to right, never emptied
    assert columns[0].cards[0] == salic_law.FIRST_KING
    for column in columns:
        assert column.down == 0
        kings = [n for n, card in enumerate(column.up) if card[0] == "K"]
        assert kings == ([0] if column.cards else [])  # its King heads it, never moves
