"""The service as several hosts on this machine, for the host drill (``DRILL_HOSTS=N make
drill``): each host a Linux network namespace of its own (Debian's iproute2) on one bridge, so
that everything between them crosses a network as it would between machines.

- ``db``: PostgreSQL (pgserver's binaries, a cluster of the drill's own), listening on its
  address only; the service's two logins set up as the README's Database roles say, and the
  migrations run once, before any app host starts, as a deployment would;
- ``replica``: a streaming replica of it (pg_basebackup over the network), which the app
  hosts' staff reads use (REPLICA_DATABASE_URL; service/services/staff_reads.py);
- ``broker``: Redis (the machine's redis-server), nothing kept on disk;
- ``app1`` .. ``appN``: each runs the service as `make run` does (supervisord: gunicorn, a Celery
  worker and beat) in production mode, with the deployment's shared settings (database,
  broker, seed keys, signing key) and a data folder of its own; every host runs a beat, and
  exactly one leads (service/worker/single_beat.py);
- ``lb``: HAProxy in front of the app hosts, health-checking each on /readyz.

Killing a host is kill -9 of every process in its namespace at once: its gunicorn, its
worker, its beat and its supervisor together, as when a machine loses power. Everything is
stopped and every namespace removed on every way out. Needs root, ip, haproxy and
redis-server."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil
import psycopg
import requests
from cryptography.fernet import Fernet

from events.anchor import new_private_pem
from service.runtime.config import PROJECT_ROOT
from service.runtime.database import migrate, provision, with_user
from tests.debian import missing_after_install
from tests.drill.service import BIN, FOREIGN, create_key
from tests.postgres_servers import PG_BIN, init_cluster, pg, shared_folder, system_user

DATABASE = "vegas"
OWNER, SERVICE = "vegas_owner", "vegas_service"
APP_PORT, LB_PORT, PG_PORT, REDIS_PORT = 8000, 8080, 5432, 6379
#: The programs the host drill needs, and the Debian package of each.
PROGRAMS = {"ip": "iproute2", "haproxy": "haproxy", "redis-server": "redis-server"}


def missing_programs() -> list[str]:
    """The Debian packages to install before the host drill can run (apt-get is tried first)."""
    return missing_after_install(PROGRAMS)


def _run(args: list[str]) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=60)


def _as_postgres_user() -> list[str]:
    """The command prefix that runs a program as PostgreSQL's user (setpriv execs it, so
    signals reach PostgreSQL itself)."""
    user = system_user()
    if user is None:
        return []
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]


@dataclass
class Host:
    """One namespace on the bridge: a name, an address, the processes started in it."""

    name: str
    namespace: str
    address: str
    data_dir: Path

    def spawn(
        self, args: list[str], log: IO[bytes], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """``args`` run inside the namespace, in a session of its own."""
        return subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, *args],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def pids(self) -> list[int]:
        """Every process running in the namespace now."""
        done = subprocess.run(
            ["ip", "netns", "pids", self.namespace], capture_output=True, text=True, check=False
        )
        return [int(pid) for pid in done.stdout.split()]

    def kill_all(self) -> list[int]:
        """kill -9 of every process in the namespace at once; the pids killed."""
        pids = self.pids()
        victims = []
        for pid in pids:
            with contextlib.suppress(psutil.NoSuchProcess):
                process = psutil.Process(pid)
                process.kill()
                victims.append(process)
        psutil.wait_procs(victims, timeout=10)
        return pids


class Network:
    """A bridge and one namespace per host, each with a veth pair into the bridge. Names carry
    a tag of the run's, so two drills (or a leftover of a killed one) never meet."""

    def __init__(self, data_dir: Path) -> None:
        self.tag = uuid.uuid4().hex[:4]
        # A /24 of 10.0.0.0/8 picked from the tag: a leftover of another run is elsewhere.
        self.subnet = f"10.{90 + int(self.tag[:2], 16) % 60}.{int(self.tag[2:], 16)}"
        self.bridge = f"vd{self.tag}br"
        self.data_dir = data_dir
        self.hosts: dict[str, Host] = {}

    def address(self, last: int) -> str:
        return f"{self.subnet}.{last}"

    def create(self) -> None:
        _run(["ip", "link", "add", self.bridge, "type", "bridge"])
        _run(["ip", "addr", "add", f"{self.address(1)}/24", "dev", self.bridge])
        _run(["ip", "link", "set", self.bridge, "up"])

    def add(self, name: str, last: int) -> Host:
        namespace = f"vd{self.tag}-{name}"
        outside = f"vd{self.tag}{name}"[:15]
        _run(["ip", "netns", "add", namespace])
        _run(["ip", "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns",
              namespace])  # fmt: skip
        _run(["ip", "link", "set", outside, "master", self.bridge, "up"])
        inside = ["ip", "netns", "exec", namespace, "ip"]
        _run([*inside, "addr", "add", f"{self.address(last)}/24", "dev", "eth0"])
        _run([*inside, "link", "set", "eth0", "up"])
        _run([*inside, "link", "set", "lo", "up"])
        _run([*inside, "route", "add", "default", "via", self.address(1)])
        data_dir = self.data_dir / name
        data_dir.mkdir(parents=True, exist_ok=True)
        host = Host(name, namespace, self.address(last), data_dir)
        self.hosts[name] = host
        return host

    def destroy(self) -> list[str]:
        """Kill whatever still runs in the namespaces, remove them and the bridge; what was
        still running (named)."""
        left = []
        for host in self.hosts.values():
            left += [f"{host.name}: pid {pid}" for pid in host.kill_all()]
            subprocess.run(["ip", "netns", "del", host.namespace], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], check=False, capture_output=True)
        self.hosts.clear()
        return left


