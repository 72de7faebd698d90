"""What the drill reads straight from the database for its checks (as the superuser of its own
embedded server: the drill's data folder holds nothing but the drill's own run)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from tests.drill.checks import EventFact, Facts, GameFact, LedgerFact

# Every event with the request that wrote it and the database transaction that did (xmin):
# one request applied twice shows as its events written by two transactions. A transfer's
# own id comes along, so one deposit recorded twice shows too.
EVENTS_SQL = """
SELECT stream_id, version, type, metadata->>'request_id', xmin::text,
       data->>'transaction_id'
  FROM events
 ORDER BY position
"""

# Every ledger transaction with its request and writing transaction, as for the events.
LEDGER_SQL = """
SELECT client_transaction_id, kind, amount, request_id, xmin::text
  FROM ledger_transactions
"""

# The betting history (a projection): how each game stands and what it paid.
GAMES_SQL = """
SELECT game_id::text, status, payout
  FROM game_history
"""

# Postings summed per currency: double entry means every currency sums to exactly zero.
LEDGER_SUMS_SQL = """
SELECT a.currency, COALESCE(SUM(p.amount), 0)::bigint
  FROM accounts a
  LEFT JOIN postings p ON p.account_id = a.account_id
 GROUP BY a.currency
 ORDER BY a.currency
"""

# Accounts whose kept balance is not the sum of their postings.
BALANCE_MISMATCHES_SQL = """
SELECT b.account_id, b.balance, COALESCE(SUM(p.amount), 0)::bigint
  FROM account_balances b
  LEFT JOIN postings p ON p.account_id = b.account_id
 GROUP BY b.account_id, b.balance
HAVING b.balance <> COALESCE(SUM(p.amount), 0)
"""

# Games still open once every client has collected its own: nobody is left to play them.
OPEN_GAMES_SQL = """
SELECT game_id::text, player_id::text, last_event_at
  FROM game_history
 WHERE ended_at IS NULL
"""

# Every audit, how far it got and what it found (and in which units); and how much of it was
# checked while money moved: its units recorded before the load ended, the ledger's among them
# or not (issue 36: a unit that read two statements while a stake committed between them).
AUDITS_SQL = """
SELECT a.audit_id::text, a.scope->>'kind', a.status, a.total,
       (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id),
       (SELECT count(*) FROM audit_findings f WHERE f.audit_id = a.audit_id),
       EXTRACT(EPOCH FROM COALESCE(a.finished_at, statement_timestamp()) - a.created_at),
       (SELECT count(*) FROM audit_units u
         WHERE u.audit_id = a.audit_id AND u.checked_at < %(load_ended)s),
       EXISTS (SELECT 1 FROM audit_units u
                WHERE u.audit_id = a.audit_id AND u.unit = 'ledger'
                  AND u.checked_at < %(load_ended)s),
       (SELECT coalesce(string_agg(DISTINCT f.unit, ' '), '') FROM audit_findings f
         WHERE f.audit_id = a.audit_id)
  FROM audits a
 ORDER BY a.created_at
"""

# The address of the session that holds a leadership role (service/storage/leadership.py: a
# session advisory lock on hashtext(role), taken as a bigint key, whose low 32 bits pg_locks
# shows as objid); no row while nobody leads.
LEADER_SQL = """
SELECT host(a.client_addr)
  FROM pg_locks l
  JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
   AND l.objid = (hashtext(%(role)s)::bigint & 4294967295)::oid
"""

# Checkpoints of the log signed since a moment (beat's schedule taking effect).
CHECKPOINTS_SINCE_SQL = """
SELECT count(*) FROM log_checkpoints WHERE created_at >= %(since)s
"""

# Transactions a database has run since its server started (on a replica: the reads sent to
# it).
TRANSACTIONS_SQL = """
SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()
"""


@dataclass(frozen=True)
class AuditRow:
    audit_id: str
    kind: str  # the scope: all, dates or player
    status: str
    total: int
    checked: int
    findings: int
    seconds: float
    #: Units checked before the load ended, and whether the ledger's was one of them.
    checked_under_load: int
    ledger_under_load: bool
    #: The units with findings, space-separated.
    units_found: str


@dataclass(frozen=True)
class Books:
    ledger_sums: dict[str, int]
    balance_mismatches: list[tuple[str, int, int]]
    open_games: list[tuple[str, str, Any]]
    audits: list[AuditRow]


def read_facts(url: str) -> Facts:
    with psycopg.connect(url) as conn:
        events = [
            EventFact(stream, version, kind, request_id, txid, transaction_id)
            for stream, version, kind, request_id, txid, transaction_id in conn.execute(EVENTS_SQL)
        ]
        ledger = [LedgerFact(*row) for row in conn.execute(LEDGER_SQL)]
        games = {row[0]: GameFact(*row) for row in conn.execute(GAMES_SQL)}
    return Facts(events, ledger, games)


def read_books(url: str, load_ended: datetime) -> Books:
    with psycopg.connect(url) as conn:
        sums = {currency.strip(): int(total) for currency, total in conn.execute(LEDGER_SUMS_SQL)}
        mismatches = [(a, int(b), int(s)) for a, b, s in conn.execute(BALANCE_MISMATCHES_SQL)]
        open_games = [tuple(row) for row in conn.execute(OPEN_GAMES_SQL)]
        audits = [
            AuditRow(
                a,
                kind,
                status,
                int(total),
                int(checked),
                int(findings),
                float(seconds),
                int(under_load),
                bool(ledger),
                units,
            )
            for a, kind, status, total, checked, findings, seconds, under_load, ledger, units in (
                conn.execute(AUDITS_SQL, {"load_ended": load_ended})
            )
        ]
    return Books(sums, mismatches, open_games, audits)


def leader(url: str, role: str) -> str | None:
    """The address of the host whose process leads ``role`` now."""
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(LEADER_SQL, {"role": role}).fetchone()
    return None if row is None else str(row[0])


def checkpoints_since(url: str, since: datetime) -> int:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(CHECKPOINTS_SINCE_SQL, {"since": since}).fetchone()
    return int(row[0]) if row else 0


def transactions(url: str) -> int:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(TRANSACTIONS_SQL).fetchone()
    return int(row[0]) if row else 0
