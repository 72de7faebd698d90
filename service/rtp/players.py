"""The three players the RTP lab measures every game with (pure).

- ``bot``: the reference bot (``service/rtp/bots``), a documented greedy heuristic; what an
  ordinary careful player gets back.
- ``strong``: a searching player that sees only what a player sees (``service/rtp/experts``);
  the price is set against it, because a strong player (or a program on the public API) is who
  finds a game first.
- ``clairvoyant``: a solver that knows every card, including the stock's order and the
  redeals' shuffles (``service/rtp/experts``): the most any player could take from a deal.
  It is a bound, not a player: no one can play like it.

A player is started once per deal, ``start(rules, rng, secrets)``, and then asked for each move
with the sealed table and the legal actions, answering one of them or None (stop and collect).
``rng`` is its own random numbers, seeded from the deal's index (never from a card), so a deal
is played the same way every time; ``secrets`` is None for every player but the clairvoyant.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

Kind = Literal["bot", "strong", "clairvoyant"]
#: A search model's move (each family's own).
M = TypeVar("M")
KINDS: tuple[Kind, ...] = ("bot", "strong", "clairvoyant")

#: The player's move: given the sealed table and the legal actions, one of them or None.
Choose = Callable[[Table, Sequence[PlayAction]], PlayAction | None]
#: A new deal: (rules, the player's own random numbers, the deal's secrets or None) -> Choose.
Start = Callable[[GameRules, random.Random, Secrets | None], Choose]


@dataclass(frozen=True, slots=True)
class Player:
    kind: Kind
    version: str  # e.g. "golf-strong/1": a new version whenever its play changes
    start: Start
    #: How it searches, in a sentence (RTP.md has the whole of it).
    method: str
    #: A clairvoyant bound only: True if its search is exhaustive on every deal (the bound is
    #: the true maximum), False if it is the best line a bounded search found (a lower bound).
    exact: bool = False
    #: A searching player's budget per decision, in words ("16 worlds x 3,000 positions a
    #: candidate"): published beside its figure, so a reader knows how far from the limit of
    #: its method it may be. Empty for a player that does not search.
    budget: str = ""
    #: True: it may answer Undo where the rules allow one (the lab offers it then; a player
    #: that never does is not offered it, so its figures cannot change by it).
    takes_undo: bool = False


def stateless(
    choose: Callable[[GameRules, Table, Sequence[PlayAction]], PlayAction | None],
) -> Start:
    """A player that needs neither memory nor random numbers (the reference bots)."""

    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        return lambda table, legal: choose(rules, table, legal)

    return start


def replaying(
    version: str,
    line: Callable[[GameRules, random.Random, Table, Secrets], Sequence[M]],
    act: Callable[[Table, M, Sequence[PlayAction]], PlayAction],
) -> Start:
    """A clairvoyant bound that plans its whole line on its first turn, from the true table
    (``line``: the model's moves, first first), then plays it move by move (``act``: the real
    action for a model move here), and stops at its end. Every action goes through the real
    decider, so the units it claims are units the rules give."""

    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        if secrets is None:
            raise ValueError("the clairvoyant bound needs the deal's secrets")
        todo: list[M] = []
        planned = False

        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            nonlocal planned
            if not planned:
                todo.extend(reversed(line(rules, rng, table, secrets)))
                planned = True
            if not todo:
                return None
            action = act(table, todo.pop(), legal)
            if action not in legal:  # the model and the rules disagree: a bug, loudly
                raise AssertionError(f"{version}: planned {action} is not legal here")
            return action

        return choose

    return start
