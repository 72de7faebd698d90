"""Whole-history audits: plan the units to check (every game stream in scope, every player
stream, the ledger as a whole, and the log as a whole against its signed checkpoints), check
them in chunks, and record findings.

Checking a unit writes its row in audit_units and its findings in one transaction, with
ON CONFLICT DO NOTHING, so a chunk that Celery delivers twice changes nothing the second time.
Games are found in the event log itself, never in a projection an attacker could edit.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from events.records import RecordedEvent
from service.duel_verification import SeatStream, verify_duel
from service.finance import utc_span
from service.paytable import Paytable
from service.storage.audit_reads import AuditReads
from service.streams import game_stream, is_duel, is_game, is_player, player_stream
from service.unit_of_work import UnitOfWork
from service.verification import (
    Finding,
    PostingRow,
    verify_game,
    verify_ledger,
    verify_player_stream,
)

log = logging.getLogger(__name__)

CHUNK = 100
LEDGER_UNIT = "ledger"
#: The whole log against its signed checkpoints, with every ledger cause and read-model row.
LOG_UNIT = "log"

#: The check of the log unit (service.anchors.Anchors.findings, which holds the public keys).
LogCheck = Callable[[UnitOfWork], list[Finding]]

# A duel's stream, or a duel seat's game, is audited once the duel has ended: until then every
# seat's cards are sealed from staff (service.game_service.seal_seat_from_staff), and its
# checks need the revealed seed anyway. A game's first event names its duel, if any.
ENDED_DUEL = """(SELECT 1 FROM events o
                  WHERE o.stream_id = {} AND o.type IN ('DuelSettled', 'DuelCancelled'))"""
SEAT_ENDED = (
    " AND (e.data->>'duel_id' IS NULL OR EXISTS "
    + ENDED_DUEL.format("'duel-' || (e.data->>'duel_id')")
    + ")"
)

# Game streams in the log: all, those dealt in a date range, or one player's.
ALL_GAMES_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND stream_id LIKE 'game-%%'{SEAT_ENDED}
 ORDER BY position
"""
GAMES_BETWEEN_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND stream_id LIKE 'game-%%'
   AND recorded_at >= %(start)s AND recorded_at <= %(last)s{SEAT_ENDED}
 ORDER BY position
"""
PLAYER_GAMES_SQL = f"""
SELECT stream_id FROM events e
 WHERE version = 1 AND stream_id LIKE 'game-%%' AND data->>'player_id' = %(player_id)s{SEAT_ENDED}
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

