"""The pyramid family's strong player and clairvoyant bound, on a fast model of a Pyramid
position.

The model mirrors the rules of ``service.games.pyramid`` for search only; the real decider
plays every move. Suits never matter, so a card is its rank (1..13); which ranks pair and which
go alone come from the rules' own predicates (``pair_totals_13``, ``is_king``, tabulated in
:data:`PAIRS` and :data:`ALONE`) and which cards cover which from ``COVERED_BY``. A position
is the pyramid's ranks (fixed for the deal) with a mask of the cards still there, the stock's
ranks in the order they will turn up (the first is its face-up top card) and the waste's ranks,
bottom first. A move is (pyramid cards taken as a mask, takes the stock's top, takes the
waste's top); ``None`` is a draw.

``STRONG`` (``pyramid-strong/1``): Monte Carlo rollouts over the unseen stock. It sees the
pyramid, the waste, the stock's face-up top card and the number of stock cards; the cards
below the top are the unseen cards (``knowledge.unseen``), in an order it does not know. A
free King (pyramid, stock or waste top) is taken at once (a King pairs with nothing, so taking
it never costs a card); with one legal action it plays it. Otherwise it deals ``SAMPLES``
stock orders of the unseen cards (a uniform shuffle from its own ``rng``, the same orders for
every action), plays each legal action in each of them, then plays each world out with the
greedy :func:`rollout` policy, and plays the action with the most cards removed on average;
ties go to the rules' order. The rollout policy is the reference bot's: a King; else the
removal taking the most pyramid cards, then uncovering the most, a waste card rather than the
stock's, the deepest pyramid card; draw when nothing pairs. An answer is remembered per
position, so a table asked about twice gets one answer. Budget per decision: (legal actions)
x SAMPLES (48) rollouts of the rest of the deal; about 0.3 s of CPU a deal.

``CLAIRVOYANT`` (``pyramid-clairvoyant/1``): knows the stock's order (``knowledge.clear_table``)
and searches the deal depth first with a transposition set over (pyramid mask, stock cards
left, waste mask), taking any free King at once (never worse) and trying removals before the
draw; at most ``BUDGET`` (150,000) positions, about 1 s of CPU. When the search runs out
(about a third of deals) the line is the best found: a lower bound on the deal's maximum, not
the maximum itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from service.games.pyramid import (
    COVERED_BY,
    ORDER,
    PYRAMID_CARDS,
    PYRAMID_NUMBER,
    PYRAMID_PILES,
    STOCK,
    WASTE,
    card_at,
)
from service.rtp import knowledge
from service.rtp.players import Choose, Player
from service.rules.actions import Draw, PlayAction, Remove
from service.rules.building import is_king, pair_totals_13
from service.rules.cards import CANONICAL_DECK, RANK_OF
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "pyramid-strong/1"
CLAIRVOYANT_VERSION = "pyramid-clairvoyant/1"

#: Stock orders the strong player deals per decision.
SAMPLES = 48
#: Positions the clairvoyant bound searches at most.
BUDGET = 150_000

RANKS = range(1, 14)
MAX_UNITS = 52
#: COVER[n]: the pyramid cards covering card n, as a mask.
COVER: tuple[int, ...] = tuple(sum(1 << c for c in cov) for cov in COVERED_BY)
#: PAIRS[r][q]: do ranks r and q go together? ALONE[r]: does rank r go by itself? The rules'
#: own predicates, asked of one card of each rank (suits never matter).
PAIRS: tuple[tuple[bool, ...], ...] = (
    (False,) * 14,
    *(
        (False, *(pair_totals_13(CANONICAL_DECK[r - 1], CANONICAL_DECK[q - 1]) for q in RANKS))
        for r in RANKS
    ),
)
ALONE: tuple[bool, ...] = (False, *(is_king(CANONICAL_DECK[r - 1]) for r in RANKS))
#: MATE[r]: the rank that pairs with r (0: none).
MATE: tuple[int, ...] = tuple(next((q for q in RANKS if PAIRS[r][q]), 0) for r in range(14))

#: BELOW[n]: the pyramid cards that card n covers (it lies in a lower row than they do).
BELOW: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in range(PYRAMID_CARDS) if n in COVERED_BY[m]) for n in range(PYRAMID_CARDS)
)

#: (pyramid cards as a mask, takes the stock's top, takes the waste's top)
Move = tuple[int, bool, bool]
#: Never a removal: stands for a draw in a plan.
DRAW: Move = (0, False, False)


@dataclass(frozen=True, slots=True)
class Position:
    """What the model needs of a table as a player sees it."""

    pyramid: tuple[int, ...]  # each pyramid card's rank, 0 once removed
    present: int  # mask of the pyramid cards still there
    stock_top: int  # the stock's face-up top card's rank (0: the stock is empty)
    stock: int  # cards in the stock
    waste: tuple[int, ...]  # the waste's ranks, bottom first


def position(table: Table) -> Position:
    """The model's view of a Pyramid table (face-up cards and the stock's size only)."""
    ranks = tuple(RANK_OF[c] if (c := card_at(table, n)) else 0 for n in range(PYRAMID_CARDS))
    stock = table.pile(STOCK)
    top = stock.top
    return Position(
        ranks,
        sum(1 << n for n, r in enumerate(ranks) if r),
        RANK_OF[top] if top is not None else 0,
        len(stock.cards),
        tuple(RANK_OF[c] for c in table.pile(WASTE).up),
    )


def removals(ranks: Sequence[int], present: int, stock_top: int, waste_top: int) -> list[Move]:
    """Every removal the rules allow (ranks 0: no such card): Kings, pairs of pyramid cards
    (the seed 004 exception's last), a pyramid card with the waste's top or the stock's top,
    the stock's top with the waste's."""
    free: list[int] = []
    found: list[Move] = []
    held: list[Move] = []  # a card with the only card still covering it, when they pair
    x = present
    while x:
        low = x & -x
        x ^= low
        n = low.bit_length() - 1
        cover = present & COVER[n]
        if not cover:
            free.append(n)
            if ALONE[ranks[n]]:
                found.append((low, False, False))
        elif not cover & (cover - 1):
            c = cover.bit_length() - 1
            if not present & COVER[c] and PAIRS[ranks[n]][ranks[c]]:
                held.append((low | cover, False, False))
    if ALONE[stock_top]:
        found.append((0, True, False))
    if ALONE[waste_top]:
        found.append((0, False, True))
    for i, a in enumerate(free):
        pairs = PAIRS[ranks[a]]
        for b in free[i + 1 :]:
            if pairs[ranks[b]]:
                found.append(((1 << a) | (1 << b), False, False))
    found.extend(held)
    for n in free:
        if PAIRS[ranks[n]][waste_top]:
            found.append((1 << n, False, True))
        if PAIRS[ranks[n]][stock_top]:
            found.append((1 << n, True, False))
    if PAIRS[stock_top][waste_top]:
        found.append((0, True, True))
    return found


def is_alone(move: Move) -> bool:
    pyramid, stock, waste = move
    return (pyramid & (pyramid - 1)) == 0 and bool(pyramid) + stock + waste == 1


def piles_of(move: Move) -> tuple[str, ...]:
    """The piles a removal names, in the rules' order."""
    pyramid, stock, waste = move
    piles = [PYRAMID_PILES[n] for n in range(PYRAMID_CARDS) if (pyramid >> n) & 1]
    if stock:
        piles.append(STOCK)
    if waste:
        piles.append(WASTE)
    return tuple(sorted(piles, key=ORDER.__getitem__))


def move_of(action: Remove) -> Move:
    pyramid = sum(1 << PYRAMID_NUMBER[p] for p in action.piles if p in PYRAMID_NUMBER)
    return pyramid, STOCK in action.piles, WASTE in action.piles


# --- playing a known world out --------------------------------------------------------------


def uncovered(present: int, taken: int) -> int:
    """How many pyramid cards still there lose their last cover when ``taken`` goes."""
    after = present & ~taken
    freed = 0
    x = taken
    while x:
        low = x & -x
        x ^= low
        for m in BELOW[low.bit_length() - 1]:
            if (after >> m) & 1 and not after & COVER[m]:
                freed |= 1 << m
    return freed.bit_count()


def greedy(ranks: Sequence[int], present: int, moves: list[Move]) -> Move:
    """The rollout policy's removal (the reference bot's preferences): a King; else the most
    pyramid cards taken, then the most pyramid cards uncovered, a waste card rather than the
    stock's, the deepest pyramid card; ties to the first."""
    best = moves[0]
    best_key = (-1, 0, 0, False, 0)
    for move in moves:
        pyramid, _, waste = move
        key = (
            is_alone(move),
            pyramid.bit_count(),
            uncovered(present, pyramid),
            waste,
            pyramid.bit_length(),
        )
        if key > best_key:
            best, best_key = move, key
    return best


def rollout(
    ranks: Sequence[int], present: int, stock: Sequence[int], p: int, waste: list[int]
) -> int:
    """The cards removed at the end of the deal, played greedily from here: ``stock[p:]`` is
    the stock from its top card down, ``waste`` the waste bottom first (consumed)."""
    n = len(stock)
    while True:
        moves = removals(ranks, present, stock[p] if p < n else 0, waste[-1] if waste else 0)
        if moves:
            pyramid, s, w = greedy(ranks, present, moves)
            present &= ~pyramid
            p += s
            if w:
                waste.pop()
        elif p < n:
            waste.append(stock[p])
            p += 1
        else:
            return MAX_UNITS - present.bit_count() - (n - p) - len(waste)


def play(
    move: Move | None, present: int, stock: Sequence[int], p: int, waste: list[int]
) -> tuple[int, int]:
    """(present, p) after ``move`` (None: a draw); ``waste`` is changed in place."""
    if move is None:
        waste.append(stock[p])
        return present, p + 1
    pyramid, s, w = move
    if w:
        waste.pop()
    return present & ~pyramid, p + s


# --- the strong player ----------------------------------------------------------------------


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    answered: dict[tuple[object, ...], PlayAction] = {}

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        if not legal:
            return None
        pos = position(table)
        key = (pos.present, pos.stock, pos.stock_top, pos.waste)
        if key in answered:
            return answered[key]
        action = _decide(rules, table, pos, legal, rng)
        answered[key] = action
        return action

    return choose


def _decide(
    rules: GameRules,
    table: Table,
    pos: Position,
    legal: Sequence[PlayAction],
    rng: random.Random,
) -> PlayAction:
    for action in legal:
        if isinstance(action, Remove) and is_alone(move_of(action)):
            return action  # a King: free
    if len(legal) == 1:
        return legal[0]
    unseen = [RANK_OF[c] for c in knowledge.unseen(rules, table)]
    if len(unseen) != max(pos.stock - 1, 0):
        raise AssertionError("pyramid: the unseen cards should be the stock's below its top")
    worlds = []
    for _ in range(SAMPLES):
        rng.shuffle(unseen)
        worlds.append([pos.stock_top, *unseen] if pos.stock else [])
    best, best_total = legal[0], -1
    for action in legal:
        move = move_of(action) if isinstance(action, Remove) else None
        total = 0
        for stock in worlds:
            waste = list(pos.waste)
            present, p = play(move, pos.present, stock, 0, waste)
            total += rollout(pos.pyramid, present, stock, p, waste)
        if total > best_total:
            best, best_total = action, total
    return best


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"Monte Carlo rollouts: {SAMPLES} shuffles of the unseen stock per decision, each legal "
    "action played out greedily in each; the best mean wins (free Kings taken at once)",
)


