"""API keys and player sessions: only hashes of their secrets are stored.

The service's login only reads both tables (migrations/0030): a session is minted, touched and
revoked through the owner's functions, each given the credential as presented (an operator's key,
the session's own token), and staff keys are written with the owner's login alone
(``Access.create_key``, the CLI)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

# A new staff key (the owner's login: the service's may not write keys).
INSERT_KEY_SQL = """
INSERT INTO api_keys (key_id, name, role, key_hash)
VALUES (%(key_id)s, %(name)s, %(role)s, %(key_hash)s)
RETURNING created_at
"""

# The live key with this hash, if any.
FIND_KEY_SQL = """
SELECT key_id, name, role FROM api_keys WHERE key_hash = %(key_hash)s AND revoked_at IS NULL
"""

# Revoke the live key of this name (the owner's login).
REVOKE_KEY_SQL = """
UPDATE api_keys SET revoked_at = statement_timestamp()
 WHERE name = %(name)s AND revoked_at IS NULL
RETURNING key_id
"""

# Revoke one session with its own token (a player logging out): its player, if it was live.
REVOKE_SESSION_SQL = "SELECT revoke_session(%(token)s)"

# Revoke every live session of a player (an operator's decision, the operator's key presented).
REVOKE_PLAYER_SESSIONS_SQL = "SELECT revoke_player_sessions(%(operator_key)s, %(player_id)s)"

# Revoke every live session a staff key minted (the key is being revoked; the owner's login).
REVOKE_MINTED_SQL = """
UPDATE player_sessions SET revoked_at = statement_timestamp()
 WHERE created_by = %(created_by)s AND revoked_at IS NULL
RETURNING player_id
"""

# Every key, newest first.
LIST_KEYS_SQL = """
SELECT key_id, name, role, created_at, revoked_at FROM api_keys ORDER BY created_at DESC
"""

# A new player session, minted by the operator whose key is presented (migrations/0030: the
# function checks the key, that the player is registered, and the session's lifetimes). The
# session keeps its idle timeout: the database decides whether it is live.
INSERT_SESSION_SQL = """
SELECT created_at, expires_at
  FROM mint_session(%(operator_key)s, %(player_id)s, %(token_hash)s, %(max_age)s, %(idle)s)
"""

# Use a session with its token: live only if not revoked, used within its idle timeout and
# before its hard expiry. Checking and touching it is one statement, so a session cannot be used
# after expiring.
TOUCH_SESSION_SQL = """
SELECT player_id, expires_at, created_at FROM touch_session(%(token)s)
"""

# Check a session as the touch does, without writing: a process asks this between touches.
CHECK_SESSION_SQL = """
SELECT player_id, expires_at, created_at
  FROM player_sessions
 WHERE token_hash = %(token_hash)s
   AND revoked_at IS NULL
   AND last_used_at > statement_timestamp() - idle_timeout
   AND expires_at > statement_timestamp()
"""


# Why a credential presented is not live (it was refused): a key revoked, or a session revoked,
# past its hard maximum or idle past its timeout. No row: no such credential.
KEY_STATE_SQL = "SELECT revoked_at IS NOT NULL FROM api_keys WHERE key_hash = %(key_hash)s"
SESSION_STATE_SQL = """
SELECT revoked_at IS NOT NULL,
       expires_at <= statement_timestamp()
       OR last_used_at <= statement_timestamp() - idle_timeout
  FROM player_sessions
 WHERE token_hash = %(token_hash)s
"""


#: Why a key cannot be written on the service's login.
OWNER_ONLY = (
    "staff keys are written with the database owner's login only: set MIGRATION_DATABASE_URL "
    "to the owner for this command (README: Database roles)"
)

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
        """Refused (PermissionError) on any login but the owner's."""
        with self._conn.cursor() as cur:
            try:
                cur.execute(
                    INSERT_KEY_SQL,
                    {"key_id": key_id, "name": name, "role": role, "key_hash": key_hash},
                )
            except psycopg.errors.InsufficientPrivilege as exc:
                raise PermissionError(OWNER_ONLY) from exc
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
        """The revoked key's id, or None if no live key has this name. Refused
        (PermissionError) on any login but the owner's."""
        with self._conn.cursor() as cur:
            try:
                cur.execute(REVOKE_KEY_SQL, {"name": name})
            except psycopg.errors.InsufficientPrivilege as exc:
                raise PermissionError(OWNER_ONLY) from exc
            row = cur.fetchone()
        return row[0] if row else None

    def revoke_session(self, token: str) -> uuid.UUID | None:
        """The session's player, if it was live."""
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_SESSION_SQL, {"token": token})
            row = cur.fetchone()
        return row[0] if row else None

    def revoke_player_sessions(self, operator_key: str | None, player_id: uuid.UUID) -> int:
        with self._conn.cursor() as cur:
            cur.execute(
                REVOKE_PLAYER_SESSIONS_SQL, {"operator_key": operator_key, "player_id": player_id}
            )
            row = cur.fetchone()
        assert row is not None
        return int(row[0])

    def revoke_minted(self, created_by: str) -> int:
        with self._conn.cursor() as cur:
            cur.execute(REVOKE_MINTED_SQL, {"created_by": created_by})
            return len(cur.fetchall())

    def keys(self) -> list[KeyRow]:
        with self._conn.cursor() as cur:
            cur.execute(LIST_KEYS_SQL)
            return [KeyRow(*r) for r in cur.fetchall()]

    def add_session(
        self,
        operator_key: str | None,
        token_hash: str,
        player_id: uuid.UUID,
        max_age: timedelta,
        idle: timedelta,
    ) -> tuple[datetime, datetime]:
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SESSION_SQL,
                {
                    "operator_key": operator_key,
                    "token_hash": token_hash,
                    "player_id": player_id,
                    "max_age": max_age,
                    "idle": idle,
                },
            )
            row = cur.fetchone()
        assert row is not None
        return row[0], row[1]

    def touch_session(self, token: str) -> LiveSession | None:
        """The live session's player, hard expiry and start, its use recorded; None if not
        live."""
        with self._conn.cursor() as cur:
            cur.execute(TOUCH_SESSION_SQL, {"token": token}, prepare=True)
            row = cur.fetchone()
        return (row[0], row[1], row[2]) if row else None

    def refusal(self, digest: str, session: bool) -> str:
        """Why the credential of this digest is not live: revoked, expired or unknown."""
        if session:
            row = self._conn.execute(SESSION_STATE_SQL, {"token_hash": digest}).fetchone()
            if row is None:
                return "unknown"
            return "revoked" if row[0] else "expired" if row[1] else "unknown"
        row = self._conn.execute(KEY_STATE_SQL, {"key_hash": digest}).fetchone()
        return "unknown" if row is None else "revoked" if row[0] else "unknown"

    def check_session(self, token_hash: str) -> LiveSession | None:
        """The same answer as touch_session, writing nothing."""
        with self._conn.cursor() as cur:
            cur.execute(CHECK_SESSION_SQL, {"token_hash": token_hash}, prepare=True)
            row = cur.fetchone()
        return (row[0], row[1], row[2]) if row else None
