"""The deal: seed 000's order, one face-up card per column, a 24-card stock."""

from __future__ import annotations

from events.catalog import CardDrawn, Dealt, StakePlaced
from service import game as g
from service.cards import CANONICAL_DECK
from service.klondike import deal
from tests.builders import easy_deck, play, start

D = CANONICAL_DECK  # AS 2S ... KS AH ... KC; D[i] is the i-th card dealt


def test_row_by_row_deal_gives_column_c_c_plus_one_cards() -> None:
    layout = deal(D, 1, 1)
    assert [len(c.down) + len(c.up) for c in layout.tableau] == [1, 2, 3, 4, 5, 6, 7]


def test_deal_order_row_r_goes_to_columns_r_to_6() -> None:
    layout = deal(D, 1, 1)
    # Row 0 is D[0..6] across all columns, row 1 is D[7..12] across columns 1..6, ...
    assert layout.tableau[0].up == (D[0],)
    assert layout.tableau[1].down == (D[1],)
    assert layout.tableau[1].up == (D[7],)
    assert layout.tableau[2].down == (D[2], D[8])
    assert layout.tableau[2].up == (D[13],)
    assert layout.tableau[6].down == (D[6], D[12], D[17], D[21], D[24], D[26])
    assert layout.tableau[6].up == (D[27],)


def test_only_the_top_card_of_each_column_is_face_up() -> None:
    layout = deal(D, 1, 1)
    assert all(len(c.up) == 1 for c in layout.tableau)
    assert [len(c.down) for c in layout.tableau] == [0, 1, 2, 3, 4, 5, 6]


def test_stock_is_the_24_cards_left_next_in_deal_order_drawn_first() -> None:
    layout = deal(D, 3, 3)
    assert layout.stock == D[28:]
    assert len(layout.stock) == 24
    assert layout.waste == ()
    assert layout.foundations == ((), (), (), ())
    assert layout.passes_left == 3


def test_start_game_deals_and_records_stake_and_deck() -> None:
    game, events = start(easy_deck(), variant="vegas-draw3", stake=1040)
    placed, dealt = events
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    assert (placed.variant, placed.draw_count, placed.passes) == ("vegas-draw3", 3, 3)
    assert (placed.stake, placed.currency, placed.win_rate) == (1040, "GBP", 100)
    assert (placed.paytable_id, placed.paytable_version) == ("vegas-gbp", 1)
    assert placed.rules_version == "vegas-klondike/1"
    assert dealt.deck == easy_deck()
    assert game.status == "in_progress"
    assert game.version == 2
    assert game.winnings == 0
    assert game.layout is not None
    assert game.layout.stock[0] == easy_deck()[28]


def test_first_draw_takes_the_29th_card_dealt() -> None:
    game, _ = start(easy_deck())
    game, events = play(game, g.Draw())
    assert events == [CardDrawn((easy_deck()[28],))]
