"""The whole-history audit's SQL (service/services/history_audits.py holds what it means): the
streams an audit plans, its rows (the audit, its plan, the units checked and their findings,
resumption and failure), and a chunk's reads and writes, a statement each for the whole chunk: the
ledger postings every stream of the chunk caused, and the chunk's results."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from service.core.game_verification import Finding, PostingRow
from service.core.ledger import Account
from service.core.streams import is_duel, is_game

# A duel's stream, or a duel seat's game, is audited once the duel has ended: until then every
# seat's cards are sealed from staff (service.services.games.seal_seat_from_staff), and its
# checks need the revealed seed anyway. A game's first event names its duel, if any.
ENDED_DUEL = """(SELECT 1 FROM events o
                  WHERE o.stream_id = {} AND o.type IN ('DuelSettled', 'DuelCancelled'))"""
SEAT_ENDED = (
    " AND (e.data->>'duel_id' IS NULL OR EXISTS "
    + ENDED_DUEL.format("'duel-' || (e.data->>'duel_id')")
    + ")"
)

# Game streams in the log (with, in seamless mode, each round's wallet stream: its bet opens it,
# naming the player): all, those dealt in a date range, or one player's.
ALL_GAMES_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND (stream_id LIKE 'game-%%' OR stream_id LIKE 'wallet-%%'){SEAT_ENDED}
 ORDER BY position
"""
GAMES_BETWEEN_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND (stream_id LIKE 'game-%%' OR stream_id LIKE 'wallet-%%')
   AND recorded_at >= %(start)s AND recorded_at <= %(last)s{SEAT_ENDED}
 ORDER BY position
"""
PLAYER_GAMES_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND (stream_id LIKE 'game-%%' OR stream_id LIKE 'wallet-%%')
   AND data->>'player_id' = %(player_id)s{SEAT_ENDED}
 ORDER BY position
"""
PLAYER_STREAMS_SQL = """
SELECT stream_id FROM events WHERE version = 1 AND stream_id LIKE 'player-%%' ORDER BY position
"""
# Duel streams that have ended: all, or those opened in a date range.
DUELS_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND stream_id LIKE 'duel-%%'
   AND (%(start)s::timestamptz IS NULL OR recorded_at >= %(start)s::timestamptz)
   AND (%(last)s::timestamptz IS NULL OR recorded_at <= %(last)s::timestamptz)
   AND EXISTS {ENDED_DUEL.format("e.stream_id")}
 ORDER BY position
"""
# The ended duels a player sat in.
PLAYER_DUELS_SQL = f"""
SELECT DISTINCT stream_id FROM events e
 WHERE stream_id LIKE 'duel-%%' AND type = 'SeatTaken' AND data->>'player_id' = %(player_id)s
   AND EXISTS {ENDED_DUEL.format("e.stream_id")}
"""

# A stream's ledger postings, with their transactions.
POSTINGS_SQL = """
SELECT p.posting_id, t.client_transaction_id, t.kind, t.amount, t.cause_stream,
       t.cause_version, p.account_id, p.amount, p.balance_before, p.balance_after
  FROM ledger_transactions t
  JOIN postings p USING (transaction_id)
 WHERE t.cause_stream = %(stream)s
 ORDER BY p.posting_id
"""
ALL_POSTINGS_SQL = """
SELECT p.posting_id, t.client_transaction_id, t.kind, t.amount, t.cause_stream,
       t.cause_version, p.account_id, p.amount, p.balance_before, p.balance_after
  FROM ledger_transactions t
  JOIN postings p USING (transaction_id)
 ORDER BY p.posting_id
