"""Pyramid (seed 004): take cards off in pairs totalling 13, with one pass through the stock.

Deal: the first 28 cards fill a pyramid of 7 rows (1 to 7 cards), row by row, all face up;
row r's card i is covered by row r+1's cards i and i+1. The other 24 are the stock, the next
card in deal order on top, and that top card lies face up and is playable. Draw puts the
stock's top card onto the waste (whose top card is playable too) and the next stock card turns
face up by itself; one pass, no recycle. Remove takes two available cards whose ranks total 13
(A=1, J=11, Q=12), or an available King alone, onto the foundation. A pyramid card is
available when no card covers it or, seed 004's exception, when the only card still covering
it is the card it is paired with. Units are the cards removed (52 is a win). Pile ids:
``stock``, ``waste``, ``foundation``, ``pyramid:0``..``pyramid:27`` row by row (``pyramid:0``
is the apex, ``pyramid:21``..``pyramid:27`` the bottom row).

A removal is refused, checked in this order, with: ``unknown-pile``; ``invalid-count`` (not
one or two piles); ``same-pile`` (one pile named twice); ``invalid-source`` (the foundation);
``source-empty``; ``source-face-down`` (a face-down stock top, which automatic play never
leaves); ``only-king-alone`` (a single card that is not a King); ``pair-not-thirteen``;
``card-covered``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardTurned, GameEvent, PairRemoved, RemovedCard
from service import errors
from service.errors import RuleViolation
from service.rules import stock
from service.rules.actions import Draw, PlayAction, Remove
from service.rules.building import is_king, pair_totals_13
from service.rules.cards import Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Layout, Pile, PileSpec, Table, numbered

ROWS = 7
PYRAMID_CARDS = ROWS * (ROWS + 1) // 2  # 28
STOCK_CARDS = 52 - PYRAMID_CARDS  # 24

STOCK = "stock"
WASTE = "waste"
FOUNDATION = "foundation"
PYRAMID_PILES = tuple(f"pyramid:{n}" for n in range(PYRAMID_CARDS))


def position(row: int, i: int) -> int:
    """The pyramid number of row ``row``'s card ``i`` (both from 0): rows are dealt in order."""
    return row * (row + 1) // 2 + i


#: For each pyramid card, the two cards of the next row that cover it (none for the bottom row).
COVERED_BY: tuple[tuple[int, ...], ...] = tuple(
    (position(row + 1, i), position(row + 1, i + 1)) if row < ROWS - 1 else ()
    for row in range(ROWS)
    for i in range(row + 1)
)

LAYOUT = Layout(
    [
        PileSpec(STOCK, "stock"),
        PileSpec(WASTE, "waste"),
        PileSpec(FOUNDATION, "foundation"),
        *numbered("pyramid", PYRAMID_CARDS),
    ]
)
S, W, F = LAYOUT.index[STOCK], LAYOUT.index[WASTE], LAYOUT.index[FOUNDATION]
P = tuple(LAYOUT.index[p] for p in PYRAMID_PILES)

#: Where a removable card may lie, in the order legal removals are listed.
PLAYABLE = (*PYRAMID_PILES, STOCK, WASTE)
ORDER = {pile: n for n, pile in enumerate(PLAYABLE)}
PYRAMID_NUMBER = {pile: n for n, pile in enumerate(PYRAMID_PILES)}


def card_at(table: Table, n: int) -> Card | None:
    """Pyramid card ``n``, or None once it is removed (pyramid cards all lie face up)."""
    return table.piles[P[n]].top


def covers(table: Table, n: int) -> list[int]:
    """The cards still covering pyramid card ``n``."""
    return [c for c in COVERED_BY[n] if table.piles[P[c]].cards]


def is_free(table: Table, n: int) -> bool:
    """Pyramid card ``n`` is still there and nothing covers it."""
    return card_at(table, n) is not None and not covers(table, n)


def open_cards(table: Table) -> list[tuple[str, Card]]:
    """Every card available on its own, in ``PLAYABLE`` order: the uncovered pyramid cards,
    the stock's face-up top card and the waste's top card."""
    found: list[tuple[str, Card]] = []
    for n in range(PYRAMID_CARDS):
        card = card_at(table, n)
        if card is not None and not covers(table, n):
            found.append((PYRAMID_PILES[n], card))
    for pile_id, i in ((STOCK, S), (WASTE, W)):
        top = table.piles[i].top
        if top is not None:
            found.append((pile_id, top))
    return found


def legal_removals(table: Table) -> list[tuple[str, ...]]:
    """Every removal the rules allow now, each once, piles in ``PLAYABLE`` order, sorted."""
    found: list[tuple[str, ...]] = []
    available = open_cards(table)
    for i, (pile, card) in enumerate(available):
        if is_king(card):
            found.append((pile,))
        found.extend(
            (pile, other) for other, mate in available[i + 1 :] if pair_totals_13(card, mate)
        )
    # Seed 004's exception: a card with the only card still covering it, when they pair.
    for n in range(PYRAMID_CARDS):
        held, left = card_at(table, n), covers(table, n)
        if held is None or len(left) != 1 or not is_free(table, left[0]):
            continue
        cover = card_at(table, left[0])
        if cover is not None and pair_totals_13(held, cover):
            found.append((PYRAMID_PILES[n], PYRAMID_PILES[left[0]]))
    return sorted(found, key=lambda piles: [ORDER[p] for p in piles])


