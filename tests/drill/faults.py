"""The faults, injected while the load runs, and how long the service took to recover from
each: the first successful request sent after the fault ended (for the Celery worker, the
first background task finished after it)."""

from __future__ import annotations

import contextlib
import random
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import psutil

from service.worker.single_beat import ROLE as BEAT_ROLE
from tests.drill import facts
from tests.drill.client import Api, Timeline
from tests.drill.config import DrillConfig
from tests.drill.hosts import Cluster, DatabaseHost
from tests.drill.service import EmbeddedDatabase, Service, port_is_free

#: How long a supervisor may take to stop everything after one process died.
GRACE = 5.0
#: How often the drill looks at the timeline, an audit or a process.
POLL = 0.1


@dataclass
class FaultResult:
    name: str
    #: Seconds from the start of the load.
    at: float
    detail: str = ""
    #: Seconds from the end of the fault (the kill; the database's return) to the first
    #: success after it; None: not within the recovery deadline.
    recovered: float | None = None
    #: Attempts sent between the fault and the recovery that failed (5xx, none, timeout).
    failed_attempts: int = 0
    #: The service could not recover by itself (its supervisor exited and the drill had to
    #: start it again, as systemd would).
    supervisor_died: bool = False
    notes: list[str] = field(default_factory=list)


