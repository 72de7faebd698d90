"""Cards as two-character codes: rank ``A23456789TJQK`` then suit ``SHDC`` (``TH`` = ten of hearts).

A card is its code everywhere (state, events, API), so nothing has to be translated on the way
in or out. A deck is ``decks`` x 52 codes: two-deck games hold every code twice, so a deck is a
multiset, never a set. Rank and colour lookups are precomputed because the rules ask for them
on every move.
"""

from __future__ import annotations

from collections import Counter

RANKS = "A23456789TJQK"
SUITS = "SHDC"
RED_SUITS = frozenset("HD")

Card = str

#: The canonical order: suits S, H, D, C, each Ace to King. The shuffle starts from this order.
CANONICAL_DECK: tuple[Card, ...] = tuple(r + s for s in SUITS for r in RANKS)
ALL_CARDS: frozenset[Card] = frozenset(CANONICAL_DECK)
CARDS_IN_DECK = 52

#: Lookups the rules use on every move (a dict lookup is the fastest test Python has).
RANK_OF: dict[Card, int] = {c: RANKS.index(c[0]) + 1 for c in CANONICAL_DECK}
RED: dict[Card, bool] = {c: c[1] in RED_SUITS for c in CANONICAL_DECK}

ACE = 1
JACK = 11
QUEEN = 12
KING = 13


def canonical_deck(decks: int = 1) -> tuple[Card, ...]:
    """``decks`` canonical decks one after the other: where every shuffle starts."""
    return CANONICAL_DECK * decks


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in ALL_CARDS


def rank(card: Card) -> int:
    """1 for an Ace up to 13 for a King."""
    return RANK_OF[card]


def suit(card: Card) -> str:
    return card[1]


def is_red(card: Card) -> bool:
    return RED[card]


def is_deck(cards: object, decks: int = 1) -> bool:
    """True when ``cards`` is a sequence holding every card exactly ``decks`` times."""
    if not isinstance(cards, (list, tuple)) or len(cards) != CARDS_IN_DECK * decks:
        return False
    if not all(is_card(c) for c in cards):
        return False
    return all(n == decks for n in Counter(cards).values())


def is_full_deck(cards: object) -> bool:
    """True when ``cards`` is a sequence holding each of the 52 cards exactly once."""
    return is_deck(cards, 1)
