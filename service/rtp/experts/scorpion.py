"""The scorpion family's strong player and clairvoyant bound (Scorpion and Super Scorpion).

Both search with the fast model of ``scorpion_model`` (which mirrors the rules for search only;
the real decider judges every action) and build on the reference bot's policy
(``service.rtp.bots.scorpion``, mirrored move for move in the model): its moves are the
candidates, and its play is the play-out that values a position.

**Strong** (``scorpion-strong/1``) sees only what a player sees. At each decision:

1. When no card is unseen any more (every face-down card turned, the stock dealt), the game is
   one of perfect information: it finds a line once, as the clairvoyant does below (budget
   ``end_budget`` positions), and plays it.
2. Otherwise the candidates are the moves the bot weighs, the bot's choice first, and the draw.
   On Super Scorpion (``every`` and ``draw`` off) only choices that differ from the bot's in kind
   are weighed against its choice: a King into an empty column, the other copy of the card or
   of its parent; the deal is left to the bot's timing. With one candidate it plays it.
3. Perfect-information Monte Carlo over play-outs, i.e. one rollout step over the bot. It keeps
   worlds (the unseen cards in a uniformly random order from its own random numbers, kept while
   nothing new is shown) and values each candidate in each world by the units the bot's play
   then ends with. The bot never reads an unseen card, so these are unbiased estimates of "play
   this, then play as the bot" (no strategy fusion). The bot's play after a candidate up to its
   first move that shows a card is the same in every world and is played once; each world
   remembers the result of every position its play-outs passed. It leaves the bot's choice only
   for a candidate whose mean gain over it, paired world by world, exceeds both ``min_gain``
   units and ``z`` standard errors; it weighs ``k0`` worlds first and doubles them, up to
   ``kmax``, while the best gain exceeds ``min_gain`` but is not yet sure.

Budget per decision (``BUDGETS``): Scorpion 16 to 64 worlds, Super Scorpion 8 to 32, times the
candidates, one bot play-out each (at most the rest of the game), mostly far fewer (remembered
positions); z = 2, min_gain = 0.3 units. It never reads a sealed number's value (worlds are
filled by position), so the blinded table gives the same choices.

**Clairvoyant** (``scorpion-clairvoyant/1``) knows every card (the true deal and stock). It plays
the best of: the bot's rollout step in the true deal (each move the candidate whose bot play-out
ends highest, ties to the bot's choice: it never ends below the bot); that line with its last
positions (up to 8) each searched on by depth-first search (half of ``CLAIR_BUDGET`` positions
shared among them); and a depth-first search from the deal (the other half). It is a lower bound
on the most any player could take (searches, not a proof), and plays its line through the real
decider.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from service.games.scorpion import Scorpion
from service.rtp import knowledge
from service.rtp.experts.scorpion_model import (
    CODE,
    DRAW,
    Model,
    Move,
    Solver,
    State,
)
from service.rtp.players import Choose, Player
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "scorpion-strong/1"
CLAIRVOYANT_VERSION = "scorpion-clairvoyant/1"


@dataclass(frozen=True, slots=True)
class Budget:
    k0: int  # worlds weighed first
    kmax: int  # at most this many worlds for one decision
    z: float  # standard errors a gain over the bot's choice must exceed
    min_gain: float  # units a gain over the bot's choice must exceed
    every: bool  # weigh every move the bot weighs (else only choices of kind, above)
    draw: bool  # weigh dealing the stock early
    end_budget: int  # positions for the perfect-information end


BUDGETS = {
    1: Budget(k0=16, kmax=64, z=2.0, min_gain=0.3, every=True, draw=True, end_budget=20_000),
    2: Budget(k0=8, kmax=32, z=2.0, min_gain=0.3, every=False, draw=False, end_budget=4_000),
}
CLAIR_BUDGET = 30_000


def _key_moves(state: State, cands: list[Move], budget: Budget) -> list[Move]:
    """The candidates weighed against the bot's choice ``cands[0]``."""
    if budget.every:
        return cands if budget.draw else [m for m in cands if m != DRAW]
    cols = state[0]
    first = cands[0]
    out = [first]
    for m in cands[1:]:
        if m == DRAW:
            if budget.draw:
                out.append(m)
        elif not cols[m[1]]:
            out.append(m)  # a King into an empty column
        elif first != DRAW and cols[first[1]]:
            same_card = cols[m[0]][-m[2]] == cols[first[0]][-first[2]]
            if same_card or cols[m[1]][-1] == cols[first[1]][-1]:
                out.append(m)  # the other copy of the card, or of its parent
    return out


