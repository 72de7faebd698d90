"""Where staff's read-only work reads: a streaming replica of the database when one is
configured and has caught up, else the primary, with the same answer either way.

A read first asks the primary for its log position (one short statement), then waits, at most
REPLICA_MAX_WAIT_MS, for the replica to have replayed up to it: the replica then holds every
transaction the primary had committed when the read began, so nothing an auditor or finance
reads there is older than what the primary would have answered (a replay of a game that ended a
moment ago, today's totals, the newest checkpoint). A replica that is further behind, down, or
not a replica at all is passed over for the primary, and the read goes on there."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import psycopg
from psycopg_pool import PoolTimeout

from service.services.unit_of_work import UnitOfWork
from service.storage.replication import ReplicationStore

log = logging.getLogger(__name__)

#: How often a read waiting for the replica asks again.
POLL_S = 0.005


class StaffReads:
    def __init__(
        self,
        primary: Callable[[], UnitOfWork],
        replica: Callable[[], UnitOfWork] | None = None,
        *,
        max_wait_s: float = 0.5,
    ) -> None:
        self._primary = primary
        self._replica = replica
        self._max_wait_s = max_wait_s

    @contextmanager
    def __call__(self) -> Iterator[UnitOfWork]:
        """A unit of work for reads only: on the replica if it has caught up with the primary
        as of now, else on the primary."""
        replica = self._caught_up_replica()
        if replica is None:
            with self._primary() as uow:
                yield uow
            return
        with ExitStack() as entered:
            entered.push(replica)  # entered already: only its exit is left to run
            yield replica

    def _caught_up_replica(self) -> UnitOfWork | None:
        """An entered unit of work on the replica, once it has replayed what the primary had
        committed by now; None (nothing held) if there is no replica or it is not there in
        time."""
        if self._replica is None:
            return None
        with self._primary() as uow:
            position = ReplicationStore(uow.conn).primary_position()
        uow = self._replica()
        try:
            uow.__enter__()
        except (psycopg.OperationalError, PoolTimeout) as error:
            log.warning("the replica is unreachable; reading the primary: %s", error)
            return None
        # Bound here, not on every unit of work: only staff's reads ask where a server stands.
        replication = ReplicationStore(uow.conn)
        try:
            deadline = time.monotonic() + self._max_wait_s
            while not replication.replayed(position):
                if time.monotonic() >= deadline:
                    log.info("the replica is behind %s; reading the primary", position)
                    uow.__exit__(None, None, None)
                    return None
                time.sleep(POLL_S)
        except psycopg.Error as error:
            uow.__exit__(type(error), error, error.__traceback__)
            log.warning("the replica failed; reading the primary: %s", error)
            return None
        log.debug("reading the replica (replayed past %s)", position)
        return uow
