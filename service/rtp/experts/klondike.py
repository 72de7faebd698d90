"""The klondike family's strong player and clairvoyant bound (Vegas draw one, Vegas draw three,
Klondike), searching the fast model of ``klondike_model`` (its docstring has the search).

- STRONG (``klondike-strong/3``): determinized Monte Carlo over a C solver, in
  ``klondike_strong`` (its docstring has it; its per-variant budgets are there too). The
  players before it (``klondike-strong/1``, perfect-information Monte Carlo in pure Python;
  ``klondike-rollout/1``, the reference bot improved by play-outs, for Vegas draw one) took
  less on the same deals and are retired (RTP.md has what each measured).

- CLAIRVOYANT: knows every card (``knowledge.clear_table`` with the deal's secrets). It searches
  the true world depth first (``CLAIRVOYANT_BUDGET`` positions); if that does not win, a guided
  descent (``klondike_model.descend``: from each position, a ``DESCENT_BUDGET``-position search
  of every move's position, taking the best, at most ``DESCENT_TOTAL`` positions in all), and
  plays the better line through the real decider. Both searches are budgeted, so the bound is
  a lower bound on the most any line could take, not the exact maximum.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.rtp import knowledge
from service.rtp.experts import klondike_model as km
from service.rtp.experts import klondike_strong
from service.rtp.players import Player, replaying
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

CLAIRVOYANT_BUDGET = 20_000
DESCENT_BUDGET = 200
DESCENT_TOTAL = 40_000


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


STRONG = klondike_strong.STRONG
CLAIRVOYANT = clairvoyant_player(
    "klondike-clairvoyant/1", CLAIRVOYANT_BUDGET, DESCENT_BUDGET, DESCENT_TOTAL
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "klondike"
