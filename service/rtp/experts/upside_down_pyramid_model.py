"""A fast search model of an Upside-Down Pyramid position, for the RTP lab's players (pure).

It mirrors ``service.games.upside_down_pyramid`` for search only: the rules stay the game
module's, and tests/unit/test_experts_upside_down_pyramid.py drives random positions through
the real rules and checks this model agrees move for move. Its building tables are computed
from the game's own predicates (``alternate_colour_down``, ``same_suit_up``, ``is_king``) over
every card, and its constants are the game's (``DRAW``, the pile indices).

A position is a tuple ``(columns, waste, stock, passes_left, foundations)``:

- ``columns``: 10 tuples of card numbers, bottom first (a card's number is its index in
  ``CANONICAL_DECK``: 13 x suit + rank - 1; every column card lies face up);
- ``waste`` and ``stock``: bottom first, as the piles lie (the stock's top is its last card);
  ``UNKNOWN`` marks a stock card the player has not seen;
- ``passes_left``: as the table counts them;
- ``foundations``: for each suit, the heights of its two foundations, higher first (which
  foundation pile holds which is the rules' business).

A move is ``(source, target, count)``: sources are the columns 0..9 and ``WASTE``; targets the
columns and ``FOUNDATION``; ``DRAW`` and ``RECYCLE`` are the stock's.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games import upside_down_pyramid as udp
from service.rtp.experts.cards import CARDS, HEIGHT, NUMBER, SUIT, paired_heights
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle
from service.rules.building import alternate_colour_down, is_king
from service.rules.table import Table

COLUMNS = udp.COLUMNS
WASTE = COLUMNS
STOCK = COLUMNS + 1
FOUNDATION = COLUMNS + 2
UNKNOWN = -1

KING: tuple[bool, ...] = tuple(is_king(c) for c in CARDS)
#: BUILDS[a][b]: may column card ``a`` lie on ``b``? (the rules' ``alternate_colour_down``)
BUILDS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(alternate_colour_down(a, b) for b in CARDS) for a in CARDS
)
#: ONTO[a]: the cards ``a`` may be built on.
ONTO: tuple[tuple[int, ...], ...] = tuple(
    tuple(j for j in range(len(CARDS)) if BUILDS[i][j]) for i in range(len(CARDS))
)


Column = tuple[int, ...]
Columns = tuple[Column, ...]
Found = tuple[int, ...]
State = tuple[Columns, tuple[int, ...], tuple[int, ...], int, Found]
Move = tuple[int, int, int]
DRAW: Move = (STOCK, WASTE, udp.DRAW)
RECYCLE: Move = (WASTE, STOCK, 0)


# --- from and to the real table -------------------------------------------------------------


def state_of(table: Table) -> State:
    """The model position of a table as the player sees it: a sealed stock slot is taken by
    position only (``UNKNOWN``); its number is never read."""
    piles = table.piles
    columns = tuple(tuple(NUMBER[c] for c in piles[t].up) for t in udp.T)
    waste = tuple(NUMBER[c] for c in piles[udp.W].up)
    stock = tuple(NUMBER[s] if isinstance(s, str) else UNKNOWN for s in piles[udp.S].cards)
    found = paired_heights(table, udp.F)
    passes = table.passes_left if table.passes_left is not None else udp.PASSES
    return columns, waste, stock, passes, found


def units(state: State) -> int:
    return sum(state[4])


def action_of(table: Table, move: Move, legal: Sequence[PlayAction]) -> PlayAction:
    """The real action (one of ``legal``) a model move stands for."""
    source, target, count = move
    wanted: PlayAction
    if move == DRAW:
        wanted = Draw()
    elif move == RECYCLE:
        wanted = Recycle()
    else:
        src = udp.WASTE if source == WASTE else udp.TABLEAU_PILES[source]
        if target == FOUNDATION:
            card = table.pile(src).up[-1]
            dst = udp.FOUNDATION_PILES[udp.fitting_foundations(table, card)[0]]
        else:
            dst = udp.TABLEAU_PILES[target]
        wanted = MoveCards(src, dst, count)
    if wanted not in legal:
        raise AssertionError(f"upside-down-pyramid model: {move} ({wanted}) is not legal here")
    return wanted


def move_of(action: PlayAction) -> Move:
    """The model move of a real legal action (for the conformance test)."""
    if isinstance(action, Draw):
        return DRAW
    if isinstance(action, Recycle):
        return RECYCLE
    assert isinstance(action, MoveCards)
    assert action.count is not None
    source = WASTE if action.source == udp.WASTE else udp.COLUMN_NUMBER[action.source]
    tgt = action.target
    target = FOUNDATION if tgt in udp.FOUNDATION_NUMBER else udp.COLUMN_NUMBER[tgt]
    return source, target, action.count


# --- the rules, for search ------------------------------------------------------------------


def run_length(col: Column) -> int:
    """A column's movable unit (``udp.run_of``): its whole alternate-colour built run."""
    n = len(col)
    if not n:
        return 0
    r = 1
    while r < n and BUILDS[col[-r]][col[-r - 1]]:
        r += 1
    return r


