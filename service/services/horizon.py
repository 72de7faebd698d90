"""Stalls named (issue 36): a transaction held open holds the log's horizon back, and every
tailing reader of the log (the finance projector, read_log) waits on it. Beat's watch records one
held longer than ``after`` as a significant event ('log-stalled'), once per transaction, and logs
it: how long it has been held (from its session's start when this login may see it, else from
when this process first saw it), and which session it is when that is known."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta

from service.services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

#: Who records the events.
WATCH = "horizon-watch"


class HorizonWatch:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        after: timedelta,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._uow = unit_of_work
        self.after = after
        self._clock = clock
        self._first_seen: dict[str, float] = {}  # the oldest transaction, and when first seen
        self._named: set[str] = set()

    def check(self) -> str | None:
        """The id of a transaction named now as stalling the log, if one is."""
        with self._uow() as uow:  # rolled back: it writes nothing
            oldest = uow.horizon.oldest()
        if oldest is None:
            self._first_seen.clear()
            return None
        now = self._clock()
        first = self._first_seen.get(oldest.xid, now)
        self._first_seen = {oldest.xid: first}  # only the oldest matters
        held = now - first
        if oldest.started is not None:
            held = max(held, (oldest.now - oldest.started).total_seconds())
        if held < self.after.total_seconds() or oldest.xid in self._named:
            return None
        details: dict[str, object] = {"xid": oldest.xid, "held_seconds": round(held, 1)}
        if oldest.pid is not None:
            details |= {"pid": oldest.pid, "application_name": oldest.application_name}
        with self._uow() as uow:
            uow.significant.record("log-stalled", WATCH, details)
            uow.commit()
        self._named.add(oldest.xid)
        log.warning("the log's horizon is held back by transaction %s: %s", oldest.xid, details)
        return oldest.xid
