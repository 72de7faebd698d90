"""Upside-Down Pyramid (seed 004; PySolFC's Thieves of Egypt): Klondike with two decks, ten
uneven columns all face up, and runs that never split.

Deal: two decks; 10 columns of 1, 3, 5, 7, 9, 10, 8, 6, 4, 2 cards (55), all face up, dealt row
by row, left to right, over the columns that still need a card. The other 49 are the stock, the
next card in deal order on top, all face down.

Columns build down in alternating colours. A sequence may not be split (seed 004): the unit a
column moves to another column is its whole built run (the cards on top of it each one rank
lower and of the other colour than the card beneath; one card when the top card is not built on
the one below), so such a move takes exactly that run (``count``, when given, must equal it). An
empty column takes a King or a run headed by a King. A foundation takes a column's top card
alone: it leaves the run beneath it whole (read this way, a built run can still be played off
to the foundations card by card, as in Klondike; otherwise a built pair would be stuck for
good).

Draw three as in Klondike (the latest draw's cards fan on the waste), three passes through the
stock; the waste's top card is playable, onto a column or a foundation. Eight foundations build
Ace up to King by suit; an Ace starts any empty one; nothing comes back off a foundation. Units
are the cards on the foundations (104 is a win). Undo: the last move, never a draw or a recycle
(every card in play lies face up, so a move shows nothing new).

Pile ids: ``stock``, ``waste``, ``foundation:0``..``foundation:7``, ``tableau:0``..``tableau:9``;
``foundation`` as a destination means the first foundation the card fits.

A move is refused, checked in this order, with: ``unknown-pile``; ``same-pile``;
``invalid-destination`` (the stock or the waste); ``invalid-source`` (the stock, or a
foundation); ``waste-empty`` / ``source-empty``; ``invalid-count`` (a count other than 1 from the
waste or to a foundation, or one that is not the column's built run and not fewer cards than
it); ``cannot-split-run`` (fewer cards than the column's built run, between columns); then the
destination's rule: ``only-king-to-empty-column``, ``not-one-rank-lower``,
``not-opposite-colour``; ``foundation-needs-ace``, ``foundation-wrong-suit``,
``foundation-wrong-rank``; ``no-foundation-fits``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved, GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules import stock
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle
from service.rules.building import (
    alternate_colour_down,
    built_run_length,
    check_alternate_colour_down,
    check_same_suit_up,
    is_king,
    same_suit_up,
)
from service.rules.cards import Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, stock_and_columns

DECKS = 2
#: Cards dealt to each column, left to right: the upside-down pyramid.
HEIGHTS = (1, 3, 5, 7, 9, 10, 8, 6, 4, 2)
COLUMNS = len(HEIGHTS)
TABLEAU_CARDS = sum(HEIGHTS)  # 55
STOCK_CARDS = 52 * DECKS - TABLEAU_CARDS  # 49
FOUNDATIONS = 8
DRAW = 3
PASSES = 3

STOCK = "stock"
WASTE = "waste"
ANY_FOUNDATION = "foundation"
PILES = stock_and_columns(FOUNDATIONS, COLUMNS)
LAYOUT, S, W, F, T = PILES.layout, PILES.stock, PILES.waste, PILES.foundations, PILES.tableau
TABLEAU_PILES, FOUNDATION_PILES = PILES.tableau_ids, PILES.foundation_ids
COLUMN_NUMBER = {pile: c for c, pile in enumerate(TABLEAU_PILES)}
FOUNDATION_NUMBER = {pile: n for n, pile in enumerate(FOUNDATION_PILES)}


def deal_positions() -> tuple[tuple[int, ...], ...]:
    """For each column, the deal positions of its cards, bottom first: row by row, left to
    right, over the columns that still need a card."""
    columns: list[list[int]] = [[] for _ in range(COLUMNS)]
    i = 0
    for row in range(max(HEIGHTS)):
        for c in range(COLUMNS):
            if HEIGHTS[c] > row:
                columns[c].append(i)
                i += 1
    return tuple(tuple(column) for column in columns)


POSITIONS = deal_positions()


def run_of(column: Pile) -> tuple[Card, ...]:
    """The column's movable unit: its whole built run (the top card alone when it is not built
    on the one below); nothing for an empty column. Every column card lies face up."""
    up = column.up
    return up[len(up) - built_run_length(up, alternate_colour_down) :]


def fits_column(card: Card, column: Pile) -> bool:
    """May a run headed by ``card`` go onto ``column``? A King (run) on an empty column, else
    one rank lower and of the other colour than its top card."""
    top = column.top
    if top is None:
        return not column.cards and is_king(card)
    return alternate_colour_down(card, top)


def fitting_foundations(table: Table, card: Card) -> list[int]:
    """The foundations ``card`` may go to: its suit's next card, or any empty one for an Ace."""
    return [n for n, f in enumerate(F) if same_suit_up(card, table.piles[f].top)]


