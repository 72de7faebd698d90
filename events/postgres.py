"""The PostgreSQL event store (psycopg 3). It works inside the caller's transaction, so appends
to several streams, ledger postings and projections commit or roll back together.

Ordering the log for tailing readers. Positions come from an identity column, and a position is
taken when a row is inserted, not when its transaction commits: without care, a reader could
see position 11 committed while position 10's transaction is still open, move its checkpoint
past 10, and never see it. We chose the technique the ``eventsourcing`` library uses: every
append first takes one transaction-scoped lock (here a PostgreSQL advisory lock, which needs no
privilege beyond SELECT/INSERT, unlike LOCK TABLE ... EXCLUSIVE), so inserts into the log happen
one transaction at a time and positions become visible in commit order. A position can then only
be missing for good (a rolled-back transaction), never "late", and a reader may simply read
``position > checkpoint``. The price is that appends are serialised; gap detection would allow
parallel appends but needs readers to wait out every gap, and the serialised design is the one
that is easy to prove. ``make bench`` reports what it costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from events.chain import GENESIS, canonical_json
from events.records import ConcurrencyConflict, NewEvent, RecordedEvent
from events.store import check_stream_id

#: The advisory lock key that serialises appends to the log (any constant, used nowhere else).
APPEND_LOCK_KEY = 7_406_512_340

# Take the append lock; held until the transaction ends. Re-entrant within a transaction.
LOCK_SQL = sql.SQL("SELECT pg_advisory_xact_lock({key})").format(key=APPEND_LOCK_KEY)

# Append one event after the stream's head, if and only if the head is at the expected version.
# The hash (the database function event_hash, the encoding events.chain documents) covers the
# database clock's timestamp, so it is computed here. One event is the common case: a command.
APPEND_ONE_SQL = """
WITH start AS (
    SELECT coalesce((SELECT hash FROM events
                      WHERE stream_id = %(stream_id)s AND version = head.version),
                    %(genesis)s) AS prev_hash
      FROM (SELECT coalesce(max(version), 0) AS version
              FROM events WHERE stream_id = %(stream_id)s) AS head
     WHERE head.version = %(expected_version)s
)
INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata,
                    recorded_at, prev_hash, hash)
SELECT %(stream_id)s, %(expected_version)s::int + 1, %(event_id)s::uuid, %(type)s::text,
       %(schema_version)s::int, %(data)s::text::jsonb, %(metadata)s::text::jsonb,
       statement_timestamp(), s.prev_hash,
       event_hash(s.prev_hash, %(stream_id)s::text, %(expected_version)s::int + 1,
                  %(event_id)s::uuid, %(type)s::text, %(schema_version)s::int,
                  statement_timestamp(), %(data)s::text, %(metadata)s::text)
  FROM start s
RETURNING position, stream_id, version, event_id, type, schema_version, data, metadata,
          recorded_at, prev_hash, hash
"""

# The same for several events: each one's hash chains on the one before, hence the recursion.
APPEND_MANY_SQL = """
WITH RECURSIVE
input AS (
    SELECT e.n, e.event_id, e.type, e.schema_version, e.data, e.metadata
      FROM unnest(%(event_ids)s::uuid[], %(types)s::text[], %(schema_versions)s::int[],
                  %(data)s::text[], %(metadata)s::text[])
           WITH ORDINALITY AS e(event_id, type, schema_version, data, metadata, n)
),
start AS (
    SELECT head.version,
           coalesce((SELECT hash FROM events
                      WHERE stream_id = %(stream_id)s AND version = head.version),
                    %(genesis)s) AS hash
      FROM (SELECT coalesce(max(version), 0) AS version
              FROM events WHERE stream_id = %(stream_id)s) AS head
     WHERE head.version = %(expected_version)s
),
chain (n, version, prev_hash, hash) AS (
    SELECT 0::bigint, version, NULL::text, hash FROM start
    UNION ALL
    SELECT i.n, c.version + 1, c.hash,
           event_hash(c.hash, %(stream_id)s, c.version + 1, i.event_id, i.type,
                      i.schema_version, statement_timestamp(), i.data, i.metadata)
      FROM chain c
      JOIN input i ON i.n = c.n + 1
)
INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata,
                    recorded_at, prev_hash, hash)
