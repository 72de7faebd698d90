"""Encrypted server seeds, one per game."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

# Keep a game's encrypted seed.
INSERT_SQL = """
INSERT INTO game_seeds (game_id, key_id, ciphertext)
VALUES (%(game_id)s, %(key_id)s, %(ciphertext)s)
"""

# A game's encrypted seed.
SELECT_SQL = "SELECT ciphertext FROM game_seeds WHERE game_id = %(game_id)s"


class SeedStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def add(self, game_id: uuid.UUID, key_id: str, ciphertext: bytes) -> None:
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SQL, {"game_id": game_id, "key_id": key_id, "ciphertext": ciphertext}
            )

    def get(self, game_id: uuid.UUID) -> bytes | None:
        with self._conn.cursor() as cur:
            cur.execute(SELECT_SQL, {"game_id": game_id})
            row = cur.fetchone()
            return bytes(row[0]) if row else None
