"""Collecting games left idle longer than the configured time (default 24 hours).

Each idle game is collected with reason "timeout" and the winnings it holds, exactly once even
when two workers run this together: the collect is made at the version the scan saw (a player
who moved since keeps their game), and under an idempotency key of its own (the second worker
waits for the first and is answered with its result instead of collecting again).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta

from events.records import ConcurrencyConflict
from service import errors
from service.core.context import Actor, RequestContext
from service.errors import RuleViolation, VersionMismatch
from service.services.games import Games
from service.services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

COLLECTOR = Actor("idle-collector", "system")


def idle_games(uow: UnitOfWork, idle: timedelta, limit: int = 500) -> list[tuple[uuid.UUID, int]]:
    return uow.projections.idle_games(idle, limit)


def collect_idle(
    games: Games, unit_of_work: Callable[[], UnitOfWork], idle: timedelta
) -> list[uuid.UUID]:
    """Collect every game idle for longer than ``idle``; the ids this run collected."""
    with unit_of_work() as uow:
        candidates = idle_games(uow, idle)
    collected = []
    for game_id, version in candidates:
        request = RequestContext(
            COLLECTOR,
            idempotency_key=f"idle-collect:{game_id}",
            fingerprint=f"idle-collect {game_id}",
        )
        try:
            loaded = games.collect(
                request,
                game_id,
                reason="timeout",
                expected_version=version,
                retry_on_conflict=False,
            )
        except (VersionMismatch, ConcurrencyConflict):
            continue  # played (or collected) since the scan: no longer this run's business
        except RuleViolation as exc:
            if exc.code == errors.GAME_OVER:
                continue
            _failed(unit_of_work, game_id, exc)
            continue
        except Exception as exc:  # one broken game (a seed key gone, a row missing) must not
            _failed(unit_of_work, game_id, exc)  # keep every other idle game uncollected
            continue
        if not loaded.replayed:
            collected.append(game_id)
            log.info("collected idle game %s (payout %s)", game_id, loaded.state.payout)
    return collected


#: How often one game that cannot be collected is reported again.
REPORT_AGAIN_AFTER = timedelta(hours=24)


def _failed(unit_of_work: Callable[[], UnitOfWork], game_id: uuid.UUID, exc: Exception) -> None:
    """Record a game the collector could not collect, for an operator to look at (once a day,
    not on every run), and go on with the others."""
    log.exception("idle game %s could not be collected", game_id, exc_info=exc)
    with unit_of_work() as uow:
        if uow.significant.reported(game_id, "collection-failed", REPORT_AGAIN_AFTER):
            return
        uow.significant.record(
            "collection-failed",
            COLLECTOR.id,
            {"error": type(exc).__name__, "detail": str(exc)[:500]},
            game_id=game_id,
        )
        uow.commit()
