"""Verifying the whole event log against its signed checkpoints (events/anchor.py).

Pure: the caller reads the checkpoints, their recorded heads and the log. One pass over the log
recomputes the running hash; at each checkpoint's position the count and the hash must be what
it signed. A checkpoint that does not hold is reported, then the pass goes on from what it
signed, so each later checkpoint is judged on its own stretch of the log and a finding says
where the damage is. The streams' heads the checkpoints recorded name what was cut, rewritten
or deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from events.anchor import (
    START,
    Checkpoint,
    Head,
    LogEntry,
    heads_digest,
    signature_holds,
    step,
)
from service.core.game_verification import Finding

# The rows the checks read (service/storage/checkpoints.py reads them), named here so this
# module stays pure.


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    seq: int
    position: int
    message: str
    signature: str
    key_id: str
    requested_by: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MissingCause:
    transaction: str
    kind: str
    stream_id: str
    version: int


@dataclass(frozen=True, slots=True)
class OrphanRow:
    stream_id: str
    version: int  # the version the read model says the stream reached
    head: int  # the stream's head in the log (0: no stream at all)


@dataclass(frozen=True, slots=True)
class OutOfPlace:
    """An event whose position or time no append gives."""

    position: int
    stream_id: str
    version: int
    recorded_at: datetime
    stream_before: datetime | None  # the time of the stream's event before it
    log_before: datetime | None  # the latest time at a lower position


@dataclass(frozen=True, slots=True)
class MisdatedReconciliation:
    seq: int
    day: date
    computed_at: datetime
    before: datetime | None  # the time of the row stored before it
    now: datetime


@dataclass(frozen=True, slots=True)
class Anchored:
    """A checkpoint whose signature holds, and the heads it recorded."""

    checkpoint: Checkpoint
    heads: Sequence[Head]


def trusted_checkpoints(
    stored: Sequence[StoredCheckpoint],
    heads: Mapping[int, Sequence[Head]],
    public_keys: Mapping[str, Ed25519PublicKey],
) -> tuple[list[Anchored], list[Finding]]:
    """The checkpoints that can be trusted (signed by a trusted key, matching their rows and
    their recorded heads), and findings for the rest and for gaps in the sequence."""
    trusted: list[Anchored] = []
    findings: list[Finding] = []
    expected_seq = 1
    previous: Checkpoint | None = None
    for row in stored:
        where = f"checkpoint {row.seq}"
        if row.seq != expected_seq:
            findings.append(
                Finding(
                    "checkpoint-missing",
                    f"checkpoint {expected_seq}",
                    f"checkpoints numbered on from {expected_seq - 1}",
                    f"checkpoint {row.seq} next: {row.seq - expected_seq} deleted",
                )
            )
        expected_seq = row.seq + 1
        if not signature_holds(row.message.encode(), row.signature, public_keys, row.key_id):
            findings.append(
                Finding(
                    "checkpoint-signature",
                    where,
                    "an Ed25519 signature by a trusted key",
                    f"a signature that does not hold (key {row.key_id})",
                )
            )
            continue
        checkpoint = Checkpoint.from_message(row.message)
        if (checkpoint.seq, checkpoint.position) != (row.seq, row.position):
            findings.append(
                Finding(
                    "checkpoint-row",
                    where,
                    f"seq {checkpoint.seq} at position {checkpoint.position} (signed)",
                    f"seq {row.seq} at position {row.position}",
                )
            )
            continue
        recorded = heads.get(row.seq, ())
        digest = heads_digest(recorded)
        if digest != checkpoint.heads_digest or len(recorded) != checkpoint.streams:
            findings.append(
                Finding(
                    "checkpoint-heads",
                    where,
                    f"{checkpoint.streams} stream heads, digest {checkpoint.heads_digest}",
                    f"{len(recorded)} stream heads, digest {digest}",
                )
            )
            recorded = ()
        if previous is not None and previous.seq == checkpoint.seq - 1:
            chained = (previous.position, previous.log_hash)
            if (checkpoint.previous_position, checkpoint.previous_log_hash) != chained:
                findings.append(
                    Finding(
                        "checkpoint-chain",
                        where,
                        f"extends checkpoint {previous.seq} at position {previous.position}",
                        f"extends position {checkpoint.previous_position}",
                    )
                )
        previous = checkpoint
        trusted.append(Anchored(checkpoint, recorded))
    return trusted, findings


def verify_log(anchored: Sequence[Anchored], entries: Iterable[LogEntry]) -> list[Finding]:
    """The log (every event, in position order) against the trusted checkpoints."""
    findings: list[Finding] = []
    pending = sorted(anchored, key=lambda a: a.checkpoint.position)
    # The latest checkpointed head of each stream: the log must still hold that exact event.
    wanted: dict[str, tuple[int, str, int]] = {}
    for anchor in sorted(anchored, key=lambda a: a.checkpoint.seq):
        for stream_id, version, event_hash in anchor.heads:
            wanted[stream_id] = (version, event_hash, anchor.checkpoint.seq)
    found_hash: dict[str, str] = {}
    head: dict[str, int] = {}

    log_hash, count = START[1], 0
    since = START[0]
    at = 0

    def judge(checkpoint: Checkpoint) -> None:
        nonlocal log_hash, count, since
        if (count, log_hash) != (checkpoint.events, checkpoint.log_hash):
            findings.append(
                Finding(
                    "log-hash",
                    f"checkpoint {checkpoint.seq} (positions {since + 1}-{checkpoint.position})",
                    f"{checkpoint.events} events, log hash {checkpoint.log_hash}",
                    f"{count} events, log hash {log_hash}",
                )
            )
            # Go on from what it signed, so the next checkpoint is judged on its own stretch.
            log_hash, count = checkpoint.log_hash, checkpoint.events
        since = checkpoint.position

    for entry in entries:
        position, stream_id, version, event_hash = entry
        while at < len(pending) and pending[at].checkpoint.position < position:
            judge(pending[at].checkpoint)
            at += 1
        log_hash = step(log_hash, entry)
        count += 1
        head[stream_id] = version
        if stream_id in wanted and wanted[stream_id][0] == version:
            found_hash[stream_id] = event_hash
    for anchor in pending[at:]:
        judge(anchor.checkpoint)

    for stream_id, (version, event_hash, seq) in sorted(wanted.items()):
        expected = f"v{version} with hash {event_hash} (checkpoint {seq})"
        if stream_id not in head:
            findings.append(Finding("stream-deleted", stream_id, expected, "no events at all"))
        elif head[stream_id] < version:
            findings.append(
                Finding("stream-truncated", stream_id, expected, f"ends at v{head[stream_id]}")
            )
        elif found_hash.get(stream_id) != event_hash:
            findings.append(
                Finding(
                    "stream-rewritten",
                    f"{stream_id} v{version}",
                    expected,
                    f"hash {found_hash.get(stream_id)}",
                )
            )
    return findings


def cause_findings(missing: Iterable[MissingCause]) -> list[Finding]:
    """Ledger transactions whose cause event is not in the log."""
    return [
        Finding(
            "ledger-cause",
            f"{m.stream_id} v{m.version}",
            f"the event that caused {m.kind} transaction {m.transaction}",
            "no such event in the log",
        )
        for m in missing
    ]


def projection_findings(orphans: Iterable[OrphanRow]) -> list[Finding]:
    """Rows of the read models whose stream is missing or shorter than they say."""
    return [
        Finding(
            "projection-stream",
            o.stream_id,
            f"a stream reaching v{o.version}, as the read model says",
            "no stream" if o.head == 0 else f"a stream ending at v{o.head}",
        )
        for o in orphans
    ]


def placement_findings(events: Iterable[OutOfPlace]) -> list[Finding]:
    """Events at a position or a time no append gives (an insert around the append function)."""
    findings: list[Finding] = []
    for e in events:
        where = f"{e.stream_id} v{e.version} (position {e.position})"
        if e.position <= 0:
            findings.append(
                Finding("event-position", where, "a position from 1 on", str(e.position))
            )
        elif e.stream_before is not None and e.recorded_at < e.stream_before:
            findings.append(
                Finding(
                    "event-back-dated",
                    where,
                    f"recorded at or after its stream's event before it ({e.stream_before})",
                    str(e.recorded_at),
                )
            )
        else:
            findings.append(
                Finding(
                    "event-back-dated",
                    where,
                    f"recorded no earlier than the log before it ({e.log_before}) less the "
                    "time an append may take",
                    str(e.recorded_at),
                )
            )
    return findings


def beyond_log_findings(stored: Iterable[StoredCheckpoint], head: int) -> list[Finding]:
    """Stored checkpoints past the log's last position (which no checkpoint can cover)."""
    return [
        Finding(
            "checkpoint-beyond-log",
            f"checkpoint {row.seq}",
            f"a position at most the log's last, {head}",
            str(row.position),
        )
        for row in stored
        if row.position > head
    ]


def reconciliation_findings(rows: Iterable[MisdatedReconciliation]) -> list[Finding]:
    """Stored reconciliations dated in the future or before one stored earlier."""
    return [
        Finding(
            "reconciliation-time",
            f"reconciliation {r.seq} of {r.day}",
            f"stored at a time no later than now ({r.now}) and no earlier than the row before"
            + ("" if r.before is None else f" ({r.before})"),
            str(r.computed_at),
        )
        for r in rows
    ]
