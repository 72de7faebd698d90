"""Salic Law's strong player and clairvoyant bound, searching a fast model of the game.

The game has two phases. While the hand holds cards, the only choices are which column tops
to play to the foundations before the next draw (a drawn card buries the last column's top,
and nothing else moves). Once the hand is empty every card lies face up, so the rest is a
puzzle of perfect information: column tops to the foundations, or into spaces (columns holding
only their King).

The model (for search only; the real rules decide every move played). Suits play no part in
Salic Law's foundations, so a position is the ranks above each column's King (``cols``, bottom
first; the last one takes the draws), the hand's ranks (next first; a King, 13, starts a new
column) and ``c``: ``c[r]`` cards of rank r on the foundations, ``c[0]`` the eight foundations.
A card of rank r fits a foundation exactly when ``c[r - 1] > c[r]`` (some foundation's top is
the rank below, or, for an Ace, is empty); :func:`_rank_rule` derives this from the module's own
``builds_up_to_jack`` at import, and tests/unit/test_experts_salic_law.py drives random positions
through the real rules and checks the model's moves and positions against them move for move.

Rollout policy (the base both players improve on): play the last column's top while it fits,
else the leftmost frozen column's top that fits, repeat; then draw. At the hand's end the
endgame search (:func:`_solve`) takes over.

Endgame search: depth-first over endgame positions with a transposition set (columns sorted,
as spaces and columns are interchangeable), keeping the best line found. Two plays are made
without branching because they are safe: a card whose rank below is complete (no other card
can ever want its foundation), and a fitting card alone on its King (playing it frees a space;
any line that leaves it there can be copied with the freed space parking the other card of
its rank instead). Foundation plays are tried first (a column whose next card then fits
first), then moves into the first space (the column reaching a fitting card soonest first).
``targeted`` searches (inside rollouts) move a card into a space only towards a card within
reach that fits now; the real endgame searches every move into a space, exhaustively within
:data:`ENDGAME_NODES` positions (else the best line found, a lower bound).

- STRONG (``salic-law-strong/1``) sees what a player sees: the columns, the foundations, the
  hand's size, and so the hand's composition (``knowledge.unseen``), never its order. During
  the deal it plays without searching the last column's top when it fits (it would be buried)
  and a frozen column's top whose rank below is complete (safe, as above); any other decision
  with a frozen column's top that fits is perfect-information Monte Carlo: 16 hands
  (:data:`WORLDS`) shuffled from the unseen composition with the player's own ``rng``, and in
  each, every candidate (each fitting frozen top, or draw) followed by the rollout policy to
  the hand's end and a targeted endgame search of at most 60 positions
  (:data:`ROLLOUT_NODES`, endgames remembered per deal); the best total wins, ties to the
  rollout policy's own choice. So a decision costs 16 x (candidates) rollouts, about 15
  decisions a deal. Once the hand is empty it searches the endgame (every move, up to
  :data:`ENDGAME_NODES` positions: in practice exhaustive, so exact) and plays the line found,
  then stops. About 0.3 s of CPU a deal.
- CLAIRVOYANT (``salic-law-clairvoyant/1``) knows the hand's order, and plans the deal phase
  once: (a) a pilot method on the true hand: at every choice (any fitting top, the last
  column's included, or draw) each candidate is scored by the rollout policy and a targeted
  endgame search (:data:`PILOT_NODES` positions), and the best is played (its line never
  scores less than the rollout policy's); (b) the strong player's own line, replayed in the
  model with a copy of the random numbers it is given (the runner seeds every player of a
  deal alike). It plays the one whose endgame search scores more, then the endgame as the
  strong player does; so it is never below the strong player on a deal. About 0.35 s a deal.
  A lower bound on the most any player could take from the deal, not the exact maximum.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.games.salic_law import (
    FOUNDATION_PILES,
    FOUNDATIONS,
    HAND,
    TABLEAU_PILES,
    builds_up_to_jack,
)
from service.rtp import knowledge
from service.rtp.players import Choose, Player
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import CANONICAL_DECK, JACK, KING, RANK_OF, RANKS, Card
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "salic-law-strong/1"
CLAIRVOYANT_VERSION = "salic-law-clairvoyant/1"

#: Sampled hands per decision of the strong player during the deal.
WORLDS = 16
#: Positions searched per endgame inside the strong player's rollouts.
ROLLOUT_NODES = 60
#: Positions searched per endgame inside the clairvoyant's rollouts.
PILOT_NODES = 3000
PILOT_TARGETED = True
#: Positions searched by the endgame search once the hand is empty (both players).
ENDGAME_NODES = 200_000

COPIES = 8  # cards of each rank in two decks
FOUNDATION = -1  # a model move's destination: the foundations (else a space's column)

Cols = list[list[int]]
Line = list[tuple[int, int]]  # (source column, FOUNDATION or the space's column)


def _rank_rule() -> None:
    """The model's foundation rule, derived from the game's: a card of rank r goes on a
    foundation whose top is rank r - 1 (an Ace on an empty one), up to the Jack; Kings and
    Queens never. Raises if the game's rule ever says otherwise."""
    for r in range(1, KING + 1):
        card = RANKS[r - 1] + "S"
        onto = [
            t
            for t in range(JACK + 1)
            if builds_up_to_jack(card, None if t == 0 else RANKS[t - 1] + "H")
        ]
        if onto != ([r - 1] if r <= JACK else []):
            raise AssertionError(f"salic-law model: rank {r} goes onto {onto}")
    if FOUNDATIONS != COPIES:
        raise AssertionError("salic-law model: one foundation per copy of a rank")


