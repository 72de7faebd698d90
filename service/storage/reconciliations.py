"""Stored reconciliations, append-only (migrations/0012): running a day again adds a row, and
the latest row is the day's answer, so nothing stored is ever overwritten."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

# Store a day's reconciliation as its newest, stamped with the server's time (migrations/0016:
# the service cannot write the table itself, nor choose the time).
INSERT_SQL = "SELECT store_reconciliation(%(day)s, %(result)s)"

# A day's newest reconciliation (seq orders the rows as they were added).
LATEST_SQL = """
SELECT computed_at, result FROM reconciliations
 WHERE day = %(day)s
 ORDER BY seq DESC
 LIMIT 1
"""


class ReconciliationStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def add(self, day: date, result: dict[str, Any]) -> None:
        with self._conn.cursor() as cur:
            cur.execute(INSERT_SQL, {"day": day, "result": Jsonb(result)})

    def latest(self, day: date) -> tuple[datetime, dict[str, Any]] | None:
        """When the day was last reconciled, and what was found; None if it never was."""
        with self._conn.cursor() as cur:
            cur.execute(LATEST_SQL, {"day": day})
            row = cur.fetchone()
        return (row[0], dict(row[1])) if row else None
