"""What finance asks of the service: the daily report and the reconciliation of the ledger
against the game events. The work is in service.services.finance_books; this checks the request
against the configuration and keeps the projection caught up before reading it."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from service.core import ledger
from service.core.paytable import Paytable
from service.errors import InvalidArgument, ProjectionUnavailable
from service.rtp.published import Figure, publications
from service.services import finance_books as finance
from service.services import finance_charts
from service.services.staff_reads import StaffReads
from service.services.unit_of_work import UnitOfWork
from service.storage.wallet import WalletTransaction

#: The longest report one request may ask for, in days.
MAX_REPORT_DAYS = 366


@dataclass(frozen=True, slots=True)
class Reconciliation:
    result: dict[str, Any]
    computed_at: datetime | None  # when a stored result was computed; None if computed now
    stored: bool


class FinanceCatchUp:
    """Folds the log into the finance projections before a report reads them. Only background
    work's login writes them (migrations/0042): a process holding it (the worker, the CLI, the
    tests) folds in place (``here``); the web process asks the worker
    (``vegas.project_daily_totals``) and waits until they reach the log's horizon as it stood
    when asked, or answers ProjectionUnavailable after ``timeout`` seconds."""

    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        send_task: Callable[..., object],
        timeout: float,
        here: Callable[[], UnitOfWork] | None = None,
    ) -> None:
        self._uow = unit_of_work
        self._send_task = send_task
        self._timeout = timeout
        self._here = here

    def __call__(self) -> None:
        if self._here is not None:
            with self._here() as uow:
                finance.catch_up(uow)
            return
        with self._uow() as uow:
            folded, horizon = finance.projected_through(uow)
        if folded >= horizon:
            return
        self._send_task("vegas.project_daily_totals")
        deadline = time.monotonic() + self._timeout
        pause = 0.01
        while folded < horizon:
            if time.monotonic() > deadline:
                raise ProjectionUnavailable(
                    f"background work did not fold the log into the finance projections within "
                    f"{self._timeout:g} s (at {folded} of {horizon}); retry later"
                )
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
            with self._uow() as uow:
                folded, _ = finance.projected_through(uow)


class Reports:
    def __init__(
        self,
        paytables: Mapping[str, Paytable],
        reads: StaffReads,
        catch_up: Callable[[], None],
        wallet_mode: str = "transfer",
    ) -> None:
        #: transfer, or seamless (the operator's wallet: its movements are reconciled too).
        self.wallet_mode = wallet_mode
        #: Folds the log into the finance projections before a report reads them.
        self._catch_up = catch_up
        #: Finance's reads: the replica when there is one (service/services/staff_reads.py),
        #: which then holds the projection's catch-up too (it was committed first).
        self._reads = reads
        # The real currencies, and the sandbox's, reported on its own and labelled as such.
        self._currencies = {table.currency for table in paytables.values()} | {ledger.SANDBOX}

    def daily(self, start: date, end: date, currency: str) -> finance.DailyReport:
        """Per day and variant from ``start`` to ``end`` (inclusive), with month-to-date and
        lifetime totals as of ``end``. Folds any events the projector has not yet seen first
        (FinanceCatchUp), so the report is as fresh as the log. A real currency's figures never
        include certification games' sandbox money; ``currency=XTS`` reports the sandbox
        alone."""
        if currency not in self._currencies:
            known = ", ".join(sorted(self._currencies))
            raise InvalidArgument("currency", f"no paytable for {currency}; known: {known}")
        if end < start:
            raise InvalidArgument("to", "the range ends before it starts")
        if (end - start).days + 1 > MAX_REPORT_DAYS:
            raise InvalidArgument("to", f"ask for at most {MAX_REPORT_DAYS} days at a time")
        self._catch_up()
        with self._reads() as uow:
            return finance.daily_report(uow, start, end, currency)

    def published(self) -> dict[str, Figure | None]:
        """Each game's published RTP at its M (the strong player's, once measured), to set
        beside its actual RTP: what finance compares the takings with."""
        return {name: found.displayed if found else None for name, found in publications().items()}

    def chart(
        self, kind: str, start: date, end: date, currency: str, variant: str | None = None
    ) -> str:
        """The daily report of the period drawn as SVG: money per day (for one game, or all),
        or actual RTP against published (each game over the period, or one game day by day)
        (service.services.finance_charts)."""
        report = self.daily(start, end, currency)
        if kind == "rtp":
            published = {
                name: found.displayed.rtp if found else None
                for name, found in publications().items()
            }
            return finance_charts.rtp_chart(report, published, variant)
        return finance_charts.money_chart(report, variant)

    def wallet_liability(self, currency: str) -> dict[str, Any]:
        """Seamless mode: what the server owes the operator's wallet as of now (wins and
        rollbacks unacknowledged, movements under review); None-valued in transfer mode."""
        if self.wallet_mode != "seamless":
            return {"mode": self.wallet_mode}
        with self._reads() as uow:
            return {"mode": self.wallet_mode, **finance.wallet_liability(uow, currency)}

    def wallet_day(self, day: date) -> list[WalletTransaction]:
        """Every movement made with the operator's wallet on ``day`` (UTC), with its final state
        (empty in transfer mode)."""
        with self._reads() as uow:
            return uow.wallet.of_day(day)

    def reconciliation(self, day: date) -> Reconciliation:
        """The stored (nightly) reconciliation of ``day`` if there is one, else computed now."""
        with self._reads() as uow:
            stored = finance.stored_reconciliation(uow, day)
            if stored is not None:
                computed_at, result = stored
                return Reconciliation(result, computed_at, stored=True)
            return Reconciliation(finance.reconcile(uow, day), None, stored=False)