_rank_rule()


# --- the model --------------------------------------------------------------------------------


def read(table: Table) -> tuple[int, Cols, list[int]]:
    """The model of what a player sees: the hand's size, the columns (ranks above each King,
    for every column a King heads) and the foundation counts."""
    cols = [[RANK_OF[card] for card in table.pile(p).up[1:]] for p in TABLEAU_PILES]
    while cols and not table.pile(TABLEAU_PILES[len(cols) - 1]).cards:
        cols.pop()
    c = [FOUNDATIONS] + [0] * KING
    for p in FOUNDATION_PILES:
        for card in table.pile(p).up:
            c[RANK_OF[card]] += 1
    return len(table.pile(HAND).cards), cols, c


def moves(hand: int, cols: Cols, c: list[int]) -> list[tuple[int, int]]:
    """Every model move: (column, FOUNDATION) for a top that fits; with the hand empty,
    (column, space) for a top above a card into any other column holding only its King;
    (-1, -1) for a draw. Moves of a lone card into a space (legal, but they change nothing
    but the column's name) are the real rules' only extra."""
    out: list[tuple[int, int]] = [(-1, -1)] if hand else []
    spaces = [j for j, col in enumerate(cols) if not col] if not hand else []
    for i, col in enumerate(cols):
        if col and c[col[-1] - 1] > c[col[-1]]:
            out.append((i, FOUNDATION))
        if len(col) >= 2:
            out.extend((i, j) for j in spaces)
    return out


def apply(cols: Cols, c: list[int], move: tuple[int, int], drawn: int | None = None) -> None:
    """Play a model move in place (a draw needs the drawn card's rank)."""
    source, target = move
    if source < 0:
        assert drawn is not None
        if drawn == KING:
            cols.append([])
        else:
            cols[-1].append(drawn)
    elif target == FOUNDATION:
        c[cols[source].pop()] += 1
    else:
        cols[target].append(cols[source].pop())


def _settle(cols: Cols, c: list[int]) -> None:
    """The rollout policy's plays before the next draw: the last column's top while it fits,
    else the leftmost frozen column's top that fits; until none fits."""
    last = cols[-1]
    frozen = len(cols) - 1
    while True:
        if last and c[last[-1] - 1] > c[last[-1]]:
            c[last.pop()] += 1
            continue
        for i in range(frozen):
            col = cols[i]
            if col and c[col[-1] - 1] > c[col[-1]]:
                c[col.pop()] += 1
                break
        else:
            return


