"""Anchored history, the imperative shell: making signed checkpoints of the event log (beat,
and on demand), exporting them, and checking the log against them (events/anchor.py holds the
format, service/core/log_verification.py the checks).

The signing key lives outside the database: ANCHOR_SIGNING_KEY_FILE (an Ed25519 private key in
PEM, as ``openssl genpkey -algorithm ed25519`` writes it). In development and test, without
one, a key is generated into the data folder on first use. Retired keys' public halves
(ANCHOR_RETIRED_PUBLIC_KEYS_FILE) keep older checkpoints verifiable after a rotation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from events.anchor import (
    START,
    Checkpoint,
    Signer,
    export,
    heads_digest,
    load_public_keys,
    new_private_pem,
    public_pem,
    signature_holds,
    step,
    verify_document,
)
from events.chain import timestamp_text
from service.core.game_verification import Finding
from service.core.log_verification import (
    StoredCheckpoint,
    beyond_log_findings,
    cause_findings,
    placement_findings,
    projection_findings,
    reconciliation_findings,
    trusted_checkpoints,
    verify_log,
)
from service.errors import LogEmpty, NotFound
from service.runtime.config import Settings
from service.runtime.key_files import generated_once
from service.services import finance_books as finance
from service.services.staff_reads import StaffReads
from service.services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

KEY_FILE = "anchor-signing-key.pem"
#: How far the log's times may step back from one position to the next: concurrent appends
#: take their positions and their clock in either order, and none lasts longer than this.
APPEND_SLACK = timedelta(minutes=5)


def embedded_signing_key(data_dir: Path) -> bytes:
    """The development key kept in the data folder, generated if missing."""
    return generated_once(data_dir / KEY_FILE, new_private_pem)


def load_keys(settings: Settings) -> tuple[Signer, dict[str, Ed25519PublicKey]]:
    """The signer, and every public key a checkpoint may be signed with (the signer's own and
    the retired ones)."""
    if settings.anchor_key_file is not None:
        pem = settings.anchor_key_file.read_bytes()
    else:
        pem = embedded_signing_key(settings.data_dir)
    signer = Signer.from_pem(pem)
    trusted = {signer.key_id: signer.public_key}
    if settings.anchor_retired_keys_file is not None:
        trusted |= load_public_keys(settings.anchor_retired_keys_file.read_text())
    return signer, trusted


@dataclass(frozen=True, slots=True)
class DocumentCheck:
    """An exported checkpoint checked against the live log."""

    checkpoint: Checkpoint | None
    findings: list[Finding]

    @property
    def verified(self) -> bool:
        return self.checkpoint is not None and not self.findings


class Anchors:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        signer: Signer,
        public_keys: Mapping[str, Ed25519PublicKey],
        reads: StaffReads,
    ) -> None:
        self._uow = unit_of_work
        #: Auditors' reads: the replica when there is one (service/services/staff_reads.py).
        self._reads = reads
        self._signer = signer
        self._public_keys = dict(public_keys)

    def public_keys(self) -> list[tuple[str, str, bool]]:
        """(key id, PEM, whether it signs new checkpoints) for every trusted key."""
        return [
            (kid, public_pem(key), kid == self._signer.key_id)
            for kid, key in sorted(self._public_keys.items())
        ]

    def checkpoint(
        self, requested_by: str, credential: str | None = None
    ) -> tuple[StoredCheckpoint, bool]:
        """Sign a checkpoint of the log as it stands; (it, True). If nothing was appended since
        the latest one, or another maker got there first: (that one, False). LogEmpty before
        the log's first event. Background work's (beat), or a request's with ``credential``, a
        staff key as presented (migrations/0039)."""
        try:
            with self._uow() as uow:
                made = self._make(uow, requested_by, credential)
                uow.commit()
                return made
        except psycopg.errors.UniqueViolation:
            # Two makers raced for the same number; the other's checkpoint stands.
            with self._uow() as uow:
                latest = uow.checkpoints.latest()
            assert latest is not None
            return latest, False

    def _make(
        self, uow: UnitOfWork, requested_by: str, credential: str | None
    ) -> tuple[StoredCheckpoint, bool]:
        latest = uow.checkpoints.latest()
        position, now = uow.checkpoints.log_head()
        if latest is None and position == 0:
            raise LogEmpty  # the first checkpoint covers the first event
        if latest is not None and latest.position >= position and self._holds(latest, position):
            return latest, False
        base, reached = self._base(uow, latest, position)
        if latest is not None and reached >= position:
            # A row passed over covers the log's head: the next one can only follow it (the
            # database wants positions to grow) once the log moves on.
            return base or latest, False
        if base is None:
            events, (after, log_hash) = 0, START
        else:
            before = Checkpoint.from_message(base.message)
            events, after, log_hash = before.events, before.position, before.log_hash
        seq = 1 if latest is None else latest.seq + 1
        previous = (after, log_hash)
        heads: dict[str, tuple[int, str]] = {}
        for entry in uow.checkpoints.entries(after, position):
            log_hash = step(log_hash, entry)
            events += 1
            heads[entry[1]] = (entry[2], entry[3])
        head_rows = sorted((stream, v, h) for stream, (v, h) in heads.items())
        checkpoint = Checkpoint(
            seq=seq,
            position=position,
            events=events,
            log_hash=log_hash,
            previous_position=previous[0],
            previous_log_hash=previous[1],
            streams=len(head_rows),
            heads_digest=heads_digest(head_rows),
            created_at=timestamp_text(now),
            key_id=self._signer.key_id,
        )
        stored = StoredCheckpoint(
            seq=seq,
            position=position,
            message=checkpoint.message().decode("ascii"),
            signature=self._signer.sign(checkpoint),
            key_id=self._signer.key_id,
            requested_by=requested_by,
            created_at=now,
        )
        uow.checkpoints.add(stored, head_rows, credential)
        log.info("checkpoint %d signed at position %d (%d events)", seq, position, events)
        return stored, True

    def _holds(self, stored: StoredCheckpoint, head: int) -> bool:
        """Is ``stored`` a checkpoint this service signed, inside the log?"""
        if stored.position > head or not signature_holds(
            stored.message.encode(), stored.signature, self._public_keys, stored.key_id
        ):
            return False
        signed = Checkpoint.from_message(stored.message)
        return (signed.seq, signed.position) == (stored.seq, stored.position)

    def _base(
        self, uow: UnitOfWork, latest: StoredCheckpoint | None, head: int
    ) -> tuple[StoredCheckpoint | None, int]:
        """The checkpoint the next one extends, the newest that holds, and the furthest
        position inside the log any row from it on covers (the next one must pass it). A row
        that does not hold (a forged signature, a position beyond the log) is passed over and
        logged, never extended, so no row can stop the signing; the audit names it
        (checkpoint-signature, checkpoint-beyond-log)."""
        candidate = latest
        reached = 0
        while candidate is not None:
            if candidate.position <= head:
                reached = max(reached, candidate.position)
            if self._holds(candidate, head):
                return candidate, reached
            log.error(
                "checkpoint %d (position %d) was not signed by this service or lies beyond the "
                "log: passed over; the audit names it",
                candidate.seq,
                candidate.position,
            )
            older = uow.checkpoints.page(before=candidate.seq, limit=1)
            candidate = older[0] if older else None
        return None, reached

    def page(self, *, before: int | None, limit: int) -> list[StoredCheckpoint]:
        with self._reads() as uow:
            return uow.checkpoints.page(before=before, limit=limit)

    def get(self, seq: int) -> StoredCheckpoint:
        with self._reads() as uow:
            found = uow.checkpoints.get(seq)
        if found is None:
            raise NotFound("checkpoint", seq)
        return found

    def summary(self, stored: StoredCheckpoint) -> dict[str, Any]:
        """A stored checkpoint's signed fields with its signature and who asked for it."""
        return {
            **asdict(Checkpoint.from_message(stored.message)),
            "signature": stored.signature,
            "requested_by": stored.requested_by,
        }

    def exported(self, seq: int) -> dict[str, Any]:
        """The file an auditor keeps: the signed checkpoint, its signature and public key."""
        stored = self.get(seq)
        key = self._public_keys.get(stored.key_id, self._signer.public_key)
        return export(Checkpoint.from_message(stored.message), stored.signature, key)

    def check_document(self, document: Mapping[str, Any]) -> DocumentCheck:
        """An exported checkpoint (kept elsewhere) against the live log: its signature under a
        trusted key, then the log's count and running hash up to its position and the heads of
        the streams changed in its stretch, and whether the database still holds it."""
        try:
            checkpoint = verify_document(document, self._public_keys)
        except ValueError as exc:
            return DocumentCheck(
                None,
                [
                    Finding(
                        "checkpoint-signature",
                        "document",
                        "a checkpoint signed by a trusted key (GET /v1/checkpoints/keys)",
                        str(exc),
                    )
                ],
            )
        findings: list[Finding] = []
        where = f"checkpoint {checkpoint.seq}"
        with self._reads() as uow:
            log_hash, events = START[1], 0
            heads: dict[str, tuple[int, str]] = {}
            for entry in uow.checkpoints.entries(0, checkpoint.position):
                log_hash = step(log_hash, entry)
                events += 1
                if entry[0] > checkpoint.previous_position:
                    heads[entry[1]] = (entry[2], entry[3])
            stored = uow.checkpoints.get(checkpoint.seq)
            # What the running hash cannot see: an event put below position 1, or back-dated.
            findings += placement_findings(
                uow.checkpoints.out_of_place(checkpoint.position, APPEND_SLACK)
            )
        if (events, log_hash) != (checkpoint.events, checkpoint.log_hash):
            findings.append(
                Finding(
                    "log-hash",
                    f"{where} (positions 1-{checkpoint.position})",
                    f"{checkpoint.events} events, log hash {checkpoint.log_hash}",
                    f"{events} events, log hash {log_hash}",
                )
            )
        digest = heads_digest((s, v, h) for s, (v, h) in heads.items())
        if digest != checkpoint.heads_digest:
            findings.append(
                Finding(
                    "checkpoint-heads",
                    f"{where} (positions {checkpoint.previous_position + 1}-{checkpoint.position})",
                    f"{checkpoint.streams} stream heads, digest {checkpoint.heads_digest}",
                    f"{len(heads)} stream heads, digest {digest}",
                )
            )
        expected_message = checkpoint.message().decode("ascii")
        if stored is None or stored.message != expected_message:
            findings.append(
                Finding(
                    "checkpoint-stored",
                    where,
                    "the same checkpoint in the database",
                    "none" if stored is None else "a different checkpoint under that number",
                )
            )
        return DocumentCheck(checkpoint, findings)

    def findings(self, uow: UnitOfWork) -> list[Finding]:
        """The whole-history audit's log unit: the log against every checkpoint, every ledger
        transaction's cause event, every read-model row's stream, and the finance projections
        against the log they fold. Read in the audit's one
        snapshot (UnitOfWork.snapshot), so the log's head is the snapshot's own."""
        stored = uow.checkpoints.all()
        heads = uow.checkpoints.heads()
        anchored, findings = trusted_checkpoints(stored, heads, self._public_keys)
        position = uow.checkpoints.snapshot_head()
        findings += beyond_log_findings(stored, position)
        findings += verify_log(anchored, uow.checkpoints.entries(0, position))
        findings += placement_findings(uow.checkpoints.out_of_place(position, APPEND_SLACK))
        findings += cause_findings(uow.checkpoints.missing_causes())
        findings += projection_findings(uow.checkpoints.orphan_projections())
        findings += reconciliation_findings(uow.checkpoints.misdated_reconciliations(APPEND_SLACK))
        # The finance projections, which the service's login still writes (the daily report
        # folds the newest events on request): folded again from the log, they must agree.
        findings += finance.projected_totals_findings(uow)
        return findings