"""
BALANCES_SQL = "SELECT account_id, balance FROM account_balances"
# Every account as recorded: its kind follows from its id (history_checks.account_findings).
ACCOUNTS_SQL = "SELECT account_id, kind, currency, player_id FROM accounts ORDER BY account_id"
# Whether a stream is in the log (the operator's switches are a unit of their own when they are).
STREAM_EXISTS_SQL = "SELECT EXISTS (SELECT 1 FROM events WHERE stream_id = %(stream)s)"

# The sealed secrets kept of these games and duels (their ids only: the audit opens none).
SECRETS_OF_SQL = "SELECT game_id::text FROM game_seeds WHERE game_id = ANY(%(ids)s::uuid[])"

# A chunk is read and checked in one read-only snapshot (history_audits.check_chunk), which sits
# idle in its transaction while the worker verifies what it read: a chunk's games, and every
# checkpoint's signature before the log is read (about 0.2 ms each: past the session's 30 s at
# some 150,000 checkpoints). For this transaction only, then, no idle limit: it holds no row
# lock and ends with its chunk, whose task has a time limit of its own.
NO_IDLE_LIMIT_SQL = "SELECT set_config('idle_in_transaction_session_timeout', '0', true)"

# An audit made and planned at once, by the audit's own login (the CLI's, a test's).
NEW_AUDIT_SQL = """
INSERT INTO audits (audit_id, scope, requested_by, status, total, planned_at)
VALUES (%(audit_id)s, %(scope)s, %(requested_by)s, 'running', %(total)s, statement_timestamp())
"""
# An audit asked for by the service, with an auditor's key as presented: its row, unplanned
# (migrations/0037: the service's login writes nothing else of an audit).
REQUEST_SQL = "SELECT request_audit(%(credential)s, %(audit_id)s, %(scope)s)"
# An asked-for audit not yet planned (locked: two deliveries of its planning plan it once).
UNPLANNED_SQL = """
SELECT scope FROM audits
 WHERE audit_id = %(audit_id)s AND planned_at IS NULL AND status = 'running'
   FOR UPDATE
"""
# Its plan made: how many units, and when.
PLANNED_SQL = """
UPDATE audits SET total = %(total)s, planned_at = statement_timestamp()
 WHERE audit_id = %(audit_id)s
"""
# Asked-for audits still unplanned after a while (their planning task was lost).
UNPLANNED_STALLED_SQL = """
SELECT audit_id FROM audits
 WHERE status = 'running' AND planned_at IS NULL
   AND created_at < statement_timestamp() - %(quiet)s
"""
# The units an audit planned.
PLAN_SQL = """
INSERT INTO audit_plan (audit_id, unit)
SELECT %(audit_id)s, unit FROM unnest(%(units)s::text[]) AS u(unit)
"""

# Running audits with no progress for a while (a chunk lost with a crashed worker), and the
# planned units of each not yet checked.
STALLED_SQL = """
SELECT a.audit_id, a.resent, array_agg(p.unit ORDER BY p.unit)
  FROM audits a
  JOIN audit_plan p USING (audit_id)
 WHERE a.status = 'running'
   AND greatest(a.created_at, (SELECT max(u.checked_at) FROM audit_units u
                                WHERE u.audit_id = a.audit_id))
       < statement_timestamp() - %(quiet)s
   AND NOT EXISTS (SELECT 1 FROM audit_units u
                    WHERE u.audit_id = a.audit_id AND u.unit = p.unit)
 GROUP BY a.audit_id, a.resent
"""

# Finish every running audit whose units are all checked (a worker that checked the last one
# may have died before finishing it).
FINISH_CHECKED_SQL = """
UPDATE audits a SET status = 'done', finished_at = statement_timestamp()
 WHERE a.status = 'running' AND a.planned_at IS NOT NULL
   AND (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id) >= a.total
"""

# Count one re-send of an audit's lost work.
RESENT_SQL = "UPDATE audits SET resent = resent + 1 WHERE audit_id = %(audit_id)s"

# Give up on an audit, saying why.
FAIL_SQL = """
UPDATE audits SET status = 'failed', failure = %(failure)s, finished_at = statement_timestamp()
 WHERE audit_id = %(audit_id)s AND status = 'running'
"""

# Finish the audit once every unit is checked (whichever chunk gets there last).
FINISH_SQL = """
UPDATE audits SET status = 'done', finished_at = statement_timestamp()
 WHERE audit_id = %(audit_id)s AND status = 'running' AND planned_at IS NOT NULL
   AND (SELECT count(*) FROM audit_units WHERE audit_id = %(audit_id)s) >= total
"""
AUDIT_SQL = """
SELECT a.audit_id, a.scope, a.requested_by, a.status, a.total, a.created_at, a.finished_at,
       a.failure, a.planned_at IS NOT NULL,
       (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id),
       (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id AND NOT u.ok)
  FROM audits a WHERE a.audit_id = %(audit_id)s
"""
AUDIT_FINDINGS_SQL = """
SELECT game_id, check_name, location, expected, found, unit
  FROM audit_findings WHERE audit_id = %(audit_id)s
 ORDER BY unit, seq
 LIMIT %(limit)s
"""

# The postings caused by any of these streams' events, with their transactions, in order.
POSTINGS_OF_SQL = """
SELECT p.posting_id, t.client_transaction_id, t.kind, t.amount, t.cause_stream,
       t.cause_version, p.account_id, p.amount, p.balance_before, p.balance_after
  FROM ledger_transactions t
  JOIN postings p USING (transaction_id)
 WHERE t.cause_stream = ANY(%(streams)s)
 ORDER BY p.posting_id