# --- the clairvoyant bound ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Found:
    units: int
    line: tuple[Move | None, ...]
    exhaustive: bool
    nodes: int


def solve(
    ranks: Sequence[int], present: int, stock: Sequence[int], waste: Sequence[int], budget: int
) -> Found:
    """The most cards a known deal lets go from here, by depth-first search over (pyramid
    mask, stock cards drawn, waste mask) with a transposition set, at most ``budget``
    positions; exhaustive means exact. ``stock`` from its top card down, ``waste`` bottom
    first."""
    # The waste and the stock as one sequence: the waste's cards, then the stock's; p is how
    # many of it have left the stock, wm the mask of those still on the waste.
    cards = [*waste, *stock]
    n = len(cards)
    seen: set[int] = set()
    nodes = 0
    best_units = -1
    best_line: tuple[Move | None, ...] = ()
    path: list[Move | None] = []
    exhausted = True

    def visit(pm: int, p: int, wm: int) -> None:
        nonlocal nodes, best_units, best_line, exhausted
        key = (pm << 64) | (wm << 6) | p
        if key in seen:
            return
        seen.add(key)
        nodes += 1
        units = MAX_UNITS - pm.bit_count() - (n - p) - wm.bit_count()
        if units > best_units:
            best_units, best_line = units, tuple(path)
        if units == MAX_UNITS:
            return
        if nodes >= budget:
            exhausted = False
            return
        top = wm.bit_length() - 1
        moves = removals(ranks, pm, cards[p] if p < n else 0, cards[top] if wm else 0)
        kings = [m for m in moves if is_alone(m)]
        for move in kings[:1] or moves:
            pyramid, s, w = move
            path.append(move)
            visit(pm & ~pyramid, p + s, wm & ~(1 << top) if w else wm)
            path.pop()
            if best_units == MAX_UNITS or not exhausted:
                return
        if p < n and not kings:
            path.append(None)
            visit(pm, p + 1, wm | (1 << p))
            path.pop()

    visit(present, len(waste), (1 << len(waste)) - 1)
    return Found(best_units, best_line, exhausted or best_units == MAX_UNITS, nodes)