NEW_AUDIT_SQL = """
INSERT INTO audits (audit_id, scope, requested_by, status, total)
VALUES (%(audit_id)s, %(scope)s, %(requested_by)s, 'running', %(total)s)
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
 WHERE a.status = 'running'
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
 WHERE audit_id = %(audit_id)s AND status = 'running'
   AND (SELECT count(*) FROM audit_units WHERE audit_id = %(audit_id)s) >= total
"""
AUDIT_SQL = """
SELECT a.audit_id, a.scope, a.requested_by, a.status, a.total, a.created_at, a.finished_at,
       a.failure,
       (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id),
       (SELECT count(*) FROM audit_units u WHERE u.audit_id = a.audit_id AND NOT u.ok)
  FROM audits a WHERE a.audit_id = %(audit_id)s
"""
FINDINGS_SQL = """
SELECT game_id, check_name, location, expected, found, unit
  FROM audit_findings WHERE audit_id = %(audit_id)s
 ORDER BY unit, seq
 LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class Scope:
    kind: str  # "all", "dates" or "player"
    start: date | None = None
    end: date | None = None  # inclusive
    player_id: uuid.UUID | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "from": self.start.isoformat() if self.start else None,
            "to": self.end.isoformat() if self.end else None,
            "player_id": str(self.player_id) if self.player_id else None,
        }

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> Scope:
        def day(value: Any) -> date | None:
            return date.fromisoformat(value) if value else None

        player = stored.get("player_id")
        return cls(
            stored["kind"],
            day(stored.get("from")),
            day(stored.get("to")),
            uuid.UUID(player) if player else None,
        )


@dataclass(frozen=True, slots=True)
class AuditFinding:
    game_id: uuid.UUID | None
    check: str
    location: str
    expected: str
    found: str
    unit: str


@dataclass(frozen=True, slots=True)
class AuditStatus:
    audit_id: uuid.UUID
    scope: Scope
    requested_by: str
    status: str
    total: int
    checked: int
    failed_units: int
    created_at: datetime
    finished_at: datetime | None
    findings: tuple[AuditFinding, ...]
    failure: str | None = None


def plan(uow: UnitOfWork, scope: Scope) -> list[str]:
    """The units an audit of ``scope`` checks: its game streams, then (for a whole-history
    audit, or one player's) the player streams and the whole ledger."""
    with uow.conn.cursor() as cur:
        if scope.kind == "dates":
            assert scope.start is not None
            assert scope.end is not None
            start, last = utc_span(scope.start, scope.end)
            cur.execute(GAMES_BETWEEN_SQL, {"start": start, "last": last})
        elif scope.kind == "player":
            cur.execute(PLAYER_GAMES_SQL, {"player_id": str(scope.player_id)})
        else:
            cur.execute(ALL_GAMES_SQL)
        units = [row[0] for row in cur.fetchall()]
        if scope.kind == "player":
            cur.execute(PLAYER_DUELS_SQL, {"player_id": str(scope.player_id)})
        elif scope.kind == "dates":
            cur.execute(DUELS_SQL, {"start": start, "last": last})
        else:
            cur.execute(DUELS_SQL, {"start": None, "last": None})
        units += sorted(row[0] for row in cur.fetchall())
        if scope.kind == "all":
            cur.execute(PLAYER_STREAMS_SQL)
            units += [row[0] for row in cur.fetchall()]
            units += [LEDGER_UNIT, LOG_UNIT]
        elif scope.kind == "player":
            assert scope.player_id is not None
            units += [player_stream(scope.player_id), LEDGER_UNIT]
    return units


def start(uow: UnitOfWork, scope: Scope, requested_by: str) -> tuple[uuid.UUID, list[list[str]]]:
    """Record a new audit and return its id and its units in chunks (committed)."""
    units = plan(uow, scope)
    audit_id = uuid.uuid4()
    with uow.conn.cursor() as cur:
        cur.execute(
            NEW_AUDIT_SQL,
            {
                "audit_id": audit_id,
                "scope": Jsonb(scope.as_json()),
                "requested_by": requested_by,
                "total": len(units),
            },
        )
        cur.execute(PLAN_SQL, {"audit_id": audit_id, "units": units})
        if not units:
            cur.execute(FINISH_SQL, {"audit_id": audit_id})
    uow.commit()
    return audit_id, _chunks(units)


def _chunks(units: Sequence[str]) -> list[list[str]]:
    return [list(units[i : i + CHUNK]) for i in range(0, len(units), CHUNK)]


#: An audit with no progress for this long has lost work (a worker crashed mid-chunk).
STALLED_AFTER = timedelta(minutes=5)
#: How many times lost work is sent again before the audit is marked failed.
MAX_RESENDS = 3


def resume(
    uow: UnitOfWork, quiet: timedelta = STALLED_AFTER, max_resends: int = MAX_RESENDS
) -> list[tuple[uuid.UUID, list[list[str]]]]:
    """Running audits that have stalled: each one's unchecked units in chunks, to send again
    (committed as one more re-send); an audit re-sent ``max_resends`` times already is marked
    failed with the reason instead."""
    again: list[tuple[uuid.UUID, list[list[str]]]] = []
    with uow.conn.cursor() as cur:
        cur.execute(FINISH_CHECKED_SQL)
        cur.execute(STALLED_SQL, {"quiet": quiet})
        for audit_id, resent, missing in cur.fetchall():
            if resent >= max_resends:
                failure = (
                    f"{len(missing)} unit(s) never checked after {resent} re-sends, e.g. "
                    f"{missing[0]}"
                )
                cur.execute(FAIL_SQL, {"audit_id": audit_id, "failure": failure})
                continue
            cur.execute(RESENT_SQL, {"audit_id": audit_id})
            again.append((audit_id, _chunks(missing)))
    uow.commit()
    return again


def _postings(uow: UnitOfWork, sql: str, params: dict[str, Any]) -> list[PostingRow]:
    with uow.conn.cursor() as cur:
        cur.execute(sql, params)
        return [PostingRow(*row) for row in cur.fetchall()]


def stream_postings(uow: UnitOfWork, stream: str) -> list[PostingRow]:
    """The ledger postings caused by one stream's events."""
    return _postings(uow, POSTINGS_SQL, {"stream": stream})


def check_unit(
    uow: UnitOfWork,
    unit: str,
    paytables: Mapping[str, Paytable],
    log_check: LogCheck,
    read: tuple[list[RecordedEvent], list[PostingRow]] | None = None,
) -> list[Finding]:
    """The findings for one unit (reads only). ``read``: the stream's records and postings,
    when the caller read them with the rest of its chunk."""
    if unit == LOG_UNIT:
        return log_check(uow)
    if unit == LEDGER_UNIT:
        with uow.conn.cursor() as cur:
            cur.execute(BALANCES_SQL)
            balances = {account: int(balance) for account, balance in cur.fetchall()}
        return verify_ledger(_postings(uow, ALL_POSTINGS_SQL, {}), balances)
    if read is None:
        read = uow.events.read_stream(unit), stream_postings(uow, unit)
    records, postings = read
    if is_player(unit):
        return verify_player_stream(records, postings)
    try:
        if is_duel(unit):
            return _check_duel(uow, records, postings, paytables)
        return verify_game(records, postings, paytables).findings
    except Exception as exc:  # a defect of the verifier must not hide the rest of the audit
        log.exception("verifying %s failed", unit)
        where = f"{unit} v{records[-1].version}" if records else unit
        return [Finding("rules", where, "a stream the verifier can read", repr(exc))]


def _check_duel(
    uow: UnitOfWork,
    records: Sequence[RecordedEvent],
    postings: list[PostingRow],
    paytables: Mapping[str, Paytable],
) -> list[Finding]:
    """A duel with every seat's game (each verified again with the duel's revealed seed)."""
    seats = {}
    for record in records:
        if record.type == "SeatDealt":
            stream = game_stream(record.data["game_id"])
            seats[str(record.data["game_id"])] = SeatStream(
                uow.events.read_stream(stream), stream_postings(uow, stream)
            )
    return verify_duel(records, postings, seats, paytables).findings


def check_chunk(
    unit_of_work: Callable[[], UnitOfWork],
    audit_id: uuid.UUID,
    units: Sequence[str],
    paytables: Mapping[str, Paytable],
    log_check: LogCheck,
) -> int:
    """Check each unit and record it with its findings; returns how many were newly recorded.
    The chunk's streams and their postings are read with one statement each (outside any
    transaction), every unit checked, then all the results recorded in one transaction."""
    streams = [u for u in units if is_game(u) or is_player(u)]
    results: list[tuple[str, list[Finding]]] = []
    with unit_of_work() as uow:
        uow.outside_transaction()
        records = uow.events.read_streams(streams) if streams else {}
        postings = AuditReads(uow.conn).postings_of(streams) if streams else {}
        for unit in units:
            read = (records.get(unit, []), postings.get(unit, [])) if unit in streams else None
            results.append((unit, check_unit(uow, unit, paytables, log_check, read)))
    with unit_of_work() as uow:
        recorded = AuditReads(uow.conn).record(audit_id, results)
        uow.conn.execute(FINISH_SQL, {"audit_id": audit_id})
        uow.commit()
    return recorded


def status(
    uow: UnitOfWork, audit_id: uuid.UUID, *, findings_limit: int = 1000
) -> AuditStatus | None:
    with uow.conn.cursor() as cur:
        cur.execute(AUDIT_SQL, {"audit_id": audit_id})
        row = cur.fetchone()
        if row is None:
            return None
        cur.execute(FINDINGS_SQL, {"audit_id": audit_id, "limit": findings_limit})
        found = tuple(AuditFinding(*r) for r in cur.fetchall())
    audit, scope, by, state, total, created, finished, failure, checked, failed = row
    return AuditStatus(
        audit,
        Scope.from_json(scope),
        by,
        state,
        total,
        checked,
        failed,
        created,
        finished,
        found,
        failure,
    )
