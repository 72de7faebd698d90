"""The upside-down-pyramid family's strong player and clairvoyant bound.

Both search a fast model of the position (``upside_down_pyramid_model``, which mirrors the rules
for search only and is checked against them move for move by the tests).

Every column card lies face up; only the stock is unknown, and only until the first pass has
drawn it (after that every card in the stock is one the player has seen). So play falls into
*segments*: moves among the columns, the waste's top card and the foundations, which show
nothing new, each segment ended by an *exit*, a draw or a recycle.

A segment search, depth first with a transposition set, visits every position reached by
segment moves (at most a node budget), follows each by each exit and scores the resulting
positions by a fixed evaluation: cards on the foundations, empty columns, places where a
column card is not built on the one below ("breaks"), and cards still in the stock and the
waste, weighted (tuned by simulation). A *beam search* over exits keeps the ``width`` best
positions after each exit, searches a segment from each, and after the last exit keeps the
line reaching the most cards on the foundations.

- ``STRONG`` (``upside-down-pyramid-strong/1``), sees only what a player sees. During the
  first pass (while the stock holds cards it has not seen) it plays the best segment by the
  *first-pass* evaluation, which does not reward playing waste cards (it keeps them for when
  it knows the whole stock, which the RTP lab found worth a great deal), at most
  ``SEGMENT_NODES`` = 300 positions a segment. Once it has seen every stock card it knows the
  whole position, runs one beam search (``STRONG_WIDTH`` = 10 positions kept per exit,
  ``BEAM_NODES`` = 100 searched per segment: at most 1,000 positions per exit, some 35 exits)
  and plays the line it found (should a search from its end find more, it plays on). It
  reads a sealed stock slot by position only, never its number, and uses no random numbers
  (its ``rng`` is unused): the same table gives the same choice.
- ``CLAIRVOYANT`` (``upside-down-pyramid-clairvoyant/1``) knows the stock's order from the
  start. It runs a beam search from the deal (``CLAIRVOYANT_WIDTH`` = 20 positions kept per
  exit, ``BEAM_NODES`` = 100 searched per segment: at most 2,000 positions per exit), also
  plays the strong player's own line through the true deal, and keeps whichever reaches
  more, so it is never below the strong player. A lower bound on the true maximum (the beam
  is not exhaustive), and labelled so.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from service.games.upside_down_pyramid import PASSES
from service.rtp import knowledge
from service.rtp.experts import upside_down_pyramid_model as udm
from service.rtp.experts.upside_down_pyramid_model import (
    BUILDS,
    DRAW,
    FOUNDATION,
    KING,
    RECYCLE,
    UNKNOWN,
    WASTE,
    Column,
    Move,
    State,
)
from service.rtp.players import Choose, Player, replaying
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "upside-down-pyramid-strong/1"
CLAIRVOYANT_VERSION = "upside-down-pyramid-clairvoyant/1"

#: Positions searched per first-pass segment by the strong player.
SEGMENT_NODES = 300
#: Positions searched per segment within a beam search.
BEAM_NODES = 100
#: Positions a beam search keeps after each exit: the strong player's, the clairvoyant's.
STRONG_WIDTH = 10
CLAIRVOYANT_WIDTH = 20

Evaluate = Callable[[State], int]

_breaks_of: dict[Column, int] = {}


def _breaks(col: Column) -> int:
    """Places in a column where a card is not built on the one below (cached)."""
    b = _breaks_of.get(col)
    if b is None:
        b = sum(1 for i in range(1, len(col)) if not BUILDS[col[i]][col[i - 1]])
        if len(_breaks_of) > 50_000:
            _breaks_of.clear()
        _breaks_of[col] = b
    return b


def weighed(foundation: int, empty: int, breaks: int, waiting: int) -> Evaluate:
    """An evaluation: ``foundation`` per card on the foundations, ``empty`` per empty column,
    ``breaks`` per break in a column (subtracted), ``waiting`` per card in the stock or the
    waste (subtracted)."""

    def evaluate(state: State) -> int:
        columns, waste, stock, _, found = state
        n_empty = 0
        n_breaks = 0
        for col in columns:
            if col:
                n_breaks += _breaks(col)
            else:
                n_empty += 1
        return (
            foundation * sum(found)
            + empty * n_empty
            - breaks * n_breaks
            - waiting * (len(waste) + len(stock))
        )

    return evaluate


#: The evaluation a beam search ranks positions by.
evaluate = weighed(foundation=100, empty=30, breaks=30, waiting=25)
#: The strong player's evaluation while it has not seen the whole stock: no reward for
#: playing waste cards, breaks weigh more.
evaluate_first_pass = weighed(foundation=100, empty=30, breaks=60, waiting=0)


def segment_moves(state: State) -> list[Move]:
    """The moves a segment searches, foundation moves first. Pruned of moves that cannot
    help: a King-headed run that is its whole column never moves to an empty column, and of
    several empty columns only the first is tried. A card the player has not seen never
    moves (the search is never asked to, but an unseen waste card must stay put)."""
    columns, waste, _, _, found = state
    to_foundation: list[Move] = []
    rest: list[Move] = []
    first_empty = next((j for j, col in enumerate(columns) if not col), -1)
    if waste and waste[-1] != UNKNOWN:
        card = waste[-1]
        if udm.fits_foundation(found, card):
            to_foundation.append((WASTE, FOUNDATION, 1))
        rest.extend((WASTE, j, 1) for j, col in enumerate(columns) if col and BUILDS[card][col[-1]])
        if KING[card] and first_empty >= 0:
            rest.append((WASTE, first_empty, 1))
    for c, col in enumerate(columns):
        if not col:
            continue
        if udm.fits_foundation(found, col[-1]):
            to_foundation.append((c, FOUNDATION, 1))
        run = udm.run_length(col)
        head = col[-run]
        builds = BUILDS[head]
        rest.extend(
            (c, j, run) for j, dst in enumerate(columns) if dst and j != c and builds[dst[-1]]
        )
        if KING[head] and first_empty >= 0 and run < len(col):
            rest.append((c, first_empty, run))
    return to_foundation + rest


def exits(state: State) -> list[Move]:
    """How a segment ends: a draw, or with the stock spent a recycle (none: the game's end)."""
    if udm.can_draw(state):
        return [DRAW]
    if udm.can_recycle(state):
        return [RECYCLE]
    return []


class _Segment:
    """A depth-first search of one segment: every position reached by segment moves (at most
    ``budget``), each followed by its exit (or, at the game's end, the position itself).
    ``best_line`` is the first line scoring highest; ``every`` (when asked) keeps each
    position reached, after its exit, with the first line reaching it."""

    def __init__(self, budget: int, score: Evaluate, every: bool) -> None:
        self.budget = budget
        self.score = score
        self.nodes = 0
        self.seen: set[tuple[object, ...]] = set()
        self.path: list[Move] = []
        self.best_score: int | None = None
        self.best_line: list[Move] = []
        self.every: dict[tuple[object, ...], tuple[int, tuple[Move, ...], State]] | None = (
            {} if every else None
        )

    def _consider(self, after: State, line: list[Move]) -> None:
        score = self.score(after)
        if self.every is not None:
            k = udm.key(after)
            if k not in self.every:
                self.every[k] = (score, tuple(line), after)
        if self.best_score is None or score > self.best_score:
            self.best_score = score
            self.best_line = list(line)

    def visit(self, state: State) -> None:
        k = udm.key(state)
        if k in self.seen:
            return
        self.seen.add(k)
        self.nodes += 1
        path = self.path
        ends = exits(state)
        for e in ends:
            path.append(e)
            self._consider(udm.play(state, e), path)
            path.pop()
        if not ends:
            self._consider(state, path)
        if self.nodes >= self.budget:
            return
        for move in segment_moves(state):
            path.append(move)
            self.visit(udm.play(state, move))
            path.pop()
            if self.nodes >= self.budget:
                return


def best_segment(state: State, budget: int = SEGMENT_NODES) -> list[Move]:
    """The strong player's first-pass plan: the segment's line and exit scoring best by the
    first-pass evaluation (empty at the game's end when nothing scores better)."""
    search = _Segment(budget, evaluate_first_pass, every=False)
    search.visit(state)
    return search.best_line


#: A line as a chain: (the previous link or None, one segment's moves).
_Link = tuple[object, tuple[Move, ...]]


def beam_line(
    state: State, width: int, budget: int = BEAM_NODES, score: Evaluate = evaluate
) -> tuple[int, list[Move]]:
    """A beam search through a position the searcher knows whole: the units of the best line
    found, and its moves."""
    level: list[tuple[int, _Link | None, State]] = [(score(state), None, state)]
    best: tuple[int, int, _Link | None] = (udm.units(state), score(state), None)
    while level:
        candidates: dict[tuple[object, ...], tuple[int, _Link, State]] = {}
        for _, link, s in level:
            search = _Segment(budget, score, every=True)
            search.visit(s)
            assert search.every is not None
            for k, (value, segment, after) in search.every.items():
                chained: _Link = (link, segment)
                if not segment or segment[-1] not in (DRAW, RECYCLE):  # the game's end
                    end = (udm.units(after), value, chained)
                    if end[:2] > best[:2]:
                        best = end
                elif k not in candidates or candidates[k][0] < value:
                    candidates[k] = (value, chained, after)
        ranked = sorted(candidates.values(), key=lambda c: -c[0])
        level = [(value, link, after) for value, link, after in ranked[:width]]
    segments: list[tuple[Move, ...]] = []
    node: object = best[2]
    while node is not None:
        assert isinstance(node, tuple)
        node, segment = node
        segments.append(segment)
    return best[0], [m for seg in reversed(segments) for m in seg]


def sees_whole_stock(state: State) -> bool:
    return UNKNOWN not in state[2]


def strong_line(state: State) -> tuple[int, list[Move]]:
    """The strong player's whole line through a known deal (it sees the stock's cards only
    once the first pass has drawn them all): the units it reaches and its moves."""
    line: list[Move] = []
    while True:
        columns, waste, stock, passes, found = state
        if passes < PASSES or not stock:  # it has seen every stock card
            plan = beam_line(state, STRONG_WIDTH)[1]
        else:
            plan = best_segment((columns, waste, (UNKNOWN,) * len(stock), passes, found))
        if not plan:
            return udm.units(state), line
        for move in plan:
            state = udm.play(state, move)
        line.extend(plan)


def clairvoyant_line(table: Table, secrets: Secrets) -> tuple[int, list[Move]]:
    """The clairvoyant's line from the deal: the better of its beam's and the strong
    player's, as (units, moves)."""
    world = udm.state_of(knowledge.clear_table(table, secrets))
    beam = beam_line(world, CLAIRVOYANT_WIDTH)
    strong = strong_line(world)
    return beam if beam[0] >= strong[0] else strong


# --- the players ------------------------------------------------------------------------------


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    plan: list[Move] = []
    expect: list[State] = []  # the position the plan's next move is for

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        state = udm.state_of(table)
        if not plan or expect != [state]:
            if sees_whole_stock(state):
                plan[:] = beam_line(state, STRONG_WIDTH)[1]
            else:
                plan[:] = best_segment(state)
        if not plan:
            return None
        move = plan.pop(0)
        # A draw in the first pass shows new cards: plan again from what they are.
        expect[:] = [] if move == DRAW and not sees_whole_stock(state) else [udm.play(state, move)]
        return udm.action_of(table, move, legal)

    return choose


def _clairvoyant_plan(
    rules: GameRules, rng: random.Random, table: Table, secrets: Secrets
) -> list[Move]:
    return clairvoyant_line(table, secrets)[1]


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"first pass: segment search (at most {SEGMENT_NODES} positions) between draws, scored by "
    f"a first-pass evaluation that keeps waste cards back; once every stock card is seen, a "
    f"beam search over draws and recycles ({STRONG_WIDTH} positions kept, {BEAM_NODES} searched "
    f"per segment) played to its end",
)
CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    replaying(CLAIRVOYANT_VERSION, _clairvoyant_plan, udm.action_of),
    f"knows the stock's order; beam search from the deal ({CLAIRVOYANT_WIDTH} positions kept "
    f"per draw, {BEAM_NODES} searched per segment), or the strong player's own line if that "
    f"reaches more: a lower bound on the most any player could take",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "upside-down-pyramid"
