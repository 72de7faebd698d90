"""The whole drill: start, load, faults, settle, check, stop, report. Everything it started is
stopped on every way out (success, failure, Ctrl-C, SIGTERM)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

from service.runtime.config import Settings
from tests.drill import checks, facts
from tests.drill import wallet as wallet_drill
from tests.drill.client import Api, Timeline
from tests.drill.config import FAULTS, DrillConfig
from tests.drill.faults import FaultResult, Faults
from tests.drill.hosts import Cluster, DatabaseHost, missing_programs
from tests.drill.load import Player, Shared, Stats
from tests.drill.report import Figure, passed, render
from tests.drill.service import EmbeddedDatabase, Service, free_port, port_is_free
from tests.workers import delete_queue

#: How long the first start may take (migrations on a new embedded server included).
FIRST_START_TIMEOUT = 300.0
#: How long the drill waits for audits, at least.
FINAL_AUDIT_TIMEOUT = 300.0


class Drill:
    def __init__(self, config: DrillConfig) -> None:
        self.config = config
        self.data_dir = Path(tempfile.mkdtemp(prefix="drill-", dir=config.tmp_root))
        self.port = config.port or free_port()
        self.service = Service(self.data_dir, self.port, config.broker_url)
        self.database: EmbeddedDatabase | DatabaseHost = EmbeddedDatabase(self.data_dir)
        #: The host drill's app hosts and the rest (DRILL_HOSTS), instead of `make run`.
        self.cluster = Cluster(self.data_dir, config.hosts) if config.hosts else None
        self.timeline = Timeline()
        self.acks = checks.Acks()
        self.stats = Stats()
        self.stop_load = threading.Event()
        self.players: list[Player] = []
        self.faults: list[FaultResult] = []
        self.began = time.monotonic()
        self.load_started = self.began
        #: When the clients stopped moving money (the database's clock is UTC too).
        self.load_ended = datetime.now(UTC)
        self.first_day = datetime.now(UTC).date()
        self.run_id = uuid.uuid4().hex[:8]

    def log(self, text: str) -> None:
        print(f"[{time.monotonic() - self.began:7.1f}s] {text}", flush=True)

    # --- the phases -----------------------------------------------------------------------

    @property
    def target(self) -> Service | Cluster:
        """What the clients talk to: the service, or the balancer in front of the hosts."""
        return self.cluster or self.service

    def _start(self) -> None:
        if self.cluster is not None:
            self.log(f"data folder {self.data_dir}; {self.config.hosts} app hosts behind HAProxy")
            self.cluster.start(self.log)
            assert self.cluster.database is not None
            self.database = self.cluster.database
            self.log(f"balancer at {self.cluster.base}")
            return
        self.log(f"data folder {self.data_dir}, port {self.port}; starting `make run`")
        self.service.start()
        took = self.service.wait_ready(FIRST_START_TIMEOUT)
        self.log(f"service ready in {took:.1f} s")

    def run(self) -> bool:
        self._start()
        keys = {
            role: self.target.create_key(role, f"drill-{role}-{self.run_id}")
            for role in ("operator", "auditor", "finance")
        }
        api = Api(self.target.base, Timeline(), self.config.request_deadline)
        try:
            faults = self._load(api, keys["operator"], keys["auditor"])
            unsettled = self._settle()
            audit_ids = [*faults.audits]
            final = api.post("/v1/audits", keys["auditor"], {})
            final_audit = final.body["id"] if final.ok else None
            if final_audit is not None:
                audit_ids.append(final_audit)
            self._wait_audits(api, keys["auditor"], audit_ids)
            mismatches, recon_errors = self._reconcile(api, keys["finance"])
            url = self.database.url()
            found, books = facts.read_facts(url), facts.read_books(url, self.load_ended)
            faults.close()
        finally:
            api.close()
            for player in self.players:
                player.close()
        self._log_audits(books.audits, final_audit)
        figures = self._figures(found, books, mismatches, recon_errors, unsettled, final_audit)
        figures += self._stop()
        print()
        print(render(figures, self.faults), flush=True)
        return passed(figures, self.faults)

    def _stop(self) -> list[Figure]:
        """Stop what was started; figures of what was left behind."""
        if self.cluster is not None:
            self.log("checks read; stopping every app host (SIGTERM, as systemd would)")
            tasks = ", ".join(f"{a.name} {a.tasks_run()}" for a in self.cluster.apps)
            assert self.cluster.replica is not None
            on_replica = facts.transactions(self.cluster.replica.url())
            left = self.cluster.stop()
            return [
                Figure("background tasks run, per host", tasks),
                Figure("transactions on the replica (staff's reads)", on_replica),
                Figure("app host processes left after SIGTERM", len(left), True, "; ".join(left)),
            ]
        self.log("checks read; stopping the service (Ctrl-C to `make run`)")
        left = self.service.stop()
        db_left = self.database.stop_if_running()
        return [
            Figure("service processes left after Ctrl-C", len(left), True, "; ".join(left)[:200]),
            Figure("embedded PostgreSQL left running (stopped by the drill)", _yes(db_left)),
            Figure(
                f"port {self.port} still taken at the end", int(not port_is_free(self.port)), True
            ),
        ]

    def _load(self, api: Api, operator: str, auditor: str) -> Faults:
        """The clients' load, with the faults injected on schedule; the faults' record."""
        config = self.config
        shared = Shared(
            self.target.base,
            operator,
            self.run_id,
            self._stakes(api, operator),
            self.timeline,
            self.acks,
            self.stats,
            self.stop_load,
            config.request_deadline,
        )
        self.players = [Player(i, shared) for i in range(config.clients)]
        for player in self.players:
            player.start()
        self.log(f"{config.clients} clients for {config.seconds:g} s; faults: {config.faults}")
        faults = Faults(
            self.target,
            self.database,
            self.timeline,
            config,
            auditor=auditor,
            probe_player=self._probe_player,
            log=self.log,
        )
        plan: dict[str, Callable[[], FaultResult]] = {
            "api": faults.api_worker,
            "worker": faults.celery_worker,
            "service": faults.whole_service,
            "database": faults.database,
            "host": faults.app_host,
        }
        self.load_started = faults.started
        for name in config.faults:
            self._sleep_until(faults.started + FAULTS[name] * config.seconds)
            result = plan[name]()
            recovered = "not" if result.recovered is None else f"in {result.recovered:.2f} s"
            self.log(f"{result.name}: recovered {recovered}")
            self.faults.append(result)
        self._sleep_until(faults.started + config.seconds)
        return faults

    def _settle(self) -> int:
        """Stop the load, let every client finish, and collect every open game; how many
        clients could not."""
        self.log("load over; letting every client finish its game")
        self.stop_load.set()
        self.load_ended = datetime.now(UTC)
        for player in self.players:
            player.join(timeout=self.config.request_deadline + 60)
        self.log(f"settling after {self.stats.requests} requests")
        return sum(not player.finish() for player in self.players)

    def _stakes(self, api: Api, token: str) -> tuple[int, ...]:
        variants = api.get("/v1/variants", token)
        for table in variants.body["paytables"] if variants.ok else ():
            if table["currency"] == "GBP":
                return tuple(s for s in table["ladder"] if s <= 1_000) or (table["min_stake"],)
        return (100,)

    def _probe_player(self) -> str | None:
        return next((p.player_id for p in self.players if p.player_id), None)

    @staticmethod
    def _sleep_until(moment: float) -> None:
        time.sleep(max(0.0, moment - time.monotonic()))

    def _wait_audits(self, api: Api, auditor: str, audit_ids: list[str]) -> None:
        """Until every audit has finished, or none has made progress for the configured
        stall (then the running ones are stuck)."""
        stall = self.config.audit_stall
        self.log(f"waiting for {len(audit_ids)} audits (stuck after {stall:g} s without progress)")
        progress: dict[str, int] = {}
        moved = last_note = time.monotonic()
        while time.monotonic() - moved < max(stall, FINAL_AUDIT_TIMEOUT):
            running: dict[str, int] = {}
            for audit_id in audit_ids:
                audit = api.get(f"/v1/audits/{audit_id}", auditor, deadline=10)
                if not audit.ok or audit.body["status"] == "running":
                    running[audit_id] = audit.body["checked"] if audit.ok else -1
            if not running:
                return
            if any(progress.get(a, -1) != checked for a, checked in running.items()):
                moved = time.monotonic()
            progress = running
            if time.monotonic() - last_note > 60:
                last_note = time.monotonic()
                self.log(f"audits still running, units checked: {list(running.values())}")
            time.sleep(2)

    def _reconcile(self, api: Api, finance: str) -> tuple[int, int]:
        """Mismatches over every day the drill touched; and days that could not be had."""
        mismatches = errors = 0
        day: date = self.first_day
        while day <= datetime.now(UTC).date():
            answer = api.get(f"/v1/reconciliation?date={day.isoformat()}", finance)
            if answer.ok:
                mismatches += len(answer.body["mismatches"])
            else:
                errors += 1
            day += timedelta(days=1)
        return mismatches, errors

    def _steady_rate(self) -> float:
        """Successful attempts a second from the start of the load to the first fault."""
        first = min((FAULTS[name] for name in self.config.faults), default=1.0)
        end = self.load_started + first * self.config.seconds
        answered = [
            a
            for a in self.timeline.snapshot()
            if self.load_started <= a.sent < end and a.outcome == "ok"
        ]
        return len(answered) / max(end - self.load_started, 1e-9)

    def _figures(
        self,
        found: checks.Facts,
        books: facts.Books,
        mismatches: int,
        recon_errors: int,
        unsettled: int,
        final_audit: str | None,
    ) -> list[Figure]:
        acks, stats = self.acks, self.stats
        lost = checks.lost(acks, found)
        duplicated = checks.duplicated(acks, found)
        final_audit_started = final_audit is not None
        under_load = [a for a in books.audits if a.audit_id != final_audit]
        final = [a for a in books.audits if a.audit_id == final_audit]
        stuck_audits = [a for a in books.audits if a.status == "running"]
        failed_audits = [a for a in books.audits if a.status == "failed"]
        figures = [
            Figure(
                "requests acknowledged",
                stats.acknowledged,
                detail=(
                    f"{len(acks.deposits)} deposits, {len(acks.deals)} deals, "
                    f"{len(acks.commands)} commands and collects, {len(acks.settled)} games "
                    f"settled, of {stats.requests} requests"
                ),
            ),
            Figure(
                "acknowledged requests a second",
                round(stats.acknowledged / self.config.seconds),
                detail=f"over the {self.config.seconds:g} s of load, faults included; "
                f"{self._steady_rate():.0f} answers a second before the first fault",
            ),
            Figure(
                "requests retried",
                stats.retried,
                detail=f"{stats.extra_attempts} attempts more; {stats.replayed} answered as "
                "replays (applied by an attempt whose answer was lost)",
            ),
            Figure(
                "requests refused (4xx)",
                sum(stats.refused.values()),
                detail=", ".join(f"{k}: {v}" for k, v in stats.refused.most_common(4)),
            ),
            Figure(
                "requests with no answer by their deadline",
                sum(stats.unresolved.values()),
                detail=", ".join(f"{k}: {v}" for k, v in stats.unresolved.items()),
            ),
            Figure(
                "500s (bugs)",
                len(self.timeline.server_errors),
                must_be_zero=True,
                detail="; ".join(self.timeline.server_errors[:2])[:200],
            ),
            Figure("lost", len(lost), must_be_zero=True, detail=_first(lost)),
            Figure("duplicated", len(duplicated), must_be_zero=True, detail=_first(duplicated)),
        ]
        for currency, total in sorted(books.ledger_sums.items()):
            figures.append(Figure(f"ledger sum {currency}", total, must_be_zero=True))
        figures += [
            Figure(
                "balances unlike their postings",
                len(books.balance_mismatches),
                must_be_zero=True,
                detail=str(books.balance_mismatches[:2]) if books.balance_mismatches else "",
            ),
            Figure(
                "audit findings, audits started under load",
                sum(a.findings for a in under_load),
                must_be_zero=True,
                detail=_audit_findings(under_load),
            ),
            Figure(
                "audit findings, final audit",
                sum(a.findings for a in final),
                must_be_zero=True,
                detail=_audit_findings(final)
                + ("" if final_audit_started else "the final audit could not be started"),
            ),
            Figure(
                "audits failed",
                len(failed_audits),
                must_be_zero=True,
                detail=", ".join(a.audit_id for a in failed_audits),
            ),
            Figure(
                "stuck audits (still running)",
                len(stuck_audits) + (not final_audit_started),
                must_be_zero=True,
                detail=", ".join(f"{a.checked}/{a.total}" for a in stuck_audits),
            ),
            Figure(
                "reconciliation mismatches",
                mismatches + recon_errors,
                must_be_zero=True,
                detail=f"{recon_errors} days unavailable" if recon_errors else "",
            ),
            Figure(
                "stuck games (open after settling)",
                len(books.open_games),
                must_be_zero=True,
                detail=f"{unsettled} clients could not collect" if unsettled else "",
            ),
            Figure(
                "drill client errors",
                len(stats.client_errors),
                must_be_zero=True,
                detail=stats.client_errors[0][-200:] if stats.client_errors else "",
            ),
        ]
        return figures

    def _log_audits(self, audits: list[facts.AuditRow], final_audit: str | None) -> None:
        """Each audit's findings, and how much of it was checked while money moved."""
        for a in audits:
            when = "final" if a.audit_id == final_audit else "started under load"
            ledger = ", the ledger's among them" if a.ledger_under_load else ""
            found = f" in {a.units_found}" if a.units_found else ""
            self.log(
                f"audit {a.audit_id} ({a.kind}, {when}, {a.status}): {a.findings} findings"
                f"{found}; {a.checked_under_load}/{a.total} units checked under load{ledger}"
            )

    def cleanup(self, succeeded: bool) -> None:
        """Stop whatever is still running; keep the data folder unless the drill passed."""
        self.stop_load.set()
        if self.cluster is not None:
            logs = f"host logs: {self.cluster.log_path}"
            left = self.cluster.stop() + self.cluster.destroy()
            if left:
                print(f"killed processes left on the hosts: {left}", file=sys.stderr)
        else:
            logs = f"service log: {self.service.log_path}"
            self._stop_service()
        if succeeded and not self.config.keep:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        else:
            print(f"kept {self.data_dir} ({logs})", flush=True)

    def _stop_service(self) -> None:
        """The one service, its embedded database and its queue on a shared broker."""
        left = self.service.stop()
        if left:
            print(f"killed processes left by the service: {left}", file=sys.stderr)
        try:
            self.database.stop_if_running()
        except Exception as exc:  # the drill's own database: report, never leave it silently
            print(f"could not stop the embedded PostgreSQL: {exc}", file=sys.stderr)
        if self.config.broker_url:  # the drill's own queue on a shared broker
            queue = self.service.env["CELERY_QUEUE"]
            settings = replace(
                Settings(), celery_broker_url=self.config.broker_url, celery_queue=queue
            )
            try:
                delete_queue(settings)
            except Exception as exc:
                print(f"could not delete the queue {queue}: {exc}", file=sys.stderr)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _audit_findings(audits: list[facts.AuditRow]) -> str:
    """Each audit's findings by its scope, and how many checked the ledger under load."""
    if not audits:
        return ""
    each = ", ".join(f"{a.kind} {a.findings}" for a in audits)
    ledgers = sum(a.ledger_under_load for a in audits)
    many = "audit" if len(audits) == 1 else "audits"
    return f"{len(audits)} {many} ({each}); {ledgers} checked the ledger under load"


