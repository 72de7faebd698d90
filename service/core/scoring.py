"""Seed 003's points for a classic duel game, worked out from the game's events alone.

- A card placed on a foundation for the first time scores 5 x its rank value (A 5, 2 10, ...,
  9 45, and 50 for each 10, J, Q, K); a card moved back and placed again scores nothing more.
- 10 for each face-down tableau card turned (at most 21 x 10 = 210).
- -20 for each recycle that starts a fourth or later pass (the first two are free).
- 1,700 when all 52 are on the foundations, and then 5 for each whole second left on the clock
  at the moment the last card landed (the game's recorded end).

Pure: the same events give the same points, live and in an auditor's replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from events.catalog import (
    AutoCompleted,
    CardMoved,
    CardTurned,
    ClockStarted,
    Collected,
    GameEvent,
    StockRecycled,
)
from service.core.clock import parse_instant
from service.rules.cards import RANK_OF, Card

FIRST_PLACING_CAP = 50  # a 10, J, Q or K scores 50, not 5 x rank
PER_TURN = 10
FREE_RECYCLES = 2
PER_RECYCLE = -20
ALL_UP = 1_700
PER_SECOND_LEFT = 5
CARDS = 52


def first_placing(card: Card) -> int:
    """What a card scores the first time it lands on a foundation."""
    return min(5 * RANK_OF[card], FIRST_PLACING_CAP)


@dataclass(frozen=True, slots=True)
class Points:
    foundations: int  # first placings
    turned: int
    recycles: int  # the penalty, zero or negative
    all_up: int  # 1,700 or 0
    time_bonus: int

    @property
    def total(self) -> int:
        return self.foundations + self.turned + self.recycles + self.all_up + self.time_bonus


def points(events: Iterable[GameEvent]) -> Points:
    """The points a classic duel game's events score (so far, or in all)."""
    placed: set[Card] = set()
    turned = recycles = 0
    deadline = ended_at = None
    on_foundations = 0
    for event in events:
        if isinstance(event, CardMoved):
            to = event.target.startswith("foundation")
            if to:
                placed.update(event.cards)
            on_foundations += (len(event.cards) if to else 0) - (
                len(event.cards) if event.source.startswith("foundation") else 0
            )
        elif isinstance(event, AutoCompleted):
            placed.update(m.card for m in event.moves)
            on_foundations += len(event.moves)
        elif isinstance(event, CardTurned) and event.pile.startswith("tableau"):
            turned += 1
        elif isinstance(event, StockRecycled):
            recycles += 1
        elif isinstance(event, ClockStarted):
            deadline = parse_instant(event.deadline)
        elif isinstance(event, Collected) and event.ended_at is not None:
            ended_at = parse_instant(event.ended_at)
    all_up = on_foundations == CARDS
    bonus = 0
    if all_up and deadline is not None and ended_at is not None and ended_at < deadline:
        bonus = PER_SECOND_LEFT * int((deadline - ended_at).total_seconds())
    return Points(
        foundations=sum(first_placing(c) for c in placed),
        turned=PER_TURN * turned,
        recycles=PER_RECYCLE * max(recycles - FREE_RECYCLES, 0),
        all_up=ALL_UP if all_up else 0,
        time_bonus=bonus,
    )
