"""Where a streaming replica stands against its primary, in write-ahead-log positions: what lets
a staff read go to the replica without reading anything older than the primary would have
answered (service/services/staff_reads.py)."""

from __future__ import annotations

from typing import Any

import psycopg

# The primary's position now: everything committed before this read is at or before it. The
# insert position, not the flushed one: a commit's answer waits for its flush, so anything a
# caller has been told is committed lies before either.
PRIMARY_POSITION_SQL = "SELECT pg_current_wal_insert_lsn()::text"

# Whether this server is a replica that has replayed the log up to a position: a replica's
# snapshot then holds every transaction the primary had committed by that position. False on
# a primary (pg_last_wal_replay_lsn() is NULL there) and on a replica still behind.
REPLAYED_SQL = """
SELECT pg_is_in_recovery() AND coalesce(pg_last_wal_replay_lsn() >= %(position)s::pg_lsn, false)
"""


class ReplicationStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def primary_position(self) -> str:
        """The log position of the server this connection reaches (a primary)."""
        row = self._conn.execute(PRIMARY_POSITION_SQL).fetchone()
        assert row is not None
        return str(row[0])

    def replayed(self, position: str) -> bool:
        """Whether this connection reaches a replica that has replayed up to ``position``."""
        row = self._conn.execute(REPLAYED_SQL, {"position": position}).fetchone()
        return bool(row and row[0])
