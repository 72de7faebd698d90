"""The PostgreSQL event store (psycopg 3). It works inside the caller's transaction, so appends
to several streams, ledger postings and projections commit or roll back together.

Ordering the log for tailing readers. Positions come from an identity column, and a position is
taken when a row is inserted, not when its transaction commits: a reader could see position 11
committed while position 10's transaction is still open, move its checkpoint past 10, and never
see it. Appends do not queue on one lock for this (they did: every append held one advisory lock
until its commit, so positions became visible in order, at the price of one writer at a time,
through the commit's flush). Instead a reader tails only up to the log's horizon (the database
function log_horizon, migration 0014): the last position handed out, once every transaction that
could still commit at or below it has ended; read_all and the checkpoints read that way. A
position can then be missing below the horizon only for good (a rolled-back transaction), never
"late" (tests/integration/test_event_store_pg.py proves it under late commits).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from events.json_text import canonical_json
from events.records import ConcurrencyConflict, NewEvent, RecordedEvent
from events.store import check_stream_id

#: The advisory lock key of the writers that run one at a time (deals, money, duels: see
#: UnitOfWork.lock_for_write); appends themselves no longer take it.
APPEND_LOCK_KEY = 7_406_512_340

# Take the writers' lock; held until the transaction ends. Re-entrant within a transaction.
LOCK_SQL = sql.SQL("SELECT pg_advisory_xact_lock({key})").format(key=APPEND_LOCK_KEY)

# Append events after the stream's head, if and only if the head is at the expected version:
# the function (migration 0014) chains each event's hash on the one before (the database
# function event_hash, the encoding events.chain documents; it covers the database clock's
# timestamp, so it is computed there) and raises unique_violation for any other head, so nothing
# pipelined after it can commit without its events. One statement, one plan. Only what the
# database decided comes back (the rest is what was sent: see PendingAppend). The events go as
# one JSON text (append_params): arrays of JSON texts cost psycopg more to send than the rest.
APPEND_SQL = """
SELECT position, version, recorded_at, prev_hash, hash
  FROM append_events(%(stream_id)s, %(expected_version)s, %(events)s)
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

# Several whole streams at once (an audit's chunk), each in version order.
READ_STREAMS_SQL = f"""
SELECT {COLUMNS}
  FROM events
 WHERE stream_id = ANY(%(stream_ids)s)
 ORDER BY stream_id, version
"""

# The whole log after a checkpoint, in position order, up to the log's horizon (the function
# waits out the transactions that could still commit below it, then reads).
READ_ALL_SQL = f"""
SELECT {COLUMNS} FROM read_log(%(after_position)s, %(limit)s)
"""

# A stream's head version (0 for a stream with no events).
STREAM_VERSION_SQL = """
SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %(stream_id)s
"""


def _record(row: Sequence[Any]) -> RecordedEvent:
    return RecordedEvent(*row)


@contextmanager
def conflicts(stream_id: str, expected_version: int) -> Iterator[None]:
    """A head other than the expected one (the append function's unique_violation, or a racing
    insert of the same version) is a ConcurrencyConflict, never a silent drop."""
    try:
        yield
    except psycopg.errors.UniqueViolation as exc:
        raise ConcurrencyConflict(stream_id, expected_version) from exc


def append_params(
    stream_id: str, events: Sequence[NewEvent], expected_version: int
) -> dict[str, Any]:
    """The parameters of an append_events call (and of the calls that wrap it, which return
    the same columns as APPEND_SQL): the stream, the expected version, and ``events``, one
    JSON array of [event_id, type, schema_version, data, metadata] per event with data and
    metadata as the canonical JSON texts the hash covers. The lists beside it are kept for
    PendingAppend."""
    check_stream_id(stream_id)
    data = [canonical_json(e.data) for e in events]
    metadata = [canonical_json(e.metadata) for e in events]
    rows = [
        [str(e.event_id), e.type, e.schema_version, d, m]
        for e, d, m in zip(events, data, metadata, strict=True)
    ]
    return {
        "stream_id": stream_id,
        "expected_version": expected_version,
        "events": json.dumps(rows),
        "event_ids": [e.event_id for e in events],
        "types": [e.type for e in events],
        "schema_versions": [e.schema_version for e in events],
        "data": data,
        "metadata": metadata,
    }


