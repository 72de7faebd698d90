"""Signed checkpoints of the event log (migrations/0011), and the integrity questions the
whole-history audit asks of the tables around the log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg

from events.anchor import Head, LogEntry
from service.core.log_verification import (
    MisdatedReconciliation,
    MissingCause,
    OrphanRow,
    OutOfPlace,
    StoredCheckpoint,
)

# The newest checkpoint, which the next one extends.
LATEST_SQL = """
SELECT seq, position, message, signature, key_id, requested_by, created_at
  FROM log_checkpoints ORDER BY seq DESC LIMIT 1
"""

# One checkpoint by its number.
ONE_SQL = """
SELECT seq, position, message, signature, key_id, requested_by, created_at
  FROM log_checkpoints WHERE seq = %(seq)s
"""

# Newest first, a page before a cursor (a seq).
PAGE_SQL = """
SELECT seq, position, message, signature, key_id, requested_by, created_at
  FROM log_checkpoints
 WHERE (%(before)s::int IS NULL OR seq < %(before)s::int)
 ORDER BY seq DESC
 LIMIT %(limit)s
"""

# Every checkpoint, oldest first: what the audit verifies the log against.
ALL_SQL = """
SELECT seq, position, message, signature, key_id, requested_by, created_at
  FROM log_checkpoints ORDER BY seq
"""

# The log's horizon (migration 0014): every position up to it that will ever be visible is
# visible once this returns. A statement of its own, so the next one's snapshot comes after it.
HORIZON_SQL = "SELECT log_horizon()"

# The log's last position at or below the horizon, and the database clock, read together.
LOG_HEAD_SQL = """
SELECT coalesce(max(position), 0), statement_timestamp() FROM events WHERE position <= %(upto)s
"""

# The log's last position as the reading transaction's snapshot sees it (the audit's log unit,
# read in one REPEATABLE READ snapshot, where log_horizon() cannot run: it waits for a snapshot
# of its own to move on, which never happens). Nothing it leaves out can fall inside a checkpoint
# the snapshot holds: each was signed up to a horizon, after every event at or below it ended.
SNAPSHOT_HEAD_SQL = "SELECT coalesce(max(position), 0) FROM events"

# A slice of the log as the running hash sees it, in position order (read a page at a time).
ENTRIES_SQL = """
SELECT position, stream_id, version, hash
  FROM events
 WHERE position > %(after)s AND position <= %(upto)s
 ORDER BY position
 LIMIT %(limit)s
"""

# Record a checkpoint and the heads of the streams it saw change (migrations/0016,
# add_checkpoint: the next number, after the latest position and inside the log, dated now).
# Two makers racing for the same number: unique_violation. Background work's alone (0039).
INSERT_SQL = """
SELECT add_checkpoint(%(seq)s, %(position)s, %(message)s, %(signature)s, %(key_id)s,
                      %(requested_by)s, %(created_at)s, %(streams)s::text[],
                      %(versions)s::int[], %(hashes)s::text[])
"""
# The same, signed on demand by a request with an auditor's or operator's key as presented,
# recorded as made by that key's holder (0039 add_checkpoint_as).
INSERT_AS_SQL = """
SELECT add_checkpoint_as(%(credential)s, %(seq)s, %(position)s, %(message)s, %(signature)s,
                         %(key_id)s, %(created_at)s, %(streams)s::text[], %(versions)s::int[],
                         %(hashes)s::text[])
"""

# Every recorded head, checkpoint by checkpoint.
ALL_HEADS_SQL = """
SELECT seq, stream_id, version, hash FROM checkpoint_heads ORDER BY seq, stream_id
"""

# Ledger transactions whose cause event is not in the log (a deleted stream or a cut tail).
MISSING_CAUSES_SQL = """
SELECT t.client_transaction_id, t.kind, t.cause_stream, t.cause_version
  FROM ledger_transactions t
 WHERE NOT EXISTS (SELECT 1 FROM events e
                    WHERE e.stream_id = t.cause_stream AND e.version = t.cause_version)
 ORDER BY t.cause_stream, t.cause_version
"""

# Rows of the read models whose stream is missing or shorter than the row says it reached:
# games, duels and players, each keyed by its stream.
ORPHAN_PROJECTIONS_SQL = """
WITH rows (stream_id, version) AS (
    SELECT 'game-' || game_id, version FROM game_history
    UNION ALL
    SELECT 'duel-' || duel_id, version FROM duels
    UNION ALL
    SELECT 'player-' || player_id, 1 FROM players
)
SELECT r.stream_id, r.version,
       (SELECT coalesce(max(e.version), 0) FROM events e WHERE e.stream_id = r.stream_id)
  FROM rows r
 WHERE NOT EXISTS (SELECT 1 FROM events e
                    WHERE e.stream_id = r.stream_id AND e.version = r.version)
 ORDER BY r.stream_id
