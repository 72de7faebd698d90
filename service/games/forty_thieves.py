"""Forty Thieves (seed 004): two decks, ten columns built down by suit, eight foundations.

Deal: the first 40 cards fill 10 columns of 4, row by row, left to right, all face up. The other
64 are the stock, the next card in deal order on top, and that top card lies face up and is
playable (seed 004: "both the newly turned stock and the fully exposed waste pile card are
available"). Draw puts the stock's top card onto the waste, whose top card is playable too, and
the next stock card turns face up by itself; one pass, no recycle.

Columns build down by suit. A same-suit descending run on top of a column moves as a group (any
top part of it, with the cards on it); an empty column takes any available card or run. Eight
foundations build Ace up to King by suit; a same-suit run that fits a foundation moves there as
a group, lowest card first, recorded as one CardMoved whose cards are listed in the order they
land. Nothing comes back off a foundation. Units are the cards on the foundations (104 is a
win). Pile ids: ``stock``, ``waste``, ``foundation:0``..``foundation:7``,
``tableau:0``..``tableau:9``; ``foundation`` as a destination means the first foundation that
fits.

A move's ``count`` is how many cards leave the source's top; without it, a move onto a column
takes the one part of the run that fits there (the whole run onto an empty column) and a move
to a foundation takes the whole run. A move is refused, checked in this order, with:
``unknown-pile``; ``same-pile``; ``invalid-source`` (a foundation); ``invalid-destination``
(the stock or the waste); ``source-empty`` / ``waste-empty``; ``source-face-down`` (a
face-down stock top, which automatic play never leaves); ``invalid-count`` (more than one card
from the stock or the waste, or more than the column's cards); ``not-a-run`` (the cards named
are not a same-suit descending run); then, onto a column, ``not-one-rank-lower`` or
``not-same-suit``; to a foundation, ``foundation-needs-ace``, ``foundation-wrong-suit``,
``foundation-wrong-rank`` (or ``no-foundation-fits`` for ``foundation``).
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved, CardTurned, GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules import stock
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle
from service.rules.building import (
    built_run_length,
    check_same_suit_down,
    check_same_suit_up,
    same_suit_down,
    same_suit_up,
)
from service.rules.cards import Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, stock_and_columns

COLUMNS = 10
ROWS = 4
FOUNDATIONS = 8
TABLEAU_CARDS = COLUMNS * ROWS  # 40
STOCK_CARDS = 104 - TABLEAU_CARDS  # 64

STOCK = "stock"
WASTE = "waste"
ANY_FOUNDATION = "foundation"
PILES = stock_and_columns(FOUNDATIONS, COLUMNS)
LAYOUT, S, W, F, T = PILES.layout, PILES.stock, PILES.waste, PILES.foundations, PILES.tableau
TABLEAU_PILES, FOUNDATION_PILES = PILES.tableau_ids, PILES.foundation_ids
#: Where cards may leave from, in the order legal moves are listed.
SOURCES = (STOCK, WASTE, *TABLEAU_PILES)
#: Where cards may go, in the order legal moves are listed.
TARGETS = (*FOUNDATION_PILES, *TABLEAU_PILES)


def movable_run(cards: Sequence[Card]) -> int:
    """How many cards on top of a column form the same-suit descending run that moves as one."""
    return built_run_length(cards, same_suit_down)


def fits_column(card: Card, column: Pile) -> bool:
    """May ``card`` (the bottom card of what moves) go onto ``column``? Any card onto an empty
    column; otherwise one rank lower than its top card, of the same suit."""
    top = column.top
    if not column.cards:
        return True
    return top is not None and same_suit_down(card, top)


def landing_order(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The cards of a run (bottom first, as they lie in the column) in the order they land on
    a foundation: lowest first, so the foundation's top ends up the run's highest card."""
    return tuple(reversed(cards))


