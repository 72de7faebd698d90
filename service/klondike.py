"""Pure Vegas Klondike rules over an immutable layout: deal, draw, recycle, move, turn.

Every ``check_*``/``resolve_*`` function validates and raises :class:`RuleViolation`; every
``apply_*`` function trusts its input, because it is also how recorded history is replayed and
replay must never fail. Nothing here does I/O or knows about money beyond counting foundation
cards.

Pile ids are the API's: ``stock``, ``waste``, ``tableau:0``..``tableau:6``,
``foundation:0``..``foundation:3``, and ``foundation`` meaning "whichever foundation fits"
(seed 002's double-click) as a destination.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from service import errors
from service.cards import (
    KING,
    Card,
    builds_on_foundation,
    builds_on_tableau,
    is_red,
    rank,
)
from service.errors import RuleViolation

COLUMNS = 7
FOUNDATIONS = 4
TABLEAU_CARDS = 28  # 1 + 2 + ... + 7

T = TypeVar("T")

STOCK = "stock"
WASTE = "waste"
ANY_FOUNDATION = "foundation"
TABLEAU_PILES = tuple(f"tableau:{i}" for i in range(COLUMNS))
FOUNDATION_PILES = tuple(f"foundation:{i}" for i in range(FOUNDATIONS))


@dataclass(frozen=True, slots=True)
class Column:
    down: tuple[Card, ...] = ()  # face-down cards, bottom first
    up: tuple[Card, ...] = ()  # face-up cards, bottom first; up[-1] is the top card

    @property
    def is_empty(self) -> bool:
        return not self.down and not self.up


@dataclass(frozen=True, slots=True)
class Layout:
    tableau: tuple[Column, ...]
    foundations: tuple[tuple[Card, ...], ...]  # bottom first
    stock: tuple[Card, ...]  # stock[0] is the next card drawn
    waste: tuple[Card, ...]  # bottom first; waste[-1] is the only playable waste card
    waste_fan: int  # how many top waste cards came from the latest draw and are still there
    passes_left: int  # passes through the stock still allowed, the current one included
    draw_count: int

    @property
    def foundation_count(self) -> int:
        return sum(len(f) for f in self.foundations)

    @property
    def visible_waste(self) -> tuple[Card, ...]:
        """The fan: the latest draw's cards still on the waste, else the one card beneath."""
        if self.waste_fan:
            return self.waste[-self.waste_fan :]
        return self.waste[-1:]

    def but(
        self,
        tableau: tuple[Column, ...] | None = None,
        foundations: tuple[tuple[Card, ...], ...] | None = None,
        stock: tuple[Card, ...] | None = None,
        waste: tuple[Card, ...] | None = None,
        waste_fan: int | None = None,
        passes_left: int | None = None,
    ) -> Layout:
        """A copy with some piles changed (dataclasses.replace is several times slower, and
        this runs for every event replayed)."""
        return Layout(
            self.tableau if tableau is None else tableau,
            self.foundations if foundations is None else foundations,
            self.stock if stock is None else stock,
            self.waste if waste is None else waste,
            self.waste_fan if waste_fan is None else waste_fan,
            self.passes_left if passes_left is None else passes_left,
            self.draw_count,
        )

    def cards(self) -> Iterator[Card]:
        """Every card in the layout, each exactly once if the layout is sound."""
        yield from self.stock
        yield from self.waste
        for f in self.foundations:
            yield from f
        for col in self.tableau:
            yield from col.down
            yield from col.up


@dataclass(frozen=True, slots=True)
class Move:
    """A resolved card move: concrete piles and the exact cards, bottom card first."""

    source: str
    target: str
    cards: tuple[Card, ...]


# --- piles -------------------------------------------------------------------------------------


def parse_pile(pile: str) -> tuple[str, int | None]:
    """``"tableau:3"`` -> ``("tableau", 3)``; ``"waste"`` -> ``("waste", None)``."""
    if pile in (STOCK, WASTE, ANY_FOUNDATION):
        return pile, None
    if pile in TABLEAU_PILES:
        return "tableau", int(pile[8:])
    if pile in FOUNDATION_PILES:
        return "foundation", int(pile[11:])
    raise RuleViolation(
        errors.UNKNOWN_PILE,
        f"unknown pile {pile!r}; piles are stock, waste, tableau:0..tableau:6, "
        "foundation:0..foundation:3, and foundation for whichever foundation fits",
    )


def _top(pile: tuple[Card, ...]) -> Card | None:
    return pile[-1] if pile else None


# --- deal ---------------------------------------------------------------------------------------


