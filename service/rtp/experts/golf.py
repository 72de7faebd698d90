"""The golf family's strong player and clairvoyant bound, on a fast model of a Golf position.

The model (:class:`Layout`, :func:`position`) mirrors the rules of ``service.games.golf`` for
search only; the real decider plays every move. Suits never matter in Golf, so a card is its
rank (1..13) and whether a column card fits the waste comes from the game's own predicate
(``fits_waste``, tabulated per pair of ranks in :data:`FITS`). A position is the seven column
heights packed 3 bits a column into one int (``H``), the waste's top rank ``w`` (0: empty) and
the stock. The columns never change but by losing their top card, so a deal's columns, as
ranks bottom first, are fixed and every position of the deal is a height vector.

One fact shapes both searches: a draw covers the waste, so what matters between two draws is
only which column cards were played (the heights reached), never the order or the last card.
From a position, :meth:`Layout.reach` lists every height vector a run of column-to-waste moves
can reach (with the run itself, including playing nothing); a *turn* is choosing one, then
drawing (or, with the stock empty, stopping).

``STRONG`` (``golf-strong/2``): an expectimax player over the unseen stock's composition. It
sees the columns, the waste and the number of stock cards; the stock's cards are the unseen
cards (``knowledge.unseen``), whose order it does not know, so every order is equally likely.
For each height vector it can reach this turn it computes the expected value of ``DEPTH`` (2)
further turns: a chance node over the next stock card (each rank weighted by how many of it
are unseen), then the best height vector that card's runs reach, and so on; a leaf (after the
last of those draws, before the next) scores :meth:`Layout.leaf_value`: the cards cleared plus
``LEAF_WEIGHT`` (4) x the expected number of column tops that fit the next stock card. Once
the stock holds ``EXACT_FROM`` (7) cards or fewer it searches every remaining turn instead:
exact expectimax, the best a player who cannot see the stock's order can do. It plays the
vector with the best value (ties: more cards cleared now, then the lower vector), by a run
found in the same model, then draws. It never reads a sealed slot (only the stock's length
and the unseen composition) and needs no random numbers. Budget per turn: (vectors this turn)
x 13 x (vectors) x 13 x (vectors) leaf scores at depth 2, and the full tree over at most 7
cards' orders at the end, all memoised for the deal; about 0.6 s of CPU a deal on average
(2 s at the worst).

``CLAIRVOYANT`` (``golf-clairvoyant/1``): knows the stock's order (``knowledge.clear_table``)
and solves the deal exactly: a breadth-first sweep, turn by turn, of every reachable
(heights, waste) pair held as bitsets (one bit per height vector, one bitset per waste rank;
Python's big ints do the set operations), then the most cards cleared among the last turn's
vectors, and a walk back through the stored sets for a line reaching it. The answer is the
exact maximum of the deal (no budget), played move by move through the real decider.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from service.games.golf import COLUMNS, ROWS, TABLEAU_CARDS, TABLEAU_PILES, WASTE, fits_waste
from service.rtp import knowledge
from service.rtp.players import Choose, Player
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import CANONICAL_DECK, RANK_OF, Card
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "golf-strong/2"
CLAIRVOYANT_VERSION = "golf-clairvoyant/1"

#: Turns the strong player looks ahead (draws), and the stock size from which on it searches
#: every remaining turn (exact expectimax).
DEPTH = 2
EXACT_FROM = 7
#: A leaf's weight on the expected number of column tops that fit the next stock card.
LEAF_WEIGHT = 4.0

RANKS = range(1, 14)
_BITS = 3  # bits per column height in H
_MASK = (1 << _BITS) - 1
_SHIFT = tuple(1 << (_BITS * c) for c in range(COLUMNS))

#: FITS[w][r]: may a card of rank r go onto a waste whose top card has rank w (w 0: empty)?
#: The game's own predicate, asked of one card of each rank (suits never matter in Golf).
FITS: tuple[tuple[bool, ...], ...] = (
    (False,) * 14,
    *(
        (False, *(fits_waste(CANONICAL_DECK[r - 1], CANONICAL_DECK[w - 1]) for r in RANKS))
        for w in RANKS
    ),
)
#: ONTO[r]: the waste ranks a card of rank r may go onto.
ONTO: tuple[tuple[int, ...], ...] = tuple(tuple(w for w in RANKS if FITS[w][r]) for r in range(14))
#: NEXT[w]: the ranks that may go onto a waste of rank w.
NEXT: tuple[tuple[int, ...], ...] = tuple(tuple(r for r in RANKS if FITS[w][r]) for w in range(14))


def pack(heights: Sequence[int]) -> int:
    """A height vector as one int, 3 bits a column."""
    return sum(h << (_BITS * c) for c, h in enumerate(heights))


def unpack(packed: int) -> tuple[int, ...]:
    return tuple((packed >> (_BITS * c)) & _MASK for c in range(COLUMNS))


def _digit_sums(fields: int) -> tuple[int, ...]:
    return tuple(
        sum((v >> (_BITS * c)) & _MASK for c in range(fields)) for v in range(1 << (_BITS * fields))
    )


_LOW, _HIGH = _digit_sums(4), _digit_sums(COLUMNS - 4)  # columns 0-3 and 4-6


def cleared(packed: int) -> int:
    """The units of a height vector: the cards cleared from the columns."""
    return TABLEAU_CARDS - _LOW[packed & 0o7777] - _HIGH[packed >> (_BITS * 4)]


@dataclass(frozen=True, slots=True)
class Position:
    """What the model needs of a table: the columns as ranks (bottom first), the height
    vector, the waste's top rank (0: empty) and the stock's size."""

    columns: tuple[tuple[int, ...], ...]
    heights: int
    waste: int
    stock: int


def position(table: Table) -> Position:
    """The model's view of a Golf table (reads only face-up cards and the stock's size)."""
    columns = tuple(tuple(RANK_OF[c] for c in table.pile(p).up) for p in TABLEAU_PILES)
    top = table.pile(WASTE).top
    return Position(
        columns,
        pack([len(c) for c in columns]),
        RANK_OF[top] if top is not None else 0,
        len(table.pile("stock").cards),
    )


def moves(columns: Sequence[Sequence[int]], heights: int, waste: int) -> list[int]:
    """The columns whose top card may go onto the waste, left to right (the model's legal
    column-to-waste moves; a draw is legal whenever the stock holds a card)."""
    fit = FITS[waste]
    found = []
    for c in range(COLUMNS):
        h = (heights >> (_BITS * c)) & _MASK
        if h and fit[columns[c][h - 1]]:
            found.append(c)
    return found


class Layout:
    """One deal's columns (ranks, bottom first) and the searches over its height vectors,
    memoised for the whole deal."""

    __slots__ = ("_evals", "_exp", "_fit", "_reach", "_top", "_tops", "columns")

    def __init__(self, columns: Sequence[Sequence[int]]) -> None:
        self.columns = tuple(tuple(c) for c in columns)
        # _top[c * 8 + h]: the rank of column c's top card at height h (0 when h is 0)
        top = [0] * (COLUMNS * 8)
        for c, col in enumerate(self.columns):
            for h, r in enumerate(col, start=1):
                top[c * 8 + h] = r
        self._top = tuple(top)
        self._reach: dict[int, tuple[tuple[int, int], ...]] = {}
        self._exp: dict[int, float] = {}
        self._evals: dict[tuple[int, int], int] = {}
        self._fit: dict[int, tuple[int, ...]] = {}
        self._tops: dict[int, tuple[tuple[int, int], ...]] = {}

    def fits(self, columns: Sequence[Sequence[int]]) -> bool:
        """Are these columns this deal's, some top cards played?"""
        return len(columns) == COLUMNS and all(
            tuple(now) == mine[: len(now)] for now, mine in zip(columns, self.columns, strict=True)
        )

    def _moves(self, heights: int) -> tuple[tuple[int, int], ...]:
        """(top card's rank, vector after playing it) for each column holding a card."""
        found = self._tops.get(heights)
        if found is None:
            top = self._top
            found = tuple(
                (top[c * 8 + h], heights - _SHIFT[c])
                for c in range(COLUMNS)
                if (h := (heights >> (_BITS * c)) & _MASK)
            )
            self._tops[heights] = found
        return found

    def reach(self, heights: int, waste: int) -> tuple[tuple[int, int], ...]:
        """Every (height vector, cards cleared) a run of column-to-waste moves reaches from
        here, playing nothing included; most cleared first, then lowest vector."""
        key = (heights << 4) | waste
        found = self._reach.get(key)
        if found is not None:
            return found
        moves = self._moves
        seen = {key}
        out = {heights: cleared(heights)}
        stack = [(heights, waste)]
        while stack:
            h, w = stack.pop()
            fit = FITS[w]
            units = out[h] + 1
            for r, h2 in moves(h):
                if fit[r]:
                    k2 = (h2 << 4) | r
                    if k2 not in seen:
                        seen.add(k2)
                        out[h2] = units
                        stack.append((h2, r))
        found = tuple(sorted(out.items(), key=lambda hu: (-hu[1], hu[0])))
        self._reach[key] = found
        return found

    def run_to(self, heights: int, waste: int, target: int) -> list[int]:
        """The columns to play, in order, to go from ``heights`` to ``target`` this turn."""
        top = self._top
        parent: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
        start = (heights, waste)
        stack = [start]
        seen = {start}
        while stack:
            state = stack.pop()
            h, w = state
            if h == target:
                run = []
                while state != start:
                    state, c = parent[state]
                    run.append(c)
                return run[::-1]
            fit = FITS[w]
            for c in range(COLUMNS):
                r = top[c * 8 + ((h >> (_BITS * c)) & _MASK)]
                if r and fit[r]:
                    nxt = (h - _SHIFT[c], r)
                    if nxt not in seen:
                        seen.add(nxt)
                        parent[nxt] = (state, c)
                        stack.append(nxt)
        raise ValueError("target not reachable this turn")

    # --- the strong player's expectimax ---------------------------------------------------

    def _fitting(self, heights: int) -> tuple[int, ...]:
        """fitting[w]: how many column tops may go onto a waste of rank w."""
        found = self._fit.get(heights)
        if found is None:
            counts = [0] * 14
            top = self._top
            for c in range(COLUMNS):
                for w in ONTO[top[c * 8 + ((heights >> (_BITS * c)) & _MASK)]]:
                    counts[w] += 1
            found = self._fit[heights] = tuple(counts)
        return found

    def _fit_sum(self, heights: int, stock: int) -> int:
        """Over the unseen stock cards, how many column tops each fits: sum."""
        key = (heights, stock)
        found = self._evals.get(key)
        if found is None:
            fitting = self._fitting(heights)
            found = 0
            for w in RANKS:
                n = (stock >> (_BITS * w)) & _MASK
                if n:
                    found += n * fitting[w]
            self._evals[key] = found
        return found

    def leaf_value(self, heights: int, stock: int, size: int) -> float:
        """Cards cleared, plus LEAF_WEIGHT x the expected number of column tops that fit the
        next stock card (``stock``: the unseen ranks' counts packed 3 bits a rank; ``size``
        of them)."""
        if size == 0:
            return float(cleared(heights))
        return cleared(heights) + LEAF_WEIGHT * self._fit_sum(heights, stock) / size

    def expected(self, heights: int, stock: int, size: int, depth: int) -> float:
        """The expected value, before a draw, of ``depth`` more turns from ``heights`` with
        ``size`` unseen stock cards of ranks ``stock`` (counts packed 3 bits a rank)."""
        if size == 0 or depth == 0:
            return self.leaf_value(heights, stock, size)
        key = (heights << 48) | (stock << 4) | depth
        found = self._exp.get(key)
        if found is not None:
            return found
        total = 0.0
        if size == 1:  # the last card: the most its runs clear
            for r in RANKS:
                if (stock >> (_BITS * r)) & _MASK:
                    total = self.reach(heights, r)[0][1]
        elif depth == 1:
            # leaves after the draw of r: units + weight x (fit_sum(stock) - fitting[r]) / rest
            weight = LEAF_WEIGHT / (size - 1)
            for r in RANKS:
                n = (stock >> (_BITS * r)) & _MASK
                if n:
                    best = -1.0
                    for h, units in self.reach(heights, r):
                        v = units + weight * (self._fit_sum(h, stock) - self._fitting(h)[r])
                        if v > best:
                            best = v
                    total += n * best
        else:
            for r in RANKS:
                n = (stock >> (_BITS * r)) & _MASK
                if n:
                    rest = stock - (1 << (_BITS * r))
                    best = -1.0
                    for h, _ in self.reach(heights, r):
                        v = self.expected(h, rest, size - 1, depth - 1)
                        if v > best:
                            best = v
                    total += n * best
        value = total / size
        self._exp[key] = value
        return value

    def choose_turn(self, heights: int, waste: int, stock: int, size: int) -> int:
        """The strong player's height vector for this turn."""
        options = self.reach(heights, waste)
        if size == 0 or len(options) == 1:
            return options[0][0]  # most cleared (or the only one)
        depth = size if size <= EXACT_FROM else DEPTH
        best, best_value = options[0][0], -1.0
        for h, _ in options:  # most cleared first: ties keep the earlier
            v = self.expected(h, stock, size, depth)
            if v > best_value + 1e-9:
                best, best_value = h, v
        return best


