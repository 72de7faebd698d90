"""The log's horizon as the database sees it: the oldest transaction still running that holds a
transaction id, cluster-wide. log_horizon() (migrations/0014) waits for every such transaction
older than its own, so one held open stalls every tailing reader of the log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

# First an id of the reader's own, newer than every running one (as log_horizon takes one: a
# snapshot's list of running ids leaves out those above the newest finished one, so a lone
# transaction holding the newest id would not show).
OWN_ID_SQL = "SELECT pg_current_xact_id()"

# Then, in the same transaction, the oldest running transaction that holds an id, if it is not
# the reader's own (a snapshot's xmin), with its session's details when this login may see them
# (pg_stat_activity shows another login's sessions without them), and the database's time.
OLDEST_SQL = """
WITH s AS (SELECT pg_current_snapshot() AS snap)
SELECT pg_snapshot_xmin(s.snap)::text, a.pid, a.application_name, a.xact_start,
       statement_timestamp()
  FROM s
  LEFT JOIN pg_stat_activity a ON a.backend_xid = pg_snapshot_xmin(s.snap)::text::xid
 WHERE pg_snapshot_xmin(s.snap) < pg_current_xact_id()
 LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class Oldest:
    xid: str
    pid: int | None  # None: another login's session, whose details are hidden
    application_name: str | None
    started: datetime | None
    now: datetime


class HorizonReads:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def oldest(self) -> Oldest | None:
        """In the caller's transaction, which takes an id (and writes nothing)."""
        with self._conn.cursor() as cur:
            cur.execute(OWN_ID_SQL)
            cur.execute(OLDEST_SQL)
            row = cur.fetchone()
        return Oldest(*row) if row else None