"""


# Events out of place in the log, up to a position: at or below position 0 (no append puts one
# there: positions come from the sequence, from 1), stamped before the event before them in
# their own stream (appends stamp a stream's events in order), or before an event at a lower
# position by more than the slack (concurrent appends take their positions and their clock in
# either order, so the log's times may step back a little, never by more than an append lasts).
OUT_OF_PLACE_SQL = """
WITH timed AS (
    SELECT position, stream_id, version, recorded_at,
           lag(recorded_at) OVER (PARTITION BY stream_id ORDER BY version) AS stream_before,
           max(recorded_at) OVER (ORDER BY position
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS log_before
      FROM events
     WHERE position <= %(upto)s
)
SELECT position, stream_id, version, recorded_at, stream_before, log_before
  FROM timed
 WHERE position <= 0
    OR recorded_at < stream_before
    OR recorded_at < log_before - %(slack)s
 ORDER BY position
"""

# Stored reconciliations whose time is not the server's: later than now, or earlier than a row
# stored before them by more than the slack (store_reconciliation stamps each with the time it
# was stored; two stored at once may take their numbers and their times in either order).
RECONCILIATION_TIMES_SQL = """
WITH stored AS (
    SELECT seq, day, computed_at, lag(computed_at) OVER (ORDER BY seq) AS before
      FROM reconciliations
)
SELECT seq, day, computed_at, before, statement_timestamp()
  FROM stored
 WHERE computed_at > statement_timestamp() OR computed_at < before - %(slack)s
 ORDER BY seq
"""


class CheckpointStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def _one(self, sql: str, params: dict[str, Any]) -> StoredCheckpoint | None:
        with self._conn.cursor() as cur:
            cur.execute(sql, params)
            row = cur.fetchone()
        return StoredCheckpoint(*row) if row else None

    def latest(self) -> StoredCheckpoint | None:
        return self._one(LATEST_SQL, {})

    def get(self, seq: int) -> StoredCheckpoint | None:
        return self._one(ONE_SQL, {"seq": seq})

    def page(self, *, before: int | None, limit: int) -> list[StoredCheckpoint]:
        with self._conn.cursor() as cur:
            cur.execute(PAGE_SQL, {"before": before, "limit": limit})
            return [StoredCheckpoint(*row) for row in cur.fetchall()]

    def all(self) -> list[StoredCheckpoint]:
        with self._conn.cursor() as cur:
            cur.execute(ALL_SQL)
            return [StoredCheckpoint(*row) for row in cur.fetchall()]

    def log_head(self) -> tuple[int, datetime]:
        with self._conn.cursor() as cur:
            cur.execute(HORIZON_SQL)
            horizon = cur.fetchone()
            assert horizon is not None
            cur.execute(LOG_HEAD_SQL, {"upto": horizon[0]})
            row = cur.fetchone()
        assert row is not None
        return int(row[0]), row[1]

    def snapshot_head(self) -> int:
        with self._conn.cursor() as cur:
            cur.execute(SNAPSHOT_HEAD_SQL)
            row = cur.fetchone()
        assert row is not None
        return int(row[0])

    def entries(self, after: int, upto: int, *, page: int = 10_000) -> Iterator[LogEntry]:
        """The log's (position, stream, version, hash) in (after, upto], in position order."""
        while True:
            with self._conn.cursor() as cur:
                cur.execute(ENTRIES_SQL, {"after": after, "upto": upto, "limit": page})
                rows = cur.fetchall()
            for row in rows:
                yield (int(row[0]), row[1], int(row[2]), row[3])
            if len(rows) < page:
                return
            after = int(rows[-1][0])

    def add(
        self, stored: StoredCheckpoint, heads: Sequence[Head], credential: str | None = None
    ) -> None:
        """Record it: as background work, or (``credential``) as the staff key's holder."""
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SQL if credential is None else INSERT_AS_SQL,
                {
                    "credential": credential,
                    "seq": stored.seq,
                    "position": stored.position,
                    "message": stored.message,
                    "signature": stored.signature,
                    "key_id": stored.key_id,
                    "requested_by": stored.requested_by,
                    "created_at": stored.created_at,
                    "streams": [h[0] for h in heads],
                    "versions": [h[1] for h in heads],
                    "hashes": [h[2] for h in heads],
                },
            )

    def heads(self) -> dict[int, list[Head]]:
        """Every checkpoint's recorded heads, by checkpoint number."""
        found: dict[int, list[Head]] = {}
        with self._conn.cursor() as cur:
            cur.execute(ALL_HEADS_SQL)
            for seq, stream_id, version, event_hash in cur.fetchall():
                found.setdefault(seq, []).append((stream_id, version, event_hash))
        return found

    def missing_causes(self) -> list[MissingCause]:
        with self._conn.cursor() as cur:
            cur.execute(MISSING_CAUSES_SQL)
            return [MissingCause(*row) for row in cur.fetchall()]

    def orphan_projections(self) -> list[OrphanRow]:
        with self._conn.cursor() as cur:
            cur.execute(ORPHAN_PROJECTIONS_SQL)
            return [OrphanRow(*row) for row in cur.fetchall()]

    def out_of_place(self, upto: int, slack: timedelta) -> list[OutOfPlace]:
        with self._conn.cursor() as cur:
            cur.execute(OUT_OF_PLACE_SQL, {"upto": upto, "slack": slack})
            return [OutOfPlace(*row) for row in cur.fetchall()]

    def misdated_reconciliations(self, slack: timedelta) -> list[MisdatedReconciliation]:
        with self._conn.cursor() as cur:
            cur.execute(RECONCILIATION_TIMES_SQL, {"slack": slack})
            return [MisdatedReconciliation(*row) for row in cur.fetchall()]
