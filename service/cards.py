"""Cards as two-character codes: rank ``A23456789TJQK`` then suit ``SHDC`` (``TH`` = ten of hearts).

A card is its code everywhere (state, events, API), so nothing has to be translated on the way
in or out. Rank and colour lookups are precomputed because the rules ask for them on every move.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"
RED_SUITS = frozenset("HD")

Card = str

#: The canonical order: suits S, H, D, C, each Ace to King. The shuffle starts from this order.
CANONICAL_DECK: tuple[Card, ...] = tuple(r + s for s in SUITS for r in RANKS)
ALL_CARDS: frozenset[Card] = frozenset(CANONICAL_DECK)

_RANK: dict[Card, int] = {c: RANKS.index(c[0]) + 1 for c in CANONICAL_DECK}
_RED: dict[Card, bool] = {c: c[1] in RED_SUITS for c in CANONICAL_DECK}

ACE = 1
KING = 13


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in ALL_CARDS


def rank(card: Card) -> int:
    """1 for an Ace up to 13 for a King."""
    return _RANK[card]


def suit(card: Card) -> str:
    return card[1]


def is_red(card: Card) -> bool:
    return _RED[card]


def builds_on_tableau(card: Card, onto: Card) -> bool:
    """A card goes on a column card one rank higher of the opposite colour."""
    return _RANK[onto] == _RANK[card] + 1 and _RED[onto] != _RED[card]


def builds_on_foundation(card: Card, top: Card | None) -> bool:
    """An Ace starts an empty foundation; after that, same suit ascending."""
    if top is None:
        return _RANK[card] == ACE
    return card[1] == top[1] and _RANK[card] == _RANK[top] + 1


def is_full_deck(cards: object) -> bool:
    """True when ``cards`` is a sequence holding each of the 52 cards exactly once."""
    if not isinstance(cards, (list, tuple)) or len(cards) != 52:
        return False
    return all(is_card(c) for c in cards) and set(cards) == ALL_CARDS
