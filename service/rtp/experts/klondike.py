"""The klondike family's strong player and clairvoyant bound (Vegas draw one, Vegas draw three,
Klondike), searching the fast model of ``klondike_model`` (its docstring has the search).

- STRONG (``klondike-strong/2``): determinized Monte Carlo over a C solver, in
  ``klondike_strong`` (its docstring has it).

- ``strong_player`` (``klondike-strong/1``, the strong player until /2): perfect-information
  Monte Carlo in pure Python. It sees only what a player sees: the table with
  every sealed slot taken by position (``km.state_of`` makes it UNKNOWN) and the composition of
  the unseen cards (``knowledge.unseen``). Each decision:

  1. a face-down top card is turned (it only shows a card), and a card that goes up safely
     (``Solver.settle``: an Ace or Two, or a card both of whose other-colour foundations already
     hold the cards that could be built on it) goes up, without search;
  2. in Klondike (unlimited passes) it first draws through the whole stock once, playing
     nothing but those safe cards: the stock's order is then known (recycling costs nothing),
     so every later decision samples only the face-down cards;
  3. otherwise the candidates are the legal actions the solver's move generator would try
     (uncovering moves, waste and column cards to a foundation or a column, a draw or
     recycle, freeing part of a run, emptying a column for a waiting King, a card back off a
     foundation that a waiting card then goes on), less any that leads back to a position it
     has already decided in (no loops). One candidate is played at once. Else it samples
     ``samples`` worlds (every assignment of the unseen cards to the sealed slots equally
     likely, from its own rng; with few unseen cards, every assignment once), and in each
     world searches every candidate's position depth first (``Solver.solve``: at most
     ``budget`` positions) for the most cards on the foundations any line reaches. It plays
     the candidate with the best total (ties: the generator's order), stopping early when
     after ``TIE_CHECK`` worlds every candidate has scored the same in each; it stops and
     collects only when no candidate is left or every candidate's mean is below the cards
     already up.

  Budget per decision: at most samples x candidates x budget positions (8 x ~3 x 60).

- ROLLOUT (Vegas draw one, one pass; ``rollout_player``): there a sampled world's solver plans
  on a stock order no player can know, and lost to the bot (RTP.md), so this player improves
  on the reference bot itself, one decision at a time (a rollout policy: playing the better of
  the bot's move and another, judged by the bot's own play after each, can only gain in
  expectation). It sees what STRONG sees. Each decision: a turn, and a card ``Solver.settle``
  sends up safely, are played at once; otherwise the candidates are the bot's move (the model's
  mirror of it, ``klondike_model.Bot``) and the moves the solver's generator offers. If there
  is more than the bot's move, it samples worlds in rounds of ``samples`` (at most ``rounds``),
  and in each world plays the bot to the end after every candidate (``Bot.rollout``), scoring
  each candidate by its cards minus the bot's move's cards in the same world. It leaves the
  bot's move only for a candidate whose mean gain is above ``margin`` cards and ``z`` standard
  errors; it stops sampling when one is, or when no candidate could still be (every mean plus
  two standard errors at or below ``margin``).

  Budget per decision: at most rounds x samples x candidates bot play-outs (6 x 16 x ~3).

- CLAIRVOYANT: knows every card (``knowledge.clear_table`` with the deal's secrets). It searches
  the true world depth first (``CLAIRVOYANT_BUDGET`` positions); if that does not win, a guided
  descent (``klondike_model.descend``: from each position, a ``DESCENT_BUDGET``-position search
  of every move's position, taking the best, at most ``DESCENT_TOTAL`` positions in all), and
  plays the better line through the real decider. Both searches are budgeted, so the bound is
  a lower bound on the most any line could take, not the exact maximum.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from service.rtp import knowledge
from service.rtp.experts import klondike_model as km
from service.rtp.experts import klondike_strong
from service.rtp.experts.cards import NUMBER
from service.rtp.players import Choose, Player, replaying
from service.rules.actions import PlayAction, Turn, Undo
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

#: Worlds sampled per decision, and positions searched per candidate in each.
SAMPLES = 8
BUDGET = 60
#: After this many worlds, a decision whose candidates all scored alike in each is settled.
TIE_CHECK = 4
#: The rollout player: worlds per round, rounds at most, and the gate a gain must pass.
ROLLOUT_SAMPLES = 16
ROLLOUT_ROUNDS = 6
ROLLOUT_MARGIN = 0.1
ROLLOUT_Z = 2.5
#: Bot play-outs remembered per deal (a world's position fixes the bot's play from it).
CACHE_LIMIT = 200_000
CLAIRVOYANT_BUDGET = 20_000
DESCENT_BUDGET = 200
DESCENT_TOTAL = 40_000


def strong_player(version: str, samples: int, budget: int) -> Player:
    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        model = km.Model(rules)
        solver = km.Solver(model)
        decided: set[km.State] = set()  # positions it has decided in (sealed slots UNKNOWN)

        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            actions = [a for a in legal if not isinstance(a, Undo)]
            if not actions:
                return None
            st = km.state_of(table)
            forced = _forced(solver, table, st, actions)
            if forced is not None:
                return forced
            legal_moves = {model.move_of(table, a) for a in actions}
            if rules.passes is None and km.UNKNOWN in st[3] and (km.DRAW,) in legal_moves:
                return km.real_action(table, (km.DRAW,))
            decided.add(st)
            cands = [
                seg[0]
                for seg, child in solver.moves(st, stock_moves=False)
                if seg[0] in legal_moves and model.automatic(child) not in decided
            ]
            if not cands:
                return None
            if len(cands) == 1:
                return km.real_action(table, cands[0])
            best = _pimc(rules, model, solver, table, st, cands, rng, samples, budget)
            return None if best is None else km.real_action(table, best)

        return choose

    return Player(
        "strong",
        version,
        start,
        f"perfect-information Monte Carlo on a fast Klondike model: {samples} sampled worlds "
        f"per decision, a depth-first search of at most {budget} positions per candidate and "
        "world (Klondike: the stock is drawn through once first)",
    )


def _forced(
    solver: km.Solver, table: Table, st: km.State, actions: Sequence[PlayAction]
) -> PlayAction | None:
    """What both players play without searching: a turn (it only shows a card), else a card
    that goes up safely (``Solver.settle``)."""
    for a in actions:
        if isinstance(a, Turn):
            return a
    auto: list[km.Move] = []
    solver.settle(st, auto)
    return km.real_action(table, auto[0]) if auto else None


def _pimc(
    rules: GameRules,
    model: km.Model,
    solver: km.Solver,
    table: Table,
    st: km.State,
    cands: list[km.Move],
    rng: random.Random,
    samples: int,
    budget: int,
) -> km.Move | None:
    """The candidate with the best total over sampled worlds, or None (collect) when every
    candidate's mean is below the cards already up."""
    unseen = [NUMBER[c] for c in knowledge.unseen(rules, table)]
    worlds = km.worlds(st, unseen, samples, rng)
    totals = [0] * len(cands)
    scores: list[list[int]] = [[] for _ in cands]
    for w, world in enumerate(worlds):
        for k, m in enumerate(cands):
            u = solver.solve(model.apply(world, m), budget)[0]
            totals[k] += u
            scores[k].append(u)
        if w + 1 == TIE_CHECK and all(s == scores[0] for s in scores):
            break
    best = max(range(len(cands)), key=lambda k: (totals[k], -k))
    n = len(scores[best])
    if totals[best] < km.units(st) * n:
        return None
    return cands[best]


