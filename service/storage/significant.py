"""The significant-events log: voids, configuration changes and big wins, for auditors."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

# Log one significant event (append-only: a trigger refuses changes).
INSERT_SQL = """
INSERT INTO significant_events (kind, actor, game_id, player_id, amount, currency, details)
VALUES (%(kind)s, %(actor)s, %(game_id)s, %(player_id)s, %(amount)s, %(currency)s, %(details)s)
RETURNING id
"""

# Whether a game was logged under a kind lately (so a recurring failure is reported once).
REPORTED_SQL = """
SELECT 1 FROM significant_events
 WHERE game_id = %(game_id)s AND kind = %(kind)s
   AND occurred_at > statement_timestamp() - %(within)s
 LIMIT 1
"""

# Newest first, a page after a cursor (an id).
LIST_SQL = """
SELECT id, kind, occurred_at, actor, game_id, player_id, amount, currency, details
  FROM significant_events
 WHERE (%(kind)s::text IS NULL OR kind = %(kind)s::text)
   AND (%(before)s::bigint IS NULL OR id < %(before)s::bigint)
 ORDER BY id DESC
 LIMIT %(limit)s
"""

# Every paytable any logged configuration held (each start logs the one it runs on), once
# each: a game staked on a version no longer configured is verified against what that version
# said. The audit's login reads it in its snapshot; the table is append-only.
LOGGED_PAYTABLES_SQL = """
SELECT DISTINCT t.value
  FROM significant_events AS e,
       -- a row whose paytables are not a list (the log is append-only: a bad row stays) is
       -- read as none, never as an error that would stop every audit
       jsonb_array_elements(CASE WHEN jsonb_typeof(e.details->'configuration'->'paytables')
                                      = 'array'
                                 THEN e.details->'configuration'->'paytables'
                                 ELSE '[]'::jsonb END) AS t(value)
 WHERE e.kind = 'configuration' AND jsonb_typeof(t.value) = 'object'
"""

# The configuration last logged.
LAST_CONFIGURATION_SQL = """
SELECT details->>'fingerprint' FROM significant_events
 WHERE kind = 'configuration' ORDER BY id DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class SignificantEvent:
    id: int
    kind: str
    occurred_at: datetime
    actor: str
    game_id: uuid.UUID | None
    player_id: uuid.UUID | None
    amount: int | None
    currency: str | None
    details: dict[str, Any]


class SignificantStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def record(
        self,
        kind: str,
        actor: str,
        details: dict[str, Any],
        *,
        game_id: uuid.UUID | None = None,
        player_id: uuid.UUID | None = None,
        amount: int | None = None,
        currency: str | None = None,
    ) -> int:
        """Log it; its id."""
        with self._conn.cursor() as cur:
            cur.execute(
                INSERT_SQL,
                {
                    "kind": kind,
                    "actor": actor,
                    "game_id": game_id,
                    "player_id": player_id,
                    "amount": amount,
                    "currency": currency,
                    "details": Jsonb(details),
                },
            )
            row = cur.fetchone()
            assert row is not None
            return int(row[0])

    def page(
        self, *, kind: str | None = None, before: int | None = None, limit: int = 50
    ) -> list[SignificantEvent]:
        with self._conn.cursor() as cur:
            cur.execute(LIST_SQL, {"kind": kind, "before": before, "limit": limit})
            return [SignificantEvent(*row) for row in cur.fetchall()]

    def last_configuration(self) -> str | None:
        with self._conn.cursor() as cur:
            cur.execute(LAST_CONFIGURATION_SQL)
            row = cur.fetchone()
            return str(row[0]) if row and row[0] else None

    def logged_paytables(self) -> list[dict[str, Any]]:
        """Every paytable a logged configuration held, as configuration names it."""
        with self._conn.cursor() as cur:
            cur.execute(LOGGED_PAYTABLES_SQL)
            return [dict(row[0]) for row in cur.fetchall()]

    def reported(self, game_id: uuid.UUID, kind: str, within: timedelta) -> bool:
        """Was this game logged under this kind within the last ``within``?"""
        with self._conn.cursor() as cur:
            cur.execute(REPORTED_SQL, {"game_id": game_id, "kind": kind, "within": within})
            return cur.fetchone() is not None