def stock_counts(cards: Sequence[Card]) -> int:
    """Ranks' counts packed 3 bits a rank."""
    packed = 0
    for card in cards:
        packed += 1 << (_BITS * RANK_OF[card])
    return packed


def _action(c: int | None, legal: Sequence[PlayAction]) -> PlayAction | None:
    want: PlayAction = Draw() if c is None else MoveCards(TABLEAU_PILES[c], WASTE, 1)
    for action in legal:
        if action == want:
            return action
    raise AssertionError(f"golf expert: planned {want} is not legal here")


class _Planner:
    """A player's memory within a deal: the deal's Layout and the moves it has planned,
    keyed by the position they are played from (so asking twice gives one answer)."""

    def __init__(self) -> None:
        self.layout: Layout | None = None
        self.plan: dict[tuple[int, int, int], int | None] = {}

    def layout_for(self, pos: Position) -> Layout:
        if self.layout is None or not self.layout.fits(pos.columns):
            self.layout = Layout(pos.columns)
            self.plan = {}
        return self.layout

    def follow(self, layout: Layout, pos: Position, target: int) -> None:
        """Plan the run from ``pos`` to ``target``, then a draw (None: stop)."""
        h, w = pos.heights, pos.waste
        for c in layout.run_to(h, w, target):
            self.plan[(h, w, pos.stock)] = c
            hc = (h >> (_BITS * c)) & _MASK
            w = layout.columns[c][hc - 1]
            h -= _SHIFT[c]
        self.plan[(h, w, pos.stock)] = None


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    planner = _Planner()

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        pos = position(table)
        layout = planner.layout_for(pos)
        key = (pos.heights, pos.waste, pos.stock)
        if key not in planner.plan:
            unseen = knowledge.unseen(rules, table)
            if len(unseen) != pos.stock:
                raise AssertionError("golf: the unseen cards should be the stock's")
            target = layout.choose_turn(pos.heights, pos.waste, stock_counts(unseen), pos.stock)
            planner.follow(layout, pos, target)
        c = planner.plan[key]
        if c is None and pos.stock == 0:
            return None
        return _action(c, legal)

    return choose


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"expectimax over the unseen stock's composition, {DEPTH} turns (draws) deep and to the "
    f"end once the stock holds {EXACT_FROM} cards or fewer; leaves scored by cards cleared "
    f"plus {LEAF_WEIGHT} x the expected column tops fitting the next card",
)