def _start_clairvoyant(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    if secrets is None:
        raise ValueError("the clairvoyant bound needs the deal's secrets")
    plan: dict[tuple[object, ...], Move | None] = {}

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        pos = position(table)
        key = (pos.present, pos.stock, pos.waste)
        if key not in plan:
            plan.clear()
            world = knowledge.clear_table(table, secrets)
            stock = [RANK_OF[c] for c in reversed(world.pile(STOCK).cards)]  # type: ignore[index]
            found = solve(pos.pyramid, pos.present, stock, pos.waste, BUDGET)
            present, p, waste = pos.present, 0, list(pos.waste)
            for move in found.line:
                plan[(present, len(stock) - p, tuple(waste))] = DRAW if move is None else move
                present, p = play(move, present, stock, p, waste)
            plan[(present, len(stock) - p, tuple(waste))] = None
            if key not in plan:
                raise AssertionError("pyramid clairvoyant: the line does not start here")
        move = plan[key]
        if move is None:
            return None  # the line's end: the most it reaches
        want: PlayAction = Draw() if move == DRAW else Remove(piles_of(move))
        if want not in legal:
            raise AssertionError(f"pyramid clairvoyant: planned {want} is not legal here")
        return want

    return choose


CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    _start_clairvoyant,
    f"knows the stock's order; depth-first search with a transposition set, free Kings "
    f"taken at once, at most {BUDGET} positions (exact if exhausted, else a lower bound)",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "pyramid"
