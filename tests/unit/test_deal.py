"""The deal: seed 000's order, one face-up card per column, a 24-card stock; and the sealing
that keeps every face-down card out of the events and the folded game."""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from events.catalog import CardDrawn, Dealt, DealtPile, GameEvent, StakePlaced
from service.core import game_decider as g
from service.core import shuffle
from service.games.klondike import VEGAS_DRAW1, VEGAS_DRAW3
from service.rules.cards import CANONICAL_DECK, Card
from service.rules.table import Pile, Table
from tests.builders import SEED, easy_deck, play, sealed_of, start, stock_order

D = CANONICAL_DECK  # AS 2S ... KS AH ... KC; D[i] is the i-th card dealt
TABLEAU = tuple(f"tableau:{c}" for c in range(7))
FACE_UP = (D[0], D[7], D[13], D[18], D[22], D[25], D[27])  # the top card of each column


def _columns(table: Table) -> list[Pile]:
    return [table.pile(p) for p in TABLEAU]


def _codes_in(value: object) -> set[Card]:
    """Every card code anywhere in an event or a state (dataclasses and tuples walked)."""
    if isinstance(value, str):
        return {value} if value in CANONICAL_DECK else set()
    if is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_codes_in(getattr(value, f.name)) for f in fields(value)))
    if isinstance(value, tuple | list):
        return set().union(*(_codes_in(v) for v in value))
    return set()


# --- the deal's shape, unsealed -----------------------------------------------------------------


def test_row_by_row_deal_gives_column_c_c_plus_one_cards() -> None:
    table = VEGAS_DRAW1.deal(D)
    assert [len(c) for c in _columns(table)] == [1, 2, 3, 4, 5, 6, 7]


def test_deal_order_row_r_goes_to_columns_r_to_6() -> None:
    columns = _columns(VEGAS_DRAW1.deal(D))
    # Row 0 is D[0..6] across all columns, row 1 is D[7..12] across columns 1..6, ...
    assert columns[0] == Pile((D[0],), 0)
    assert columns[1] == Pile((D[1], D[7]), 1)
    assert columns[2] == Pile((D[2], D[8], D[13]), 2)
    assert columns[6].face_down == (D[6], D[12], D[17], D[21], D[24], D[26])
    assert columns[6].up == (D[27],)


def test_only_the_top_card_of_each_column_is_face_up() -> None:
    columns = _columns(VEGAS_DRAW1.deal(D))
    assert all(len(c.up) == 1 for c in columns)
    assert tuple(c.top for c in columns) == FACE_UP
    assert [c.down for c in columns] == [0, 1, 2, 3, 4, 5, 6]


def test_stock_is_the_24_cards_left_next_in_deal_order_drawn_first() -> None:
    table = VEGAS_DRAW3.deal(D)
    stock = table.pile("stock")
    assert stock.cards[::-1] == D[28:]  # the top (last) card is the next one drawn
    assert stock.cards[-1] == D[28]
    assert (len(stock), stock.down, stock.top) == (24, 24, None)
    assert table.pile("waste") == Pile()
    assert [table.pile(f"foundation:{i}") for i in range(4)] == [Pile()] * 4
    assert table.passes_left == 3
    assert VEGAS_DRAW1.deal(D).passes_left == 1


# --- the deal as dealt: sealed ------------------------------------------------------------------


def test_start_game_deals_and_records_stake_and_commitment_not_deck() -> None:
    game, events = start(easy_deck(), variant="vegas-draw3", stake=1040)
    placed, dealt = events
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    assert (placed.variant, placed.multiplier, placed.max_units) == ("vegas-draw3", "5", 52)
    assert (placed.stake, placed.currency) == (1040, "GBP")
    assert (placed.paytable_id, placed.paytable_version) == ("vegas-gbp", 1)
    assert placed.rules_version == "vegas-klondike/1"
    assert dealt.deck is None  # the deal is sealed: the deck is never recorded
    assert dealt.shuffle_algorithm == shuffle.CERTIFICATION_DECK
    assert dealt.seed_commitment == shuffle.deck_commitment(easy_deck(), SEED)
    assert game.status == "in_progress"
    assert game.version == 2
    assert (game.win_rate, game.units, game.winnings) == (100, 0, 0)
    assert game.table is not None
    assert game.table.passes_left == 3
    next_card = stock_order(game)[0]
    assert isinstance(next_card, int)
    assert sealed_of(game)[next_card] == easy_deck()[28]


def test_dealt_event_shows_only_the_seven_face_up_cards() -> None:
    _, events = start(D)
    dealt = events[1]
    assert isinstance(dealt, Dealt)
    assert dealt.piles == (
        DealtPile("stock", 24, ()),
        *(DealtPile(f"tableau:{c}", c, (FACE_UP[c],)) for c in range(7)),
    )
    assert dealt.deck is None
    assert _codes_in(events) == set(FACE_UP)


def test_folded_game_holds_face_down_cards_as_sealed_numbers_never_codes() -> None:
    game, events = start(D)
    assert game == g.fold(events)
    table = game.table
    assert table is not None
    assert _codes_in(game) == set(FACE_UP)
    slots = list(table.slots())
    assert [s for s in slots if isinstance(s, str)] == list(FACE_UP)
    # Sealed numbers 0..51-7 in canonical order: pile by pile in layout order, bottom first.
    assert sorted(s for s in slots if isinstance(s, int)) == list(range(45))
    assert table.pile("stock") == Pile(tuple(range(24)), 24)
    assert table.pile("tableau:0") == Pile((D[0],), 0)
    assert table.pile("tableau:1") == Pile((24, D[7]), 1)
    assert table.pile("tableau:2") == Pile((25, 26, D[13]), 2)
    assert table.pile("tableau:6").face_down == tuple(range(39, 45))
    # The server's secret: the sealed numbers' cards.
    hidden = sealed_of(game)
    assert hidden == g.hidden_cards(VEGAS_DRAW1, D)
    assert len(hidden) == 45
    assert hidden[23] == D[28]  # the stock's top card, drawn first
    assert hidden[24] == D[1]
    assert [hidden[s] for s in range(39, 45)] == [D[6], D[12], D[17], D[21], D[24], D[26]]


def test_first_draw_takes_the_29th_card_dealt() -> None:
    game, _ = start(easy_deck())
    game, events = play(game, g.Draw())
    assert events == [CardDrawn("stock", "waste", (easy_deck()[28],))]


def test_draws_show_the_stock_in_deal_order() -> None:
    game, _ = start(D)
    drawn: list[GameEvent] = []
    for i in range(24):
        game, events = play(game, g.Draw())
        assert events == [CardDrawn("stock", "waste", (D[28 + i],))]
        assert game.table is not None
        assert game.table.pile("waste").cards == D[28 : 29 + i]
        assert _codes_in(game) == set(FACE_UP) | set(D[28 : 29 + i])
        drawn.extend(events)
    assert _codes_in(drawn) == set(D[28:])


def test_draw3_shows_three_stock_cards_at_a_time_in_deal_order() -> None:
    game, _ = start(D, variant="vegas-draw3")
    game, events = play(game, g.Draw(), g.Draw())
    assert events == [
        CardDrawn("stock", "waste", D[28:31]),
        CardDrawn("stock", "waste", D[31:34]),
    ]
