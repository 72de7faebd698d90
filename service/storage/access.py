"""API keys and player sessions: only hashes of their secrets are stored."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

# A new staff key.
INSERT_KEY_SQL = """
INSERT INTO api_keys (key_id, name, role, key_hash)
VALUES (%(key_id)s, %(name)s, %(role)s, %(key_hash)s)
RETURNING created_at
"""

# The live key with this hash, if any.
FIND_KEY_SQL = """
SELECT key_id, name, role FROM api_keys WHERE key_hash = %(key_hash)s AND revoked_at IS NULL
"""

# Revoke the live key of this name.
REVOKE_KEY_SQL = """
UPDATE api_keys SET revoked_at = statement_timestamp()
 WHERE name = %(name)s AND revoked_at IS NULL
RETURNING key_id
"""

# Revoke one session by its token's hash (a player logging out).
REVOKE_SESSION_SQL = """
UPDATE player_sessions SET revoked_at = statement_timestamp()
 WHERE token_hash = %(token_hash)s AND revoked_at IS NULL
RETURNING player_id
"""

# Revoke every live session of a player (an operator's decision).
REVOKE_PLAYER_SESSIONS_SQL = """
UPDATE player_sessions SET revoked_at = statement_timestamp()
 WHERE player_id = %(player_id)s AND revoked_at IS NULL
RETURNING player_id
"""

# Revoke every live session a staff key minted (the key is being revoked).
REVOKE_MINTED_SQL = """
UPDATE player_sessions SET revoked_at = statement_timestamp()
 WHERE created_by = %(created_by)s AND revoked_at IS NULL
RETURNING player_id
"""

# Every key, newest first.
LIST_KEYS_SQL = """
SELECT key_id, name, role, created_at, revoked_at FROM api_keys ORDER BY created_at DESC
"""

# A new player session.
INSERT_SESSION_SQL = """
INSERT INTO player_sessions (token_hash, player_id, created_by, expires_at)
VALUES (%(token_hash)s, %(player_id)s, %(created_by)s, statement_timestamp() + %(max_age)s)
RETURNING created_at, expires_at
"""

# Use a session: valid only if not revoked, used within the idle timeout and before its hard
# expiry. Checking and touching it is one statement, so a session cannot be used after expiring.
TOUCH_SESSION_SQL = """
UPDATE player_sessions SET last_used_at = statement_timestamp()
 WHERE token_hash = %(token_hash)s
   AND revoked_at IS NULL
   AND last_used_at > statement_timestamp() - %(idle)s
   AND expires_at > statement_timestamp()
RETURNING player_id, expires_at, created_at
"""

# Check a session as the touch does, without writing: a process asks this between touches.
CHECK_SESSION_SQL = """
SELECT player_id, expires_at, created_at
  FROM player_sessions
 WHERE token_hash = %(token_hash)s
   AND revoked_at IS NULL
   AND last_used_at > statement_timestamp() - %(idle)s
   AND expires_at > statement_timestamp()
"""


#: A live session: its player, its hard expiry and when it began.
LiveSession = tuple[uuid.UUID, datetime, datetime]


@dataclass(frozen=True, slots=True)
class KeyRow:
    key_id: uuid.UUID
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


class AccessStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def add_key(self, key_id: uuid.UUID, name: str, role: str, key_hash: str) -> datetime:
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_KEY_SQL, {"key_id": key_id, "name": name, "role": role, "key_hash": key_hash}
            )
            row = cur.fetchone()
        assert row is not None
        created: datetime = row[0]
        return created

    def find_key(self, key_hash: str) -> tuple[uuid.UUID, str, str] | None:
        with self._conn.cursor() as cur:
            cur.execute(FIND_KEY_SQL, {"key_hash": key_hash}, prepare=True)
            row = cur.fetchone()
        return (row[0], row[1], row[2]) if row else None

    def revoke_key(self, name: str) -> uuid.UUID | None:
        """The revoked key's id, or None if no live key has this name."""
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_KEY_SQL, {"name": name})
            row = cur.fetchone()
        return row[0] if row else None

    def revoke_session(self, token_hash: str) -> uuid.UUID | None:
        """The session's player, if it was live."""
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_SESSION_SQL, {"token_hash": token_hash})
            row = cur.fetchone()
        return row[0] if row else None

    def revoke_player_sessions(self, player_id: uuid.UUID) -> int:
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_PLAYER_SESSIONS_SQL, {"player_id": player_id})
            return len(cur.fetchall())

    def revoke_minted(self, created_by: str) -> int:
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_MINTED_SQL, {"created_by": created_by})
            return len(cur.fetchall())

    def keys(self) -> list[KeyRow]:
        with self._conn.cursor() as cur:
            cur.execute(LIST_KEYS_SQL)
            return [KeyRow(*r) for r in cur.fetchall()]

    def add_session(
        self, token_hash: str, player_id: uuid.UUID, created_by: str, max_age: timedelta
    ) -> tuple[datetime, datetime]:
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SESSION_SQL,
                {
                    "token_hash": token_hash,
                    "player_id": player_id,
                    "created_by": created_by,
                    "max_age": max_age,
                },
            )
            row = cur.fetchone()
        assert row is not None
        return row[0], row[1]

    def touch_session(self, token_hash: str, idle: timedelta) -> LiveSession | None:
        """The live session's player, hard expiry and start, its use recorded; None if not
        live."""
        with self._conn.cursor() as cur:
            cur.execute(TOUCH_SESSION_SQL, {"token_hash": token_hash, "idle": idle}, prepare=True)
            row = cur.fetchone()
        return (row[0], row[1], row[2]) if row else None

    def check_session(self, token_hash: str, idle: timedelta) -> LiveSession | None:
        """The same answer as touch_session, writing nothing."""
        with self._conn.cursor() as cur:
            cur.execute(CHECK_SESSION_SQL, {"token_hash": token_hash, "idle": idle}, prepare=True)
            row = cur.fetchone()
        return (row[0], row[1], row[2]) if row else None
