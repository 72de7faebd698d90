"""Background work, as Celery tasks. Each is safe to run twice: Celery delivers at least once.

The tasks are thin: the work lives in service.services.idle, service.services.finance_books and
service.services.history_audits.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

from celery import shared_task
from celery.worker import state as worker_state

from service.bootstrap import Container, build
from service.errors import LogEmpty
from service.rtp import simulate
from service.rtp.players import Kind
from service.runtime.config import Settings
from service.services import advantage, idle
from service.services import finance_books as finance
from service.services import history_audits as audit
from service.services.configuration_log import log_configuration
from service.services.horizon import HorizonWatch
from service.services.verification import verify_behind, verify_player

log = logging.getLogger(__name__)

_lock = threading.Lock()
_container: Container | None = None


def services() -> Container:
    """This worker process's services, built on first use."""
    global _container
    with _lock:
        if _container is None:
            settings = Settings.from_env()
            # Background work logs in as its own login (migrations/0039).
            _container = build(settings, migrate=False, background=True)
            with _container.unit_of_work() as uow:
                log_configuration(uow, settings, f"worker-{os.getpid()}")
        return _container


def close_services() -> None:
    global _container
    with _lock:
        if _container is not None:
            _container.close()
            _container = None


@shared_task(name="vegas.collect_idle_games")
def collect_idle_games() -> list[str]:
    """Collect games idle longer than the configured time (beat: every minute)."""
    c = services()
    collected = idle.collect_idle(c.games, c.unit_of_work, c.settings.idle_collect_after)
    return [str(game_id) for game_id in collected]


def _stopping() -> bool:
    """A warm shutdown (a stop) has begun: a sweep ends after the call in flight."""
    return bool(worker_state.should_stop or worker_state.should_terminate)


@shared_task(name="vegas.settle_wallet")
def settle_wallet() -> dict[str, int]:
    """Seamless mode: send the wins and rollbacks due to the operator's wallet, and settle bets
    whose sender died mid-call (beat: every few seconds; and at once when one falls due). One
    sender a movement at a time (a lease in the database), so runs may overlap."""
    done: dict[str, int] = {}
    for settled in services().settle_wallet(stopping=_stopping):
        done[settled.outcome] = done.get(settled.outcome, 0) + 1
    return done


@shared_task(name="vegas.sweep_duels")
def sweep_duels() -> list[str]:
    """Cancel duels that did not fill, time out seats, settle finished duels (beat: every few
    seconds). Each duel changes at the version it was read at, so two runs never both do."""
    return [str(duel_id) for duel_id in services().duels.sweep()]


@shared_task(name="vegas.project_daily_totals")
def project_daily_totals() -> int:
    """Fold new game money events into daily_totals (checkpointed; beat: every 30 s)."""
    with services().unit_of_work() as uow:
        return finance.catch_up(uow)


@shared_task(name="vegas.reconcile_day")
def reconcile_day(day: str | None = None) -> dict[str, Any]:
    """Store a day's reconciliation (beat: nightly, for yesterday). Re-running replaces it with
    the same result."""
    chosen = date.fromisoformat(day) if day else datetime.now(UTC).date() - timedelta(days=1)
    # A stored reconciliation is the audit's answer: its login alone stores one (0037).
    with services().audit_unit_of_work() as uow:
        return finance.store_reconciliation(uow, chosen)


@shared_task(name="vegas.plan_audit")
def plan_audit(audit_id: str) -> int:
    """Plan an audit asked for over HTTP, as the audit's login, and fan its chunks out."""
    c = services()
    with c.audit_unit_of_work() as uow:
        chunks = audit.plan_requested(uow, uuid.UUID(audit_id))
    for units in chunks:
        c.send_task("vegas.audit_chunk", audit_id, units)
    return len(chunks)


@shared_task(name="vegas.run_audit")
def run_audit(audit_id: str, chunks: list[list[str]]) -> int:
    """Fan an audit's chunks out to the workers."""
    for units in chunks:
        services().send_task("vegas.audit_chunk", audit_id, units)
    return len(chunks)


@shared_task(name="vegas.resume_audits")
def resume_audits() -> int:
    """Send again the chunks of audits that stalled (a worker crashed with them); give up on
    an audit that keeps losing work, with the reason (beat: every minute)."""
    c = services()
    with c.audit_unit_of_work() as uow:
        stalled = audit.resume(uow)
    with c.audit_unit_of_work() as uow:
        unplanned = audit.unplanned_stalled(uow)
    for audit_id, chunks in stalled:
        for units in chunks:
            c.send_task("vegas.audit_chunk", str(audit_id), units)
    for audit_id in unplanned:
        c.send_task("vegas.plan_audit", str(audit_id))
    return len(stalled) + len(unplanned)


@shared_task(name="vegas.audit_chunk")
def audit_chunk(audit_id: str, units: list[str]) -> int:
    c = services()
    return audit.check_chunk(
        c.audit_unit_of_work,
        uuid.UUID(audit_id),
        units,
        c.settings.paytables,
        c.anchors.findings,
        c.answer_check,
    )


@shared_task(name="vegas.verify_player")
def verify_player_history(player_id: str) -> dict[str, Any]:
    """Verify a player's history since their verified point, for a waiting withdrawal
    (service/services/verification.py): the point moved, or a hold recorded."""
    c = services()
    done = verify_player(
        c.audit_unit_of_work,
        uuid.UUID(player_id),
        c.settings.paytables,
        answer_check=c.answer_check,
    )
    return {"through": done.through, "hold": done.hold, "findings": len(done.findings)}


@shared_task(name="vegas.verify_players")
def verify_players() -> int:
    """Advance the verified points of players whose wallets moved (beat), so a withdrawal
    re-verifies little; how many were verified."""
    c = services()
    return len(
        verify_behind(c.audit_unit_of_work, c.settings.paytables, answer_check=c.answer_check)
    )


@shared_task(name="vegas.checkpoint_log")
def checkpoint_log() -> int:
    """Sign a checkpoint of the event log, if anything was appended since the last one
    (beat: every minute); the checkpoint's number (0: the log holds no event yet)."""
    try:
        stored, _ = services().anchors.checkpoint("beat")
    except LogEmpty:
        return 0
    return stored.seq


_horizon: HorizonWatch | None = None


@shared_task(name="vegas.watch_log_horizon")
def watch_log_horizon() -> str | None:
    """Name a transaction holding the log's horizon back longer than LOG_STALL_AFTER_SECONDS
    as a significant event (beat: every HORIZON_CHECK_EVERY_SECONDS); its id, if named now."""
    global _horizon
    c = services()
    with _lock:
        if _horizon is None:
            _horizon = HorizonWatch(c.unit_of_work, timedelta(seconds=c.settings.log_stall_after))
    return _horizon.check()


@shared_task(name="vegas.rtp_chunk")
def rtp_chunk(game_id: str, start: int, count: int, kind: Kind = "bot") -> dict[str, int]:
    """Simulate deals start..start+count-1 of a game with its player of this kind (the
    reference bot unless named: messages sent before players had kinds): units -> games.
    Pure and seeded, so a chunk delivered twice gives the same answer."""
    return {str(units): n for units, n in simulate.simulate(game_id, start, count, kind).items()}


@shared_task(name="vegas.watch_advantage_play")
def watch_advantage_play() -> list[str]:
    """Judge recent players' and every game's returns against the published figures and log
    what is significantly above them (beat: hourly); the subjects flagged."""
    c = services()
    found = advantage.run(c.unit_of_work, c.settings.paytables, datetime.now(UTC))
    return [r.subject for r in found]