def deal(deck: Sequence[Card], draw_count: int, passes: int) -> Layout:
    """Seed 000's deal: row r gives one card to each column r..6; the card landing on column r
    in row r is face up. The 24 cards left form the stock, the next in deal order drawn first."""
    down: list[list[Card]] = [[] for _ in range(COLUMNS)]
    up: list[Card] = [""] * COLUMNS
    i = 0
    for row in range(COLUMNS):
        for col in range(row, COLUMNS):
            if col == row:
                up[col] = deck[i]
            else:
                down[col].append(deck[i])
            i += 1
    return Layout(
        tableau=tuple(Column(tuple(down[c]), (up[c],)) for c in range(COLUMNS)),
        foundations=((),) * FOUNDATIONS,
        stock=tuple(deck[TABLEAU_CARDS:]),
        waste=(),
        waste_fan=0,
        passes_left=passes,
        draw_count=draw_count,
    )


# --- stock and waste ----------------------------------------------------------------------------


def check_draw(layout: Layout) -> tuple[Card, ...]:
    """The cards a draw would move: min(draw count, cards left), next card first."""
    if not layout.stock:
        if layout.passes_left > 1 and layout.waste:
            hint = "recycle the waste first"
        else:
            hint = "no passes through the stock are left"
        raise RuleViolation(errors.STOCK_EMPTY, f"the stock is empty; {hint}")
    return layout.stock[: layout.draw_count]


def apply_draw(layout: Layout, cards: Sequence[Card]) -> Layout:
    n = len(cards)
    return layout.but(stock=layout.stock[n:], waste=layout.waste + tuple(cards), waste_fan=n)


def check_recycle(layout: Layout) -> None:
    if layout.stock:
        raise RuleViolation(
            errors.STOCK_NOT_EMPTY,
            f"the stock still holds {len(layout.stock)} cards; recycle only when it is empty",
        )
    if layout.passes_left <= 1:
        raise RuleViolation(
            errors.NO_PASSES_LEFT, "no passes through the stock are left; the waste stays put"
        )
    if not layout.waste:
        raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; there is nothing to recycle")


def apply_recycle(layout: Layout) -> Layout:
    # Turning the waste over keeps its order: the first card drawn is drawn first again.
    return layout.but(stock=layout.waste, waste=(), waste_fan=0, passes_left=layout.passes_left - 1)


def undo_draw(layout: Layout, cards: Sequence[Card], waste_fan: int) -> Layout:
    n = len(cards)
    return layout.but(
        stock=tuple(cards) + layout.stock,
        waste=layout.waste[: len(layout.waste) - n],
        waste_fan=waste_fan,
    )


# --- moves --------------------------------------------------------------------------------------


def _check_tableau_target(layout: Layout, card: Card, index: int) -> None:
    column = layout.tableau[index]
    where = f"tableau:{index}"
    if column.is_empty:
        if rank(card) != KING:
            raise RuleViolation(
                errors.ONLY_KING_TO_EMPTY_COLUMN,
                f"{card} cannot go to the empty column {where}; only a King (with the cards "
                "on it) can",
            )
        return
    if not column.up:
        raise RuleViolation(
            errors.DESTINATION_FACE_DOWN,
            f"the top card of {where} is face down; turn it before building on it",
        )
    onto = column.up[-1]
    if rank(onto) != rank(card) + 1:
        raise RuleViolation(
            errors.NOT_ONE_RANK_LOWER,
            f"{card} cannot go on {onto} in {where}: a column card takes only the rank one lower",
        )
    if is_red(onto) == is_red(card):
        raise RuleViolation(
            errors.NOT_OPPOSITE_COLOUR,
            f"{card} cannot go on {onto} in {where}: colours must alternate red and black",
        )


def _check_foundation_target(layout: Layout, card: Card, index: int) -> None:
    pile = layout.foundations[index]
    where = f"foundation:{index}"
    if not pile:
        if not builds_on_foundation(card, None):
            raise RuleViolation(
                errors.FOUNDATION_NEEDS_ACE, f"{card} cannot start {where}: only an Ace can"
            )
        return
    top = pile[-1]
    if top[1] != card[1]:
        raise RuleViolation(
            errors.FOUNDATION_WRONG_SUIT,
            f"{card} cannot go on {top} in {where}: a foundation takes one suit only",
        )
    if rank(card) != rank(top) + 1:
        raise RuleViolation(
            errors.FOUNDATION_WRONG_RANK,
            f"{card} cannot go on {top} in {where}: foundations build up one rank at a time",
        )


def fitting_foundation(layout: Layout, card: Card) -> int | None:
    """The foundation a double-click sends ``card`` to: its suit's pile, or the first empty one
    for an Ace."""
    for i, pile in enumerate(layout.foundations):
        if builds_on_foundation(card, _top(pile)):
            return i
    return None


