"""Logging configuration changes to the significant-events log.

Each web or worker process, when it starts, compares the configuration that affects play and
money (paytables, idle policy, certification mode, big-win threshold, each game's rules
version and M) with the
last one logged, and logs it if it differs. Under the write lock, so processes starting together
log one change once."""

from __future__ import annotations

import hashlib
import logging

from events.json_text import canonical_json
from service.games import GAMES
from service.rtp.published import beating_the_house
from service.runtime.config import Settings
from service.services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


def configuration(settings: Settings) -> dict[str, object]:
    return {
        "environment": settings.environment,
        "games": {
            g.id: {"rules_version": g.rules_version, "multiplier": g.multiplier}
            for g in GAMES.values()
        },
        "certification_mode": settings.certification_mode,
        "idle_collect_after_seconds": int(settings.idle_collect_after.total_seconds()),
        "big_win_threshold": settings.big_win_threshold,
        "paytables": [t.as_config() for _, t in sorted(settings.paytables.items())],
        "duel_paytables": [t.as_config() for _, t in sorted(settings.duel_paytables.items())],
        # The prices strong play beats, by the published figures (part of what is logged, so a
        # release that re-measures a game logs its configuration, and this, again).
        "beats_the_house": beating_the_house(t for _, t in sorted(settings.paytables.items())),
    }


def log_configuration(uow: UnitOfWork, settings: Settings, actor: str) -> bool:
    """Log the configuration if it changed since last logged; True if it did."""
    current = configuration(settings)
    fingerprint = hashlib.sha256(canonical_json(current).encode()).hexdigest()
    uow.lock_for_write()
    if uow.significant.last_configuration() == fingerprint:
        return False
    uow.significant.record(
        "configuration", actor, {"fingerprint": fingerprint, "configuration": current}
    )
    beaten = beating_the_house(t for _, t in sorted(settings.paytables.items()))
    if beaten:
        # A price strong play beats: in the operator's queue beside the configuration.
        uow.significant.record("beats-the-house", actor, {"prices": beaten})
        log.warning("strong play beats the house at %d price(s): %s", len(beaten), beaten)
    uow.commit()
    return True
