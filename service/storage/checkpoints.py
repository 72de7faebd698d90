"""Signed checkpoints of the event log (migrations/0011), and the integrity questions the
whole-history audit asks of the tables around the log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from events.anchor import Head, LogEntry

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

# A slice of the log as the running hash sees it, in position order (read a page at a time).
ENTRIES_SQL = """
SELECT position, stream_id, version, hash
  FROM events
 WHERE position > %(after)s AND position <= %(upto)s
 ORDER BY position
 LIMIT %(limit)s
"""

# Record a checkpoint. seq is the primary key, so two makers racing cannot both add seq N.
INSERT_SQL = """
INSERT INTO log_checkpoints (seq, position, message, signature, key_id, requested_by, created_at)
VALUES (%(seq)s, %(position)s, %(message)s, %(signature)s, %(key_id)s, %(requested_by)s,
        %(created_at)s)
"""

# Record the heads of the streams a checkpoint saw change, in one statement.
INSERT_HEADS_SQL = """
INSERT INTO checkpoint_heads (seq, stream_id, version, hash)
SELECT %(seq)s, h.stream_id, h.version, h.hash
  FROM unnest(%(streams)s::text[], %(versions)s::int[], %(hashes)s::text[])
       AS h(stream_id, version, hash)
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


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    seq: int
    position: int
    message: str
    signature: str
    key_id: str
    requested_by: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MissingCause:
    transaction: str
    kind: str
    stream_id: str
    version: int


@dataclass(frozen=True, slots=True)
class OrphanRow:
    stream_id: str
    version: int  # the version the read model says the stream reached
    head: int  # the stream's head in the log (0: no stream at all)


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

    def add(self, stored: StoredCheckpoint, heads: Sequence[Head]) -> None:
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SQL,
                {
                    "seq": stored.seq,
                    "position": stored.position,
                    "message": stored.message,
                    "signature": stored.signature,
                    "key_id": stored.key_id,
                    "requested_by": stored.requested_by,
                    "created_at": stored.created_at,
                },
            )
            cur.execute(
                INSERT_HEADS_SQL,
                {
                    "seq": stored.seq,
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
