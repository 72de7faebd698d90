"""No money leaves before the history behind it verifies (issue 36).

A player's *verified point* is the last posting on their wallet whose cause the audit has
verified (migrations/0037 verified_points, written only by the audit's login). Verifying a
player re-checks every stream that moved their wallet after that point, up to its head, as the
whole-history audit checks it (history_audits.check_unit: a game's rules re-decided, its
commitment and seed, the ledger's postings against the events, the hash chain; a player stream
against its rules), all in one snapshot; then, if nothing was found, moves the point to the
head, and if something was, records a hold (a 'withdrawal-held' significant event naming what
failed) and leaves the point where it was.

The database refuses a withdrawal unless the point has reached the wallet's head, so the web
process, which does not hold the audit's login, asks the audit's worker (``vegas.verify_player``)
and waits for the point or a hold (WithdrawalGate). A process that holds the audit's login (the
worker, the CLI) verifies in place. Beat advances every player's point continuously
(``vegas.verify_players``), so a withdrawal normally finds little or nothing left to verify.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from service.core import ledger
from service.core.game_verification import Finding
from service.core.history_checks import unanswered
from service.core.paytable import Paytable, PaytableBook
from service.core.streams import is_duel, is_game, is_player, is_wallet, player_stream
from service.core.wallet_verification import AnswerCheck
from service.errors import VerificationUnavailable, WithdrawalHeld
from service.services import history_audits
from service.services.unit_of_work import UnitOfWork
from service.storage.audit_reads import AuditReads
from service.storage.verification import VerificationStore

log = logging.getLogger(__name__)

#: The ends of a duel: until one, a seat is only ever charged (its fee), never paid.
DUEL_ENDINGS = ("DuelSettled", "DuelCancelled")
#: How many players one run of beat's verification takes on.
BEHIND_BATCH = 50
#: How many findings a hold records (and a correction may name at once).
HOLD_FINDINGS = 50


@dataclass(frozen=True, slots=True)
class Verification:
    player_id: uuid.UUID
    #: The verified point afterwards (None: nothing verified yet, or the player has no wallet).
    through: int | None
    #: What was found (empty: the point moved to the head).
    findings: tuple[Finding, ...] = ()
    #: The significant event of the hold, if something was found.
    hold: int | None = None


def _no_log_check(uow: UnitOfWork) -> list[Finding]:  # pragma: no cover - never a cause
    raise AssertionError("a player's verification checks streams, never the whole log")


def verify_player(
    audit_unit_of_work: Callable[[], UnitOfWork],
    player_id: uuid.UUID,
    paytables: Mapping[str, Paytable],
    *,
    repeat_hold: bool = True,
    answer_check: AnswerCheck | None = None,
) -> Verification:
    """Verify the player's history from their point to their wallet's head, as the audit's
    login (``audit_unit_of_work``), and record the outcome: the point moved, or a hold (for a
    withdrawal, every time; with ``repeat_hold=False``, beat's, only if it differs from the
    player's standing hold). Findings an operator's correction names hold no longer."""
    with audit_unit_of_work() as uow:
        uow.snapshot()
        AuditReads(uow.conn).no_idle_limit()
        player = uow.projections.player(player_id)
        if player is None:
            return Verification(player_id, None)
        store = VerificationStore(uow.conn)
        wallet = ledger.player_account(str(player_id), player.currency).account_id
        head = store.head(wallet)
        point = store.point(player_id)
        if head is None or (point is not None and point >= head):
            return Verification(player_id, point)
        causes = store.causes(wallet, point or 0, head)
        found = _verify_causes(uow, wallet, causes, paytables, answer_check)
        if found:
            # What an operator's correction answers holds no longer (it stays in the log).
            own = uow.events.read_streams([player_stream(player_id)])
            found = unanswered(found, own.get(player_stream(player_id), []))
        findings = found
    with audit_unit_of_work() as uow:
        store = VerificationStore(uow.conn)
        if not findings:
            store.advance(player_id, head)
            uow.commit()
            return Verification(player_id, head)
        if not repeat_hold:
            # Beat's run over a player still held on the same findings: the hold stands.
            standing = store.latest_hold(player_id)
            if standing is not None and _named(findings) == standing[1].get("findings"):
                return Verification(player_id, point, tuple(findings), standing[0])
        hold = uow.significant.record(
            "withdrawal-held",
            "audit",
            {
                "checks": sorted({f.check for f in findings}),
                "findings": _named(findings),
                "verified_through": point,
                "head": head,
            },
            player_id=player_id,
        )
        uow.commit()
    log.warning(
        "player %s held: %d finding(s) after posting %s (significant event %d)",
        player_id,
        len(findings),
        point,
        hold,
    )
    return Verification(player_id, point, tuple(findings), hold)


def _named(findings: Sequence[Finding]) -> list[dict[str, str]]:
    """A hold's findings as it records them (the first 50): what a correction may name."""
    return [
        {"check": f.check, "location": f.location, "expected": f.expected, "found": f.found}
        for f in findings[:HOLD_FINDINGS]
    ]


def _verify_causes(
    uow: UnitOfWork,
    wallet: str,
    causes: Sequence[str],
    paytables: Mapping[str, Paytable],
    answer_check: AnswerCheck | None,
) -> list[Finding]:
    """Every stream that moved the wallet, checked as the audit checks it."""
    known = [s for s in causes if is_game(s) or is_duel(s) or is_player(s) or is_wallet(s)]
    reads = history_audits.read_streams(uow, known)
    paytables = PaytableBook(paytables, uow.significant.logged_paytables())
    findings: list[Finding] = []
    for stream in causes:
        if stream not in known:
            findings.append(
                Finding(
                    "ledger",
                    stream,
                    "money moved by a game, duel or player stream",
                    "a cause on a stream of no kind the service records",
                )
            )
            continue
        read = reads[stream]
        if is_duel(stream) and not any(r.type in DUEL_ENDINGS for r in read.records):
            # A duel in play is sealed until it ends (its checks need the revealed seed); until
            # then it may only have charged the seat.
            findings += [
                Finding(
                    "ledger",
                    f"posting {p.posting_id}",
                    "a seat charged, never paid, before its duel ends",
                    f"{p.amount} to {wallet}",
                )
                for p in read.postings
                if p.account_id == wallet and p.amount > 0
            ]
            continue
        findings += history_audits.check_unit(
            uow, stream, paytables, _no_log_check, read, answer_check=answer_check
        )
    return findings


def verify_behind(
    audit_unit_of_work: Callable[[], UnitOfWork],
    paytables: Mapping[str, Paytable],
    limit: int = BEHIND_BATCH,
    answer_check: AnswerCheck | None = None,
) -> list[Verification]:
    """Advance the points of up to ``limit`` players whose wallets moved since (beat)."""
    with audit_unit_of_work() as uow:
        behind = VerificationStore(uow.conn).behind(limit)
    return [
        verify_player(
            audit_unit_of_work, player, paytables, repeat_hold=False, answer_check=answer_check
        )
        for player in behind
    ]


class WithdrawalGate:
    """Before a withdrawal: the player verified up to their wallet's head, or WithdrawalHeld
    (something was found) or VerificationUnavailable (no answer in time). Runs before the
    withdrawal's transaction, so a hold moves nothing and stores nothing under its key."""

    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        send_task: Callable[..., object],
        timeout: float,
        verify_here: Callable[[uuid.UUID], Verification] | None = None,
    ) -> None:
        self._uow = unit_of_work
        self._send_task = send_task
        self._timeout = timeout
        #: Set in a process holding the audit's login (the worker, the CLI): verify in place.
        self._verify_here = verify_here

    def ensure_verified(self, player_id: uuid.UUID, wallet: str) -> None:
        with self._uow() as uow:
            store = VerificationStore(uow.conn)
            head = store.head(wallet)
            point = store.point(player_id)
            mark = store.mark()
        if head is None or (point is not None and point >= head):
            return
        if self._verify_here is not None:
            done = self._verify_here(player_id)
            if done.hold is not None:
                raise WithdrawalHeld(player_id, done.hold, [f.check for f in done.findings])
            return
        self._send_task("vegas.verify_player", str(player_id))
        deadline = time.monotonic() + self._timeout
        pause = 0.01
        while True:
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
            with self._uow() as uow:
                store = VerificationStore(uow.conn)
                held = store.hold_after(player_id, mark)
                point = store.point(player_id)
            if held is not None:
                raise WithdrawalHeld(player_id, held[0], list(held[1].get("checks", [])))
            if point is not None and point >= head:
                return
            if time.monotonic() > deadline:
                raise VerificationUnavailable(
                    f"the audit did not verify player {player_id}'s history within "
                    f"{self._timeout:g} s; nothing moved, retry later"
                )
