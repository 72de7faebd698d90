"""Building rules: which card may go on which. Each is one small predicate, named as the rules
pages name it, so a game module reads as a list of the rules it plays by."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service import errors
from service.errors import RuleViolation
from service.rules.cards import ACE, KING, RANK_OF, RED, Card

PAIR_TOTAL = 13  # Pyramid: two cards whose ranks add up to this are removed together


def alternate_colour_down(card: Card, onto: Card) -> bool:
    """Klondike's tableau: one rank lower, of the opposite colour."""
    return RANK_OF[onto] == RANK_OF[card] + 1 and RED[onto] != RED[card]


def same_suit_down(card: Card, onto: Card) -> bool:
    """Scorpion's and Forty Thieves' tableau: one rank lower, of the same suit."""
    return RANK_OF[onto] == RANK_OF[card] + 1 and onto[1] == card[1]


def same_suit_up(card: Card, onto: Card | None) -> bool:
    """A foundation by suit: an Ace starts an empty one, then one rank higher, same suit."""
    if onto is None:
        return RANK_OF[card] == ACE
    return card[1] == onto[1] and RANK_OF[card] == RANK_OF[onto] + 1


def rank_adjacent(card: Card, onto: Card) -> bool:
    """Golf: one rank above or below, suits ignored, no wrapping between King and Ace."""
    return abs(RANK_OF[card] - RANK_OF[onto]) == 1


def pair_totals_13(first: Card, second: Card) -> bool:
    """Pyramid: two cards whose ranks add up to 13 (A=1, J=11, Q=12)."""
    return RANK_OF[first] + RANK_OF[second] == PAIR_TOTAL


def is_king(card: Card) -> bool:
    return RANK_OF[card] == KING


def built_run_length(cards: Sequence[Card], builds: Callable[[Card, Card], bool]) -> int:
    """How many cards on top of ``cards`` form a built run under ``builds(card, onto)``: at
    least 1 when there is a card, each card resting on the one below as the rule allows."""
    if not cards:
        return 0
    n = 1
    while n < len(cards) and builds(cards[-n], cards[-n - 1]):
        n += 1
    return n


# --- the same rules as refusals, naming what broke ---------------------------------------------


def check_same_suit_up(card: Card, top: Card | None, where: str) -> None:
    """Refuse ``card`` on a foundation by suit whose top is ``top``, saying why."""
    if top is None:
        if RANK_OF[card] != ACE:
            raise RuleViolation(
                errors.FOUNDATION_NEEDS_ACE, f"{card} cannot start {where}: only an Ace can"
            )
        return
    if top[1] != card[1]:
        raise RuleViolation(
            errors.FOUNDATION_WRONG_SUIT,
            f"{card} cannot go on {top} in {where}: a foundation takes one suit only",
        )
    if RANK_OF[card] != RANK_OF[top] + 1:
        raise RuleViolation(
            errors.FOUNDATION_WRONG_RANK,
            f"{card} cannot go on {top} in {where}: foundations build up one rank at a time",
        )


def check_same_suit_down(card: Card, onto: Card, where: str) -> None:
    """Refuse ``card`` on the column card ``onto`` unless one rank lower, same suit."""
    if RANK_OF[onto] != RANK_OF[card] + 1:
        raise RuleViolation(
            errors.NOT_ONE_RANK_LOWER,
            f"{card} cannot go on {onto} in {where}: a card takes only the rank one lower",
        )
    if onto[1] != card[1]:
        raise RuleViolation(
            errors.NOT_SAME_SUIT,
            f"{card} cannot go on {onto} in {where}: cards build down by suit",
        )


def check_alternate_colour_down(card: Card, onto: Card, where: str) -> None:
    """Refuse ``card`` on the column card ``onto`` unless one rank lower, opposite colour."""
    if RANK_OF[onto] != RANK_OF[card] + 1:
        raise RuleViolation(
            errors.NOT_ONE_RANK_LOWER,
            f"{card} cannot go on {onto} in {where}: a column card takes only the rank one lower",
        )
    if RED[onto] == RED[card]:
        raise RuleViolation(
            errors.NOT_OPPOSITE_COLOUR,
            f"{card} cannot go on {onto} in {where}: colours must alternate red and black",
        )