def _rollout(hand: Sequence[int], cols: Cols, c: list[int], draw_first: bool) -> None:
    """The rollout policy to the hand's end, in place. After a settled position only the
    drawn card can fit (nothing else changed), so the policy settles only when it does."""
    if not draw_first:
        _settle(cols, c)
    for r in hand:
        if r == KING:
            cols.append([])
        elif c[r - 1] > c[r]:
            c[r] += 1
            _settle(cols, c)
        else:
            cols[-1].append(r)


def _solve(
    cols0: Sequence[Sequence[int]], c: list[int], budget: int, targeted: bool
) -> tuple[int, Line, bool]:
    """The endgame (hand empty): the most cards on the foundations found, the line reaching
    them, and whether the search was exhaustive (untargeted and within budget: exact)."""
    n = len(cols0)
    c = c[:]
    units0 = sum(c[1 : JACK + 1])
    best = units0
    best_line: Line = []
    path: Line = []
    seen: set[tuple[tuple[int, ...], ...]] = set()
    nodes = 0
    done_at = COPIES * JACK

    def visit(cols: tuple[tuple[int, ...], ...], units: int) -> None:
        nonlocal best, best_line, nodes
        ranks: list[int] = []
        work: list[tuple[int, ...]] | None = None
        i = 0
        while i < n:
            col = cols[i] if work is None else work[i]
            if col:
                r = col[-1]
                if c[r - 1] == COPIES or (len(col) == 1 and c[r - 1] > c[r]):
                    c[r] += 1
                    units += 1
                    ranks.append(r)
                    if work is None:
                        work = list(cols)
                    work[i] = col[:-1]
                    path.append((i, FOUNDATION))
                    i = 0
                    continue
            i += 1
        if work is not None:
            cols = tuple(work)
        if units > best:
            best = units
            best_line = path[:]
        if best < done_at and nodes < budget:
            key = tuple(sorted(cols))
            if key not in seen:
                seen.add(key)
                nodes += 1
                expand(cols, units)
        for r in ranks:
            c[r] -= 1
            path.pop()

    def expand(cols: tuple[tuple[int, ...], ...], units: int) -> None:
        order = []
        for i in range(n):
            col = cols[i]
            if len(col) >= 2:
                r = col[-1]
                if c[r - 1] > c[r]:
                    s = col[-2]
                    chain = s == r + 1 or c[s - 1] > c[s] + (s == r)
                    order.append((not chain, -len(col), i))
        order.sort()
        tried = set()
        for _, _, i in order:
            col = cols[i]
            if col in tried:
                continue
            tried.add(col)
            r = col[-1]
            c[r] += 1
            nxt = list(cols)
            nxt[i] = col[:-1]
            path.append((i, FOUNDATION))
            visit(tuple(nxt), units + 1)
            path.pop()
            c[r] -= 1
            if best == done_at or nodes >= budget:
                return
        if () not in cols:
            return
        free = cols.count(())
        space = cols.index(())
        digs = []
        for i in range(n):
            col = cols[i]
            size = len(col)
            if size >= 2:
                for d in range(1, min(free, size - 1) + 1):
                    r = col[-1 - d]
                    if c[r - 1] > c[r]:
                        digs.append((d, i))
                        break
                else:
                    if not targeted:
                        digs.append((COPIES * JACK + size, i))
        digs.sort()
        tried.clear()
        for _, i in digs:
            col = cols[i]
            if col in tried:
                continue
            tried.add(col)
            nxt = list(cols)
            nxt[i] = col[:-1]
            nxt[space] = (col[-1],)
            path.append((i, space))
            visit(tuple(nxt), units)
            path.pop()
            if best == done_at or nodes >= budget:
                return

    visit(tuple(tuple(col) for col in cols0), units0)
    exhaustive = best == done_at or (nodes < budget and not targeted)
    return best, best_line, exhaustive


def _value(
    cols: Cols, c: list[int], memo: dict[object, int], budget: int, targeted: bool = True
) -> int:
    """A rollout's end (hand empty), scored by a targeted endgame search; remembered, as
    an endgame's value depends on its columns only (the foundations hold the rest)."""
    key = tuple(sorted(tuple(col) for col in cols))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _solve(cols, c, budget, targeted)[0]
    return found