def _first(findings: list[checks.Finding]) -> str:
    if not findings:
        return ""
    return f"e.g. {findings[0].what}: {findings[0].why}"[:200]


def _interrupt(signum: int, frame: FrameType | None) -> Any:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    config = DrillConfig.from_env()
    if os.environ.get("DRILL_WALLET"):
        # The seamless wallet's drill (tests/drill/wallet.py): its own service and wallet.
        if os.environ["DRILL_WALLET"] != "faults":
            print("DRILL_WALLET=faults is the one wallet drill")
            return 2
        signal.signal(signal.SIGTERM, _interrupt)
        clients = int(os.environ.get("DRILL_CLIENTS", "8"))
        return wallet_drill.main(
            clients, float(os.environ.get("DRILL_SECONDS", "120")), config.keep
        )
    if config.hosts:
        if os.geteuid() != 0:
            print("the host drill (DRILL_HOSTS) makes network namespaces: run it as root")
            return 2
        missing = missing_programs()
        if missing:
            print(f"the host drill needs Debian's {', '.join(missing)}: apt-get install them")
            return 2
    signal.signal(signal.SIGTERM, _interrupt)
    drill = Drill(config)
    succeeded = False
    try:
        succeeded = drill.run()
    except KeyboardInterrupt:
        print("\ninterrupted: stopping everything the drill started", file=sys.stderr)
        return 130
    finally:
        drill.cleanup(succeeded)
    return 0 if succeeded else 1