def send_appending(
    conn: psycopg.Connection[Any], statement: str, params: dict[str, Any]
) -> PendingAppend:
    """Send a statement that appends (append_events, or a function that calls it) and returns
    the recorded rows. Inside the caller's pipeline it is queued, and its answer comes with the
    caller's sync; alone it is executed at once, one round trip (its first use on a connection
    prepares it first, one more), and outside a transaction it commits by itself. Not a
    pipeline of its own: for one statement that costs the client more CPU than it saves (issue
    25: 1.76 against 1.45 CPU-ms a play, four threads playing through the WSGI app). Prepared
    explicitly: psycopg does not auto-prepare in a pipeline."""
    stream_id, expected_version = params["stream_id"], params["expected_version"]
    cur = conn.cursor()
    if params["types"]:
        with conflicts(stream_id, expected_version):
            cur.execute(statement, params, prepare=True)
    return PendingAppend(cur, params)


class PendingAppend:
    """An append sent to the server whose recorded events are read once its answer is in:
    the database's part (position, version, time, hashes) from its rows, the rest from what was
    sent (data and metadata read back from the very JSON text stored, so a record never shares
    a dict with its caller)."""

    def __init__(self, cur: psycopg.Cursor[Any], params: dict[str, Any]) -> None:
        self._cur = cur
        self._params = params
        self._rows: list[tuple[Any, ...]] | None = None
        self._records: list[RecordedEvent] | None = None

    def times(self) -> list[datetime]:
        """When each event was recorded: all a command's answer needs of its own events (the
        hot path), without decoding the records."""
        return [row[2] for row in self._answer()]

    def records(self) -> list[RecordedEvent]:
        if self._records is None:
            p = self._params
            stream_id = p["stream_id"]
            self._records = [
                RecordedEvent(
                    position,
                    stream_id,
                    version,
                    p["event_ids"][i],
                    p["types"][i],
                    p["schema_versions"][i],
                    json.loads(p["data"][i]),  # not orjson: it reads huge integers as floats
                    json.loads(p["metadata"][i]),
                    recorded_at,
                    prev_hash,
                    digest,
                )
                for i, (position, version, recorded_at, prev_hash, digest) in enumerate(
                    self._answer()
                )
            ]
        return self._records

    def _answer(self) -> list[tuple[Any, ...]]:
        """The database's part of each event (position, version, time, hashes), read once."""
        if self._rows is None:
            p = self._params
            stream_id, expected = p["stream_id"], p["expected_version"]
            rows = []
            if p["types"]:
                with self._cur, conflicts(stream_id, expected):
                    rows = self._cur.fetchall()
            if len(rows) != len(p["types"]):  # pragma: no cover - all are appended or none
                raise ConcurrencyConflict(stream_id, expected)
            self._rows = rows
        return self._rows


class PostgresEventStore:
    """The event store on one connection; the caller owns the transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> list[RecordedEvent]:
        return self.send_append(stream_id, events, expected_version).records()

    def send_append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> PendingAppend:
        """Send the append and read its answer later: inside a pipeline, the statements queued
        after it travel with it, and the COMMIT too, in one round trip."""
        return send_appending(
            self._conn, APPEND_SQL, append_params(stream_id, events, expected_version)
        )

    def read_stream(
        self, stream_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[RecordedEvent]:
        params = {"stream_id": stream_id, "after_version": after_version, "to_version": to_version}
        with self._conn.cursor() as cur:
            cur.execute(READ_STREAM_SQL, params, prepare=True)
            return [_record(row) for row in cur.fetchall()]

    def read_streams(self, stream_ids: Sequence[str]) -> dict[str, list[RecordedEvent]]:
        """Whole streams in one read, by stream (a stream with no events is absent)."""
        found: dict[str, list[RecordedEvent]] = {}
        with self._conn.cursor() as cur:
            cur.execute(READ_STREAMS_SQL, {"stream_ids": list(stream_ids)}, prepare=True)
            for row in cur.fetchall():
                found.setdefault(row[1], []).append(_record(row))
        return found

    def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        with self._conn.cursor() as cur:
            cur.execute(READ_ALL_SQL, {"after_position": after_position, "limit": limit})
            return [_record(row) for row in cur.fetchall()]

    def stream_version(self, stream_id: str) -> int:
        with self._conn.cursor() as cur:
            cur.execute(STREAM_VERSION_SQL, {"stream_id": stream_id})
            row = cur.fetchone()
            return int(row[0]) if row else 0