def _source_cards(
    layout: Layout, source: str, count: int | None, to_foundation: bool
) -> tuple[str, int | None, tuple[Card, ...]]:
    """Validate the source pile and count; return the source kind, index and candidate run.

    For a column with no count given the whole face-up run is returned and the caller picks
    the part that fits."""
    kind, index = parse_pile(source)
    single = count is None or count == 1
    if kind == WASTE:
        if not single:
            raise RuleViolation(errors.INVALID_COUNT, "only the top waste card can be moved")
        if not layout.waste:
            raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; draw from the stock")
        return kind, None, layout.waste[-1:]
    if kind == "foundation" and index is not None:
        if not single:
            raise RuleViolation(
                errors.INVALID_COUNT, "only the top card of a foundation can be moved"
            )
        pile = layout.foundations[index]
        if not pile:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        return kind, index, pile[-1:]
    if kind == "tableau" and index is not None:
        column = layout.tableau[index]
        if column.is_empty:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        if not column.up:
            raise RuleViolation(
                errors.SOURCE_FACE_DOWN, f"the top card of {source} is face down; turn it first"
            )
        if to_foundation and not single:
            raise RuleViolation(errors.INVALID_COUNT, "cards go to a foundation one at a time")
        if count is not None and not 1 <= count <= len(column.up):
            raise RuleViolation(
                errors.INVALID_COUNT,
                f"{source} has {len(column.up)} face-up card(s); count must be 1 to "
                f"{len(column.up)}",
            )
        run = column.up if count is None and not to_foundation else column.up[-(count or 1) :]
        return kind, index, run
    if kind == STOCK:
        raise RuleViolation(
            errors.INVALID_SOURCE, "cards leave the stock only by drawing them to the waste"
        )
    raise RuleViolation(
        errors.INVALID_SOURCE, "name the foundation a card leaves, e.g. foundation:0"
    )


def resolve_move(layout: Layout, source: str, target: str, count: int | None = None) -> Move:
    """Validate a move request and resolve it to concrete piles and cards.

    ``count`` is how many cards to take from the top of a column; when omitted for a column
    to column move, the one run that fits the destination is taken (at most one can)."""
    if source == target:
        raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
    target_kind, target_index = parse_pile(target)
    if target_kind in (STOCK, WASTE):
        raise RuleViolation(
            errors.INVALID_DESTINATION,
            f"cards never go to the {target_kind}; move them to a column or a foundation",
        )
    to_foundation = target_kind in ("foundation", ANY_FOUNDATION)
    source_kind, _, run = _source_cards(layout, source, count, to_foundation)
    if source_kind == "foundation" and to_foundation:
        raise RuleViolation(
            errors.INVALID_DESTINATION, "a card leaves a foundation only for a column"
        )

    if to_foundation:
        card = run[-1]
        if target_index is None:
            found = fitting_foundation(layout, card)
            if found is None:
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{card} does not fit on any foundation yet"
                )
            target_index = found
        else:
            _check_foundation_target(layout, card, target_index)
        return Move(source, f"foundation:{target_index}", (card,))

    assert target_index is not None  # a tableau pile
    if count is None and len(run) > 1:
        # Pick the one sub-run whose bottom card fits; if none does, judge the top card alone
        # so the refusal names a concrete reason.
        for n in range(len(run), 0, -1):
            try:
                _check_tableau_target(layout, run[-n], target_index)
            except RuleViolation:
                continue
            return Move(source, target, run[-n:])
        run = run[-1:]
    _check_tableau_target(layout, run[0], target_index)
    return Move(source, target, run)


def apply_move(layout: Layout, move: Move) -> Layout:
    """Carry out a resolved move without checking it (replay)."""
    n = len(move.cards)
    tableau = layout.tableau
    foundations = layout.foundations
    waste = layout.waste
    waste_fan = layout.waste_fan

    kind, index = parse_pile(move.source)
    if kind == WASTE:
        waste = waste[: len(waste) - n]
        waste_fan = max(waste_fan - 1, 0)
    elif kind == "tableau":
        assert index is not None
        col = tableau[index]
        tableau = _with(tableau, index, Column(col.down, col.up[: len(col.up) - n]))
    else:
        assert index is not None
        foundations = _with(foundations, index, foundations[index][: len(foundations[index]) - n])

    kind, index = parse_pile(move.target)
    assert index is not None
    if kind == "tableau":
        col = tableau[index]
        tableau = _with(tableau, index, Column(col.down, col.up + move.cards))
    else:
        foundations = _with(foundations, index, foundations[index] + move.cards)
    return layout.but(tableau=tableau, foundations=foundations, waste=waste, waste_fan=waste_fan)


