"""Watching for advantage play (GLI-19 A.6.1-A.6.2), on the workers every hour.

Each run judges (service.rtp.advantage) every player who collected a game in the last day, over
their latest games of that game, and every game over its latest real-money games, against the
figures the lab publishes (service.rtp.published). What is significantly above them is logged
as a significant event of kind ``advantage-play`` (once a day per player and game, or per game
and currency), which finance's daily report lists. Reading and judging change nothing else:
acting on a report (limits, disabling a player) is the operator's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from service.core.ledger import SANDBOX
from service.core.paytable import Paytable
from service.games import STANDALONE
from service.rtp.advantage import (
    GAME_WINDOW,
    PLAYER_WINDOW,
    Flag,
    actual_return,
    judge_game,
    judge_player,
)
from service.rtp.published import Publication, publication
from service.services.finance_books import ADVANTAGE_PLAY
from service.services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

KIND = ADVANTAGE_PLAY  # the kind finance's daily report lists
WATCHER = "advantage-watcher"
#: Players who collected a game this recently are judged; a subject is reported once in this.
LOOKBACK = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Report:
    """One flag, as the watcher logged it (or found already logged today)."""

    flag: Flag
    subject: str
    currency: str
    player_id: Any | None
    certification: bool
    logged: bool  # False: already reported within the last day


def run(
    unit_of_work: Callable[[], UnitOfWork], paytables: Mapping[str, Paytable], now: datetime
) -> list[Report]:
    """One watch over every real currency and the sandbox, committed: what beat and
    ``flask --app service rtp watch`` run."""
    currencies = {table.currency for table in paytables.values()} | {SANDBOX}
    with unit_of_work() as uow:
        found = watch(uow, now, currencies, paytables)
        uow.commit()
    return found


def published_for(
    variant: str, currency: str, paytables: Mapping[str, Paytable]
) -> Publication | None:
    """The figures a return in ``currency`` is judged against: at the M that currency's
    paytable pays the game (the operator's own rate, else the rules')."""
    table = paytables.get(currency)
    rules = STANDALONE[variant]
    return publication(variant, table.multiplier_for(variant, rules.multiplier) if table else None)


def watch(
    uow: UnitOfWork,
    now: datetime,
    currencies: Iterable[str],
    paytables: Mapping[str, Paytable] | None = None,
) -> list[Report]:
    """Judge players and games; log each new flag. Safe to run twice (Celery delivers at least
    once): a subject already reported within a day is not logged again."""
    tables = paytables or {}
    reports: list[Report] = []
    for window in uow.advantage.player_windows(now - LOOKBACK, PLAYER_WINDOW):
        flag = judge_player(
            window.variant,
            actual_return(window.games),
            published_for(window.variant, window.currency, tables),
        )
        if flag is not None:
            subject = f"player:{window.player_id}:{window.variant}:" + (
                "sandbox" if window.certification else window.currency
            )
            reports.append(
                _report(uow, flag, subject, window.currency, window.player_id, window.certification)
            )
    for variant in STANDALONE:
        for currency in sorted(set(currencies)):
            games = uow.advantage.game_window(variant, currency, GAME_WINDOW)
            if not games:
                continue
            flag = judge_game(
                variant, actual_return(games), published_for(variant, currency, tables)
            )
            if flag is not None:
                subject = f"game:{variant}:{currency}"
                reports.append(_report(uow, flag, subject, currency, None, False))
    return reports


def _report(
    uow: UnitOfWork,
    flag: Flag,
    subject: str,
    currency: str,
    player_id: Any | None,
    certification: bool,
) -> Report:
    logged = not uow.advantage.reported(KIND, subject, LOOKBACK)
    if logged:
        found = flag.found
        uow.significant.record(
            KIND,
            WATCHER,
            {
                "subject": subject,
                "on": flag.subject,
                "variant": flag.variant,
                "certification": certification,
                "games": found.games,
                "staked": found.staked,
                "paid": found.paid,
                "rtp": str(found.rtp),
                "low": str(found.low),
                "high": str(found.high),
                "strong_rtp": str(flag.strong_rtp),
                "band_high": str(flag.band_high),
                "theoretical_rtp": str(flag.theoretical_rtp),
                "reason": flag.reason,
            },
            player_id=player_id,
            amount=found.paid - found.staked,
            currency=currency,
        )
        log.warning("advantage play: %s", flag.reason)
    return Report(flag, subject, currency, player_id, certification, logged)
