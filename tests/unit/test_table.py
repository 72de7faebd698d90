"""Piles, tables and sealing: the canonical sealed order the server and the fold share."""

from __future__ import annotations

import pytest

from service.core import shuffle
from service.games import GAMES
from service.rules.table import (
    Layout,
    Pile,
    PileSpec,
    dealt_piles,
    from_dealt,
    seal,
    table,
    unseal,
)
from tests.builders import SEED


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_fold_numbers_sealed_cards_exactly_as_the_server_sealed_them(game_id: str) -> None:
    rules = GAMES[game_id]
    dealt = rules.deal(shuffle.derive_deck(SEED, None, rules.decks))
    sealed, hidden = seal(dealt)
    # What the Dealt event records (face-up cards and counts) folds back to the same numbers.
    shown = dealt_piles(sealed)
    assert from_dealt(rules.layout, shown, rules.passes, picks_left=rules.picks) == sealed
    assert unseal(sealed, hidden) == dealt
    assert len(hidden) == sum(p.down for p in dealt.piles)


def test_sealed_numbers_run_pile_by_pile_in_layout_order_bottom_to_top() -> None:
    layout = Layout([PileSpec("stock", "stock"), PileSpec("tableau:0", "tableau")])
    dealt = table(layout, {"stock": Pile(("AS", "2S"), 2), "tableau:0": Pile(("3S", "4S"), 1)})
    sealed, hidden = seal(dealt)
    assert sealed.pile("stock") == Pile((0, 1), 2)
    assert sealed.pile("tableau:0") == Pile((2, "4S"), 1)
    assert hidden == ("AS", "2S", "3S")


def test_a_face_up_card_is_never_sealed() -> None:
    layout = Layout([PileSpec("waste", "waste")])
    sealed, hidden = seal(table(layout, {"waste": Pile(("KH", "QS"))}))
    assert sealed.pile("waste").cards == ("KH", "QS")
    assert hidden == ()


def test_a_pile_shows_only_its_face_up_top() -> None:
    assert Pile((0, 1), 2).top is None
    assert Pile((0, "KH"), 1).top == "KH"
    assert Pile((0, "KH"), 1).up == ("KH",)
    assert Pile().top is None


def test_pile_ids_are_unique_and_tables_name_only_their_piles() -> None:
    with pytest.raises(ValueError, match="unique"):
        Layout([PileSpec("waste", "waste"), PileSpec("waste", "waste")])
    layout = Layout([PileSpec("waste", "waste")])
    with pytest.raises(ValueError, match="no such piles"):
        table(layout, {"stock": Pile()})
