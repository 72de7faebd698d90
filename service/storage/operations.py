"""What an operator watches, read from the database at scrape time (service/services/
operations.py; GET /metrics): each a small aggregate over an index, under a statement timeout
of its own so a slow or absent database never holds a scrape."""

from __future__ import annotations

from typing import Any

import psycopg

# This transaction's reads give up after this long (the scrape then goes on without them).
TIMEOUT_SQL = "SELECT set_config('statement_timeout', %(ms)s, true)"

# How long ago the log's latest checkpoint was signed (none yet: NULL).
CHECKPOINT_AGE_SQL = """
SELECT extract(epoch FROM statement_timestamp() - max(created_at)) FROM log_checkpoints
"""

# Audits still running, and how long the oldest has been.
AUDITS_SQL = """
SELECT count(*), extract(epoch FROM statement_timestamp() - min(created_at))
  FROM audits WHERE status = 'running'
"""

# Findings of the latest finished audit (0: none, or no audit finished yet).
LATEST_FINDINGS_SQL = """
SELECT count(f.*) FROM audit_findings f
 WHERE f.audit_id = (SELECT audit_id FROM audits WHERE status = 'done'
                      ORDER BY finished_at DESC NULLS LAST LIMIT 1)
"""

# Players whose wallet moved past their verified point (beat's verification is behind them).
UNVERIFIED_SQL = """
SELECT count(*) FROM accounts a
  LEFT JOIN verified_points v ON v.player_id = a.player_id
 WHERE a.kind = 'player' AND wallet_head(a.account_id) > coalesce(v.through_posting, 0)
"""

# Withdrawals held by the audit's verification, ever (an alert watches it grow).
HOLDS_SQL = "SELECT count(*) FROM significant_events WHERE kind = 'withdrawal-held'"

# Games in play (real money and certification alike).
OPEN_GAMES_SQL = "SELECT count(*) FROM game_history WHERE ended_at IS NULL"

# Duels by state.
DUELS_SQL = "SELECT status, count(*) FROM duels GROUP BY status"

# Seamless mode: movements still to settle or under review, and the oldest still unacknowledged.
WALLET_SQL = """
SELECT method, state, count(*) FROM wallet_transactions
 WHERE state IN ('due', 'sent', 'review')
 GROUP BY method, state
"""
WALLET_OLDEST_SQL = """
SELECT extract(epoch FROM statement_timestamp() - min(created_at)) FROM wallet_transactions
 WHERE state IN ('due', 'sent') AND method IN ('win', 'rollback')
"""


class OperationsReads:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def limit(self, ms: int) -> None:
        self._conn.execute(TIMEOUT_SQL, {"ms": str(ms)})

    def _one(self, sql: str) -> Any:
        row = self._conn.execute(sql).fetchone()
        return None if row is None else row[0]

    def checkpoint_age(self) -> float | None:
        age = self._one(CHECKPOINT_AGE_SQL)
        return None if age is None else float(age)

    def audits(self) -> tuple[int, float | None]:
        row = self._conn.execute(AUDITS_SQL).fetchone()
        assert row is not None
        return int(row[0]), None if row[1] is None else float(row[1])

    def latest_findings(self) -> int:
        return int(self._one(LATEST_FINDINGS_SQL) or 0)

    def unverified(self) -> int:
        return int(self._one(UNVERIFIED_SQL) or 0)

    def holds(self) -> int:
        return int(self._one(HOLDS_SQL) or 0)

    def open_games(self) -> int:
        return int(self._one(OPEN_GAMES_SQL) or 0)

    def duels(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self._conn.execute(DUELS_SQL).fetchall()}

    def wallet(self) -> dict[tuple[str, str], int]:
        return {(str(m), str(s)): int(n) for m, s, n in self._conn.execute(WALLET_SQL).fetchall()}

    def wallet_oldest(self) -> float | None:
        age = self._one(WALLET_OLDEST_SQL)
        return None if age is None else float(age)