SELECT %(stream_id)s, c.version, i.event_id, i.type, i.schema_version, i.data::jsonb,
       i.metadata::jsonb, statement_timestamp(), c.prev_hash, c.hash
  FROM chain c
  JOIN input i ON i.n = c.n
 ORDER BY c.n
RETURNING position, stream_id, version, event_id, type, schema_version, data, metadata,
          recorded_at, prev_hash, hash
"""

COLUMNS = (
    "position, stream_id, version, event_id, type, schema_version, data, metadata, "
    "recorded_at, prev_hash, hash"
)

# One stream, a range of versions, in order.
READ_STREAM_SQL = f"""
SELECT {COLUMNS}
  FROM events
 WHERE stream_id = %(stream_id)s
   AND version > %(after_version)s
   AND (%(to_version)s::int IS NULL OR version <= %(to_version)s::int)
 ORDER BY version
"""

# The whole log after a checkpoint, in position order.
READ_ALL_SQL = f"""
SELECT {COLUMNS}
  FROM events
 WHERE position > %(after_position)s
 ORDER BY position
 LIMIT %(limit)s
"""

# A stream's head version (0 for a stream with no events).
STREAM_VERSION_SQL = """
SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %(stream_id)s
"""


def _record(row: Sequence[Any]) -> RecordedEvent:
    return RecordedEvent(*row)


class PostgresEventStore:
    """The event store on one connection; the caller owns the transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> list[RecordedEvent]:
        check_stream_id(stream_id)
        if not events:
            return []
        params: dict[str, Any] = {
            "stream_id": stream_id,
            "expected_version": expected_version,
            "genesis": GENESIS,
        }
        if len(events) == 1:
            (event,) = events
            statement = APPEND_ONE_SQL
            params |= {
                "event_id": event.event_id,
                "type": event.type,
                "schema_version": event.schema_version,
                "data": canonical_json(event.data),
                "metadata": canonical_json(event.metadata),
            }
        else:
            statement = APPEND_MANY_SQL
            params |= {
                "event_ids": [e.event_id for e in events],
                "types": [e.type for e in events],
                "schema_versions": [e.schema_version for e in events],
                "data": [canonical_json(e.data) for e in events],
                "metadata": [canonical_json(e.metadata) for e in events],
            }
        try:
            # The lock and the insert travel together, answered at one Sync: one round trip.
            with self._conn.cursor() as cur:
                with self._conn.pipeline():
                    # Prepared explicitly: psycopg does not auto-prepare inside a pipeline, and
                    # planning the CTE costs as much as running it.
                    cur.execute(LOCK_SQL, prepare=True)
                    cur.execute(statement, params, prepare=True)
                rows = cur.fetchall()
        except psycopg.errors.UniqueViolation as exc:
            # Only possible if a writer bypassed the lock; still a conflict, never a silent drop.
            raise ConcurrencyConflict(stream_id, expected_version) from exc
        if len(rows) != len(events):
            raise ConcurrencyConflict(stream_id, expected_version)
        return [_record(row) for row in rows]

    def read_stream(
        self, stream_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[RecordedEvent]:
        params = {"stream_id": stream_id, "after_version": after_version, "to_version": to_version}
        with self._conn.cursor() as cur:
            cur.execute(READ_STREAM_SQL, params, prepare=True)
            return [_record(row) for row in cur.fetchall()]

    def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        with self._conn.cursor() as cur:
            cur.execute(READ_ALL_SQL, {"after_position": after_position, "limit": limit})
            return [_record(row) for row in cur.fetchall()]

    def stream_version(self, stream_id: str) -> int:
        with self._conn.cursor() as cur:
            cur.execute(STREAM_VERSION_SQL, {"stream_id": stream_id})
            row = cur.fetchone()
            return int(row[0]) if row else 0
