"""The three-shuffles family's strong player and clairvoyant bound (Three Shuffles and a Draw),
searching the fast model of ``three_shuffles_model``.

Every card lies face up; only the two redeals' shuffles are secret (keyed by the game's seed).
Between redeals and the Draw the play is forced in effect: a card that goes to its foundation,
or onto the one card of its suit a rank higher, never costs anything (the reference bot's
argument), and such moves never block one another, so both players make them first, in the
bot's order (``three_shuffles_model.closure``). The decisions are what to do when stuck: the
Draw of which buried card to where, a redeal, or stop.

- STRONG: expectimax over those decisions with sampled shuffles. When stuck it scores each
  Draw (the closure after it, then the best continuation) and a redeal (the mean, over
  ``SAMPLES[0]`` sampled shuffles of the gathered cards, of the best continuation after
  dealing them and playing the closure; a second redeal below it samples ``SAMPLES[1]``
  shuffles), and plays the best; with nothing left it stops. A shuffle is a uniformly random
  permutation drawn from its own rng (it cannot know the game's seed); every option at one
  depth is scored on the same sampled shuffles (common random numbers), and positions met
  twice are scored once. Budget per decision: at most Draws x SAMPLES[0] x SAMPLES[1]
  closures (typically a few thousand).
- CLAIRVOYANT: knows the redeals' shuffles (``secrets.shuffled`` for any gathered order, which
  the order of the moves before a redeal changes). Depth first over: redeal after any prefix of
  the closure (the whole closure first, as the strong player does), or the Draw of any buried
  card when stuck; at most ``CLAIRVOYANT_BUDGET`` closures. It never plays moves outside the
  closure's order or the Draw mid-closure, so it is a lower bound on the most any line takes
  (it contains every line the strong player can play, so it is at least the strong player's
  result on every deal when the budget suffices).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.rtp.experts import three_shuffles_model as tm
from service.rtp.players import Choose, Player, replaying
from service.rules.actions import PlayAction, Undo
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

#: Sampled shuffles for the first redeal below a decision, then for the second.
SAMPLES = (16, 8)
CLAIRVOYANT_BUDGET = 20_000

MAX = 48


class _Expectimax:
    """The strong player's scoring of stuck positions, for one decision."""

    def __init__(self, rng: random.Random, samples: Sequence[int]) -> None:
        # keys[depth][k][card]: the k-th sampled shuffle at that depth sorts by these keys.
        self.keys = [[[rng.random() for _ in range(52)] for _ in range(n)] for n in samples]
        self.memo: dict[tuple[tm.State, int], float] = {}

    def value(self, st: tm.State, depth: int) -> float:
        """The best expected units from a stuck position, ``depth`` redeals deep."""
        key = (st, depth)
        found = self.memo.get(key)
        if found is not None:
            return found
        best = float(tm.units(st))
        if best < MAX:
            for p in tm.picks_of(st):
                best = max(best, self.value(tm.closure(tm.apply(st, p)), depth))
                if best == MAX:
                    break
        if best < MAX and st[2] > 1 and any(st[0]) and depth < len(self.keys):
            best = max(best, self.redeal(st, depth))
        self.memo[key] = best
        return best

    def redeal(self, st: tm.State, depth: int) -> float:
        cards = tm.gathered(st)
        total = 0.0
        for keys in self.keys[depth]:
            after = tm.closure(tm.dealt(st, sorted(cards, key=keys.__getitem__)))
            total += self.value(after, depth + 1)
        return total / len(self.keys[depth])


def strong_player(version: str, samples: Sequence[int]) -> Player:
    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            if not [a for a in legal if not isinstance(a, Undo)]:
                return None
            st = tm.state_of(table)
            forced = tm.greedy_move(st)
            if forced is not None:
                return tm.real_action(st, forced)
            search = _Expectimax(rng, samples)
            options: list[tuple[float, int, tm.Move]] = []
            for k, p in enumerate(tm.picks_of(st)):
                options.append((search.value(tm.closure(tm.apply(st, p)), 0), -k, p))
            if st[2] > 1 and any(st[0]):
                options.append((search.redeal(st, 0), 1, (tm.REDEAL,)))
            if not options:
                return None
            score, _k, best = max(options)
            if score <= tm.units(st):
                return None
            return tm.real_action(st, best)

        return choose

    return Player(
        "strong",
        version,
        start,
        "plays the safe closure, and when stuck chooses the Draw or a redeal by expectimax "
        f"over sampled shuffles ({samples[0]} for a redeal, {samples[1]} for the next)",
    )


def plan(world: tm.State, secrets: Secrets, budget: int) -> tuple[int, list[tm.Move]]:
    """The clairvoyant's line: the most units its search finds, and the moves to get them."""
    best_units = -1
    best_line: list[tm.Move] = []
    spent = 0

    def shuffle(label: str, cards: Sequence[str]) -> tuple[str, ...]:
        return secrets.shuffled(label, cards)

    def search(st: tm.State, line: list[tm.Move]) -> None:
        nonlocal best_units, best_line, spent
        spent += 1
        prefix: list[tm.Move] = []
        states = [st]
        while (m := tm.greedy_move(states[-1])) is not None:
            prefix.append(m)
            states.append(tm.apply(states[-1], m))
        stuck = states[-1]
        if tm.units(stuck) > best_units:
            best_units, best_line = tm.units(stuck), line + prefix
        if best_units == MAX:
            return
        order = [len(prefix)]  # redeal when stuck first (the strong player's way)
        picks = tm.picks_of(stuck)
        for k in order:
            if spent < budget and stuck[2] > 1 and any(states[k][0]):
                search(
                    tm.apply(states[k], (tm.REDEAL,), shuffle), [*line, *prefix[:k], (tm.REDEAL,)]
                )
            if best_units == MAX:
                return
        for p in picks:
            if spent >= budget:
                return
            search(tm.apply(stuck, p), [*line, *prefix, p])
            if best_units == MAX:
                return
        for k in range(len(prefix) - 1, -1, -1):
            if spent >= budget or stuck[2] <= 1:
                return
            if any(states[k][0]):
                search(
                    tm.apply(states[k], (tm.REDEAL,), shuffle), [*line, *prefix[:k], (tm.REDEAL,)]
                )
            if best_units == MAX:
                return

    search(world, [])
    return best_units, best_line


def clairvoyant_player(version: str, budget: int) -> Player:
    def line(rules: GameRules, rng: random.Random, table: Table, secrets: Secrets) -> list[tm.Move]:
        return plan(tm.state_of(table), secrets, budget)[1]

    def act(table: Table, move: tm.Move, legal: Sequence[PlayAction]) -> PlayAction:
        return tm.real_action(tm.state_of(table), move)

    return Player(
        "clairvoyant",
        version,
        replaying(version, line, act),
        "knows the redeals' shuffles; depth first over redealing after any prefix of the safe "
        f"closure or the Draw when stuck, at most {budget} closures (a lower bound)",
    )


STRONG = strong_player("three-shuffles-strong/1", SAMPLES)
CLAIRVOYANT = clairvoyant_player("three-shuffles-clairvoyant/1", CLAIRVOYANT_BUDGET)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "three-shuffles"