# --- the clairvoyant bound ----------------------------------------------------------------


def _radix(c: int) -> int:
    radix: int = (ROWS + 1) ** c
    return radix


def solve(
    columns: Sequence[Sequence[int]], waste: int, stock: Sequence[int]
) -> tuple[int, list[int | None]]:
    """The most cards a known deal's columns can lose, and a line that does it: the columns
    played in order, None for a draw.

    ``columns`` as ranks bottom first (at most ROWS each), ``waste`` the waste's top rank and
    ``stock`` the stock's ranks in the order they will be drawn. Exact: every reachable
    (height vector, waste rank) pair is swept turn by turn as bitsets over the height vectors
    (mixed radix ROWS + 1), so the best of the last turn is the deal's maximum."""
    size = (ROWS + 1) ** COLUMNS
    place = tuple(_radix(c) for c in range(COLUMNS))
    # has[c][r]: every vector whose column c top card has rank r
    has: list[dict[int, int]] = []
    for c, col in enumerate(columns):
        by_rank: dict[int, int] = {}
        block = place[c] * (ROWS + 1)
        for h, r in enumerate(col, start=1):
            by_rank[r] = by_rank.get(r, 0) | (((1 << place[c]) - 1) << (h * place[c]))
        comb = _comb(block, size // block)
        has.append({r: bits * comb for r, bits in by_rank.items()})
    start = sum(len(col) * place[c] for c, col in enumerate(columns))
    turns: list[list[int]] = []  # per turn, per waste rank: the reachable vectors
    starts = [1 << start]
    wastes = [waste, *stock]
    for t, w0 in enumerate(wastes):
        sets = [0] * 14
        sets[w0] = starts[t]
        frontier = {w0: starts[t]}
        while frontier:
            grown: dict[int, int] = {}
            for w, bits in frontier.items():
                for r in NEXT[w]:
                    for c in range(COLUMNS):
                        mask = has[c].get(r)
                        if mask is None:
                            continue
                        moved = (bits & mask) >> place[c]
                        if moved:
                            new = moved & ~sets[r]
                            if new:
                                sets[r] |= new
                                grown[r] = grown.get(r, 0) | new
            frontier = grown
        turns.append(sets)
        union = 0
        for bits in sets:
            union |= bits
        starts.append(union)
    # the fewest cards left among the last turn's vectors
    final = starts[-1]
    left = next(n for n, level in enumerate(_levels()) if final & level)
    low = final & _levels()[left]
    target = (low & -low).bit_length() - 1
    # walk back: within a turn, from (vector, waste) to the vector and waste it came from
    line: list[int | None] = []
    v = target
    for t in range(len(wastes) - 1, -1, -1):
        sets = turns[t]
        w = next(r for r in range(14) if (sets[r] >> v) & 1)
        while not (w == wastes[t] and (starts[t] >> v) & 1):
            step = _step_back(columns, sets, place, v, w)
            if step is None:
                raise AssertionError("golf solve: a reachable vector with no way in")
            c, v, w = step
            line.append(c)
        if t:
            line.append(None)  # the draw that began this turn
    line.reverse()
    return TABLEAU_CARDS - left, line


def _step_back(
    columns: Sequence[Sequence[int]], sets: list[int], place: Sequence[int], v: int, w: int
) -> tuple[int, int, int] | None:
    """A move into (vector ``v``, waste ``w``) from a reachable pair: (column, its vector,
    its waste)."""
    for c in range(COLUMNS):
        h = (v // place[c]) % (ROWS + 1)
        if h < len(columns[c]) and columns[c][h] == w:
            before = v + place[c]
            for w0 in ONTO[w]:
                if (sets[w0] >> before) & 1:
                    return c, before, w0
    return None


_LEVELS: list[int] = []
_COMBS: dict[tuple[int, int], int] = {}


def _comb(block: int, times: int) -> int:
    """One bit every ``block`` bits, ``times`` times: a block times this repeats it."""
    found = _COMBS.get((block, times))
    if found is None:
        found, n = 1, 1
        while n < times:  # doubling: 1, 2, 4, ... copies, then cut to ``times``
            found |= found << (n * block)
            n *= 2
        found &= (1 << (times * block)) - 1
        _COMBS[(block, times)] = found
    return found


def _levels() -> list[int]:
    """_levels()[n]: every height vector (mixed radix ROWS + 1) holding n cards in all."""
    if not _LEVELS:
        levels = [1]  # over no columns: the one empty vector
        for c in range(COLUMNS):
            grown = [0] * (len(levels) + ROWS)
            for n, bits in enumerate(levels):
                for h in range(ROWS + 1):
                    grown[n + h] |= bits << (h * _radix(c))
            levels = grown
        _LEVELS.extend(levels)
    return _LEVELS


def _start_clairvoyant(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    if secrets is None:
        raise ValueError("the clairvoyant bound needs the deal's secrets")
    plan: dict[tuple[int, int, int], int | None] = {}

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        pos = position(table)
        key = (pos.heights, pos.waste, pos.stock)
        if key not in plan:
            world = knowledge.clear_table(table, secrets)
            stock = [RANK_OF[c] for c in reversed(world.pile("stock").cards)]  # type: ignore[index]
            h, w, s = pos.heights, pos.waste, pos.stock
            for step in solve(pos.columns, pos.waste, stock)[1]:
                plan[(h, w, s)] = step
                if step is None:
                    w, s = stock[len(stock) - s], s - 1
                else:
                    w = pos.columns[step][((h >> (_BITS * step)) & _MASK) - 1]
                    h -= _SHIFT[step]
            plan.setdefault((h, w, s), None)
        step = plan[key]
        if step is None and pos.stock == 0:
            return None
        return _action(step, legal)

    return choose


CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    _start_clairvoyant,
    "knows the stock's order; an exact sweep of every reachable (heights, waste) pair turn "
    "by turn (bitsets over the height vectors), then a line to the most cards cleared",
    exact=True,
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "golf"
