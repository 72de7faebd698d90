"""The card tables the search models share (pure): a card is its index in ``CANONICAL_DECK``
(0-51; two decks share the numbers), and what goes up on a foundation comes from the rules' own
predicate, so no model restates it."""

from __future__ import annotations

from collections.abc import Sequence

from service.rules.building import same_suit_up
from service.rules.cards import CANONICAL_DECK, RANK_OF, SUITS, Card
from service.rules.table import Table

CARDS: tuple[Card, ...] = CANONICAL_DECK
NUMBER: dict[Card, int] = {c: i for i, c in enumerate(CARDS)}
SUIT: tuple[int, ...] = tuple(SUITS.index(c[1]) for c in CARDS)
RANK: tuple[int, ...] = tuple(RANK_OF[c] for c in CARDS)


def _height_for(a: Card) -> int:
    """How many cards a foundation of a's suit holds when ``a`` goes on it (the rules'
    predicate asked with every possible top)."""
    s = SUITS.index(a[1])
    for h in range(13):
        top = None if h == 0 else CARDS[13 * s + h - 1]
        if same_suit_up(a, top):
            return h
    raise AssertionError(a)


#: HEIGHT[a]: how many cards a foundation of a's suit holds when ``a`` goes on it.
HEIGHT: tuple[int, ...] = tuple(_height_for(a) for a in CARDS)


def paired_heights(table: Table, foundations: Sequence[int]) -> tuple[int, ...]:
    """Two decks' foundations as a search holds them: each suit's two heights, the higher
    first (which of a suit's two foundations holds what does not matter to the search)."""
    heights = [[0, 0] for _ in SUITS]
    used = [0] * len(SUITS)
    for f in foundations:
        cards = table.piles[f].up
        if cards:
            s = SUITS.index(cards[0][1])
            heights[s][used[s]] = len(cards)
            used[s] += 1
    return tuple(h for pair in heights for h in sorted(pair, reverse=True))
