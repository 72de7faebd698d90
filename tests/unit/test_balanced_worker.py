"""The table the gunicorn workers share connections out by (service/runtime/balanced_worker.py):
which slot a worker takes, and when a worker declines new connections. The workers over real
HTTP: tests/api/test_gunicorn.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from service.runtime import balanced_worker as table
from service.runtime.balanced_worker import STALE_AFTER, release, should_decline, take_slot

NOW = 1_000.0
LIVE = os.getpid()  # a process that exists; the table holds it as often as a test likes


def _gone() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


@pytest.fixture(autouse=True)
def empty_table() -> Iterator[None]:
    def clear() -> None:
        for slot in range(table.SLOTS):
            table._PIDS[slot], table._CONNECTIONS[slot] = 0, 0
            table._TAKES[slot], table._SEEN[slot] = 0, 0.0
        table._USED.value = 0

    clear()
    yield
    clear()


def _worker(connections: int, *, takes: bool = True, seen: float = NOW, pid: int = LIVE) -> int:
    slot = take_slot(pid, seen)
    assert slot is not None
    table._CONNECTIONS[slot], table._TAKES[slot] = connections, int(takes)
    return slot


def test_each_worker_takes_a_free_slot_of_its_own() -> None:
    assert [take_slot(LIVE, NOW) for _ in range(3)] == [0, 1, 2]
    assert list(table._PIDS[:4]) == [LIVE, LIVE, LIVE, 0]


def test_an_exited_workers_slot_is_free_again() -> None:
    kept = _worker(7)
    gone = _gone()
    exited = _worker(5, pid=gone)
    release(gone)
    assert (table._PIDS[exited], table._TAKES[exited]) == (0, 0)
    assert (table._PIDS[kept], table._CONNECTIONS[kept]) == (LIVE, 7)  # the others as they were
    assert take_slot(LIVE, NOW) == exited
    assert table._CONNECTIONS[exited] == 0


def test_the_slot_of_a_process_that_is_gone_is_taken_over() -> None:
    _worker(5, pid=_gone())  # its exit not reported (no child_exit hook)
    assert take_slot(LIVE, NOW) == 0


def test_a_slow_booting_workers_slot_is_not_taken_over() -> None:
    _worker(0, takes=False, seen=NOW - 60)  # still loading the app, its loop not turning yet
    assert take_slot(LIVE, NOW) == 1


def test_when_every_slot_is_live_a_worker_gets_none() -> None:
    for _ in range(table.SLOTS):
        take_slot(LIVE, NOW)
    assert take_slot(LIVE, NOW) is None


def test_a_worker_declines_while_a_sibling_holds_fewer() -> None:
    busy, idle = _worker(3), _worker(2)
    assert should_decline(busy, NOW)
    assert not should_decline(idle, NOW)  # the least loaded always accepts


def test_equal_counts_all_accept() -> None:
    slots = [_worker(4) for _ in range(3)]
    assert not any(should_decline(slot, NOW) for slot in slots)


def test_a_sibling_that_takes_no_connections_does_not_count() -> None:
    busy = _worker(3)
    _worker(0, takes=False)  # booting, full up (worker_connections) or stopping
    assert not should_decline(busy, NOW)


def test_a_stuck_sibling_does_not_count() -> None:
    busy = _worker(3, seen=NOW)
    _worker(0, seen=NOW - STALE_AFTER - 0.5)
    assert not should_decline(busy, NOW)


def test_a_sibling_in_any_slot_taken_counts() -> None:
    pids = [_gone() for _ in range(2)]
    for _ in range(40):
        _worker(6)
    busy = _worker(6)
    assert busy == 40
    assert not should_decline(busy, NOW)
    assert _worker(2, pid=pids[0]) == 41
    assert should_decline(busy, NOW)  # the last slot taken is seen
    release(pids[0])
    assert not should_decline(busy, NOW)
    table._PIDS[10] = pids[1]
    release(pids[1])
    assert _worker(1) == 10  # a freed slot is taken again
    assert should_decline(busy, NOW)


def test_a_released_sibling_does_not_count() -> None:
    busy = _worker(3)
    gone = _gone()
    _worker(0, pid=gone)
    release(gone)
    assert not should_decline(busy, NOW)
