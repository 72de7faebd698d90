"""The klondike family's strong player and clairvoyant bound (Vegas draw one, Vegas draw three,
Klondike), searching the fast model of ``klondike_model`` (its docstring has the search).

- STRONG: perfect-information Monte Carlo. It sees only what a player sees: the table with
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

- CLAIRVOYANT: knows every card (``knowledge.clear_table`` with the deal's secrets). It searches
  the true world depth first (``CLAIRVOYANT_BUDGET`` positions); if that does not win, a guided
  descent (``klondike_model.descend``: from each position, a ``DESCENT_BUDGET``-position search
  of every move's position, taking the best, at most ``DESCENT_TOTAL`` positions in all), and
  plays the better line through the real decider. Both searches are budgeted, so the bound is
  a lower bound on the most any line could take, not the exact maximum.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

from service.rtp import knowledge
from service.rtp.experts import klondike_model as km
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
            for a in actions:
                if isinstance(a, Turn):
                    return a  # turning only shows a card
            st = km.state_of(table)
            auto: list[km.Move] = []
            solver.settle(st, auto)
            if auto:
                return km.real_action(table, auto[0])
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
    if math.factorial(len(unseen)) <= samples:
        worlds = [km.fill(st, p) for p in itertools.permutations(unseen)]
    else:
        worlds = []
        for _ in range(samples):
            rng.shuffle(unseen)
            worlds.append(km.fill(st, unseen))
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


STRONG = strong_player("klondike-strong/1", SAMPLES, BUDGET)
CLAIRVOYANT = clairvoyant_player(
    "klondike-clairvoyant/1", CLAIRVOYANT_BUDGET, DESCENT_BUDGET, DESCENT_TOTAL
)