class DatabaseHost:
    """PostgreSQL on the ``db`` host. Stopped and started like the embedded one
    (``stop``/``start``/``running``/``url``), so the drill's database outage works on it too."""

    def __init__(self, host: Host, subnet_cidr: str) -> None:
        self.host = host
        self.pgdata = host.data_dir / "pgdata"
        self.subnet_cidr = subnet_cidr
        self.log_path = host.data_dir / "postgres.log"
        self._log: IO[bytes] | None = None
        self.process: subprocess.Popen[bytes] | None = None

    def admin_url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@{self.host.address}:{PG_PORT}/{dbname}"

    def url(self) -> str:
        """The superuser's URL of the service's database (the drill's facts read it)."""
        return self.admin_url(DATABASE)

    def create(self) -> None:
        # PostgreSQL's user must reach its data folder through the drill's.
        for folder in (self.host.data_dir.parent.parent, self.host.data_dir.parent):
            folder.chmod(0o755)
        shared_folder(self.host.data_dir)
        init_cluster(self.pgdata, self.subnet_cidr)  # the drill's own network only

    def clone(self, primary: DatabaseHost) -> None:
        """This host as a streaming replica of ``primary`` (a base backup over the network,
        which writes the standby's connection to the primary)."""
        shared_folder(self.host.data_dir)
        pg("pg_basebackup", "-d", primary.admin_url(), "-D", str(self.pgdata), "-R",
           "-X", "stream", "-c", "fast")  # fmt: skip

    def start(self) -> None:
        if self._log is None:
            self._log = self.log_path.open("ab")
        self.process = self.host.spawn(
            [*_as_postgres_user(), str(PG_BIN / "postgres"), "-D", str(self.pgdata),
             "-c", f"listen_addresses={self.host.address}", "-c", f"port={PG_PORT}",
             "-c", "unix_socket_directories=", "-c", "max_connections=300",
             "-c", "fsync=on", "-c", "synchronous_commit=on"],
            self._log,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not self.running():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"PostgreSQL did not start; see {self.log_path}")
            time.sleep(0.2)

    def running(self) -> bool:
        try:
            with psycopg.connect(self.admin_url(), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self) -> None:
        """A fast shutdown: every session cut, open transactions rolled back."""
        if self.process is not None and self.process.poll() is None:
            pg("pg_ctl", "-D", str(self.pgdata), "-m", "fast", "-w", "stop")
            self.process.wait(timeout=60)

    def stop_if_running(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            return False
        self.stop()
        return True

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        if self._log is not None:
            self._log.close()


@dataclass(frozen=True)
class Deployment:
    """What every app host is given: the same database, broker, queue and keys."""

    database_url: str
    #: The streaming replica, for staff's reads (REPLICA_DATABASE_URL).
    replica_url: str
    #: The audit's own login (AUDIT_DATABASE_URL): the worker's, never the web process's.
    audit_url: str
    #: Background work's own login (BACKGROUND_DATABASE_URL): the worker's alone.
    background_url: str
    broker_url: str
    seed_key: str
    signing_key_file: Path

    def environment(self, data_dir: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
        return env | {
            "APP_ENV": "production",
            "DATABASE_URL": self.database_url,
            "REPLICA_DATABASE_URL": self.replica_url,
            "AUDIT_DATABASE_URL": self.audit_url,
            "BACKGROUND_DATABASE_URL": self.background_url,
            "CELERY_BROKER_URL": self.broker_url,
            "SEED_ENCRYPTION_KEYS": self.seed_key,
            "ANCHOR_SIGNING_KEY_FILE": str(self.signing_key_file),
            "DATA_DIR": str(data_dir),
            "HOST": "0.0.0.0",
            "PORT": str(APP_PORT),
            # Beat's schedule, faster than production's, so the drill sees it run.
            "CHECKPOINT_EVERY_SECONDS": "10",
            "IDLE_CHECK_EVERY_SECONDS": "10",
            "PROJECTOR_EVERY_SECONDS": "5",
        }


class AppHost:
    """The service on one app host, started as `make run` starts it after its migrations:
    ``python -m service.runtime.run`` (supervisord with gunicorn, a worker and beat)."""

    def __init__(self, host: Host, deployment: Deployment) -> None:
        self.host = host
        self.env = deployment.environment(host.data_dir)
        self.log_path = host.data_dir / "service.log"
        self._log: IO[bytes] | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def name(self) -> str:
        return self.host.name

    def start(self) -> None:
        if self._log is None:
            self._log = self.log_path.open("ab")
        self.starts += 1
        self._log.write(f"\n===== drill: start {self.starts} =====\n".encode())
        self._log.flush()
        self.process = self.host.spawn(
            [str(BIN / "python"), "-m", "service.runtime.run"], self._log, self.env
        )

    def ready(self) -> bool:
        """Answers /readyz from the drill's side of the network."""
        try:
            url = f"http://{self.host.address}:{APP_PORT}/readyz"
            return requests.get(url, timeout=3).status_code == 200
        except requests.RequestException:
            return False

    def wait_ready(self, timeout: float) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited; see {self.log_path}")
            if self.ready():
                return time.monotonic() - started
            time.sleep(0.25)
        raise TimeoutError(f"{self.name} was not ready in {timeout:.0f} s; see {self.log_path}")

    def kill(self) -> list[int]:
        """The whole host at once (every process of its namespace, kill -9)."""
        pids = self.host.kill_all()
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        return pids

    def stop(self, timeout: float = 30.0) -> list[str]:
        """SIGTERM to supervisord (as systemd stops a unit), a wait, then what is still
        running in the namespace is killed and named."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=timeout)
        deadline = time.monotonic() + 10
        while self.host.pids() and time.monotonic() < deadline:
            time.sleep(0.25)
        left = [f"{self.name}: pid {pid}" for pid in self.host.kill_all()]
        if self._log is not None:
            self._log.close()
            self._log = None
        return left

    def tasks_run(self) -> int:
        """Background tasks this host's worker finished (its log's Celery lines)."""
        if not self.log_path.exists():
            return 0
        with self.log_path.open("rb") as log:
            return sum(b"] succeeded in " in line for line in log)


# HAProxy: round robin over the app hosts, each health-checked on /readyz every second and
# out after two failures (in again after two passes); a request whose connection to a host is
# refused goes to another (redispatch). Its own error answers carry X-Gateway-Error, so the
# drill tells a host that died under a request (the gateway's 502) from a bug (the service's
# 5xx).
HAPROXY_CONFIG = """\
global
    maxconn 4096
    log stdout format raw local0 warning

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 130s
    timeout server 60s
    retries 3
    option redispatch
    http-error status 502 content-type text/plain string "bad gateway" hdr X-Gateway-Error 502
    http-error status 503 content-type text/plain string "no server" hdr X-Gateway-Error 503
    http-error status 504 content-type text/plain string "gateway timeout" hdr X-Gateway-Error 504

frontend api
    bind {address}:{port}
    default_backend app

backend app
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
{servers}
"""


class Balancer:
    """HAProxy on the ``lb`` host."""

    def __init__(self, host: Host, apps: list[AppHost]) -> None:
        self.host = host
        self.config_path = host.data_dir / "haproxy.cfg"
        self.log_path = host.data_dir / "haproxy.log"
        servers = "\n".join(
            f"    server {app.name} {app.host.address}:{APP_PORT} check" for app in apps
        )
        self.config_path.write_text(
            HAPROXY_CONFIG.format(address=host.address, port=LB_PORT, servers=servers)
        )
        self.base = f"http://{host.address}:{LB_PORT}"
        self._log: IO[bytes] | None = None
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._log = self.log_path.open("ab")
        self.process = self.host.spawn(["haproxy", "-db", "-f", str(self.config_path)], self._log)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        if self.alive():
            assert self.process is not None
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()


class Cluster:
    """The whole set: network, database, broker, N app hosts, the balancer."""

    def __init__(self, data_dir: Path, app_hosts: int) -> None:
        self.data_dir = data_dir
        self.network = Network(data_dir / "hosts")
        self.app_count = app_hosts
        self.database: DatabaseHost | None = None
        self.migration_url = ""
        self.replica: DatabaseHost | None = None
        self.broker: subprocess.Popen[bytes] | None = None
        self.apps: list[AppHost] = []
        self.balancer: Balancer | None = None
        self._logs: list[IO[bytes]] = []

    @property
    def base(self) -> str:
        assert self.balancer is not None
        return self.balancer.base

    @property
    def log_path(self) -> Path:
        return self.network.data_dir

    def start(self, say: Callable[[str], None]) -> None:
        """Network, database (provisioned and migrated), broker, app hosts, balancer; waits
        until every app host answers /readyz."""
        network = self.network
        network.create()
        db = DatabaseHost(network.add("db", 2), f"{network.address(0)}/24")
        self.database = db
        db.create()
        db.start()
        urls = provision(db.admin_url(), DATABASE, owner=OWNER, service=SERVICE)
        self.migration_url = urls.migration  # staff keys only (the app hosts never get it)
        applied = migrate(urls.migration)
        say(f"database host {db.host.address}: {len(applied)} migrations applied")
        replica = DatabaseHost(network.add("replica", 4), f"{network.address(0)}/24")
        self.replica = replica
        replica.clone(db)
        replica.start()
        say(f"replica host {replica.host.address}: streaming from {db.host.address}")
        broker = network.add("broker", 3)
        broker_log = (broker.data_dir / "redis.log").open("ab")
        self._logs.append(broker_log)
        self.broker = broker.spawn(
            ["redis-server", "--bind", broker.address, "--port", str(REDIS_PORT), "--save", "",
             "--appendonly", "no", "--protected-mode", "no"],
            broker_log,
        )  # fmt: skip
        keys = self.data_dir / "keys"
        keys.mkdir(mode=0o700, exist_ok=True)
        signing_key = keys / "anchor-signing-key.pem"
        signing_key.write_bytes(new_private_pem())
        signing_key.chmod(0o600)
        deployment = Deployment(
            database_url=urls.service,
            replica_url=with_user(replica.admin_url(DATABASE), SERVICE),
            audit_url=urls.audit or "",
            background_url=urls.background or "",
            broker_url=f"redis://{broker.address}:{REDIS_PORT}/0",
            seed_key=Fernet.generate_key().decode(),
            signing_key_file=signing_key,
        )
        self.deployment = deployment
        self.apps = [
            AppHost(network.add(f"app{i}", 10 + i), deployment)
            for i in range(1, self.app_count + 1)
        ]
        for app in self.apps:
            app.start()
        for app in self.apps:
            took = app.wait_ready(300)
            say(f"{app.name} {app.host.address}: ready in {took:.1f} s")
        self.balancer = Balancer(network.add("lb", 10), self.apps)
        self.balancer.start()
        deadline = time.monotonic() + 30
        while not self._balancer_ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"HAProxy did not answer; see {self.balancer.log_path}")
            time.sleep(0.25)

    def _balancer_ready(self) -> bool:
        try:
            return requests.get(f"{self.base}/readyz", timeout=3).status_code == 200
        except requests.RequestException:
            return False

    def alive(self) -> bool:
        return self.balancer is not None and self.balancer.alive()

    def database_url(self) -> str:
        assert self.database is not None
        return self.database.url()

    def host_named(self, address: str | None) -> str:
        """The app host at ``address`` by name (as the database sees its sessions' clients)."""
        found = next((a.name for a in self.apps if a.host.address == address), None)
        return found or ("nobody" if address is None else address)

    def create_key(self, role: str, name: str) -> str:
        """A staff key, made with an app host's settings and the owner's login, which alone
        writes keys (migrations/0030), from the drill's side."""
        return create_key(
            self.apps[0].env | {"MIGRATION_DATABASE_URL": self.migration_url}, role, name
        )

    def stop(self) -> list[str]:
        """Every app host stopped as systemd would (SIGTERM), then the balancer, the broker and
        the database; what was left running in the app hosts."""
        left: list[str] = []
        for app in self.apps:
            left += app.stop()
        if self.balancer is not None:
            self.balancer.close()
        if self.broker is not None and self.broker.poll() is None:
            self.broker.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.broker.wait(timeout=10)
        for database in (self.replica, self.database):
            if database is not None:
                database.close()
        return left

    def destroy(self) -> list[str]:
        """Whatever still runs, killed; the namespaces and bridge removed."""
        left = self.network.destroy()
        for log in self._logs:
            log.close()
        return left