"""

# Record the chunk's checked units; a unit an earlier delivery of the chunk recorded stays as it
# was and is not returned, so only the new ones get their findings (and are counted).
UNITS_SQL = """
INSERT INTO audit_units (audit_id, unit, ok)
SELECT %(audit_id)s, u.unit, u.ok FROM unnest(%(units)s::text[], %(oks)s::boolean[]) AS u(unit, ok)
ON CONFLICT (audit_id, unit) DO NOTHING
RETURNING unit
"""

# The findings of the units just recorded, numbered within their unit.
FINDINGS_SQL = """
INSERT INTO audit_findings (audit_id, unit, seq, game_id, check_name, location, expected, found)
SELECT %(audit_id)s, f.unit, f.seq, f.game_id, f.check_name, f.location, f.expected, f.found
  FROM unnest(%(units)s::text[], %(seqs)s::int[], %(game_ids)s::uuid[], %(checks)s::text[],
              %(locations)s::text[], %(expected)s::text[], %(found)s::text[])
       AS f(unit, seq, game_id, check_name, location, expected, found)
ON CONFLICT (audit_id, unit, seq) DO NOTHING
"""


class AuditReads:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def no_idle_limit(self) -> None:
        self._conn.execute(NO_IDLE_LIMIT_SQL)

    def postings_of(self, streams: Sequence[str]) -> dict[str, list[PostingRow]]:
        found: dict[str, list[PostingRow]] = {}
        with self._conn.cursor() as cur:
            cur.execute(POSTINGS_OF_SQL, {"streams": list(streams)}, prepare=True)
            for row in cur.fetchall():
                found.setdefault(row[4], []).append(PostingRow(*row))
        return found

    def record(self, audit_id: uuid.UUID, results: Sequence[tuple[str, list[Finding]]]) -> int:
        """Record the units and their findings; how many units were new."""
        with self._conn.cursor() as cur:
            cur.execute(
                UNITS_SQL,
                {
                    "audit_id": audit_id,
                    "units": [unit for unit, _ in results],
                    "oks": [not findings for _, findings in results],
                },
            )
            new = {row[0] for row in cur.fetchall()}
            rows = [
                (unit, seq, _game_id(unit), f.check, f.location, f.expected, f.found)
                for unit, findings in results
                if unit in new
                for seq, f in enumerate(findings)
            ]
            if rows:
                columns = list(zip(*rows, strict=True))
                cur.execute(
                    FINDINGS_SQL,
                    {
                        "audit_id": audit_id,
                        "units": list(columns[0]),
                        "seqs": list(columns[1]),
                        "game_ids": list(columns[2]),
                        "checks": list(columns[3]),
                        "locations": list(columns[4]),
                        "expected": list(columns[5]),
                        "found": list(columns[6]),
                    },
                )
        return len(new)

    # --- planning, and the audit's own rows ----------------------------------------------------

    def streams(
        self, kind: str, player_id: uuid.UUID | None, start: datetime | None, last: datetime | None
    ) -> list[str]:
        """The game streams of a scope (all, dealt in [start, last], or one player's), then its
        ended duels, in the log's order (duels by name)."""
        with self._conn.cursor() as cur:
            if kind == "dates":
                cur.execute(GAMES_BETWEEN_SQL, {"start": start, "last": last})
            elif kind == "player":
                cur.execute(PLAYER_GAMES_SQL, {"player_id": str(player_id)})
            else:
                cur.execute(ALL_GAMES_SQL)
            units = [row[0] for row in cur.fetchall()]
            if kind == "player":
                cur.execute(PLAYER_DUELS_SQL, {"player_id": str(player_id)})
            else:
                cur.execute(DUELS_SQL, {"start": start, "last": last})
            units += sorted(row[0] for row in cur.fetchall())
        return units

    def player_streams(self) -> list[str]:
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_STREAMS_SQL)
            return [row[0] for row in cur.fetchall()]

    def create(
        self, audit_id: uuid.UUID, scope: dict[str, Any], requested_by: str, units: list[str]
    ) -> None:
        """The audit's row and its plan (finished at once when it plans nothing)."""
        with self._conn.cursor() as cur:
            cur.execute(
                NEW_AUDIT_SQL,
                {
                    "audit_id": audit_id,
                    "scope": Jsonb(scope),
                    "requested_by": requested_by,
                    "total": len(units),
                },
            )
            cur.execute(PLAN_SQL, {"audit_id": audit_id, "units": units})
            if not units:
                cur.execute(FINISH_SQL, {"audit_id": audit_id})

    def request(self, credential: str, audit_id: uuid.UUID, scope: dict[str, Any]) -> None:
        """The service's part: ask for an audit as an auditor (refused for anyone else)."""
        self._conn.execute(
            REQUEST_SQL, {"credential": credential, "audit_id": audit_id, "scope": Jsonb(scope)}
        )

    def unplanned(self, audit_id: uuid.UUID) -> dict[str, Any] | None:
        """The scope of an asked-for audit still to plan (locked until the transaction ends)."""
        row = self._conn.execute(UNPLANNED_SQL, {"audit_id": audit_id}).fetchone()
        return None if row is None else dict(row[0])

    def planned(self, audit_id: uuid.UUID, units: list[str]) -> None:
        """Its plan (finished at once when it plans nothing)."""
        with self._conn.cursor() as cur:
            cur.execute(PLANNED_SQL, {"audit_id": audit_id, "total": len(units)})
            cur.execute(PLAN_SQL, {"audit_id": audit_id, "units": units})
            if not units:
                cur.execute(FINISH_SQL, {"audit_id": audit_id})

    def unplanned_stalled(self, quiet: timedelta) -> list[uuid.UUID]:
        return [row[0] for row in self._conn.execute(UNPLANNED_STALLED_SQL, {"quiet": quiet})]

    def finish(self, audit_id: uuid.UUID) -> None:
        self._conn.execute(FINISH_SQL, {"audit_id": audit_id})

    def stalled(self, quiet: timedelta) -> list[tuple[uuid.UUID, int, list[str]]]:
        """Finish every running audit whose units are all checked; then the running audits
        quiet for ``quiet``: (audit, re-sends so far, its unchecked units)."""
        with self._conn.cursor() as cur:
            cur.execute(FINISH_CHECKED_SQL)
            cur.execute(STALLED_SQL, {"quiet": quiet})
            return [(row[0], int(row[1]), list(row[2])) for row in cur.fetchall()]

    def fail(self, audit_id: uuid.UUID, failure: str) -> None:
        self._conn.execute(FAIL_SQL, {"audit_id": audit_id, "failure": failure})

    def resent(self, audit_id: uuid.UUID) -> None:
        self._conn.execute(RESENT_SQL, {"audit_id": audit_id})

    def status(
        self, audit_id: uuid.UUID, findings_limit: int
    ) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]] | None:
        """The audit's row (with its checked and failed unit counts) and its findings."""
        with self._conn.cursor() as cur:
            cur.execute(AUDIT_SQL, {"audit_id": audit_id})
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(AUDIT_FINDINGS_SQL, {"audit_id": audit_id, "limit": findings_limit})
            return tuple(row), [tuple(r) for r in cur.fetchall()]

    # --- the ledger as the audit reads it ------------------------------------------------------

    def stream_postings(self, stream: str) -> list[PostingRow]:
        """The ledger postings caused by one stream's events."""
        with self._conn.cursor() as cur:
            cur.execute(POSTINGS_SQL, {"stream": stream})
            return [PostingRow(*row) for row in cur.fetchall()]

    def all_postings(self) -> list[PostingRow]:
        with self._conn.cursor() as cur:
            cur.execute(ALL_POSTINGS_SQL)
            return [PostingRow(*row) for row in cur.fetchall()]

    def balances(self) -> dict[str, int]:
        with self._conn.cursor() as cur:
            cur.execute(BALANCES_SQL)
            return {account: int(balance) for account, balance in cur.fetchall()}

    def accounts(self) -> list[Account]:
        with self._conn.cursor() as cur:
            cur.execute(ACCOUNTS_SQL)
            return [
                Account(account, kind, currency, str(player) if player else None)
                for account, kind, currency, player in cur.fetchall()
            ]

    def has_stream(self, stream: str) -> bool:
        with self._conn.cursor() as cur:
            cur.execute(STREAM_EXISTS_SQL, {"stream": stream})
            row = cur.fetchone()
            return bool(row and row[0])

    # --- sealed secrets ------------------------------------------------------------------------

    def secrets_of(self, ids: Sequence[str]) -> set[str]:
        """Which of these games' and duels' ids have a sealed secret kept."""
        with self._conn.cursor() as cur:
            cur.execute(SECRETS_OF_SQL, {"ids": list(ids)})
            return {row[0] for row in cur.fetchall()}


def _game_id(unit: str) -> uuid.UUID | None:
    """The game (or duel) a unit names, for its findings."""
    if is_game(unit) or is_duel(unit):
        return uuid.UUID(unit.split("-", 1)[1])
    return None
