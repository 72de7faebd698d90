"""The forty-thieves family's strong player and clairvoyant bound.

Both search a fast model of the position (``forty_thieves_model``, which mirrors the rules for
search only and is checked against them move for move by the tests).

In Forty Thieves the player sees every column and waste card and the stock's top card; only
the order of the stock's other cards is unknown, and a card leaves the stock only by a draw or
by playing the stock's top card (then the next one turns up). So play falls into *segments*:
moves among the columns, the waste's top card and the foundations, which show nothing new,
ended by one *exit* that takes the stock's top card (draw it, or play it to a foundation or a
column) and shows the next one.

- ``STRONG`` (``forty-thieves-strong/1``), sees only what a player sees. At the start of each
  segment it searches, depth first with a transposition set, every line of segment moves
  (pruned of moves that cannot help: see :func:`segment_moves`; at most ``SEGMENT_NODES`` =
  300 positions), and at each position it reaches, each exit; it plays the line and exit
  whose resulting position scores best by :func:`evaluate` (100 per card on the foundations,
  40 per empty column, -15 per place where a column card does not lie on its suit's next
  rank, -20 per card on the waste; tuned by simulation). Once the stock is spent the segment
  is the rest of the game, and it plays to the best position found (it stops when no line
  scores strictly better). The search only ever reads the stock's face-up top card and how
  many cards lie beneath it: a sealed slot's number is never read. It uses no random numbers
  (its ``rng`` is unused): the same table gives the same choice. Budget: 300 positions per
  segment (about 25 on average), some 1,600 a deal; no sampling (a look one card ahead over
  sampled next cards bought nothing in the RTP lab's trial, 50 deals, for 8 times the time;
  rollouts to the end of sampled worlds cost far more than the budget).
- ``CLAIRVOYANT`` (``forty-thieves-clairvoyant/1``) knows the stock's order. It runs a beam
  search over the stock: from each of the ``BEAM_WIDTH`` = 6 best positions after ``k`` cards
  have left the stock, the same segment search (``BEAM_NODES`` = 120 positions) gives every
  position after the next exit (at most 720 positions per card of the stock, 46,000 a deal);
  the ``BEAM_WIDTH`` best of those by :func:`evaluate` go on; after the last card the line
  reaching the most cards on the foundations wins. It also plays the strong player's own
  line through the true deal and keeps whichever line reaches more, so it is never below the
  strong player. A lower bound on the true maximum (the beam is not exhaustive, and ranks by
  the same evaluation, blind to the stock's order), and labelled so.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.rtp import knowledge
from service.rtp.experts import forty_thieves_model as ftm
from service.rtp.experts.forty_thieves_model import (
    DRAW,
    FOUNDATION,
    ONTO,
    STOCK,
    UNKNOWN,
    WASTE,
    Move,
    State,
)
from service.rtp.players import Choose, Player, replaying
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "forty-thieves-strong/1"
CLAIRVOYANT_VERSION = "forty-thieves-clairvoyant/1"

#: Positions searched per segment by the strong player.
SEGMENT_NODES = 300
#: The clairvoyant's beam: positions kept per card of the stock, positions searched per segment.
BEAM_WIDTH = 6
BEAM_NODES = 120

# The evaluation's weights (per card on the foundations, per empty column, per place in a
# column where a card does not lie on its suit's next rank, per card on the waste).
W_FOUNDATION = 100
W_EMPTY = 40
W_BREAK = -15
W_WASTE = -20

_breaks_of: dict[tuple[int, ...], int] = {}


def _breaks(col: tuple[int, ...]) -> int:
    """Places in a column where a card does not lie on its suit's next rank (cached)."""
    b = _breaks_of.get(col)
    if b is None:
        b = sum(1 for i in range(1, len(col)) if ONTO[col[i]] != col[i - 1])
        if len(_breaks_of) > 50_000:
            _breaks_of.clear()
        _breaks_of[col] = b
    return b


def evaluate(state: State) -> int:
    """How good a position is for what is still to come (higher is better)."""
    columns, waste, _, found = state
    empty = 0
    breaks = 0
    for col in columns:
        if col:
            breaks += _breaks(col)
        else:
            empty += 1
    return W_FOUNDATION * sum(found) + W_EMPTY * empty + W_BREAK * breaks + W_WASTE * len(waste)


