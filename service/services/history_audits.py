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

from events.records import RecordedEvent
from service.core.duel_verification import SeatStream, verify_duel
from service.core.game_verification import (
    Finding,
    PostingRow,
    verify_game,
    verify_ledger,
    verify_player_stream,
)
from service.core.paytable import Paytable
from service.core.streams import game_stream, is_duel, is_game, is_player, player_stream
from service.services.finance_books import utc_span
from service.services.unit_of_work import UnitOfWork
from service.storage.audit_reads import AuditReads

log = logging.getLogger(__name__)

CHUNK = 100
LEDGER_UNIT = "ledger"
#: The whole log against its signed checkpoints, with every ledger cause and read-model row.
LOG_UNIT = "log"

#: The check of the log unit (service.services.checkpoints.Anchors.findings, which holds the public
#: keys).
LogCheck = Callable[[UnitOfWork], list[Finding]]


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
    """The units an audit of ``scope`` checks: its game streams and ended duels, then (for a
    whole-history audit, or one player's) the player streams and the whole ledger."""
    reads = AuditReads(uow.conn)
    start = last = None
    if scope.kind == "dates":
        assert scope.start is not None
        assert scope.end is not None
        start, last = utc_span(scope.start, scope.end)
    units = reads.streams(scope.kind, scope.player_id, start, last)
    if scope.kind == "all":
        units += reads.player_streams()
        units += [LEDGER_UNIT, LOG_UNIT]
    elif scope.kind == "player":
        assert scope.player_id is not None
        units += [player_stream(scope.player_id), LEDGER_UNIT]
    return units


def start(uow: UnitOfWork, scope: Scope, requested_by: str) -> tuple[uuid.UUID, list[list[str]]]:
    """Record a new audit and return its id and its units in chunks (committed)."""
    units = plan(uow, scope)
    audit_id = uuid.uuid4()
    AuditReads(uow.conn).create(audit_id, scope.as_json(), requested_by, units)
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
    reads = AuditReads(uow.conn)
    for audit_id, resent, missing in reads.stalled(quiet):
        if resent >= max_resends:
            failure = (
                f"{len(missing)} unit(s) never checked after {resent} re-sends, e.g. {missing[0]}"
            )
            reads.fail(audit_id, failure)
            continue
        reads.resent(audit_id)
        again.append((audit_id, _chunks(missing)))
    uow.commit()
    return again


def stream_postings(uow: UnitOfWork, stream: str) -> list[PostingRow]:
    """The ledger postings caused by one stream's events."""
    return AuditReads(uow.conn).stream_postings(stream)


def check_unit(
    uow: UnitOfWork,
    unit: str,
    paytables: Mapping[str, Paytable],
    log_check: LogCheck,
    read: tuple[list[RecordedEvent], list[PostingRow]] | None = None,
) -> list[Finding]:
    """The findings for one unit (reads only, all in the caller's snapshot: check_chunk).
    ``read``: the stream's records and postings, when the caller read them with the rest of its
    chunk."""
    if unit == LOG_UNIT:
        return log_check(uow)
    if unit == LEDGER_UNIT:
        reads = AuditReads(uow.conn)
        return verify_ledger(reads.all_postings(), reads.balances())
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

    Every unit of the chunk is read in one snapshot (a read-only REPEATABLE READ transaction:
    UnitOfWork.snapshot), its streams and their postings with one statement each: a transaction
    committing between two reads (a stake between the ledger's postings and balances, a deposit
    between a player's events and postings) is in both or in neither, never taken for
    tampering, and a transaction that only reads cannot fail for a concurrent writer's sake.
    The results are then recorded in a READ COMMITTED transaction of their own: in the snapshot,
    a delivery of the same chunk or another chunk finishing the audit meanwhile would fail the
    write with a serialization failure, and the count that finishes the audit would miss their
    units."""
    streams = [u for u in units if is_game(u) or is_player(u)]
    results: list[tuple[str, list[Finding]]] = []
    with unit_of_work() as uow:
        uow.snapshot()
        AuditReads(uow.conn).no_idle_limit()
        records = uow.events.read_streams(streams) if streams else {}
        postings = AuditReads(uow.conn).postings_of(streams) if streams else {}
        for unit in units:
            read = (records.get(unit, []), postings.get(unit, [])) if unit in streams else None
            results.append((unit, check_unit(uow, unit, paytables, log_check, read)))
    with unit_of_work() as uow:
        reads = AuditReads(uow.conn)
        recorded = reads.record(audit_id, results)
        reads.finish(audit_id)
        uow.commit()
    return recorded


def status(
    uow: UnitOfWork, audit_id: uuid.UUID, *, findings_limit: int = 1000
) -> AuditStatus | None:
    stored = AuditReads(uow.conn).status(audit_id, findings_limit)
    if stored is None:
        return None
    row, findings = stored
    found = tuple(AuditFinding(*r) for r in findings)
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
