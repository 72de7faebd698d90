"""Request ids recorded with their results, so a retried request is answered, not re-run."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from service.errors import KeyReused

# Claim a key for this request. If another transaction holds the same key, this waits for it to
# commit or roll back, then claims or finds it taken.
CLAIM_SQL = """
INSERT INTO idempotency_keys (scope, key, fingerprint)
VALUES (%(scope)s, %(key)s, %(fingerprint)s)
ON CONFLICT (scope, key) DO NOTHING
RETURNING key
"""

# What an earlier request under this key asked for and got.
FIND_SQL = """
SELECT fingerprint, result FROM idempotency_keys
 WHERE scope = %(scope)s AND key = %(key)s
"""

# Record the result, in the transaction that produced it.
COMPLETE_SQL = """
UPDATE idempotency_keys SET result = %(result)s
 WHERE scope = %(scope)s AND key = %(key)s
"""


class IdempotencyStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def claim(self, scope: str, key: str, fingerprint: str) -> dict[str, Any] | None:
        """None if this request may go ahead (the key is now ours until the transaction ends);
        the stored result if the same request already completed. KeyReused if the key was
        used for something else."""
        params = {"scope": scope, "key": key, "fingerprint": fingerprint}
        with self._conn.cursor() as cur:
            cur.execute(CLAIM_SQL, params)
            if cur.fetchone() is not None:
                return None
            cur.execute(FIND_SQL, params)
            row = cur.fetchone()
        assert row is not None  # the conflicting claim committed, so its row is there
        stored_fingerprint, result = row
        if stored_fingerprint != fingerprint:
            raise KeyReused(f"idempotency key {key!r} was used for a different request")
        return dict(result)

    def find(self, scope: str, key: str, fingerprint: str) -> dict[str, Any] | None:
        """What a completed earlier request under this key got (None: none, or none completed
        yet), claiming nothing; KeyReused if it asked for something else."""
        with self._conn.cursor() as cur:
            cur.execute(FIND_SQL, {"scope": scope, "key": key})
            row = cur.fetchone()
        if row is None:
            return None
        stored_fingerprint, result = row
        if stored_fingerprint != fingerprint:
            raise KeyReused(f"idempotency key {key!r} was used for a different request")
        return None if result is None else dict(result)

    def complete(self, scope: str, key: str, result: dict[str, Any]) -> None:
        with self._conn.cursor() as cur:
            cur.execute(COMPLETE_SQL, {"scope": scope, "key": key, "result": Jsonb(result)})
