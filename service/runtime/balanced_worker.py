"""gunicorn's threaded worker, sharing kept-alive connections out evenly among the workers
(issue 25).

Why. gthread's workers all poll the one listening socket and whichever wakes first accepts, so
long-lived connections (a load balancer's, a front-end's) land on them by chance: wrk's 32
landed 18/5/5/4 and 12/9/8/3 on four workers, 22/10 on two. Each worker gets about the same
CPU, so the crowded one's clients wait longest and set the tail: the plays' p99 at 32
connections fell from 83-111 ms to 63-76 ms with four workers once the connections were
shared out evenly, and from 44-52 ms to 37-44 ms with two (interleaved runs of `make bench
SUITES=http`'s /healthz and plays, November 2026).

How. The master makes a small table in shared memory before it forks the workers (this module
is imported with the worker class, in the master): a slot a worker, holding its pid, its open
connections, whether it takes connections at all (it is running and under
``worker_connections``) and when its loop last turned. On every turn of its loop, and at least
every ``RECHECK`` seconds, a worker looks at its siblings: it stops polling the listener while
a sibling that takes connections holds fewer than it does, and polls again once none does. The
least loaded worker never declines, so a new connection waits at most ``RECHECK`` for one that
declined earlier to look again, and a worker that appears (a killed one's successor) is seen
within ``RECHECK``. A slot is freed when its worker exits
(the master's ``child_exit`` hook calls ``release``; a slot whose process is gone is taken over
all the same); a worker whose loop has not turned for ``STALE_AFTER`` seconds (stuck) no
longer counts, and one still booting (loading the app) does not count yet. Nothing is
capped: ``worker_connections`` limits a worker as before. The count is gthread's own
``nr_conns``, mirrored into the slot whenever it changes.
"""

from __future__ import annotations

import multiprocessing
import os
import time

from gunicorn.workers.gthread import ThreadWorker

#: At most this many workers share connections out; any more run as plain gthread workers.
SLOTS = 256
#: A worker whose loop has not turned for this long is stuck: its siblings stop waiting for it.
STALE_AFTER = 2.0
#: How often a worker looks again at its siblings, busy or not (so the longest a new
#: connection can wait for a worker that declined; 50 wake-ups a second cost next to nothing).
RECHECK = 0.02

# Made in the master, inherited by every worker it forks (shared memory, not copies). The lock
# guards taking a slot; a slot's other fields are written by its own worker alone.
_PIDS = multiprocessing.RawArray("q", SLOTS)
_CONNECTIONS = multiprocessing.RawArray("i", SLOTS)
_TAKES = multiprocessing.RawArray("b", SLOTS)
_SEEN = multiprocessing.RawArray("d", SLOTS)
# Slots are taken lowest first, so every slot ever taken lies below this: the scans stop there
# (a few slots, not SLOTS, on each accept and each turn of a declining worker's loop).
_USED = multiprocessing.RawValue("i", 0)
_TAKING = multiprocessing.Lock()


def take_slot(pid: int, now: float) -> int | None:
    """A free slot, now ``pid``'s (None when every slot is a live process's). A slot is free
    when released, or when its process is gone (not by staleness: a worker may take longer
    than STALE_AFTER to load the app before its loop first turns)."""
    with _TAKING:
        for slot in range(SLOTS):
            if _PIDS[slot] == 0 or not _exists(_PIDS[slot]):
                _CONNECTIONS[slot], _TAKES[slot], _SEEN[slot] = 0, 0, now
                _PIDS[slot] = pid
                _USED.value = max(_USED.value, slot + 1)
                return slot
    return None


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process under that pid now
    return True


def release(pid: int) -> None:
    """Free the slot of a worker that has exited (run in the master)."""
    with _TAKING:
        for slot in range(_USED.value):
            if _PIDS[slot] == pid:
                _PIDS[slot], _TAKES[slot] = 0, 0


def should_decline(slot: int, now: float) -> bool:
    """Whether a live sibling that takes connections holds fewer than ``slot``."""
    mine = _CONNECTIONS[slot]
    for other in range(_USED.value):
        if (
            other != slot
            and _PIDS[other] != 0
            and _TAKES[other]
            and _CONNECTIONS[other] < mine
            and now - _SEEN[other] <= STALE_AFTER
        ):
            return True
    return False


class BalancedThreadWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn has no types
    """gthread, accepting only while no sibling that takes connections holds fewer."""

    _slot: int | None = None
    _connections = 0

    @property
    def nr_conns(self) -> int:
        return self._connections

    @nr_conns.setter
    def nr_conns(self, value: int) -> None:
        self._connections = value
        if self._slot is not None:
            _CONNECTIONS[self._slot] = value

    def init_process(self) -> None:
        self._slot = take_slot(os.getpid(), time.monotonic())
        self.nr_conns = self._connections
        super().init_process()  # runs the worker's loop

    def set_accept_enabled(self, enabled: bool) -> None:
        # gthread's loop asks for polling on every turn while it is running, under
        # worker_connections and not polling: that turn is where a worker that declined looks
        # at its siblings again. It asks for none when it is full or stopping.
        if self._slot is not None:
            _TAKES[self._slot] = 1 if enabled else 0
        super().set_accept_enabled(enabled and not self._decline())

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # A turn of the loop: after an accept, a close, a request done, or RECHECK idle.
        if self._slot is not None:
            now = _SEEN[self._slot] = time.monotonic()
            if self._accepting and should_decline(self._slot, now):
                super().set_accept_enabled(False)
        super().wait_for_and_dispatch_events(min(timeout, RECHECK))

    def _decline(self) -> bool:
        return self._slot is not None and should_decline(self._slot, time.monotonic())
