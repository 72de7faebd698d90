"""A fast search model of a Forty Thieves position, for the RTP lab's players (pure).

It mirrors ``service.games.forty_thieves`` for search only: the rules stay the game module's,
and tests/unit/test_experts_forty_thieves.py drives random positions through the real rules
and checks this model agrees move for move. Its building tables are computed from the game's
own predicates (``same_suit_down``, ``same_suit_up``) over every pair of cards, so the model
restates no rule of its own.

A position is a tuple ``(columns, waste, k, foundations)``:

- ``columns``: 10 tuples of card numbers, bottom first (a card's number is its index in
  ``CANONICAL_DECK``: 13 x suit + rank - 1);
- ``waste``: the waste, bottom first;
- ``k``: how many cards have left the stock (the stock is a fixed sequence, top first, held
  apart: ``UNKNOWN`` marks a card the player has not seen);
- ``foundations``: for each suit, the heights of its two foundations, higher first (which
  foundation pile holds which is the rules' business; any two of equal suit and height are
  interchangeable).

A move is ``(source, target, count)``: sources are the columns 0..9, ``WASTE`` and ``STOCK``;
targets the columns, ``FOUNDATION`` and (a draw) ``WASTE``.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games import forty_thieves as ft
from service.rtp.experts.cards import CARDS, HEIGHT, NUMBER, SUIT, paired_heights
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import same_suit_down
from service.rules.table import Table

COLUMNS = ft.COLUMNS
WASTE = COLUMNS
STOCK = COLUMNS + 1
FOUNDATION = COLUMNS + 2
UNKNOWN = -1

#: ONTO[a]: the one card a column card ``a`` may be built on (-1: none), from the rules.
ONTO: tuple[int, ...] = tuple(
    next((j for j, b in enumerate(CARDS) if same_suit_down(a, b)), -1) for a in CARDS
)


Columns = tuple[tuple[int, ...], ...]
Found = tuple[int, ...]
State = tuple[Columns, tuple[int, ...], int, Found]
Move = tuple[int, int, int]
DRAW: Move = (STOCK, WASTE, 1)


# --- from and to the real table -------------------------------------------------------------


def stock_of(table: Table) -> tuple[int, ...]:
    """The stock, top first, as the player sees it: a seen card's number, else ``UNKNOWN``
    (a sealed slot is taken by position only; its number is never read)."""
    return tuple(
        NUMBER[s] if isinstance(s, str) else UNKNOWN for s in reversed(table.piles[ft.S].cards)
    )


def state_of(table: Table) -> State:
    """The model position of a table (every column and waste card lies face up)."""
    piles = table.piles
    columns = tuple(tuple(NUMBER[c] for c in piles[t].up) for t in ft.T)
    waste = tuple(NUMBER[c] for c in piles[ft.W].up)
    found = paired_heights(table, ft.F)
    return columns, waste, 0, found


def units(state: State) -> int:
    return sum(state[3])


def action_of(table: Table, move: Move, legal: Sequence[PlayAction]) -> PlayAction:
    """The real action (one of ``legal``) a model move stands for."""
    source, target, count = move
    if move == DRAW:
        wanted: PlayAction = Draw()
    else:
        src = (
            ft.STOCK
            if source == STOCK
            else ft.WASTE
            if source == WASTE
            else ft.TABLEAU_PILES[source]
        )
        if target == FOUNDATION:
            lowest = table.pile(src).up[-1]
            j = ft.fitting_foundation(table, lowest)
            assert j is not None
            dst = ft.FOUNDATION_PILES[j]
        else:
            dst = ft.TABLEAU_PILES[target]
        wanted = MoveCards(src, dst, count)
    if wanted not in legal:
        raise AssertionError(f"forty-thieves model: {move} ({wanted}) is not legal here")
    return wanted


def move_of(action: PlayAction, table: Table) -> Move:
    """The model move of a real legal action (for the conformance test)."""
    if isinstance(action, Draw):
        return DRAW
    assert isinstance(action, MoveCards)
    assert action.count is not None
    src = action.source
    source = STOCK if src == ft.STOCK else WASTE if src == ft.WASTE else ft.TABLEAU_PILES.index(src)
    tgt = action.target
    target = FOUNDATION if tgt in ft.FOUNDATION_PILES else ft.TABLEAU_PILES.index(tgt)
    return source, target, action.count


# --- the rules, for search ------------------------------------------------------------------


def run_length(col: tuple[int, ...]) -> int:
    """The same-suit descending run on top of a column (``ft.movable_run``)."""
    n = len(col)
    if not n:
        return 0
    r = 1
    while r < n and ONTO[col[-r]] == col[-r - 1]:
        r += 1
    return r


def fits_foundation(found: Found, card: int) -> bool:
    s2 = 2 * SUIT[card]
    h = HEIGHT[card]
    return found[s2] == h or found[s2 + 1] == h


def _found_plus(found: Found, card: int, n: int = 1) -> Found:
    """Foundations after ``n`` cards of a run whose lowest is ``card`` land, lowest first."""
    s2 = 2 * SUIT[card]
    h = HEIGHT[card]
    hi, lo = found[s2], found[s2 + 1]
    if hi == h:
        hi += n
    else:
        lo += n
        if lo > hi:
            hi, lo = lo, hi
    return (*found[:s2], hi, lo, *found[s2 + 2 :])


def legal(state: State, stock: Sequence[int]) -> list[Move]:
    """Every move the rules allow (foundation runs of every length included): the model's
    mirror of ``FortyThieves.legal_actions``, compared with it by the conformance test."""
    columns, waste, k, found = state
    moves: list[Move] = []
    if k < len(stock):
        moves.append(DRAW)
    sources: list[tuple[int, tuple[int, ...], int]] = []
    if k < len(stock):
        sources.append((STOCK, (stock[k],), 1))
    if waste:
        sources.append((WASTE, waste, 1))
    for c, col in enumerate(columns):
        if col:
            sources.append((c, col, run_length(col)))
    for source, cards, run in sources:
        if fits_foundation(found, cards[-1]):
            moves.extend((source, FOUNDATION, n) for n in range(1, run + 1))
        for j, col in enumerate(columns):
            if j == source:
                continue
            if not col:
                moves.extend((source, j, n) for n in range(1, run + 1))
                continue
            onto = col[-1]
            moves.extend((source, j, n) for n in range(1, run + 1) if ONTO[cards[-n]] == onto)
    return moves


def play(state: State, move: Move, stock: Sequence[int]) -> State:
    """The position after a legal move (the stock's next card turns up by itself)."""
    columns, waste, k, found = state
    source, target, n = move
    if source == STOCK:
        cards: tuple[int, ...] = (stock[k],)
        k += 1
    elif source == WASTE:
        cards = waste[-1:]
        waste = waste[:-1]
    else:
        col = columns[source]
        cards = col[len(col) - n :]
        columns = (*columns[:source], col[: len(col) - n], *columns[source + 1 :])
    if target == FOUNDATION:
        found = _found_plus(found, cards[-1], n)
    elif target == WASTE:
        waste = waste + cards
    else:
        columns = (*columns[:target], columns[target] + cards, *columns[target + 1 :])
    return columns, waste, k, found


def key(state: State) -> tuple[object, ...]:
    """A position up to the order of the columns (interchangeable for play)."""
    columns, waste, k, found = state
    return tuple(sorted(columns)), waste, k, found