def undo_move(layout: Layout, move: Move, waste_fan: int) -> Layout:
    """Put a move's cards back where they came from, including onto the waste."""
    back = Move(move.target, move.source, move.cards)
    if move.source != WASTE:
        return apply_move(layout, back).but(waste_fan=waste_fan)
    # apply_move never targets the waste, so take the card off its destination here.
    kind, index = parse_pile(move.target)
    assert index is not None
    n = len(move.cards)
    tableau, foundations = layout.tableau, layout.foundations
    if kind == "tableau":
        col = tableau[index]
        tableau = _with(tableau, index, Column(col.down, col.up[: len(col.up) - n]))
    else:
        foundations = _with(foundations, index, foundations[index][: len(foundations[index]) - n])
    return layout.but(
        tableau=tableau,
        foundations=foundations,
        waste=layout.waste + move.cards,
        waste_fan=waste_fan,
    )


def _with(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*items[:index], value, *items[index + 1 :])


# --- turning ------------------------------------------------------------------------------------


def check_turn(layout: Layout, column: int) -> Card:
    """The face-down card an explicit turn of ``column`` would reveal."""
    if not 0 <= column < COLUMNS:
        raise RuleViolation(errors.UNKNOWN_PILE, f"column must be 0 to 6, not {column}")
    col = layout.tableau[column]
    if col.is_empty:
        raise RuleViolation(errors.NOTHING_TO_TURN, f"tableau:{column} is empty")
    if col.up:
        raise RuleViolation(
            errors.TOP_CARD_FACE_UP,
            f"the top card of tableau:{column} is already face up; only a face-down top card "
            "can be turned",
        )
    return col.down[-1]


def apply_turn(layout: Layout, column: int) -> Layout:
    col = layout.tableau[column]
    turned = Column(col.down[:-1], col.up + col.down[-1:])
    return layout.but(tableau=_with(layout.tableau, column, turned))


# --- what the player can do ---------------------------------------------------------------------


def waste_playable(layout: Layout) -> bool:
    """Seed 000's arrow: the top waste card fits on some foundation or column."""
    if not layout.waste:
        return False
    card = layout.waste[-1]
    if fitting_foundation(layout, card) is not None:
        return True
    return any(_fits_column(col, card) for col in layout.tableau)


def _fits_column(column: Column, card: Card) -> bool:
    if column.is_empty:
        return rank(card) == KING
    return bool(column.up) and builds_on_tableau(card, column.up[-1])


def legal_moves(layout: Layout) -> list[Move]:
    """Every card move the rules allow now, with concrete piles and counts."""
    moves: list[Move] = []
    targets = list(enumerate(layout.tableau))

    def to_columns(source: str, card: Card, cards: tuple[Card, ...], skip: int = -1) -> None:
        for j, col in targets:
            if j != skip and _fits_column(col, card):
                moves.append(Move(source, TABLEAU_PILES[j], cards))

    def to_foundations(source: str, card: Card) -> None:
        for j, pile in enumerate(layout.foundations):
            if builds_on_foundation(card, _top(pile)):
                moves.append(Move(source, FOUNDATION_PILES[j], (card,)))

    if layout.waste:
        card = layout.waste[-1]
        to_foundations(WASTE, card)
        to_columns(WASTE, card, (card,))
    for i, col in targets:
        for n in range(1, len(col.up) + 1):
            run = col.up[-n:]
            to_columns(TABLEAU_PILES[i], run[0], run, skip=i)
        if col.up:
            to_foundations(TABLEAU_PILES[i], col.up[-1])
    for i, pile in enumerate(layout.foundations):
        if pile:
            to_columns(FOUNDATION_PILES[i], pile[-1], pile[-1:])
    return moves


def turnable_columns(layout: Layout) -> list[int]:
    return [i for i, col in enumerate(layout.tableau) if col.down and not col.up]


def can_recycle(layout: Layout) -> bool:
    return not layout.stock and bool(layout.waste) and layout.passes_left > 1


# --- auto-complete ------------------------------------------------------------------------------


def can_auto_complete(layout: Layout) -> bool:
    """Stock and waste empty, every tableau card face up, and something left to play."""
    if layout.stock or layout.waste:
        return False
    if any(col.down for col in layout.tableau):
        return False
    return any(col.up for col in layout.tableau)


def auto_complete_moves(layout: Layout) -> list[Move]:
    """Play every tableau card to the foundations, lowest rank first, leftmost column first.

    With every card face up each column is one descending run, so the lowest card left is
    always on top of its column and always fits: this never gets stuck."""
    moves: list[Move] = []
    while True:
        candidates = [(rank(col.up[-1]), i) for i, col in enumerate(layout.tableau) if col.up]
        if not candidates:
            return moves
        _, i = min(candidates)
        card = layout.tableau[i].up[-1]
        target = fitting_foundation(layout, card)
        if target is None:  # impossible for a sound layout; stop rather than loop
            return moves
        move = Move(TABLEAU_PILES[i], FOUNDATION_PILES[target], (card,))
        moves.append(move)
        layout = apply_move(layout, move)
