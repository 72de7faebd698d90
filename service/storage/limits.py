"""Safer gambling's reads (service/core/safer_gambling.py holds what they mean): a player's
limits, exclusion and each session's last reality check, which the database keeps from the
LimitChanged, PlayerExcluded and RealityCheckAcknowledged events (migrations/0017, 0018, 0029:
the service may only read them), what the player's real-money wallet did in the current day,
week and month, and what one session's play moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from events.postgres import READ_STREAM_SQL
from events.records import RecordedEvent
from service.core.safer_gambling import (
    PERIODS,
    Exclusion,
    Limit,
    SessionMoney,
    Usage,
    period_start,
)

# Every limit the player has ever set, each one's last change, as four arrays of one row (NULL
# when there are none): the form the play action's read below takes them in too.
LIMITS_SQL = """
SELECT array_agg(limit_name), array_agg(previous), array_agg(value), array_agg(effective_from)
  FROM player_limits
 WHERE player_id = %(player_id)s
"""

# A player's play action's first read in one statement (issue 25: a statement less on the hot
# path): the player's limits, for the session checks, and the event store's own read of the
# game's events after the version the service has folded. A game with no new events still
# answers one row, its event columns NULL.
LIMITS_AND_STREAM_SQL = f"""
SELECT l.*, e.*
  FROM ({LIMITS_SQL}) AS l
  LEFT JOIN LATERAL ({READ_STREAM_SQL}) AS e ON true
 ORDER BY e.version
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
# The database's clock, as its rules read it (migrations/0031 db_clock: the transaction's start):
# a limit's or exclusion's times are decided on no earlier time than the rules check.
DB_CLOCK_SQL = "SELECT db_clock()"

EXCLUSION_SQL = """
SELECT kind, until FROM player_exclusions WHERE player_id = %(player_id)s
"""


# The player's latest acknowledged reality check in one player session (known by its start,
# migrations/0029): the session's start, and when.
REALITY_CHECK_SQL = """
SELECT session_started, acknowledged_at
  FROM player_reality_checks
 WHERE player_id = %(player_id)s AND session_started = %(session_started)s
"""

# What one wallet's play in one player session moved: the stakes and fees its own requests
# placed, and what those games and duels paid back (winnings, refunds, prizes), whoever ended
# them. A stake is the session's when the event that placed it names the session in its
# metadata (service.core.context.event_metadata), so another session's play, and a game staked
# before this session began, count in none of its figures. The cashier's movements are not
# play. Reads the wallet's postings since the session began (postings_by_account_time), and of
# the debits among them their causes (events_pkey).
SESSION_MONEY_SQL = """
WITH play AS (
    SELECT p.cause_stream, p.cause_version, p.amount
      FROM postings p
      JOIN ledger_transactions t ON t.transaction_id = p.transaction_id
     WHERE p.account_id = %(account_id)s
       AND p.created_at >= %(session_started)s
       AND t.kind NOT IN ('deposit', 'withdrawal')
), staked AS (
    SELECT play.cause_stream
      FROM play
      JOIN events e ON e.stream_id = play.cause_stream AND e.version = play.cause_version
     WHERE play.amount < 0
       AND (e.metadata->>'session_started')::timestamptz = %(session_started)s
)
SELECT coalesce(-sum(amount) FILTER (WHERE amount < 0), 0),
       coalesce(sum(amount) FILTER (WHERE amount > 0), 0)
  FROM play
 WHERE cause_stream IN (SELECT cause_stream FROM staked)
"""


class LimitStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def limits(self, player_id: object) -> dict[str, Limit]:
        row = self._conn.execute(LIMITS_SQL, {"player_id": player_id}, prepare=True).fetchone()
        assert row is not None  # an aggregate's one row
        return _limits(row)

    def limits_and_stream(
        self, player_id: object, stream_id: str, after_version: int
    ) -> tuple[dict[str, Limit], list[RecordedEvent]]:
        """The player's limits and the stream's events after ``after_version``, in one read."""
        params = {
            "player_id": player_id,
            "stream_id": stream_id,
            "after_version": after_version,
            "to_version": None,
        }
        rows = self._conn.execute(LIMITS_AND_STREAM_SQL, params, prepare=True).fetchall()
        events = [RecordedEvent(*row[4:]) for row in rows if row[4] is not None]
        return _limits(rows[0]), events

    def usage(self, account_id: str, now: datetime) -> Usage:
        starts: dict[str, Any] = {p: period_start(p, now) for p in PERIODS}
        row = self._conn.execute(USAGE_SQL, {"account_id": account_id, **starts}).fetchone()
        assert row is not None
        deposits = dict(zip(PERIODS, (int(v) for v in row[:3]), strict=True))
        losses = dict(zip(PERIODS, (int(v) for v in row[3:]), strict=True))
        return Usage(deposits, losses)

    def db_clock(self) -> datetime:
        with self._conn.cursor() as cur:
            cur.execute(DB_CLOCK_SQL)
            row = cur.fetchone()
        assert row is not None
        now: datetime = row[0]
        return now

    def exclusion(self, player_id: object) -> Exclusion | None:
        row = self._conn.execute(EXCLUSION_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else Exclusion(row[0], row[1])

    def last_reality_check(
        self, player_id: object, session_started: datetime
    ) -> tuple[datetime, datetime] | None:
        """The latest acknowledgement in the player's session that began at
        ``session_started``: (its start, when)."""
        params = {"player_id": player_id, "session_started": session_started}
        row = self._conn.execute(REALITY_CHECK_SQL, params).fetchone()
        return None if row is None else (row[0], row[1])

    def session_money(self, account_id: str, session_started: datetime) -> SessionMoney:
        """What the wallet's play in the player session that began at ``session_started``
        moved."""
        params = {"account_id": account_id, "session_started": session_started}
        row = self._conn.execute(SESSION_MONEY_SQL, params).fetchone()
        assert row is not None
        return SessionMoney(int(row[0]), int(row[1]))


def _limits(row: Sequence[Any]) -> dict[str, Limit]:
    """LIMITS_SQL's arrays (the first four columns of ``row``), by limit."""
    names, previous, values, since = row[:4]
    if names is None:
        return {}
    return {n: Limit(p, v, at) for n, p, v, at in zip(names, previous, values, since, strict=True)}
