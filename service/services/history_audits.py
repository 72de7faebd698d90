"""Whole-history audits: plan the units to check (every game stream in scope, every player
stream, the operator's gaming controls, the ledger as a whole, and the log as a whole against
its signed checkpoints), check them in chunks, and record findings.

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
from service.core.history_checks import (
    account_findings,
    cause_stream_findings,
    controls_findings,
    safer_gambling_findings,
    secret_of,
    seed_findings,
)
from service.core.paytable import Paytable, PaytableBook
from service.core.streams import (
    CONTROLS,
    game_stream,
    is_controls,
    is_duel,
    is_game,
    is_player,
    is_wallet,
    player_stream,
)
from service.core.wallet_verification import AnswerCheck, verify_wallet_stream
from service.services.checkpoints import APPEND_SLACK
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
class StreamRead:
    """What a stream's unit is checked on: its records, the postings its events caused, and
    which of the sealed secrets its deal needs are kept."""

    records: list[RecordedEvent]
    postings: list[PostingRow]
    secrets: frozenset[str] = frozenset()


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
    #: Planned by the audit's worker (its total is then its units; 0 until).
    planned: bool = True


def plan(uow: UnitOfWork, scope: Scope) -> list[str]:
    """The units an audit of ``scope`` checks: its game streams and ended duels, then (for a
    whole-history audit, or one player's) the player streams and the whole ledger; a
    whole-history audit also the gaming controls, if any were ever switched, and the log."""
    reads = AuditReads(uow.conn)
    start = last = None
    if scope.kind == "dates":
        assert scope.start is not None
        assert scope.end is not None
        start, last = utc_span(scope.start, scope.end)
    units = reads.streams(scope.kind, scope.player_id, start, last)
    if scope.kind == "all":
        units += reads.player_streams()
        if reads.has_stream(CONTROLS):
            units.append(CONTROLS)
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


def request(uow: UnitOfWork, scope: Scope, credential: str) -> uuid.UUID:
    """Ask for an audit of ``scope`` as the auditor whose key is ``credential`` (the service's
    part, committed): the audit's worker plans it (plan_requested), since only the audit's
    login writes an audit's plan, units and findings (migrations/0037)."""
    audit_id = uuid.uuid4()
    AuditReads(uow.conn).request(credential, audit_id, scope.as_json())
    uow.commit()
    return audit_id


def plan_requested(uow: UnitOfWork, audit_id: uuid.UUID) -> list[list[str]]:
    """Plan an asked-for audit as the audit's login (committed): its units in chunks, to check;
    none if it was planned already (a second delivery of its planning)."""
    reads = AuditReads(uow.conn)
    scope = reads.unplanned(audit_id)
    if scope is None:
        return []
    units = plan(uow, Scope.from_json(scope))
    reads.planned(audit_id, units)
    uow.commit()
    return _chunks(units)


def unplanned_stalled(uow: UnitOfWork, quiet: timedelta | None = None) -> list[uuid.UUID]:
    """Asked-for audits whose planning was lost (a worker crashed with it): to plan again."""
    return AuditReads(uow.conn).unplanned_stalled(STALLED_AFTER if quiet is None else quiet)


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
    read: StreamRead | tuple[list[RecordedEvent], list[PostingRow]] | None = None,
    *,
    answer_check: AnswerCheck | None = None,
) -> list[Finding]:
    """The findings for one unit (reads only, all in the caller's snapshot: check_chunk).
    ``read``: the stream's, when the caller read it with the rest of its chunk (or its records
    and postings only: the rest is read here)."""
    if unit == LOG_UNIT:
        return log_check(uow)
    if unit == LEDGER_UNIT:
        reads = AuditReads(uow.conn)
        postings = reads.all_postings()
        return (
            verify_ledger(postings, reads.balances())
            + account_findings(reads.accounts())
            + cause_stream_findings(postings)
        )
    if read is None:
        read = read_streams(uow, [unit])[unit]
    elif isinstance(read, tuple):
        read = _with_deals(uow, {unit: read[0]}, {unit: read[1]})[unit]
    records, postings = read.records, read.postings
    if is_controls(unit):
        return controls_findings(records)
    if is_wallet(unit):
        # A round's wallet transactions (seamless mode): the operator's answers, as kept.
        return verify_wallet_stream(records, postings, answer_check)
    if is_player(unit):
        # A change is decided when its transaction begins, recorded a little later.
        return verify_player_stream(records, postings) + safer_gambling_findings(
            records, APPEND_SLACK
        )
    try:
        if is_duel(unit):
            found = _check_duel(uow, records, postings, paytables)
        else:
            found = verify_game(records, postings, paytables).findings
    except Exception as exc:  # a defect of the verifier must not hide the rest of the audit
        log.exception("verifying %s failed", unit)
        where = f"{unit} v{records[-1].version}" if records else unit
        found = [Finding("rules", where, "a stream the verifier can read", repr(exc))]
    return found + seed_findings(records, read.secrets)


def read_streams(uow: UnitOfWork, streams: Sequence[str]) -> dict[str, StreamRead]:
    """What the units of these streams are checked on, with one statement each for all of
    them: their records, their postings and their deals' sealed secrets."""
    if not streams:
        return {}
    records = uow.events.read_streams(streams)
    postings = AuditReads(uow.conn).postings_of(streams)
    return _with_deals(uow, {s: records.get(s, []) for s in streams}, postings)


def _with_deals(
    uow: UnitOfWork,
    records: Mapping[str, list[RecordedEvent]],
    postings: Mapping[str, list[PostingRow]],
) -> dict[str, StreamRead]:
    """Streams as read, with which of their deals' sealed secrets are kept."""
    reads = AuditReads(uow.conn)
    dealt = [s for s in records if is_game(s) or is_duel(s)]
    wanted = sorted({secret for s in dealt if (secret := secret_of(records[s])) is not None})
    kept = frozenset(reads.secrets_of(wanted)) if wanted else frozenset()
    return {
        stream: StreamRead(list(stream_records), postings.get(stream, []), kept)
        for stream, stream_records in records.items()
    }


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
    answer_check: AnswerCheck | None = None,
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
    streams = [
        u
        for u in units
        if is_game(u) or is_duel(u) or is_player(u) or is_controls(u) or is_wallet(u)
    ]
    results: list[tuple[str, list[Finding]]] = []
    with unit_of_work() as uow:
        uow.snapshot()
        AuditReads(uow.conn).no_idle_limit()
        read = read_streams(uow, streams)
        paytables = PaytableBook(paytables, uow.significant.logged_paytables())
        for unit in units:
            found = check_unit(
                uow, unit, paytables, log_check, read.get(unit), answer_check=answer_check
            )
            results.append((unit, found))
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
    audit, scope, by, state, total, created, finished, failure, planned, checked, failed = row
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
        bool(planned),
    )
