"""Search over full-information worlds, through the real rules (pure).

A *world* is a table whose every slot is a known card, with secrets that reveal a code as
itself and shuffle redeals in a fixed way (``knowledge.sample_world`` makes one from what a
player sees; the clairvoyant's world is the deal itself). In a world nothing is left to
chance, so the most units reachable from a position is a plain maximum over lines of play: a
player may collect at any moment, so a line is worth the most units it passes through.

:func:`best_line` finds it by depth-first search with a transposition set (a position reached
twice is searched once) and a node budget: exhaustive when the budget suffices (then the
answer is exact), else the best line found within it (a lower bound, and labelled so).
Families with a faster model of their own search with it instead; this one is the reference
every game has, because it is the rules themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from service.core import game_decider as g
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Reveal
from service.rules.table import Table

#: Orders a position's actions, most promising first (a search finds good lines sooner).
Order = Callable[[GameRules, Table, list[PlayAction]], list[PlayAction]]


def step(rules: GameRules, table: Table, action: PlayAction, secrets: Reveal) -> Table:
    """The table after ``action`` and whatever the rules then play by themselves."""
    return g.apply_all(table, g.decide_on_table(rules, table, action, secrets))


def key(table: Table) -> tuple[object, ...]:
    """A position, for the transposition set."""
    return (table.piles, table.passes_left, table.fan, table.picks_left)


@dataclass(frozen=True, slots=True)
class Found:
    units: int  # the most units the line reaches
    line: tuple[PlayAction, ...]  # the actions up to the point it reaches them
    exhaustive: bool  # True: no line does better (the search ran out of nothing)
    nodes: int


def units_first(rules: GameRules, table: Table, actions: list[PlayAction]) -> list[PlayAction]:
    """The default order: the rules' own (which the reference bots' tie-breaks follow)."""
    return actions


def best_line(
    rules: GameRules,
    table: Table,
    secrets: Reveal,
    budget: int,
    order: Order = units_first,
) -> Found:
    """The line of play reaching the most units from ``table`` in this world, searching at most
    ``budget`` positions."""
    seen: set[tuple[object, ...]] = set()
    nodes = 0
    best_units = rules.units(table)
    best: tuple[PlayAction, ...] = ()
    exhausted = True
    path: list[PlayAction] = []

    def visit(t: Table) -> None:
        nonlocal nodes, best_units, best, exhausted
        k = key(t)
        if k in seen:
            return
        seen.add(k)
        nodes += 1
        units = rules.units(t)
        if units > best_units:
            best_units, best = units, tuple(path)
        if best_units == rules.max_units:
            return
        actions = rules.legal_actions(t)  # undo is the engine's, never the rules'
        for action in order(rules, t, actions):
            if nodes >= budget:
                exhausted = False
                return
            path.append(action)
            visit(step(rules, t, action, secrets))
            path.pop()
            if best_units == rules.max_units:
                return

    visit(table)
    complete = exhausted or best_units == rules.max_units
    return Found(best_units, best, complete, nodes)


def mean_best(
    rules: GameRules,
    worlds: Sequence[tuple[Table, Reveal]],
    action: PlayAction,
    budget: int,
    order: Order = units_first,
) -> float:
    """The mean, over sampled worlds, of the most units reachable after ``action``."""
    total = 0
    for table, secrets in worlds:
        total += best_line(rules, step(rules, table, action, secrets), secrets, budget, order).units
    return total / len(worlds)
