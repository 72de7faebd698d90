"""Each game's encrypted secret: its server seed, or the deck a certification game was given."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from service.errors import CommitmentTaken

SEED = "seed"
DECK = "deck"

# Keep a game's encrypted secret (migrations/0016: written once, through a function).
INSERT_SQL = "SELECT keep_seed(%(game_id)s, %(key_id)s, %(ciphertext)s, %(kind)s)"

#: How keep_seed refuses a commitment another game or duel has (migrations/0032, 0036: a
#: check_violation with this message), a request's fault, not a bug; its other refusal (a
#: secret kept after its deal) is the service's bug and stays one.
TAKEN_SQLSTATE = psycopg.errors.CheckViolation.sqlstate
TAKEN_MESSAGE = "is kept only for a commitment no other game or duel has"

# A game's encrypted secret and what it is.
SELECT_SQL = "SELECT kind, ciphertext FROM game_seeds WHERE game_id = %(game_id)s"

# Secrets not yet under the newest key, a batch at a time. Not locked: two rotations racing
# re-encrypt one secret under the same key, and rekey_seed changes only a secret still under
# another key, so the second changes nothing.
STALE_SQL = """
SELECT game_id, ciphertext FROM game_seeds
 WHERE key_id <> %(key_id)s
 ORDER BY game_id
 LIMIT %(limit)s
"""

# One secret re-encrypted under the newest key (migrations/0016, rekey_seed).
REKEY_SQL = "SELECT rekey_seed(%(game_id)s, %(key_id)s, %(ciphertext)s)"


class SeedStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def add(self, game_id: uuid.UUID, key_id: str, ciphertext: bytes, kind: str = SEED) -> None:
        """Refused with CommitmentTaken if another game or duel has the game's commitment (the
        transaction is then aborted: the caller's unit of work applies nothing)."""
        with self._conn.cursor() as cur:
            try:
                cur.execute(
                    INSERT_SQL,
                    {"game_id": game_id, "key_id": key_id, "ciphertext": ciphertext, "kind": kind},
                )
            except psycopg.errors.CheckViolation as refused:
                if not commitment_taken(refused):
                    raise
                raise CommitmentTaken from refused

    def get(self, game_id: uuid.UUID) -> tuple[str, bytes] | None:
        with self._conn.cursor() as cur:
            cur.execute(SELECT_SQL, {"game_id": game_id})
            row = cur.fetchone()
            return (str(row[0]), bytes(row[1])) if row else None

    def stale(self, key_id: str, limit: int) -> list[tuple[uuid.UUID, bytes]]:
        with self._conn.cursor() as cur:
            cur.execute(STALE_SQL, {"key_id": key_id, "limit": limit})
            return [(row[0], bytes(row[1])) for row in cur.fetchall()]

    def rekey(self, game_id: uuid.UUID, key_id: str, ciphertext: bytes) -> None:
        with self._conn.cursor() as cur:
            cur.execute(REKEY_SQL, {"game_id": game_id, "key_id": key_id, "ciphertext": ciphertext})


def commitment_taken(error: psycopg.Error) -> bool:
    """Whether ``error`` is keep_seed's refusal of a commitment another deal has."""
    return error.sqlstate == TAKEN_SQLSTATE and TAKEN_MESSAGE in (error.diag.message_primary or "")