class UpsideDownPyramid(GameRules):
    id = "upside-down-pyramid"
    title = "Upside-Down Pyramid"
    family = "upside-down-pyramid"
    #: /2: M 2.56 -> 1.79, priced against the strong player (RTP.md); play unchanged.
    rules_version = "upside-down-pyramid/2"
    earlier_prices = (("upside-down-pyramid/1", "2.56"),)
    decks = DECKS
    max_units = 52 * DECKS
    multiplier = "1.79"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("draw", "recycle", "move", "undo")
    units_are = "cards on the foundations"
    undo_rule = "undo takes back only the last move of cards, never a draw or a recycle"
    passes = PASSES
    draw_count = DRAW
    summary = (
        "Two decks: 10 columns of 1, 3, 5, 7, 9, 10, 8, 6, 4 and 2 cards, all face up; 49 in "
        "the stock.",
        "Build down in alternating colours. A sequence may not be split: a column moves its "
        "whole built run onto another column; an empty column takes a King or a run headed by "
        "a King.",
        "Draw three cards at a time as in Klondike; three passes through the stock; the waste's "
        "top card is playable.",
        "Eight foundations, Ace up to King by suit, taking a column's top card or the waste's; "
        "no card comes back off a foundation.",
        "Undo: the last move, never a draw or a recycle.",
        "Pays stake x M x cards on foundations / 104 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        piles = [Pile()] * len(LAYOUT.specs)
        for c, positions in enumerate(POSITIONS):
            piles[T[c]] = Pile(tuple(deck[i] for i in positions))  # all face up
        stock_cards = tuple(deck[TABLEAU_CARDS:])[::-1]  # the next card in deal order on top
        piles[S] = Pile(stock_cards, len(stock_cards))
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [stock.draw_with_passes(table, DRAW, reveal)]
        if isinstance(action, Recycle):
            return [stock.recycle(table)]
        if isinstance(action, MoveCards):
            target, cards = self._check_move(table, action)
            return [CardMoved(action.source, target, cards)]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def _check_move(self, table: Table, action: MoveCards) -> tuple[str, tuple[Card, ...]]:
        """The concrete destination and the cards a move takes, or the rule it breaks."""
        source, target, count = action.source, action.target, action.count
        self.pile_index(source)
        if target != ANY_FOUNDATION:
            self.pile_index(target)
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if target in (STOCK, WASTE):
            raise RuleViolation(
                errors.INVALID_DESTINATION,
                f"cards never go to the {target}; move them to a column or a foundation",
            )
        if source == STOCK:
            raise RuleViolation(
                errors.INVALID_SOURCE, "cards leave the stock only by drawing them to the waste"
            )
        if source in FOUNDATION_NUMBER:
            raise RuleViolation(
                errors.INVALID_SOURCE,
                f"no card comes back off a foundation in {self.title}; move cards from the "
                "waste or a column",
            )
        to_foundation = target == ANY_FOUNDATION or target in FOUNDATION_NUMBER
        cards = self._source_cards(table, source, count, to_foundation)
        if to_foundation:
            return self._check_foundation(table, cards[0], target), cards
        self._check_column(table, cards[0], target)
        return target, cards

    @staticmethod
    def _source_cards(
        table: Table, source: str, count: int | None, to_foundation: bool
    ) -> tuple[Card, ...]:
        """The cards a move takes from ``source`` (the waste or a column)."""
        if source == WASTE:
            waste = table.piles[W]
            if not waste.cards:
                raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; draw from the stock")
            if count not in (None, 1):
                raise RuleViolation(errors.INVALID_COUNT, "only the waste's top card is playable")
            return waste.up[-1:]
        column = table.piles[T[COLUMN_NUMBER[source]]]
        if not column.cards:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        if to_foundation:
            if count not in (None, 1):
                raise RuleViolation(errors.INVALID_COUNT, "cards go to a foundation one at a time")
            return column.up[-1:]
        run = run_of(column)
        if count is None or count == len(run):
            return run
        if 1 <= count < len(run):
            raise RuleViolation(
                errors.CANNOT_SPLIT_RUN,
                f"a sequence may not be split: {source}'s built run {' '.join(run)} moves whole "
                f"({len(run)} cards, not {count})",
            )
        if len(run) < count <= len(column.cards):
            beneath = column.up[-len(run) - 1]
            raise RuleViolation(
                errors.INVALID_COUNT,
                f"only {source}'s built run of {len(run)} card(s) moves: {run[0]} is not built "
                f"on {beneath}",
            )
        raise RuleViolation(
            errors.INVALID_COUNT,
            f"{source}'s built run is {len(run)} card(s); count must be {len(run)}",
        )

    @staticmethod
    def _check_column(table: Table, card: Card, target: str) -> None:
        """May a run headed by ``card`` go onto the column ``target``?"""
        column = table.piles[T[COLUMN_NUMBER[target]]]
        onto = column.top
        if onto is None:
            if not is_king(card):
                raise RuleViolation(
                    errors.ONLY_KING_TO_EMPTY_COLUMN,
                    f"{card} cannot go to the empty column {target}; only a King, or a run "
                    "headed by a King, can",
                )
            return
        check_alternate_colour_down(card, onto, target)

    @staticmethod
    def _check_foundation(table: Table, card: Card, target: str) -> str:
        """The foundation ``card`` goes to (``foundation``: the first it fits)."""
        if target == ANY_FOUNDATION:
            fits = fitting_foundations(table, card)
            if not fits:
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{card} does not fit on any foundation yet"
                )
            return FOUNDATION_PILES[fits[0]]
        check_same_suit_up(card, table.piles[F[FOUNDATION_NUMBER[target]]].top, target)
        return target

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = []
        if table.piles[S].cards:
            actions.append(Draw())
        if stock.can_recycle(table):
            actions.append(Recycle())
        actions.extend(legal_moves(table))
        return actions

    # --- undo, units --------------------------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """Any move (every card in play lies face up: a move shows nothing new); never a draw
        or a recycle."""
        return isinstance(event, CardMoved)

    def units(self, table: Table) -> int:
        return sum(len(table.piles[f].cards) for f in F)


def legal_moves(table: Table) -> list[MoveCards]:
    """Every move the rules allow now, with concrete piles and counts: the waste's top card to
    the foundations and the columns, then each column's top card to the foundations and its
    whole run to the other columns."""
    moves: list[MoveCards] = []
    piles = table.piles
    columns = [piles[t] for t in T]
    waste_top = piles[W].top
    if waste_top is not None:
        moves.extend(
            MoveCards(WASTE, FOUNDATION_PILES[n], 1) for n in fitting_foundations(table, waste_top)
        )
        moves.extend(
            MoveCards(WASTE, TABLEAU_PILES[j], 1)
            for j, col in enumerate(columns)
            if fits_column(waste_top, col)
        )
    for c, column in enumerate(columns):
        top = column.top
        if top is None:
            continue
        source = TABLEAU_PILES[c]
        moves.extend(
            MoveCards(source, FOUNDATION_PILES[n], 1) for n in fitting_foundations(table, top)
        )
        run = run_of(column)
        moves.extend(
            MoveCards(source, TABLEAU_PILES[j], len(run))
            for j, col in enumerate(columns)
            if j != c and fits_column(run[0], col)
        )
    return moves


UPSIDE_DOWN_PYRAMID = UpsideDownPyramid()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (UPSIDE_DOWN_PYRAMID,)
SHELF = 60
