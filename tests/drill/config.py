"""The drill's settings, from DRILL_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The faults, in the order they are injected, and when (as a fraction of the load's time).
#: ``host`` (the host drill's): kill -9 of a whole app host, later brought back.
FAULTS = {"api": 0.15, "worker": 0.3, "host": 0.35, "service": 0.5, "database": 0.7}
#: The faults of each kind of drill: the service as `make run` starts it, or several app hosts
#: behind a load balancer (DRILL_HOSTS).
ONE_SERVICE_FAULTS = ("api", "worker", "service", "database")
HOSTS_FAULTS = ("host", "database")

#: The ports the drill may use for the service (the team's convention for drills).
PORTS = range(8780, 8790)


@dataclass(frozen=True)
class DrillConfig:
    #: Concurrent simulated players.
    clients: int = 16
    #: How long the load runs; the faults are spread over it.
    seconds: float = 150.0
    #: How long one request is retried (same key, same body) before the client gives up.
    request_deadline: float = 120.0
    #: How long the drill waits for the service to answer again after a fault.
    recovery_deadline: float = 120.0
    #: How long the database stays down.
    db_outage: float = 15.0
    #: How long "systemd" waits before restarting the killed service.
    restart_delay: float = 1.0
    #: How long an audit may make no progress before it counts as stuck: longer than the
    #: workers' own sweeper needs to notice a stalled audit (5 minutes quiet, looked for every
    #: minute) and send its lost units again.
    audit_stall: float = 420.0
    #: None: pick a free port in PORTS.
    port: int | None = None
    #: Celery broker for the drill's service; None: the filesystem transport in the data folder.
    broker_url: str | None = None
    #: Keep the data folder (logs, database) even when the drill passes.
    keep: bool = False
    #: The folder under which the drill's data folder is made.
    tmp_root: Path = Path("/tmp")
    #: Which faults to inject (names in FAULTS).
    faults: tuple[str, ...] = ONE_SERVICE_FAULTS
    #: 0: the service as `make run` starts it; N: N app hosts (each gunicorn, a Celery worker
    #: and beat) behind HAProxy, each host in a network namespace of its own, with PostgreSQL
    #: and Redis on hosts of their own (tests/drill/hosts.py).
    hosts: int = 0
    #: How long a killed app host stays down before it is started again.
    host_down: float = 20.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DrillConfig:
        env = os.environ if env is None else env

        def number(name: str, default: float) -> float:
            value = env.get(name, "").strip()
            return float(value) if value else default

        port = env.get("DRILL_PORT", "").strip()
        hosts = int(number("DRILL_HOSTS", cls.hosts))
        known = HOSTS_FAULTS if hosts else ONE_SERVICE_FAULTS
        faults = tuple(f.strip() for f in env.get("DRILL_FAULTS", ",".join(known)).split(","))
        unknown = [f for f in faults if f and f not in known]
        if unknown:
            raise ValueError(
                f"DRILL_FAULTS: unknown {unknown} for this drill; known: {', '.join(known)}"
                + (" (with DRILL_HOSTS)" if hosts else " (without DRILL_HOSTS)")
            )
        return cls(
            clients=int(number("DRILL_CLIENTS", cls.clients)),
            seconds=number("DRILL_SECONDS", cls.seconds),
            request_deadline=number("DRILL_REQUEST_DEADLINE", cls.request_deadline),
            recovery_deadline=number("DRILL_RECOVERY_DEADLINE", cls.recovery_deadline),
            db_outage=number("DRILL_DB_OUTAGE_SECONDS", cls.db_outage),
            restart_delay=number("DRILL_RESTART_DELAY", cls.restart_delay),
            audit_stall=number("DRILL_AUDIT_STALL_SECONDS", cls.audit_stall),
            port=int(port) if port else None,
            broker_url=env.get("DRILL_BROKER_URL") or None,
            keep=env.get("DRILL_KEEP", "").strip().lower() in ("1", "true", "yes"),
            faults=tuple(f for f in faults if f),
            hosts=hosts,
            host_down=number("DRILL_HOST_DOWN_SECONDS", cls.host_down),
        )
