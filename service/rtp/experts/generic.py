"""A strong player and a clairvoyant bound for any game, searching through the real rules.

- :func:`pimc_player`: perfect-information Monte Carlo. At each decision it samples ``samples``
  worlds consistent with what the player sees (``knowledge.sample_world``), finds in each the
  most units reachable after each legal action (``search.best_line``, ``budget`` positions per
  action and world), and plays the action with the best mean; ties go to the rules' order.
  With one legal action it plays it without searching.
- :func:`solver_bound`: knows the deal; searches the true world once (``budget`` positions),
  then plays the line it found through the real decider. Exhaustive searches are exact;
  others are a lower bound on the most any player could take, and labelled so.

Both are slow (every position is a real decision and fold, 30-300 us); a family with a fast
model of its own replaces them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.rtp import knowledge, search
from service.rtp.players import Choose, Player
from service.rules.actions import PlayAction, Undo
from service.rules.game import GameRules, Secrets
from service.rules.table import Table


def pimc_player(
    version: str, samples: int, budget: int, order: search.Order = search.units_first
) -> Player:
    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            actions = [a for a in legal if not isinstance(a, Undo)]
            if len(actions) <= 1:
                return actions[0] if actions else None
            worlds = [knowledge.sample_world(rules, table, rng) for _ in range(samples)]
            scored = [
                (search.mean_best(rules, worlds, a, budget, order), -i)
                for i, a in enumerate(actions)
            ]
            return actions[-max(scored)[1]]

        return choose

    return Player(
        "strong",
        version,
        start,
        f"perfect-information Monte Carlo through the real rules: {samples} sampled worlds, "
        f"{budget} positions searched per action and world",
    )


def solver_bound(version: str, budget: int, order: search.Order = search.units_first) -> Player:
    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        if secrets is None:
            raise ValueError("the clairvoyant bound needs the deal's secrets")
        plan: list[PlayAction] = []
        planned = False

        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            nonlocal planned
            if not planned:
                world = knowledge.clear_table(table, secrets)
                plan.extend(reversed(search.best_line(rules, world, secrets, budget, order).line))
                planned = True
            if not plan:
                return None
            action = plan.pop()
            if action not in legal:  # the world and the real game disagree: a bug, loudly
                raise AssertionError(f"{version}: planned {action} is not legal here")
            return action

        return choose

    return Player(
        "clairvoyant",
        version,
        start,
        f"knows every card; depth-first search through the real rules with a transposition "
        f"set, at most {budget} positions (exact if exhausted, else a lower bound)",
    )