# --- the players ------------------------------------------------------------------------------

DRAW = (-1, -1)


def _fitting(cols: Cols, c: list[int]) -> list[int]:
    """Columns whose top fits a foundation: the last column first, then left to right (the
    rollout policy's order)."""
    last = len(cols) - 1
    order = [last, *range(last)]
    return [i for i in order if cols[i] and c[cols[i][-1] - 1] > c[cols[i][-1]]]


def _score(
    hand: Sequence[int], cols: Cols, c: list[int], move: tuple[int, int], memo: dict[object, int],
    budget: int, targeted: bool = True,
) -> int:  # fmt: skip
    """``move``, then the rollout policy on ``hand`` (the cards still to come, next first),
    then a targeted endgame search."""
    cols = [col[:] for col in cols]
    c = c[:]
    if move != DRAW:
        apply(cols, c, move)
    _rollout(hand, cols, c, draw_first=move == DRAW)
    return _value(cols, c, memo, budget, targeted)


def strong_move(
    cols: Cols, c: list[int], unseen: Sequence[int], rng: random.Random, memo: dict[object, int]
) -> tuple[int, int]:
    """The strong player's move during the deal (``unseen``: the hand's ranks in any order)."""
    fitting = _fitting(cols, c)
    last = len(cols) - 1
    if not fitting:
        return DRAW
    if fitting[0] == last:
        return (last, FOUNDATION)
    for i in fitting:
        if c[cols[i][-1] - 1] == COPIES:  # no card can ever want its foundation
            return (i, FOUNDATION)
    candidates = [*((i, FOUNDATION) for i in fitting), DRAW]
    totals = [0] * len(candidates)
    world = list(unseen)
    for _ in range(WORLDS):
        rng.shuffle(world)
        for k, move in enumerate(candidates):
            totals[k] += _score(world, cols, c, move, memo, ROLLOUT_NODES)
    return candidates[max(range(len(candidates)), key=lambda k: (totals[k], -k))]


def pilot_move(
    hand: Sequence[int], cols: Cols, c: list[int], memo: dict[object, int]
) -> tuple[int, int]:
    """The clairvoyant's move during the deal: every candidate scored on the true hand."""
    candidates = [*((i, FOUNDATION) for i in _fitting(cols, c)), DRAW]
    if len(candidates) == 1:
        return DRAW
    scores = [_score(hand, cols, c, move, memo, PILOT_NODES, PILOT_TARGETED) for move in candidates]
    return candidates[max(range(len(candidates)), key=lambda k: (scores[k], -k))]


def _action(move: tuple[int, int], legal: Sequence[PlayAction]) -> PlayAction:
    """The real action of a model move (to a foundation: the first that the rules list)."""
    source, target = move
    for action in legal:
        if _is(action, source, target):
            return action
    raise AssertionError(f"salic-law: model move {move} is not legal here")


def _is(action: PlayAction, source: int, target: int) -> bool:
    if source < 0:
        return isinstance(action, Draw)
    if not isinstance(action, MoveCards) or action.source != TABLEAU_PILES[source]:
        return False
    if target == FOUNDATION:
        return action.target in FOUNDATION_PILES
    return action.target == TABLEAU_PILES[target]


class _Endgame:
    """Plays the endgame's best line found, searching again if the table is not where the
    line expects it (it always is, unless someone else moved)."""

    __slots__ = ("at", "plan")

    def __init__(self) -> None:
        self.plan: Line = []
        self.at: object = None

    def next(self, cols: Cols, c: list[int], legal: Sequence[PlayAction]) -> PlayAction | None:
        if (cols, c) != self.at:
            self.plan = _solve(cols, c, ENDGAME_NODES, False)[1][::-1]
        if not self.plan:
            self.at = None
            return None
        move = self.plan.pop()
        action = _action(move, legal)
        apply(cols, c, move)
        self.at = (cols, c)
        return action


