"""Safer gambling's reads (service/core/safer_gambling.py holds what they mean): a player's
limits and exclusion, which the database keeps from the LimitChanged and PlayerExcluded events
(migrations/0017, 0018: the service may only read them), and what the player's real-money
wallet did in the current day, week and month.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from service.core.safer_gambling import (
    PERIODS,
    Exclusion,
    Limit,
    SessionMoney,
    Usage,
    period_start,
)

# Every limit the player has ever set: each one's last change.
LIMITS_SQL = """
SELECT limit_name, previous, value, effective_from
  FROM player_limits
 WHERE player_id = %(player_id)s
"""

# Gross deposits and net loss (every posting but the cashier's: stakes and fees out, winnings,
# refunds and prizes back) of one wallet since each period's start. Reads the wallet's postings
# since the earlier of the week's and the month's start (postings_by_account_time).
USAGE_SQL = """
SELECT coalesce(sum(t.amount) FILTER (WHERE t.kind = 'deposit' AND p.created_at >= %(day)s), 0),
       coalesce(sum(t.amount) FILTER (WHERE t.kind = 'deposit' AND p.created_at >= %(week)s), 0),
       coalesce(sum(t.amount) FILTER (WHERE t.kind = 'deposit' AND p.created_at >= %(month)s), 0),
       coalesce(-sum(p.amount) FILTER (WHERE t.kind NOT IN ('deposit', 'withdrawal')
                                         AND p.created_at >= %(day)s), 0),
       coalesce(-sum(p.amount) FILTER (WHERE t.kind NOT IN ('deposit', 'withdrawal')
                                         AND p.created_at >= %(week)s), 0),
       coalesce(-sum(p.amount) FILTER (WHERE t.kind NOT IN ('deposit', 'withdrawal')
                                         AND p.created_at >= %(month)s), 0)
  FROM postings p
  JOIN ledger_transactions t ON t.transaction_id = p.transaction_id
 WHERE p.account_id = %(account_id)s
   AND p.created_at >= least(%(week)s, %(month)s)
"""


# The player's time-out or self-exclusion, in force or ended.
EXCLUSION_SQL = """
SELECT kind, until FROM player_exclusions WHERE player_id = %(player_id)s
"""


# The player's latest acknowledged reality check: its session's start, and when.
REALITY_CHECK_SQL = """
SELECT session_started, acknowledged_at FROM player_reality_checks WHERE player_id = %(player_id)s
"""

# What the play of one wallet moved since a session began: stakes and fees out, winnings,
# refunds and prizes back (the cashier's movements are not play).
SESSION_MONEY_SQL = """
SELECT coalesce(-sum(p.amount) FILTER (WHERE p.amount < 0), 0),
       coalesce(sum(p.amount) FILTER (WHERE p.amount > 0), 0)
  FROM postings p
  JOIN ledger_transactions t ON t.transaction_id = p.transaction_id
 WHERE p.account_id = %(account_id)s
   AND p.created_at >= %(since)s
   AND t.kind NOT IN ('deposit', 'withdrawal')
"""


class LimitStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def limits(self, player_id: object) -> dict[str, Limit]:
        with self._conn.cursor() as cur:
            cur.execute(LIMITS_SQL, {"player_id": player_id}, prepare=True)
            rows = cur.fetchall()
        return {name: Limit(prev, value, since) for name, prev, value, since in rows}

    def usage(self, account_id: str, now: datetime) -> Usage:
        starts: dict[str, Any] = {p: period_start(p, now) for p in PERIODS}
        row = self._conn.execute(USAGE_SQL, {"account_id": account_id, **starts}).fetchone()
        assert row is not None
        deposits = dict(zip(PERIODS, (int(v) for v in row[:3]), strict=True))
        losses = dict(zip(PERIODS, (int(v) for v in row[3:]), strict=True))
        return Usage(deposits, losses)

    def exclusion(self, player_id: object) -> Exclusion | None:
        row = self._conn.execute(EXCLUSION_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else Exclusion(row[0], row[1])

    def last_reality_check(self, player_id: object) -> tuple[datetime, datetime] | None:
        row = self._conn.execute(REALITY_CHECK_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else (row[0], row[1])

    def session_money(self, account_id: str, since: datetime) -> SessionMoney:
        row = self._conn.execute(
            SESSION_MONEY_SQL, {"account_id": account_id, "since": since}
        ).fetchone()
        assert row is not None
        return SessionMoney(int(row[0]), int(row[1]))
