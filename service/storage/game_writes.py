"""A game command's write: its events, its betting-history row and (every few versions) its
snapshot in one statement (the database function record_game_events, migration 0014); and the
snapshot row read back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg

from events.postgres import PendingAppend, append_params, send_appending
from events.records import ConcurrencyConflict, NewEvent
from service.core.game_decider import Game
from service.storage.projections import history_fields

# Append the events at the expected version as the credential's holder (migrations/0031: the
# database checks who asks and what each event means; unique_violation at any other head), refresh
# the game's history row from them (a NULL history, a duel seat's game, has none) and its
# snapshot when one is given; the recorded events come back.
RECORD_SQL = """
SELECT position, version, recorded_at, prev_hash, hash
  FROM record_game_events(%(credential)s, %(stream_id)s, %(expected_version)s, %(events)s,
                          %(history)s::text::jsonb, %(over)s, %(snapshot)s, %(snapshot_mac)s)
"""

# A game's snapshot row, if one was ever written.
SNAPSHOT_SQL = """
SELECT version, state, mac, started_at, last_event_at
  FROM game_snapshots
 WHERE stream_id = %(stream_id)s
"""


#: One open game a player, the database's rule (migrations/0004: a unique index on the history
#: rows not ended): it holds where a deal's read of the open game missed one committing.
OPEN_GAME_INDEX = "game_history_one_open_game"


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    version: int
    state: str  # service.core.snapshots' JSON, exactly as MACed
    mac: str
    started_at: datetime
    last_event_at: datetime


class GameWrites:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def send(
        self,
        credential: str | None,
        stream_id: str,
        events: Sequence[NewEvent],
        expected_version: int,
        history: Game | None,
        snapshot: tuple[str, str] | None = None,
    ) -> PendingAppend:
        """Send the write; read the recorded events from the answer once it is in (alone,
        outside a transaction, it commits by itself: one round trip). ``snapshot``: the new
        state's snapshot JSON and its MAC, when one is due."""
        params = append_params(stream_id, events, expected_version)
        params["credential"] = credential
        params["history"] = None if history is None else _row(history)
        params["over"] = history is not None and history.is_over
        params["snapshot"], params["snapshot_mac"] = snapshot or (None, None)
        return send_appending(self._conn, RECORD_SQL, params)

    def snapshot(self, stream_id: str) -> SnapshotRow | None:
        with self._conn.cursor() as cur:
            cur.execute(SNAPSHOT_SQL, {"stream_id": stream_id}, prepare=True)
            row = cur.fetchone()
        return SnapshotRow(*row) if row else None


def _row(game: Game) -> str:
    return orjson.dumps(history_fields(game)).decode()


def second_open_game(conflict: ConcurrencyConflict) -> bool:
    """Was a deal's write refused as its player's second open game (not a stream's head)?"""
    cause = conflict.__cause__
    return (
        isinstance(cause, psycopg.errors.UniqueViolation)
        and cause.diag.constraint_name == OPEN_GAME_INDEX
    )