def segment_moves(state: State) -> list[Move]:
    """The moves a segment searches, foundation moves first. Pruned of moves that cannot
    help: a run goes to a foundation one card at a time (the same as the whole run); a whole
    column never moves into an empty one, nor does part of a run (only a whole run that
    leaves a card beneath); of several empty columns only the first is tried."""
    columns, waste, _, found = state
    to_foundation: list[Move] = []
    rest: list[Move] = []
    first_empty = -1
    tops: dict[int, list[int]] = {}
    for j, col in enumerate(columns):
        if col:
            tops.setdefault(col[-1], []).append(j)
        elif first_empty < 0:
            first_empty = j
    if waste:
        card = waste[-1]
        if ftm.fits_foundation(found, card):
            to_foundation.append((WASTE, FOUNDATION, 1))
        rest.extend((WASTE, j, 1) for j in tops.get(ONTO[card], ()))
        if first_empty >= 0:
            rest.append((WASTE, first_empty, 1))
    for c, col in enumerate(columns):
        if not col:
            continue
        if ftm.fits_foundation(found, col[-1]):
            to_foundation.append((c, FOUNDATION, 1))
        size = len(col)
        n = 1
        while True:
            onto = ONTO[col[-n]]
            rest.extend((c, j, n) for j in tops.get(onto, ()) if j != c)
            if n < size and onto == col[-n - 1]:
                n += 1
                continue
            if first_empty >= 0 and n < size:
                rest.append((c, first_empty, n))
            break
    return to_foundation + rest


def exits(state: State, stock: Sequence[int]) -> list[Move]:
    """The moves that take the stock's top card: a draw, to a foundation, onto a column (of
    several empty columns only the first)."""
    columns, _, k, found = state
    if k >= len(stock):
        return []
    top = stock[k]
    found_exits: list[Move] = [DRAW]
    if ftm.fits_foundation(found, top):
        found_exits.append((STOCK, FOUNDATION, 1))
    empty = False
    for j, col in enumerate(columns):
        if col:
            if ONTO[top] == col[-1]:
                found_exits.append((STOCK, j, 1))
        elif not empty:
            empty = True
            found_exits.append((STOCK, j, 1))
    return found_exits


class _Segment:
    """A depth-first search of one segment: every position reached by segment moves (at most
    ``budget``), each followed by each exit (or, with the stock spent, the position itself).
    ``best`` keeps the first line scoring highest; ``every`` (when asked) keeps each position
    after an exit with the first line reaching it."""

    def __init__(self, stock: Sequence[int], budget: int, every: bool) -> None:
        self.stock = stock
        self.budget = budget
        self.nodes = 0
        self.seen: set[tuple[object, ...]] = set()
        self.path: list[Move] = []
        self.best_score: int | None = None
        self.best_line: list[Move] = []
        self.every: dict[tuple[object, ...], tuple[int, tuple[Move, ...], State]] | None = (
            {} if every else None
        )

    def _consider(self, after: State, line: list[Move]) -> None:
        score = evaluate(after)
        if self.every is not None:
            k = ftm.key(after)
            if k not in self.every:
                self.every[k] = (score, tuple(line), after)
        if self.best_score is None or score > self.best_score:
            self.best_score = score
            self.best_line = list(line)

    def visit(self, state: State) -> None:
        k = ftm.key(state)
        if k in self.seen:
            return
        self.seen.add(k)
        self.nodes += 1
        stock = self.stock
        path = self.path
        if state[2] < len(stock):
            for e in exits(state, stock):
                path.append(e)
                self._consider(ftm.play(state, e, stock), path)
                path.pop()
        else:
            self._consider(state, path)
        if self.nodes >= self.budget:
            return
        for move in segment_moves(state):
            path.append(move)
            self.visit(ftm.play(state, move, stock))
            path.pop()
            if self.nodes >= self.budget:
                return


def best_segment(state: State, stock: Sequence[int], budget: int = SEGMENT_NODES) -> list[Move]:
    """The strong player's plan from ``state``: a line of segment moves ending in an exit (or,
    with the stock spent, the line to the best position; empty when none scores better than
    staying). Reads ``stock`` only at its top card, ``stock[k]``."""
    search = _Segment(stock, budget, every=False)
    search.visit(state)
    return search.best_line


