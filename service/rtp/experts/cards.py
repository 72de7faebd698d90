"""The card tables the search models share (pure): a card is its index in ``CANONICAL_DECK``
(0-51; two decks share the numbers), and what goes up on a foundation comes from the rules' own
predicate, so no model restates it."""

from __future__ import annotations

from service.rules.building import same_suit_up
from service.rules.cards import CANONICAL_DECK, RANK_OF, SUITS, Card

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