def fits_foundation(found: Found, card: int) -> bool:
    s2 = 2 * SUIT[card]
    h = HEIGHT[card]
    return found[s2] == h or found[s2 + 1] == h


def fits_column(card: int, col: Column) -> bool:
    """``udp.fits_column``: a King (run) on an empty column, else built on its top card."""
    return BUILDS[card][col[-1]] if col else KING[card]


def _found_plus(found: Found, card: int) -> Found:
    s2 = 2 * SUIT[card]
    h = HEIGHT[card]
    hi, lo = found[s2], found[s2 + 1]
    if hi == h:
        hi += 1
    else:
        lo += 1
        if lo > hi:
            hi, lo = lo, hi
    return (*found[:s2], hi, lo, *found[s2 + 2 :])


def can_draw(state: State) -> bool:
    return bool(state[2])


def can_recycle(state: State) -> bool:
    """``stock.can_recycle``: the stock empty, the waste not, and another pass allowed."""
    _, waste, stock, passes, _ = state
    return not stock and bool(waste) and passes > 1


def legal(state: State) -> list[Move]:
    """Every move the rules allow: the model's mirror of ``UpsideDownPyramid.legal_actions``,
    compared with it by the conformance test."""
    columns, waste, _, _, found = state
    moves: list[Move] = []
    if can_draw(state):
        moves.append(DRAW)
    if can_recycle(state):
        moves.append(RECYCLE)
    if waste:
        w = waste[-1]
        if fits_foundation(found, w):
            moves.append((WASTE, FOUNDATION, 1))
        moves.extend((WASTE, j, 1) for j, col in enumerate(columns) if fits_column(w, col))
    for c, col in enumerate(columns):
        if not col:
            continue
        if fits_foundation(found, col[-1]):
            moves.append((c, FOUNDATION, 1))
        run = run_length(col)
        head = col[-run]
        moves.extend(
            (c, j, run) for j, dst in enumerate(columns) if j != c and fits_column(head, dst)
        )
    return moves


def play(state: State, move: Move) -> State:
    """The position after a legal move."""
    columns, waste, stock, passes, found = state
    source, target, n = move
    if source == STOCK:  # a draw: the stock's top cards, top first, onto the waste
        n = min(udp.DRAW, len(stock))
        left = len(stock) - n
        return columns, waste + stock[left:][::-1], stock[:left], passes, found
    if target == STOCK:  # a recycle: the waste turned over, order kept
        return columns, (), waste[::-1], passes - 1, found
    if source == WASTE:
        cards: tuple[int, ...] = waste[-1:]
        waste = waste[:-1]
    else:
        col = columns[source]
        cards = col[len(col) - n :]
        columns = (*columns[:source], col[: len(col) - n], *columns[source + 1 :])
    if target == FOUNDATION:
        found = _found_plus(found, cards[-1])
    else:
        columns = (*columns[:target], columns[target] + cards, *columns[target + 1 :])
    return columns, waste, stock, passes, found


def key(state: State) -> tuple[object, ...]:
    """A position up to the order of the columns (interchangeable for play)."""
    columns, waste, stock, passes, found = state
    return tuple(sorted(columns)), waste, stock, passes, found