def plan(
    rules: GameRules, world: km.State, budget: int, descent_budget: int, descent_total: int
) -> tuple[int, list[km.Move]]:
    """The clairvoyant's line in a world: the better of a depth-first search and a guided
    descent (tried only when the search does not win)."""
    solver = km.Solver(km.Model(rules))
    best, line, _ex, _n = solver.solve(world, budget)
    if best < rules.max_units:
        other, other_line = km.descend(solver, world, descent_budget, descent_total)
        if other > best:
            best, line = other, other_line
    return best, line


def clairvoyant_player(
    version: str, budget: int, descent_budget: int, descent_total: int
) -> Player:
    def line(rules: GameRules, rng: random.Random, table: Table, secrets: Secrets) -> list[km.Move]:
        world = km.state_of(knowledge.clear_table(table, secrets))
        return plan(rules, world, budget, descent_budget, descent_total)[1]

    def act(table: Table, move: km.Move, legal: Sequence[PlayAction]) -> PlayAction:
        return km.real_action(table, move)

    return Player(
        "clairvoyant",
        version,
        replaying(version, line, act),
        f"knows every card; a depth-first search of at most {budget} positions on a fast "
        f"Klondike model, then a guided descent ({descent_budget} positions per move, "
        f"{descent_total} in all) if that does not win: a lower bound on the most any line takes",
    )