def _seen_stock(stock: Sequence[int], k: int) -> tuple[int, ...]:
    """The stock as the player sees it after ``k`` cards left it: its top card only."""
    return tuple(stock[: k + 1]) + (UNKNOWN,) * max(len(stock) - k - 1, 0)


def strong_line(state: State, stock: Sequence[int]) -> tuple[int, list[Move]]:
    """The strong player's whole line through a known deal (it sees only the stock's top card
    at each decision): the units it reaches and its moves."""
    line: list[Move] = []
    while True:
        plan = best_segment(state, _seen_stock(stock, state[2]))
        if not plan:
            return ftm.units(state), line
        for move in plan:
            state = ftm.play(state, move, stock)
        line.extend(plan)


#: A line as a chain: (the previous link or None, one segment's moves).
_Link = tuple[object, tuple[Move, ...]]


def beam_line(
    state: State, stock: Sequence[int], width: int = BEAM_WIDTH, budget: int = BEAM_NODES
) -> tuple[int, list[Move]]:
    """The clairvoyant's beam search through a known deal: the units of the best line found,
    and its moves."""
    level: list[tuple[int, _Link | None, State]] = [(evaluate(state), None, state)]
    while True:
        candidates: dict[tuple[object, ...], tuple[int, _Link, State]] = {}
        for _, link, s in level:
            search = _Segment(stock, budget, every=True)
            search.visit(s)
            assert search.every is not None
            for k, (score, segment, after) in search.every.items():
                if k not in candidates or candidates[k][0] < score:
                    candidates[k] = (score, (link, segment), after)
        if not candidates:  # only when the search was given no budget
            break
        ranked = sorted(candidates.values(), key=lambda c: -c[0])
        if ranked[0][2][2] >= len(stock):  # the stock is spent: these are the ends
            score, link, end = max(ranked, key=lambda c: (ftm.units(c[2]), c[0]))
            segments: list[tuple[Move, ...]] = []
            node: object = link
            while node is not None:
                assert isinstance(node, tuple)
                node, segment = node
                segments.append(segment)
            return ftm.units(end), [m for seg in reversed(segments) for m in seg]
        level = [(score, link, after) for score, link, after in ranked[:width]]
    return ftm.units(state), []


def clairvoyant_line(table: Table, secrets: Secrets) -> tuple[int, list[Move]]:
    """The clairvoyant's line from the deal: the better of the beam's and the strong
    player's, as (units, moves)."""
    world = knowledge.clear_table(table, secrets)
    state, stock = ftm.state_of(world), ftm.stock_of(world)
    beam = beam_line(state, stock)
    strong = strong_line(state, stock)
    return beam if beam[0] >= strong[0] else strong


# --- the players ------------------------------------------------------------------------------


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    plan: list[Move] = []
    expect: list[State] = []  # the position the plan's next move is for

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        state, stock = ftm.state_of(table), ftm.stock_of(table)
        if not plan or expect != [state]:
            plan[:] = best_segment(state, stock)
        if not plan:
            return None
        move = plan.pop(0)
        # After a move from the stock a new card shows: plan again from what it shows.
        expect[:] = [ftm.play(state, move, stock)] if move[0] != STOCK else []
        return ftm.action_of(table, move, legal)

    return choose


def _clairvoyant_plan(
    rules: GameRules, rng: random.Random, table: Table, secrets: Secrets
) -> list[Move]:
    return clairvoyant_line(table, secrets)[1]


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"segment search: before each card leaves the stock, every line of column, waste and "
    f"foundation moves (at most {SEGMENT_NODES} positions, depth first) and the exit taking "
    f"the stock's top card, scored by a fixed evaluation; no sampling, sees only the stock's "
    f"top card",
)
CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    replaying(CLAIRVOYANT_VERSION, _clairvoyant_plan, ftm.action_of),
    f"knows the stock's order; beam search over the stock ({BEAM_WIDTH} positions kept per "
    f"card, {BEAM_NODES} searched per segment), or the strong player's own line if that "
    f"reaches more: a lower bound on the most any player could take",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "forty-thieves"