class _Strong:
    """One deal's strong player (module docstring)."""

    def __init__(self, rules: Scorpion, rng: random.Random) -> None:
        self.rules = rules
        self.rng = rng
        self.model = Model(rules)
        self.budget = BUDGETS[rules.decks]
        self.plan: list[Move] | None = None
        self.worlds: list[list[int]] = []  # the unseen cards of each world, in slot order
        self.memory: list[dict[object, int]] = []  # each world's play-outs
        self.shown: tuple[object, ...] = ()

    def choose(self, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        model = self.model
        if not knowledge.sealed_count(table):
            return self._endgame(table)
        view = model.view(table)
        cands = model.bot_candidates(view)
        if not cands:
            return None
        cands = _key_moves(view, cands, self.budget)
        if len(cands) == 1:
            return model.action(cands[0])
        return model.action(cands[self._weigh(table, view, cands)])

    def _endgame(self, table: Table) -> PlayAction | None:
        model = self.model
        if self.plan is None:
            _, line = clairvoyant_line(model, model.world(table), self.budget.end_budget)
            self.plan = list(reversed(line))
        return model.action(self.plan.pop()) if self.plan else None

    def _weigh(self, table: Table, view: State, cands: list[Move]) -> int:
        """The index of the candidate to play (0, the bot's, unless another is surely better)."""
        model, budget = self.model, self.budget
        unseen = [CODE[c] for c in knowledge.unseen(self.rules, table)]
        shown = (knowledge.sealed_count(table), tuple(unseen))
        if shown != self.shown:  # a card was shown: new worlds
            self.shown = shown
            self.worlds.clear()
            self.memory.clear()
        # the bot's play after each candidate, up to its first move that shows a card
        pending: list[tuple[State, Move | None]] = []
        for m in cands:
            if m == DRAW or _shows(view, m):
                pending.append((view, m))
            else:
                pending.append(model.until_shown(model.apply(view, m)))
        values: list[list[int]] = [[] for _ in cands]
        k = budget.k0
        while True:
            while len(self.worlds) < k:
                cards = list(unseen)
                self.rng.shuffle(cards)
                self.worlds.append(cards)
                self.memory.append({})
            done = len(values[0])
            for c, (state, move) in enumerate(pending):
                if move is None:  # the bot stops before showing anything: the same everywhere
                    values[c].extend([model.units(state)] * (k - done))
                    continue
                for w in range(done, k):
                    world = model.apply(model.fill(state, self.worlds[w]), move)
                    values[c].append(model.cached_rollout(world, self.memory[w]))
            best, gain, se = 0, 0.0, 0.0
            base = values[0]
            for c in range(1, len(cands)):
                diffs = [a - b for a, b in zip(values[c], base, strict=True)]
                mean = sum(diffs) / k
                if mean > gain:
                    var = sum((x - mean) ** 2 for x in diffs) / (k - 1)
                    best, gain, se = c, mean, math.sqrt(var / k)
            if best and gain > max(budget.z * se, budget.min_gain):
                return best
            if best and gain > budget.min_gain and k < budget.kmax:
                k = min(2 * k, budget.kmax)
                continue
            return 0


def _shows(state: State, move: Move) -> bool:
    """Does ``move`` turn a face-down card?"""
    i, _, n = move
    d = state[1][i]
    return bool(d) and len(state[0][i]) - n == d


def _strong_start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    assert isinstance(rules, Scorpion)
    return _Strong(rules, rng).choose


# --- the clairvoyant bound ---------------------------------------------------------------------


def rollout_line(model: Model, state: State) -> tuple[int, list[Move], list[State]]:
    """The bot's rollout step in a world: each move the candidate (of the bot's) whose bot
    play-out ends highest, ties to the bot's own. Returns its units, its line and the positions
    it passes."""
    memory: dict[object, int] = {}
    line: list[Move] = []
    passed = [state]
    while True:
        cands = model.bot_candidates(state)
        if not cands:
            break
        values = [model.cached_rollout(model.apply(state, m), memory) for m in cands]
        m = cands[values.index(max(values))]
        line.append(m)
        state = model.apply(state, m)
        passed.append(state)
    return model.units(state), line, passed


def clairvoyant_line(model: Model, state: State, budget: int) -> tuple[int, list[Move]]:
    """The best line the clairvoyant finds in a world (module docstring), cut where it reaches
    its most units."""
    units, line, passed = rollout_line(model, state)
    best = (units, line)
    solver = Solver(model)
    # search from positions along the rollout line, the latest first
    stops = passed[::-1][1 : 1 + 8]
    share = budget // (2 * max(1, len(stops)))
    for back, s in enumerate(stops, start=1):
        u, tail, _, _ = solver.solve(s, share)
        if u > best[0]:
            cut = len(passed) - 1 - back
            best = (u, line[:cut] + tail)
    u, found, _, _ = solver.solve(state, budget // 2)
    if u > best[0]:
        best = (u, found)
    return best


def _clairvoyant_start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    if secrets is None:
        raise ValueError("the clairvoyant bound needs the deal's secrets")
    assert isinstance(rules, Scorpion)
    model = Model(rules)
    plan: list[Move] = []
    planned = False

    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        nonlocal planned
        if not planned:
            world = model.world(knowledge.clear_table(table, secrets))
            _, line = clairvoyant_line(model, world, CLAIR_BUDGET)
            plan.extend(reversed(line))
            planned = True
        if not plan:
            return None
        action = model.action(plan.pop())
        if action not in legal:  # the model and the real game disagree: a bug, loudly
            raise AssertionError(f"{CLAIRVOYANT_VERSION}: planned {action} is not legal here")
        return action

    return choose


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _strong_start,
    "perfect-information Monte Carlo over the bot's moves, valued by the bot's play-outs in "
    "16-64 worlds (8-32 on two decks), leaving the bot's choice only for a sure gain; solves "
    "the perfect-information end",
)
CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    _clairvoyant_start,
    "knows every card: the best of the bot's rollout step in the true deal and depth-first "
    f"searches ({CLAIR_BUDGET} positions); a lower bound on the most any player could take",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "scorpion"