def rollout_player(version: str, samples: int, rounds: int, margin: float, z: float) -> Player:
    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        model = km.Model(rules)
        solver = km.Solver(model)
        bot = km.Bot(model, rules.passes is None)
        cache: dict[object, int] = {}  # a world's position -> the bot's cards from there

        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            actions = [a for a in legal if not isinstance(a, Undo)]
            if not actions:
                return None
            st = km.state_of(table)
            forced = _forced(solver, table, st, actions)
            if forced is not None:
                return forced
            piles = km.piles_of(table)
            mine = bot.move(st, piles)
            legal_moves = {model.move_of(table, a) for a in actions}
            cands: list[km.Move] = []
            for seg, _child in solver.moves(st, stock_moves=False):
                if seg[0] in legal_moves and seg[0] != mine and seg[0] not in cands:
                    cands.append(seg[0])
            if cands:
                if len(cache) > CACHE_LIMIT:
                    cache.clear()
                better = _improve(
                    rules, model, bot, table, st, piles, mine, cands, rng, cache,
                    samples, rounds, margin, z,
                )  # fmt: skip
                if better is not None:
                    mine = better
            return None if mine is None else km.real_action(table, mine)

        return choose

    return Player(
        "strong",
        version,
        start,
        f"the reference bot improved by play-outs: each decision's other candidate moves are "
        f"scored against the bot's own by the bot's play to the end in sampled worlds (rounds "
        f"of {samples}, at most {rounds}), and one replaces the bot's move only when its mean "
        f"gain is above {margin} cards and {z} standard errors",
    )


def _improve(
    rules: GameRules,
    model: km.Model,
    bot: km.Bot,
    table: Table,
    st: km.State,
    piles: km.Piles,
    mine: km.Move | None,
    cands: list[km.Move],
    rng: random.Random,
    cache: dict[object, int],
    samples: int,
    rounds: int,
    margin: float,
    z: float,
) -> km.Move | None:
    """The candidate that beats the bot's move ``mine`` by the gate, or None to keep it."""
    unseen = [NUMBER[c] for c in knowledge.unseen(rules, table)]
    gains: list[list[int]] = [[] for _ in cands]
    for _ in range(rounds):
        for _ in range(samples):
            rng.shuffle(unseen)
            world = km.fill(st, unseen)
            base = (
                km.units(st)
                if mine is None
                else bot.rollout(model.step(world, mine), km.piles_after(piles, world, mine), cache)
            )
            for k, m in enumerate(cands):
                after = bot.rollout(model.step(world, m), km.piles_after(piles, world, m), cache)
                gains[k].append(after - base)
        best: km.Move | None = None
        best_mean = margin
        undecided = False
        for k, g in enumerate(gains):
            mean = sum(g) / len(g)
            se = math.sqrt(sum((x - mean) ** 2 for x in g) / (len(g) - 1) / len(g))
            if mean > best_mean and mean > z * se:
                best, best_mean = cands[k], mean
            elif mean + 2 * se > margin:
                undecided = True
        if best is not None or not undecided:
            return best
    return None


STRONG = klondike_strong.STRONG
#: The strong player before /2: Klondike's still (roster.STRONG_FOR_GAME), where it takes more
#: than /2 so far.
STRONG_V1 = strong_player("klondike-strong/1", SAMPLES, BUDGET)
ROLLOUT = rollout_player(
    "klondike-rollout/1", ROLLOUT_SAMPLES, ROLLOUT_ROUNDS, ROLLOUT_MARGIN, ROLLOUT_Z
)
CLAIRVOYANT = clairvoyant_player(
    "klondike-clairvoyant/1", CLAIRVOYANT_BUDGET, DESCENT_BUDGET, DESCENT_TOTAL
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "klondike"