def _strong_choice(
    rules: GameRules, table: Table, rng: random.Random, memo: dict[object, int]
) -> tuple[int, int]:
    """The strong player's deal-phase move from what the table shows."""
    _, cols, c = read(table)
    if not _fitting(cols, c):
        return DRAW
    unseen = [RANK_OF[card] for card in knowledge.unseen(rules, table)]
    return strong_move(cols, c, unseen, rng, memo)


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    memo: dict[object, int] = {}
    endgame = _Endgame()

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        hand, cols, c = read(table)
        if not hand:
            return endgame.next(cols, c, legal)
        return _action(_strong_choice(rules, table, rng, memo), legal)

    return choose


_CANONICAL = {card: i for i, card in enumerate(CANONICAL_DECK)}


def _strong_line(hand: Sequence[Card], cols: Cols, c: list[int], rng: random.Random) -> Line:
    """The strong player's deal-phase line on the true hand (next card first), given the
    random numbers it is given: its very choices, as ``_strong_choice`` makes them (it sees
    the hand's cards as ``knowledge.unseen`` lists them, in canonical order). In place."""
    memo: dict[object, int] = {}
    line: Line = []
    pos = 0
    while pos < len(hand):
        move = DRAW
        if _fitting(cols, c):
            unseen = [RANK_OF[card] for card in sorted(hand[pos:], key=_CANONICAL.__getitem__)]
            move = strong_move(cols, c, unseen, rng, memo)
        line.append(move)
        apply(cols, c, move, RANK_OF[hand[pos]])
        pos += move == DRAW
    return line


def _pilot_line(hand: Sequence[int], cols: Cols, c: list[int]) -> Line:
    """The pilot method's deal-phase line on the true hand (ranks, next first). In place."""
    memo: dict[object, int] = {}
    line: Line = []
    pos = 0
    while pos < len(hand):
        move = pilot_move(hand[pos:], cols, c, memo)
        line.append(move)
        apply(cols, c, move, hand[pos])
        pos += move == DRAW
    return line


def _clairvoyant_plan(
    rules: GameRules, table: Table, secrets: Secrets, rng: random.Random
) -> tuple[int, Line]:
    """The better deal-phase line of the pilot method's and the strong player's own (replayed
    with a copy of the random numbers it is given: the runner seeds every player of a deal
    alike), each scored by the endgame search (the pilot's on a tie), with its units."""
    world = knowledge.clear_table(table, secrets)
    hand = [card for card in reversed(world.pile(HAND).cards) if isinstance(card, str)]
    best: tuple[int, Line] | None = None
    for make in ("pilot", "strong"):
        _, cols, c = read(world)
        if make == "pilot":
            line = _pilot_line([RANK_OF[card] for card in hand], cols, c)
        else:
            copy = random.Random()
            copy.setstate(rng.getstate())
            line = _strong_line(hand, cols, c, copy)
        units = _solve(cols, c, ENDGAME_NODES, False)[0]
        if best is None or units > best[0]:
            best = (units, line)
    assert best is not None
    return best


def _start_clairvoyant(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    if secrets is None:
        raise ValueError("the clairvoyant bound needs the deal's secrets")
    plan: Line = []
    planned = False
    endgame = _Endgame()

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        nonlocal planned
        hand, cols, c = read(table)
        if not hand:
            return endgame.next(cols, c, legal)
        if not planned:
            plan.extend(reversed(_clairvoyant_plan(rules, table, secrets, rng)[1]))
            planned = True
        return _action(plan.pop(), legal)

    return choose


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"plays the last column's top and uncontested cards at once; other deal-phase choices by "
    f"perfect-information Monte Carlo ({WORLDS} sampled hands, rollout policy to the hand's "
    f"end, targeted endgame search of {ROLLOUT_NODES} positions); the face-up endgame by "
    f"depth-first search of up to {ENDGAME_NODES:,} positions",
)
CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    _start_clairvoyant,
    f"knows the hand's order: every deal-phase choice scored by the rollout policy and a "
    f"targeted endgame search ({PILOT_NODES} positions) on the true hand (a pilot method); "
    f"the endgame by depth-first search of up to {ENDGAME_NODES:,} positions; a lower bound",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "salic-law"