class Pyramid(GameRules):
    id = "pyramid"
    title = "Pyramid"
    family = "pyramid"
    #: /2: M 1.5 -> 1.41, priced against the strong player (RTP.md); play unchanged.
    rules_version = "pyramid/2"
    earlier_prices = (("pyramid/1", "1.5"),)
    decks = 1
    max_units = 52
    multiplier = "1.41"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("draw", "remove", "undo")
    units_are = "cards removed"
    undo_rule = (
        "undo takes back only the last removal, and only one that took no card from the stock "
        "(a draw, or a removal from the stock, shows the next stock card)"
    )
    passes = 1
    draw_count = 1
    summary = (
        "28 cards in a pyramid of 7 rows, all face up, each card covered by the two below it; "
        "24 in the stock, its top card face up and playable.",
        "Remove two available cards whose ranks total 13 (A=1, J=11, Q=12), or a King alone. "
        "A pyramid card is available when nothing covers it, or when the only card still "
        "covering it is the one it pairs with.",
        "Draw the stock's top card onto the waste, one at a time; the waste's top card is "
        "playable; one pass through the stock.",
        "Undo: the last removal, unless it took a card from the stock.",
        "Pays stake x M x cards removed / 52 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        piles = [Pile()] * len(LAYOUT.specs)
        for n in range(PYRAMID_CARDS):
            piles[P[n]] = Pile((deck[n],))
        stock = tuple(deck[PYRAMID_CARDS:])[::-1]  # the next card in deal order on top
        piles[S] = Pile(stock, len(stock) - 1)  # ... and face up
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [stock.draw(table, 1, reveal, "Pyramid has one pass through it")]
        if isinstance(action, Remove):
            return [PairRemoved(self._check_remove(table, action.piles), FOUNDATION)]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def _check_remove(self, table: Table, piles: tuple[str, ...]) -> tuple[RemovedCard, ...]:
        for pile in piles:
            self.pile_index(pile)
        if len(piles) not in (1, 2):
            raise RuleViolation(
                errors.INVALID_COUNT,
                f"name two cards whose ranks total 13, or a King alone, not {len(piles)} piles",
            )
        if len(piles) == 2 and piles[0] == piles[1]:
            raise RuleViolation(errors.SAME_PILE, f"{piles[0]} is named twice; name two piles")
        cards = [self._top_card(table, pile) for pile in piles]
        if len(cards) == 1 and not is_king(cards[0]):
            raise RuleViolation(
                errors.ONLY_KING_ALONE,
                f"{cards[0]} cannot go alone; only a King is removed by itself",
            )
        if len(cards) == 2 and not pair_totals_13(cards[0], cards[1]):
            raise RuleViolation(
                errors.PAIR_NOT_THIRTEEN,
                f"{cards[0]} and {cards[1]} do not total 13 (A=1, J=11, Q=12, K alone)",
            )
        for pile in piles:
            partner = next((p for p in piles if p != pile), None)
            self._check_uncovered(table, pile, partner)
        return tuple(RemovedCard(pile, card) for pile, card in zip(piles, cards, strict=True))

    @staticmethod
    def _check_uncovered(table: Table, pile_id: str, partner: str | None) -> None:
        """A pyramid card is available when no card covers it but, perhaps, its partner."""
        n = PYRAMID_NUMBER.get(pile_id)
        if n is None:
            return  # the stock's and the waste's top cards are always available
        blocking = [c for c in covers(table, n) if PYRAMID_PILES[c] != partner]
        if blocking:
            named = " and ".join(f"{PYRAMID_PILES[c]} ({card_at(table, c)})" for c in blocking)
            raise RuleViolation(
                errors.CARD_COVERED,
                f"{pile_id} ({card_at(table, n)}) is covered by {named}; a pyramid card is "
                "available when nothing covers it, or only the card it pairs with",
            )

    @staticmethod
    def _top_card(table: Table, pile_id: str) -> Card:
        """The card a removal would take from ``pile_id`` (its cover checked separately)."""
        if pile_id not in ORDER:
            raise RuleViolation(
                errors.INVALID_SOURCE,
                f"cards on the {pile_id} are out of play; remove cards from the pyramid, the "
                "stock or the waste",
            )
        pile = table.pile(pile_id)
        if not pile.cards:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{pile_id} is empty")
        top = pile.top
        if top is None:
            raise RuleViolation(errors.SOURCE_FACE_DOWN, f"the top card of {pile_id} is face down")
        return top

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [Draw()] if table.piles[S].cards else []
        actions.extend(Remove(piles) for piles in legal_removals(table))
        return actions

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """Seed 004: a removal that took no card from the stock (that one showed a new card)."""
        return isinstance(event, PairRemoved) and all(c.source != STOCK for c in event.cards)

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """The stock's top card turns face up once a draw or a removal took the one above it."""
        stock = table.piles[S]
        if stock.cards and stock.top is None:
            return [CardTurned(STOCK, reveal(stock.cards[-1]))]
        return []

    def units(self, table: Table) -> int:
        return len(table.piles[F].cards)


PYRAMID = Pyramid()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (PYRAMID,)
SHELF = 30
