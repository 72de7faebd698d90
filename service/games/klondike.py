"""The Klondike family: Vegas draw one, Vegas draw three, and Klondike (draw three, unlimited
passes, cards turn by themselves).

Deal (seed 000): row r gives one card to each column r..6; the card landing on column r in row
r is face up. The other 24 cards are the stock, the next card in deal order drawn first. Any
face-up card moves with the cards on it onto a card one rank higher of the opposite colour;
only a King goes to an empty column. Foundations build Ace up by suit, not tied to a suit, and
a card may come back off a foundation onto a column. Pile ids: ``stock``, ``waste``,
``foundation:0``..``foundation:3``, ``tableau:0``..``tableau:6``; ``foundation`` as a
destination means whichever foundation fits (seed 002's double-click).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    GameEvent,
)
from service import errors
from service.errors import RuleViolation
from service.rules import fold, stock
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Turn
from service.rules.building import (
    alternate_colour_down,
    check_alternate_colour_down,
    check_same_suit_up,
    same_suit_up,
)
from service.rules.cards import KING, RANK_OF, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, stock_and_columns

COLUMNS = 7
FOUNDATIONS = 4
TABLEAU_CARDS = 28  # 1 + 2 + ... + 7

STOCK = "stock"
WASTE = "waste"
ANY_FOUNDATION = "foundation"
PILES = stock_and_columns(FOUNDATIONS, COLUMNS)
LAYOUT, S, W, F, T = PILES.layout, PILES.stock, PILES.waste, PILES.foundations, PILES.tableau
TABLEAU_PILES, FOUNDATION_PILES = PILES.tableau_ids, PILES.foundation_ids
PILE_HELP = (
    "piles are stock, waste, tableau:0..tableau:6, foundation:0..foundation:3, and foundation "
    "for whichever foundation fits"
)


@dataclass(frozen=True, slots=True)
class Move:
    """A resolved card move: concrete piles and the exact cards, bottom card first."""

    source: str
    target: str
    cards: tuple[Card, ...]


def _parse(pile: str) -> tuple[str, int | None]:
    """``"tableau:3"`` -> ``("tableau", 3)``; ``"waste"`` -> ``("waste", None)``."""
    if pile in (STOCK, WASTE, ANY_FOUNDATION):
        return pile, None
    if pile in TABLEAU_PILES:
        return "tableau", int(pile[8:])
    if pile in FOUNDATION_PILES:
        return "foundation", int(pile[11:])
    raise RuleViolation(errors.UNKNOWN_PILE, f"unknown pile {pile!r}; {PILE_HELP}")


def _fits_column(top: Card | None, card: Card) -> bool:
    """Whether ``card`` may go on a column whose top card is ``top`` (None: the column is
    empty). A column whose top lies face down takes nothing; the caller leaves it out."""
    if top is None:
        return RANK_OF[card] == KING
    return alternate_colour_down(card, top)


class Klondike(GameRules):
    family = "klondike"
    layout = LAYOUT
    max_units = 52
    undo_rule = (
        "undo reverses only the last draw, move from the waste, or move between a foundation "
        "and a column"
    )

    def __init__(
        self,
        game_id: str,
        title: str,
        *,
        draw_count: int,
        passes: int | None,
        explicit_turn: bool,
        multiplier: str,
        rules_version: str,
        summary: tuple[str, ...],
        earlier_prices: tuple[tuple[str, str], ...] = (),
        undo: bool = True,
        time_limit: int | None = None,
        duel: bool = False,
    ) -> None:
        self.id = game_id
        self.title = title
        turn = ("turn",) if explicit_turn else ()
        self.actions = ("draw", "recycle", "move", *turn, *(("undo",) if undo else ()))
        self.undo = undo
        if not undo:
            self.undo_rule = "this game has no undo"
        self.time_limit = time_limit
        self.duel = duel
        self.draw_count = draw_count
        self.passes = passes
        self.explicit_turn = explicit_turn
        self.multiplier = multiplier
        self.earlier_prices = earlier_prices
        self.rules_version = rules_version
        self.summary = summary

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        columns: list[list[Card]] = [[] for _ in range(COLUMNS)]
        i = 0
        for row in range(COLUMNS):
            for col in range(row, COLUMNS):
                columns[col].append(deck[i])
                i += 1
        piles = [Pile()] * len(LAYOUT.specs)
        for c, cards in enumerate(columns):
            piles[T[c]] = Pile(tuple(cards), c)  # every card but the last face down
        stock = tuple(deck[TABLEAU_CARDS:])[::-1]  # the next card in deal order on top
        piles[S] = Pile(stock, len(stock))
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [stock.draw_with_passes(table, self.draw_count, reveal)]
        if isinstance(action, Recycle):
            return [stock.recycle(table)]
        if isinstance(action, MoveCards):
            move = self.resolve_move(table, action.source, action.target, action.count)
            return [CardMoved(move.source, move.target, move.cards)]
        if isinstance(action, Turn):
            if not self.explicit_turn:
                raise RuleViolation(
                    errors.ACTION_NOT_ALLOWED, f"cards turn by themselves in {self.title}"
                )
            return [CardTurned(action.pile, self._check_turn(table, action.pile, reveal))]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def _check_turn(self, table: Table, pile: str, reveal: Reveal) -> Card:
        """The face-down card an explicit turn of a column reveals."""
        if pile not in TABLEAU_PILES:
            raise RuleViolation(
                errors.UNKNOWN_PILE, f"only columns tableau:0..tableau:6 are turned, not {pile!r}"
            )
        col = table.piles[LAYOUT.index[pile]]
        if not col.cards:
            raise RuleViolation(errors.NOTHING_TO_TURN, f"{pile} is empty")
        if col.top is not None:
            raise RuleViolation(
                errors.TOP_CARD_FACE_UP,
                f"the top card of {pile} is already face up; only a face-down top card "
                "can be turned",
            )
        return reveal(col.cards[-1])

    # --- moves --------------------------------------------------------------------------------

    @staticmethod
    def _check_tableau_target(table: Table, card: Card, index: int) -> None:
        column = table.piles[T[index]]
        where = TABLEAU_PILES[index]
        if not column.cards:
            if RANK_OF[card] != KING:
                raise RuleViolation(
                    errors.ONLY_KING_TO_EMPTY_COLUMN,
                    f"{card} cannot go to the empty column {where}; only a King (with the "
                    "cards on it) can",
                )
            return
        onto = column.top
        if onto is None:
            raise RuleViolation(
                errors.DESTINATION_FACE_DOWN,
                f"the top card of {where} is face down; turn it before building on it",
            )
        check_alternate_colour_down(card, onto, where)

    @staticmethod
    def _check_foundation_target(table: Table, card: Card, index: int) -> None:
        check_same_suit_up(card, table.piles[F[index]].top, FOUNDATION_PILES[index])

    @staticmethod
    def fitting_foundation(table: Table, card: Card) -> int | None:
        """The foundation a double-click sends ``card`` to: its suit's pile, or the first empty
        one for an Ace."""
        for i, f in enumerate(F):
            if same_suit_up(card, table.piles[f].top):
                return i
        return None

    @staticmethod
    def _source_cards(
        table: Table, source: str, count: int | None, to_foundation: bool
    ) -> tuple[str, tuple[Card, ...]]:
        """Validate the source pile and count; return its kind and the candidate run. For a
        column with no count given the whole face-up run is returned and the caller picks the
        part that fits."""
        kind, index = _parse(source)
        single = count is None or count == 1
        if kind == WASTE:
            if not single:
                raise RuleViolation(errors.INVALID_COUNT, "only the top waste card can be moved")
            waste = table.piles[W]
            if not waste.cards:
                raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; draw from the stock")
            return kind, waste.up[-1:]
        if kind == "foundation" and index is not None:
            if not single:
                raise RuleViolation(
                    errors.INVALID_COUNT, "only the top card of a foundation can be moved"
                )
            pile = table.piles[F[index]]
            if not pile.cards:
                raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
            return kind, pile.up[-1:]
        if kind == "tableau" and index is not None:
            column = table.piles[T[index]]
            if not column.cards:
                raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
            up = column.up
            if not up:
                raise RuleViolation(
                    errors.SOURCE_FACE_DOWN, f"the top card of {source} is face down; turn it first"
                )
            if to_foundation and not single:
                raise RuleViolation(errors.INVALID_COUNT, "cards go to a foundation one at a time")
            if count is not None and not 1 <= count <= len(up):
                raise RuleViolation(
                    errors.INVALID_COUNT,
                    f"{source} has {len(up)} face-up card(s); count must be 1 to {len(up)}",
                )
            run = up if count is None and not to_foundation else up[-(count or 1) :]
            return kind, run
        if kind == STOCK:
            raise RuleViolation(
                errors.INVALID_SOURCE, "cards leave the stock only by drawing them to the waste"
            )
        raise RuleViolation(
            errors.INVALID_SOURCE, "name the foundation a card leaves, e.g. foundation:0"
        )

    def resolve_move(
        self, table: Table, source: str, target: str, count: int | None = None
    ) -> Move:
        """Validate a move request and resolve it to concrete piles and cards. ``count`` is how
        many cards to take from the top of a column; when omitted for a column to column move,
        the one run that fits the destination is taken (at most one can)."""
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        target_kind, target_index = _parse(target)
        if target_kind in (STOCK, WASTE):
            raise RuleViolation(
                errors.INVALID_DESTINATION,
                f"cards never go to the {target_kind}; move them to a column or a foundation",
            )
        to_foundation = target_kind in ("foundation", ANY_FOUNDATION)
        source_kind, run = self._source_cards(table, source, count, to_foundation)
        if source_kind == "foundation" and to_foundation:
            raise RuleViolation(
                errors.INVALID_DESTINATION, "a card leaves a foundation only for a column"
            )
        if to_foundation:
            card = run[-1]
            if target_index is None:
                found = self.fitting_foundation(table, card)
                if found is None:
                    raise RuleViolation(
                        errors.NO_FOUNDATION_FITS, f"{card} does not fit on any foundation yet"
                    )
                target_index = found
            else:
                self._check_foundation_target(table, card, target_index)
            return Move(source, FOUNDATION_PILES[target_index], (card,))

        assert target_index is not None  # a tableau pile
        if count is None and len(run) > 1:
            # Pick the one sub-run whose bottom card fits; if none does, judge the top card
            # alone so the refusal names a concrete reason.
            for n in range(len(run), 0, -1):
                try:
                    self._check_tableau_target(table, run[-n], target_index)
                except RuleViolation:
                    continue
                return Move(source, target, run[-n:])
            run = run[-1:]
        self._check_tableau_target(table, run[0], target_index)
        return Move(source, target, run)

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = []
        if table.piles[S].cards:
            actions.append(Draw())
        if self.can_recycle(table):
            actions.append(Recycle())
        actions.extend(MoveCards(m.source, m.target, len(m.cards)) for m in legal_moves(table))
        if self.explicit_turn:
            actions.extend(Turn(TABLEAU_PILES[c]) for c in turnable_columns(table))
        return actions

    def can_recycle(self, table: Table) -> bool:
        return stock.can_recycle(table)

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """Seed 000: a draw, a move from the waste, or a move between a foundation and a column
        (either way); never a move between columns, a turn or a recycle."""
        if not self.undo:
            return False
        if isinstance(event, CardDrawn):
            return True
        if isinstance(event, CardMoved):
            if event.source == WASTE:
                return True
            return event.source.startswith("foundation") != event.target.startswith("foundation")
        return False

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        if not self.explicit_turn:
            turns: list[GameEvent] = [
                CardTurned(TABLEAU_PILES[c], reveal(table.piles[T[c]].cards[-1]))
                for c in turnable_columns(table)
            ]
            if turns:
                return turns
        if can_auto_complete(table):
            moves = auto_complete_moves(table)
            return [AutoCompleted(tuple(AutoMove(m.source, m.target, m.cards[0]) for m in moves))]
        return []

    def units(self, table: Table) -> int:
        p = table.piles
        return len(p[F[0]].cards) + len(p[F[1]].cards) + len(p[F[2]].cards) + len(p[F[3]].cards)


# --- shared by the rules, the views and the reference bot -------------------------------------


def legal_moves(table: Table) -> list[Move]:
    """Every card move the rules allow now, with concrete piles and counts."""
    moves: list[Move] = []
    piles = table.piles
    columns = [piles[t] for t in T]
    # Each pile's top read once (every candidate card is tried against every pile): the
    # columns that can take a card (empty, or a face-up top), and the foundations.
    open_columns = [
        (j, TABLEAU_PILES[j], col.top)
        for j, col in enumerate(columns)
        if not col.cards or col.top is not None
    ]
    foundation_tops = [(FOUNDATION_PILES[j], piles[f].top) for j, f in enumerate(F)]

    def to_columns(source: str, card: Card, cards: tuple[Card, ...], skip: int = -1) -> None:
        for j, target, top in open_columns:
            if j != skip and _fits_column(top, card):
                moves.append(Move(source, target, cards))

    def to_foundations(source: str, card: Card) -> None:
        for target, top in foundation_tops:
            if same_suit_up(card, top):
                moves.append(Move(source, target, (card,)))

    waste_top = piles[W].top
    if waste_top is not None:
        to_foundations(WASTE, waste_top)
        to_columns(WASTE, waste_top, (waste_top,))
    for i, col in enumerate(columns):
        up = col.up
        for n in range(1, len(up) + 1):
            run = up[-n:]
            to_columns(TABLEAU_PILES[i], run[0], run, skip=i)
        if up:
            to_foundations(TABLEAU_PILES[i], up[-1])
    for i, f in enumerate(F):
        top = piles[f].top
        if top is not None:
            to_columns(FOUNDATION_PILES[i], top, (top,))
    return moves


def turnable_columns(table: Table) -> list[int]:
    """Columns whose top card lies face down."""
    return [c for c, t in enumerate(T) if table.piles[t].cards and table.piles[t].top is None]


def can_auto_complete(table: Table) -> bool:
    """Stock and waste empty, every tableau card face up, and something left to play."""
    piles = table.piles
    if piles[S].cards or piles[W].cards:
        return False
    if any(piles[t].down for t in T):
        return False
    return any(piles[t].cards for t in T)


def auto_complete_moves(table: Table) -> list[Move]:
    """Play every tableau card to the foundations, lowest rank first, leftmost column first.

    With every card face up each column is one descending run, so the lowest card left is
    always on top of its column and always fits: this never gets stuck."""
    moves: list[Move] = []
    while True:
        candidates = [
            (RANK_OF[top], c) for c, t in enumerate(T) if (top := table.piles[t].top) is not None
        ]
        if not candidates:
            return moves
        _, c = min(candidates)
        card = table.piles[T[c]].up[-1]
        target = Klondike.fitting_foundation(table, card)
        if target is None:  # impossible for a sound table; stop rather than loop
            return moves
        move = Move(TABLEAU_PILES[c], FOUNDATION_PILES[target], (card,))
        moves.append(move)
        table = fold.apply(table, CardMoved(move.source, move.target, move.cards))


_BUILDING = (
    "Build down in alternating colours; any face-up card moves with the cards on it; only a "
    "King goes to an empty column.",
    "Four foundations, Ace up by suit; cards may come back off a foundation.",
)
_UNDO = "Undo: the last draw, move from the waste, or move between a foundation and a column"


def _vegas_summary(drawing: str) -> tuple[str, ...]:
    return (
        "Seed 000's deal: 7 columns of 1 to 7 cards, the top card of each face up; 24 in the "
        "stock.",
        drawing,
        *_BUILDING,
        "Face-down cards are turned by the player.",
        f"{_UNDO}.",
        "Pays stake x 5 / 52 per card on the foundations.",
    )


VEGAS_DRAW1 = Klondike(
    "vegas-draw1",
    "Vegas Klondike, draw one, one pass",
    draw_count=1,
    passes=1,
    explicit_turn=True,
    multiplier="5",
    rules_version="vegas-klondike/1",
    summary=_vegas_summary("Draw one card at a time; one pass through the stock."),
)
VEGAS_DRAW3 = Klondike(
    "vegas-draw3",
    "Vegas Klondike, draw three, three passes",
    draw_count=3,
    passes=3,
    explicit_turn=True,
    multiplier="5",
    rules_version="vegas-klondike/1",
    summary=_vegas_summary("Draw three cards at a time; three passes through the stock."),
)
KLONDIKE = Klondike(
    "klondike",
    "Klondike, draw three, unlimited passes",
    draw_count=3,
    passes=None,
    explicit_turn=False,
    multiplier="2",  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    # /2: M 3.6 -> 2.39, priced against the strong player (RTP.md); play unchanged.
    # /3: M 2.39 -> 2, priced against klondike-strong/3 (issue 42: it took 24.62 cards a deal
    # to klondike-strong/1's 20.57, 113.03% at 2.39); play unchanged.
    rules_version="klondike/3",
    earlier_prices=(("klondike/1", "3.5"), ("klondike/1", "3.6"), ("klondike/2", "2.39")),
    summary=(
        "7 columns of 1 to 7 cards, the top card of each face up; 24 in the stock.",
        "Draw three cards at a time; unlimited passes through the stock.",
        *_BUILDING,
        "A face-down card turns by itself when it becomes the top of its column.",
        f"{_UNDO}, unless it turned a card.",
        "Pays stake x M x cards on foundations / 52 (rounded down).",
    ),
)
#: Seed 003's classic duel: five minutes on the server's clock, scored in points
#: (service/core/scoring.py); its money is the duel's entry fees and pot, never the game's own.
KLONDIKE_DUEL = Klondike(
    "klondike-duel",
    "Classic duel: Klondike, draw three, five minutes",
    draw_count=3,
    passes=None,
    explicit_turn=True,
    multiplier="1",  # unused: a duel seat's game pays nothing itself
    rules_version="klondike-duel/1",
    undo=False,
    time_limit=300,
    duel=True,
    summary=(
        "Seed 003: dealt only to a duel's seat; every seat of a duel plays the same deck.",
        "7 columns of 1 to 7 cards, the top card of each face up; 24 in the stock.",
        "Draw three cards at a time; unlimited passes through the stock.",
        *_BUILDING,
        "Face-down cards are turned by the player. No undo.",
        "Five minutes on the server's clock from the deal; nothing is accepted after that.",
        "Points: 5 x rank for a card's first time on a foundation (50 for a 10, J, Q, K), 10 "
        "per card turned, -20 per recycle after the second, 1,700 for all 52 and then 5 per "
        "whole second left.",
    ),
)

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (
    VEGAS_DRAW1,
    VEGAS_DRAW3,
    KLONDIKE,
    KLONDIKE_DUEL,
)
SHELF = 10