class FortyThieves(GameRules):
    id = "forty-thieves"
    title = "Forty Thieves"
    family = "forty-thieves"
    #: /2: M 1.85 -> 1.58, priced against the strong player (RTP.md); play unchanged.
    rules_version = "forty-thieves/2"
    earlier_prices = (("forty-thieves/1", "1.85"),)
    decks = 2
    max_units = 104
    multiplier = "1.58"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("draw", "move", "undo")
    units_are = "cards on the foundations"
    undo_rule = (
        "undo takes back only the last move, and only one that turned no card (a draw, or a "
        "move from the stock that turned the next stock card, shows a new card)"
    )
    passes = 1
    draw_count = 1
    summary = (
        "Two decks. 10 columns of 4 cards, all face up; 64 in the stock, its top card face up "
        "and playable.",
        "Draw the stock's top card onto the waste, one at a time; the waste's top card is "
        "playable; one pass through the stock.",
        "Build down by suit; a same-suit descending run moves as a group; an empty column takes "
        "any available card or run.",
        "Eight foundations, Ace up to King by suit; a same-suit run that fits moves there as a "
        "group, lowest card first; nothing comes back off a foundation.",
        "Undo: the last move, unless it turned the next stock card.",
        "Pays stake x M x cards on foundations / 104 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        piles = [Pile()] * len(LAYOUT.specs)
        for c in range(COLUMNS):
            piles[T[c]] = Pile(tuple(deck[c:TABLEAU_CARDS:COLUMNS]))  # row by row: every 10th
        cards = tuple(deck[TABLEAU_CARDS:])[::-1]  # the next card in deal order on top
        piles[S] = Pile(cards, max(len(cards) - 1, 0))  # ... and face up
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [stock.draw(table, 1, reveal, "Forty Thieves has one pass through it")]
        if isinstance(action, MoveCards):
            source, target, cards = self.resolve_move(
                table, action.source, action.target, action.count
            )
            return [CardMoved(source, target, cards)]
        if isinstance(action, Recycle):
            raise RuleViolation(
                errors.ACTION_NOT_ALLOWED,
                "Forty Thieves has one pass through the stock; the waste is never turned over",
            )
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def resolve_move(
        self, table: Table, source: str, target: str, count: int | None = None
    ) -> tuple[str, str, tuple[Card, ...]]:
        """Validate a move; return its concrete source and target and the cards it records, in
        the order they land (a column's run bottom first; a foundation's lowest first)."""
        self.pile_index(source)
        if target != ANY_FOUNDATION:
            self.pile_index(target)
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if source in FOUNDATION_PILES:
            raise RuleViolation(
                errors.INVALID_SOURCE, f"cards never come back off a foundation ({source})"
            )
        if target in (STOCK, WASTE):
            raise RuleViolation(
                errors.INVALID_DESTINATION,
                f"cards never go to the {target}; move them to a column or a foundation",
            )
        run = self._source_run(table, source, count)
        if target in TABLEAU_PILES:
            return source, target, self._onto_column(table, run, target, count)
        return self._to_foundation(table, source, run, target)

    @staticmethod
    def _source_run(table: Table, source: str, count: int | None) -> tuple[Card, ...]:
        """The cards on top of ``source`` that may move (bottom first): ``count`` of them, or
        when it is omitted every card that could (the whole run of a column)."""
        pile = table.pile(source)
        if not pile.cards:
            if source == WASTE:
                raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; draw from the stock")
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        up = pile.up
        if not up:
            raise RuleViolation(errors.SOURCE_FACE_DOWN, f"the top card of {source} is face down")
        if source in (STOCK, WASTE):
            if count not in (None, 1):
                raise RuleViolation(
                    errors.INVALID_COUNT, f"only the top card of the {source} can be moved"
                )
            return up[-1:]
        run = movable_run(up)
        if count is None:
            return up[-run:]
        if not 1 <= count <= len(up):
            raise RuleViolation(
                errors.INVALID_COUNT,
                f"{source} has {len(up)} card(s); count must be 1 to {len(up)}",
            )
        if count > run:
            raise RuleViolation(
                errors.NOT_A_RUN,
                f"the top {count} cards of {source} are not a same-suit descending run; only "
                f"its top {run} move together",
            )
        return up[-count:]

    @staticmethod
    def _onto_column(
        table: Table, run: tuple[Card, ...], target: str, count: int | None
    ) -> tuple[Card, ...]:
        column = table.pile(target)
        if not column.cards:
            return run  # an empty column takes any available card or run
        onto = column.top
        assert onto is not None  # every column card lies face up
        if count is None:
            # The one part of the run whose bottom card fits (ranks differ within a run); if
            # none does, judge the top card alone so the refusal names a concrete reason.
            for n in range(len(run), 0, -1):
                if same_suit_down(run[-n], onto):
                    return run[-n:]
            run = run[-1:]
        check_same_suit_down(run[0], onto, target)
        return run

    @staticmethod
    def _to_foundation(
        table: Table, source: str, run: tuple[Card, ...], target: str
    ) -> tuple[str, str, tuple[Card, ...]]:
        lowest = run[-1]  # the top card of the source lands first
        if target == ANY_FOUNDATION:
            found = fitting_foundation(table, lowest)
            if found is None:
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{lowest} does not fit on any foundation yet"
                )
            return source, FOUNDATION_PILES[found], landing_order(run)
        check_same_suit_up(lowest, table.pile(target).top, target)
        return source, target, landing_order(run)

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [Draw()] if table.piles[S].cards else []
        actions.extend(MoveCards(s, t, n) for s, t, n in legal_moves(table))
        return actions

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """A move; one from the stock that turned the next stock card is followed by that
        CardTurned, which the engine never lets be undone. A draw shows a new card."""
        return isinstance(event, CardMoved)

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """The stock's top card turns face up once a draw or a move took the one above it."""
        pile = table.piles[S]
        if pile.cards and pile.top is None:
            return [CardTurned(STOCK, reveal(pile.cards[-1]))]
        return []

    def units(self, table: Table) -> int:
        return sum(len(table.piles[f].cards) for f in F)


# --- shared by the rules, the views and the reference bot -------------------------------------


def fitting_foundation(table: Table, card: Card) -> int | None:
    """The first foundation ``card`` goes on, or None."""
    for i, f in enumerate(F):
        if same_suit_up(card, table.piles[f].top):
            return i
    return None


def legal_moves(table: Table) -> list[tuple[str, str, int]]:
    """Every move the rules allow now, as (source, target, count), sources in ``SOURCES``
    order, then targets in ``TARGETS`` order, then counts upwards."""
    moves: list[tuple[str, str, int]] = []
    piles = table.piles
    foundation_tops = [piles[f].top for f in F]
    columns = [piles[t] for t in T]
    for source in SOURCES:
        pile = table.pile(source)
        up = pile.up
        if not up:
            continue
        run = 1 if source in (STOCK, WASTE) else movable_run(up)
        lowest = up[-1]
        for j, top in enumerate(foundation_tops):
            if same_suit_up(lowest, top):
                moves.extend((source, FOUNDATION_PILES[j], n) for n in range(1, run + 1))
        for j, column in enumerate(columns):
            target = TABLEAU_PILES[j]
            if target == source:
                continue
            if not column.cards:
                moves.extend((source, target, n) for n in range(1, run + 1))
                continue
            onto = column.top
            for n in range(1, run + 1):
                if onto is not None and same_suit_down(up[-n], onto):
                    moves.append((source, target, n))
    return moves


FORTY_THIEVES = FortyThieves()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (FORTY_THIEVES,)
SHELF = 50
