"""The table the gunicorn workers share connections out by (service/runtime/balanced_worker.py):
which slot a worker takes, and when a worker declines new connections. The workers over real
HTTP: tests/api/test_gunicorn.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.runtime import balanced_worker as table
from service.runtime.balanced_worker import STALE_AFTER, release, should_decline, take_slot

NOW = 1_000.0


@pytest.fixture(autouse=True)
def empty_table() -> Iterator[None]:
    def clear() -> None:
        for slot in range(table.SLOTS):
            table._PIDS[slot], table._CONNECTIONS[slot] = 0, 0
            table._TAKES[slot], table._SEEN[slot] = 0, 0.0

    clear()
    yield
    clear()


def _worker(pid: int, connections: int, *, takes: bool = True, seen: float = NOW) -> int:
    slot = take_slot(pid, seen)
    assert slot is not None
    table._CONNECTIONS[slot], table._TAKES[slot] = connections, int(takes)
    return slot


def test_each_worker_takes_a_free_slot_of_its_own() -> None:
    assert [take_slot(pid, NOW) for pid in (11, 12, 13)] == [0, 1, 2]
    assert list(table._PIDS[:4]) == [11, 12, 13, 0]


def test_an_exited_workers_slot_is_free_again() -> None:
    _worker(11, 5)
    second = _worker(12, 7)
    release(11)
    assert take_slot(13, NOW) == 0
    assert table._CONNECTIONS[0] == 0
    assert table._PIDS[second] == 12  # the others are left as they were


def test_a_stuck_workers_slot_is_taken_over_once_stale() -> None:
    _worker(11, 5, seen=NOW)
    assert take_slot(12, NOW + STALE_AFTER) == 1  # not stale yet
    assert take_slot(13, NOW + STALE_AFTER + 0.5) == 0  # worker 11's loop stopped turning


def test_when_every_slot_is_live_a_worker_gets_none() -> None:
    for pid in range(1, table.SLOTS + 1):
        take_slot(pid, NOW)
    assert take_slot(table.SLOTS + 1, NOW) is None


def test_a_worker_declines_while_a_sibling_holds_fewer() -> None:
    busy, idle = _worker(11, 3), _worker(12, 2)
    assert should_decline(busy, NOW)
    assert not should_decline(idle, NOW)  # the least loaded always accepts


def test_equal_counts_all_accept() -> None:
    slots = [_worker(pid, 4) for pid in (11, 12, 13)]
    assert not any(should_decline(slot, NOW) for slot in slots)


def test_a_sibling_that_takes_no_connections_does_not_count() -> None:
    busy = _worker(11, 3)
    _worker(12, 0, takes=False)  # full up (worker_connections) or stopping
    assert not should_decline(busy, NOW)


def test_a_stuck_sibling_does_not_count() -> None:
    busy = _worker(11, 3, seen=NOW)
    _worker(12, 0, seen=NOW - STALE_AFTER - 0.5)
    assert not should_decline(busy, NOW)


def test_a_released_sibling_does_not_count() -> None:
    busy = _worker(11, 3)
    _worker(12, 0)
    release(12)
    assert not should_decline(busy, NOW)