class Faults:
    """The faults of either drill: ``service`` is the one `make run` service, or ``cluster``
    the app hosts behind their balancer (one of the two is given)."""

    def __init__(
        self,
        service: Service | Cluster,
        database: EmbeddedDatabase | DatabaseHost,
        timeline: Timeline,
        config: DrillConfig,
        *,
        auditor: str,
        probe_player: Callable[[], str | None],
        log: Callable[[str], None],
    ) -> None:
        self.service = service
        self.db = database
        self.timeline = timeline
        self.config = config
        self.auditor = auditor
        self.probe_player = probe_player
        self.log = log
        self.api = Api(service.base, timeline, config.request_deadline)
        self.rng = random.Random()
        self.started = time.monotonic()
        #: Audits started to keep the Celery worker busy: they too must finish.
        self.audits: list[str] = []

    def _one_service(self) -> Service:
        if not isinstance(self.service, Service):
            raise ValueError("this fault is the one-service drill's (not with DRILL_HOSTS)")
        return self.service

    def _cluster(self) -> Cluster:
        if not isinstance(self.service, Cluster):
            raise ValueError("this fault is the host drill's (DRILL_HOSTS)")
        return self.service

    def _result(self, name: str) -> FaultResult:
        return FaultResult(name, round(time.monotonic() - self.started, 1))

    # --- waiting for recovery ---------------------------------------------------------------

    def _first_ok(self, result: FaultResult, since: float) -> None:
        """Wait for the first successful request sent after ``since``; give up early if the
        whole service is gone (then nothing will answer until it is started again)."""
        deadline = since + self.config.recovery_deadline
        while time.monotonic() < deadline:
            first = self.timeline.first_ok_after(since)
            if first is not None:
                result.recovered = first.done - since
                result.failed_attempts = len(self.timeline.failures(since, first.done))
                return
            if not self.service.alive():
                break
            time.sleep(POLL)
        result.failed_attempts = len(self.timeline.failures(since, time.monotonic()))

    def _supervisor_check(self, result: FaultResult, since: float) -> bool:
        """Whether the fault took the whole service down (a supervisor that stops everything
        when one process dies takes a moment to do it, hence the grace). If it did, the drill
        says so and starts it again, as systemd would, so that the drill goes on: that counts
        against the service."""
        if not isinstance(self.service, Service):
            return False  # app hosts are restarted by the host fault itself
        time.sleep(max(0.0, since + GRACE - time.monotonic()))
        if self.service.alive():
            return False
        result.supervisor_died = True
        result.notes.append("the whole service stopped; restarted by the drill")
        self.log(f"{result.name}: the service's supervisor exited; starting it again")
        self.service.start()
        self.service.wait_ready(self.config.recovery_deadline)
        return True

    # --- the faults -------------------------------------------------------------------------

    def api_worker(self) -> FaultResult:
        """kill -9 of one gunicorn worker while requests are in flight."""
        result = self._result("kill -9 of an API worker")
        workers = self._one_service().api_workers()
        if not workers:
            result.notes.append("no gunicorn worker found")
            return result
        victim = self.rng.choice(workers)
        result.detail = f"pid {victim.pid} of {len(workers)} workers"
        self.log(f"{result.name}: {result.detail}")
        with contextlib.suppress(psutil.NoSuchProcess):
            victim.kill()
        killed = time.monotonic()
        self._first_ok(result, killed)
        if self._supervisor_check(result, killed):
            self._first_ok(result, killed)
        return result

    def celery_worker(self) -> FaultResult:
        """kill -9 of the Celery worker (its main process and its pool) while it checks a
        whole-history audit; recovered when a new audit finishes on the restarted worker.
        Meanwhile the API must go on serving."""
        result = self._result("kill -9 of the Celery worker mid-task")
        busy = self._busy_audit()
        worker = self._one_service().celery_worker()
        if worker is None:
            result.notes.append("no Celery worker found")
            return result
        try:
            victims = [worker, *worker.children(recursive=True)]
        except psutil.NoSuchProcess:
            victims = [worker]
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        killed = time.monotonic()
        result.detail = f"pids {', '.join(str(p.pid) for p in victims)}; {busy}"
        self.log(f"{result.name}: {result.detail}")
        result.recovered = self._probe_audit(killed)
        if self._supervisor_check(result, killed):
            result.notes.append("the API stopped answering when the worker died")
            result.recovered = self._probe_audit(killed)
        until = killed + (result.recovered or self.config.recovery_deadline)
        served = [a for a in self.timeline.snapshot() if killed <= a.sent <= until]
        result.failed_attempts = len(self.timeline.failures(killed, until))
        answered = sum(a.outcome == "ok" for a in served)
        result.notes.append(f"the API answered {answered} of {len(served)} attempts meanwhile")
        return result

    def _busy_audit(self) -> str:
        """Start whole-history audits (two, so the worker's pool has a queue) and wait until
        one is being checked; a description of how far it had got."""
        for _ in range(2):
            started = self.api.post("/v1/audits", self.auditor, {})
            if started.ok:
                self.audits.append(started.body["id"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.audits:
            audit = self.api.get(f"/v1/audits/{self.audits[0]}", self.auditor, deadline=5)
            if audit.ok and audit.body["status"] != "running":
                return f"audit finished before the kill ({audit.body['total']} units)"
            if audit.ok and audit.body["checked"] > 0:
                return f"audit at {audit.body['checked']}/{audit.body['total']} units"
            time.sleep(POLL)
        return "no audit under way at the kill"

    def _probe_audit(self, since: float) -> float | None:
        """Seconds from ``since`` until a small audit (one player's) sent after it finished:
        the worker is back and takes new work. None if the deadline passes, or the whole
        service stops meanwhile."""
        player = self.probe_player()
        deadline = since + self.config.recovery_deadline
        audit_id: str | None = None
        while player is not None and time.monotonic() < deadline and self.service.alive():
            if audit_id is None:
                started = self.api.post(
                    "/v1/audits", self.auditor, {"player_id": player}, deadline=5
                )
                if started.ok:
                    audit_id = started.body["id"]
                    self.audits.append(audit_id)
            else:
                audit = self.api.get(f"/v1/audits/{audit_id}", self.auditor, deadline=5)
                if audit.ok and audit.body["status"] != "running":
                    return time.monotonic() - since
            time.sleep(0.5)
        return None

    def whole_service(self) -> FaultResult:
        """kill -9 of the supervisor and all its children; then, as systemd would, a restart
        after a short pause. The clients keep retrying throughout."""
        result = self._result("kill -9 of the whole service")
        service = self._one_service()
        pids = service.kill_all()
        killed = time.monotonic()
        result.detail = f"{len(pids)} processes; restarted after {self.config.restart_delay:g} s"
        self.log(f"{result.name}: {result.detail}")
        time.sleep(self.config.restart_delay)
        if not port_is_free(service.port):
            result.notes.append(f"port {service.port} still taken after the kill")
        service.start()
        with contextlib.suppress(TimeoutError):
            ready = service.wait_ready(self.config.recovery_deadline)
            result.notes.append(f"ready {ready:.1f} s after the restart")
        self._first_ok(result, killed)
        return result

    def database(self) -> FaultResult:
        """The database stopped (fast shutdown: every connection cut) for a while, then
        started again exactly as before. In embedded mode a service process that connects
        anew starts the server itself (pgserver does); a real outage cannot be undone from the
        service, so the drill stops it again until the outage is over, and says so."""
        result = self._result("database outage")
        self.db.stop()
        down = time.monotonic()
        self.log(f"{result.name}: stopped for {self.config.db_outage:g} s")
        restarted = 0
        while time.monotonic() < down + self.config.db_outage:
            if self.db.running():
                restarted += 1
                with contextlib.suppress(subprocess.CalledProcessError):
                    self.db.stop()
            time.sleep(POLL)
        if not self.db.running():
            self.db.start()
        back = time.monotonic()
        if restarted:
            result.notes.append(
                f"the service started the embedded database {restarted} times during the "
                "outage (stopped again by the drill)"
            )
        during = self.timeline.failures(down, back)
        slowest = max((a.done - a.sent for a in during), default=0.0)
        result.detail = (
            f"{back - down:.1f} s down; {len(during)} failed attempts meanwhile, the slowest "
            f"answered in {slowest:.1f} s"
        )
        self._first_ok(result, back)
        if self._supervisor_check(result, back):
            self._first_ok(result, back)
        return result

    def app_host(self) -> FaultResult:
        """kill -9 of a whole app host under load (its gunicorn, worker, beat and supervisor
        together), the one whose beat leads when there are several; started again after
        DRILL_HOST_DOWN_SECONDS. With one host the service is down meanwhile and the clients
        wait; with two, the balancer takes the dead host out and the other carries the load,
        and its beat takes the lead."""
        result = self._result("kill -9 of a whole app host")
        cluster = self._cluster()
        url = cluster.database_url()
        leader = facts.leader(url, BEAT_ROLE)
        victim = next((a for a in cluster.apps if a.host.address == leader), cluster.apps[0])
        pids = victim.kill()
        killed = time.monotonic()
        killed_at = datetime.now(UTC)
        result.detail = (
            f"{victim.name}: {len(pids)} processes; beat led by "
            f"{cluster.host_named(leader)} before; back after {self.config.host_down:g} s"
        )
        self.log(f"{result.name}: {result.detail}")
        new_leader, led_after = None, None
        while time.monotonic() < killed + self.config.host_down:
            if new_leader is None:
                with contextlib.suppress(Exception):
                    new_leader = facts.leader(url, BEAT_ROLE)
                    led_after = time.monotonic() - killed if new_leader else None
            time.sleep(POLL * 5)
        down = self.timeline.failures(killed, time.monotonic())
        served = [a for a in self.timeline.snapshot() if killed <= a.sent and a.outcome == "ok"]
        cut = [
            a
            for a in self.timeline.snapshot()
            if a.sent < killed <= a.done and a.outcome not in ("ok", "refused")
        ]
        result.notes.append(
            f"in flight at the kill: {len(cut)} attempts failed (and were sent again); while it "
            f"was down: {len(served)} attempts answered, {len(down)} failed"
        )
        if led_after is not None:
            result.notes.append(
                f"beat led by {cluster.host_named(new_leader)} {led_after:.1f} s after the kill"
            )
        elif len(cluster.apps) > 1:
            result.notes.append("no beat took the lead while the host was down")
        victim.start()
        with contextlib.suppress(TimeoutError, RuntimeError):
            ready = victim.wait_ready(self.config.recovery_deadline)
            result.notes.append(f"{victim.name} ready {ready:.1f} s after its restart")
        self._first_ok(result, killed)
        signed = facts.checkpoints_since(url, killed_at)
        result.notes.append(f"checkpoints signed since the kill: {signed}")
        if len(cluster.apps) > 1 and led_after is None:
            result.recovered = None  # the schedule stopped with the leader's host
        return result

    def close(self) -> None:
        self.api.close()
