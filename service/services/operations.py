"""What an operator watches that lives in the database (GET /metrics reads it at scrape time):
the log's latest checkpoint, the audits, the verification's lag and holds, games and duels in
play, and in seamless mode the movements owed to the operator's wallet."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from service.services.unit_of_work import UnitOfWork
from service.storage.operations import OperationsReads

log = logging.getLogger(__name__)

#: A scrape's database reads give up after this long.
READ_TIMEOUT_MS = 2_000


@dataclass(frozen=True, slots=True)
class OperationsState:
    checkpoint_age_seconds: float | None
    audits_running: int
    oldest_audit_seconds: float | None
    latest_audit_findings: int
    players_unverified: int
    withdrawal_holds: int
    open_games: int
    duels: dict[str, int]
    wallet: dict[tuple[str, str], int] = field(default_factory=dict)
    wallet_oldest_seconds: float | None = None


class Operations:
    def __init__(self, unit_of_work: Callable[[], UnitOfWork]) -> None:
        self._uow = unit_of_work

    def state(self) -> OperationsState | None:
        """The figures now; None when the database does not answer in time (the scrape goes on
        with the processes' own figures)."""
        try:
            with self._uow() as uow:
                reads = OperationsReads(uow.conn)
                reads.limit(READ_TIMEOUT_MS)
                running, oldest = reads.audits()
                return OperationsState(
                    checkpoint_age_seconds=reads.checkpoint_age(),
                    audits_running=running,
                    oldest_audit_seconds=oldest,
                    latest_audit_findings=reads.latest_findings(),
                    players_unverified=reads.unverified(),
                    withdrawal_holds=reads.holds(),
                    open_games=reads.open_games(),
                    duels=reads.duels(),
                    wallet=reads.wallet(),
                    wallet_oldest_seconds=reads.wallet_oldest(),
                )
        except Exception:  # a scrape must not fail for the database's sake
            log.warning("the database's figures were not read for this scrape", exc_info=True)
            return None
