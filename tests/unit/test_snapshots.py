"""The snapshot row's codec (service.core.snapshots): for every registered game, every state a
random game passes through comes back from its snapshot exactly, sealed cards still sealed
numbers."""

from __future__ import annotations

import json

import pytest

from service.core import snapshots
from service.games import GAMES
from tests import random_play


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_every_state_comes_back_from_its_snapshot(variant: str) -> None:
    for seed in range(3):
        for state, _ in random_play.states(variant, seed):
            stored = json.loads(json.dumps(snapshots.encode(state)))  # as the database keeps it
            assert snapshots.decode(stored) == state


def test_a_snapshot_of_another_shape_is_not_read() -> None:
    state, _ = next(random_play.states("vegas-draw1", 0))
    stored = snapshots.encode(state)
    assert snapshots.decode({**stored, "shape": "written-by-other-code"}) is None


def test_a_snapshot_is_due_each_time_a_command_crosses_a_multiple_of_every() -> None:
    every = snapshots.EVERY
    assert snapshots.due(every - 1, every)
    assert snapshots.due(every - 2, every + 3)  # a command of several events
    assert not snapshots.due(every, every + 1)
    assert not snapshots.due(1, every - 1)
