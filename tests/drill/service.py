"""The drill's service: started as `make run` starts it (its own data folder, embedded
PostgreSQL and filesystem broker, a port of its own), its processes found by their tree, and
stopped with everything it started. Nothing here touches a process the drill did not start."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import IO

import psutil
import requests

from service.runtime.config import PROJECT_ROOT
from service.runtime.database import EMBEDDED_DATABASE
from tests.drill.config import PORTS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
    import pgserver
    from pgserver.utils import PostmasterInfo

BIN = Path(sys.executable).parent
PG_CTL = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_ctl"
#: Programs a supervisor may start the service's commands through.
SHELLS = ("sh", "bash", "dash")
#: Settings of the caller's own that would point the drill's service elsewhere.
FOREIGN = (
    "DATABASE_URL",
    "AUDIT_DATABASE_URL",
    "BACKGROUND_DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "CELERY_QUEUE",
    "CERTIFICATION_MODE",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
)


class ServiceDied(RuntimeError):
    """The service's supervisor exited when it should be running."""


def free_port(candidates: Iterable[int] = PORTS) -> int:
    for port in candidates:
        if port_is_free(port):
            return port
    raise RuntimeError(f"no free port in {candidates}")


def port_is_free(port: int) -> bool:
    """Nobody listens on it: with SO_REUSEADDR, as gunicorn binds, only a listener is in the
    way (not the closed connections of a run just stopped)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return ""


class Service:
    def __init__(self, data_dir: Path, port: int, broker_url: str | None) -> None:
        self.data_dir = data_dir
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = data_dir / "service.log"
        self.env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
        self.env |= {
            "APP_ENV": "development",
            "DATA_DIR": str(data_dir),
            "PORT": str(port),
            "HOST": "127.0.0.1",
        }
        if broker_url:
            # A queue of the drill's own on a shared broker, so no other worker takes its tasks.
            self.env |= {
                "CELERY_BROKER_URL": broker_url,
                "CELERY_QUEUE": f"drill-{uuid.uuid4().hex[:12]}",
            }
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._log: IO[bytes] | None = None
        #: Every process seen in the service's tree, so none is left behind.
        self._seen: dict[int, psutil.Process] = {}
        self._sessions: set[int] = set()

    # --- starting and stopping ------------------------------------------------------------

    def start(self) -> None:
        """`make run`, as a developer types it, in a session of its own (so Ctrl-C of the
        drill reaches the drill, which then stops the service itself)."""
        if self._log is None:
            self._log = self.log_path.open("ab")
        self.starts += 1
        self._log.write(f"\n===== drill: make run (start {self.starts}) =====\n".encode())
        self._log.flush()
        self.process = subprocess.Popen(
            ["make", "--no-print-directory", "run"],
            cwd=PROJECT_ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._sessions.add(self.process.pid)
        self._remember()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.base}/readyz", timeout=3).status_code == 200
        except requests.RequestException:
            return False

    def wait_ready(self, timeout: float) -> float:
        """Seconds until /readyz answered 200; ServiceDied if the supervisor exits first."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if not self.alive():
                raise ServiceDied(f"`make run` exited ({self._exit_code()}); see {self.log_path}")
            if self.ready():
                self._remember()
                return time.monotonic() - started
            time.sleep(0.25)
        raise TimeoutError(f"the service was not ready in {timeout:.0f} s; see {self.log_path}")

    def _exit_code(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def kill_all(self) -> list[int]:
        """kill -9 of the supervisor and every process under it at once, as a crash or an OOM
        kill of the whole unit would; the pids killed."""
        victims = self.tree()
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(victims, timeout=10)
        if self.process is not None:
            self.process.wait(timeout=10)
        return [p.pid for p in victims]

    def stop(self, timeout: float = 30.0) -> list[str]:
        """Ctrl-C, as in the terminal: SIGINT to `make run`'s process group, then a wait. What
        is still running after that (anything the drill's service ever started) is killed and
        named in the answer."""
        if self.alive():
            assert self.process is not None
            self._remember()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while self.leftovers() and time.monotonic() < deadline:
            time.sleep(0.25)
        left = self.leftovers()
        named = [f"{p.pid} {_cmdline(p)[:80]}" for p in left]
        for process in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(left, timeout=10)
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        return named

    # --- its processes --------------------------------------------------------------------

    def tree(self) -> list[psutil.Process]:
        """The supervisor and every process under it, now."""
        if not self.alive():
            return []
        assert self.process is not None
        try:
            root = psutil.Process(self.process.pid)
            found = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        for process in found:
            self._seen.setdefault(process.pid, process)
        return found

    def _remember(self) -> None:
        self.tree()

    def leftovers(self) -> list[psutil.Process]:
        """Processes of the drill's service still running: any seen in its tree, and any
        still in a session the drill created for it."""
        left = {p.pid: p for p in self._seen.values() if _running(p)}
        for process in psutil.process_iter():
            try:
                if os.getsid(process.pid) in self._sessions and process.pid != os.getpid():
                    left.setdefault(process.pid, process)
            except (ProcessLookupError, PermissionError, psutil.NoSuchProcess):
                continue
        return list(left.values())

    def _programs(self, word: str) -> list[psutil.Process]:
        """Processes of the tree running ``word`` (e.g. gunicorn), leaving out the shells that
        a supervisor may start them through."""
        return [p for p in self.tree() if word in _cmdline(p) and _name(p) not in SHELLS]

    def api_workers(self) -> list[psutil.Process]:
        """gunicorn's worker processes: those whose parent is a gunicorn (the master)."""
        gunicorns = self._programs("gunicorn")
        pids = {p.pid for p in gunicorns}
        return [p for p in gunicorns if _parent_pid(p) in pids]

    def celery_worker(self) -> psutil.Process | None:
        """The Celery worker's main process (its pool's children run the tasks)."""
        workers = [p for p in self._programs("celery") if " worker" in _cmdline(p)]
        pids = {p.pid for p in workers}
        return next((p for p in workers if _parent_pid(p) not in pids), None)

    # --- commands in the service's configuration ------------------------------------------

    def create_key(self, role: str, name: str) -> str:
        return create_key(self.env, role, name)


def create_key(env: dict[str, str], role: str, name: str) -> str:
    """A staff API key, made by the CLI as the README shows, with a service's settings (its
    last line is the key)."""
    done = subprocess.run(
        [str(BIN / "flask"), "--app", "service", "keys", "create", "--role", role, "--name", name],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1].strip()


def _name(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.Error:
        return ""


def _parent_pid(process: psutil.Process) -> int | None:
    try:
        return process.ppid()
    except psutil.Error:
        return None


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class EmbeddedDatabase:
    """The embedded PostgreSQL in the drill's data folder, which pgserver started for the
    service: stopped and started again exactly as pgserver starts it (same socket folder,
    log and user), for an outage."""

    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "pg"
        self._socket_dir: Path | None = None

    def info(self) -> PostmasterInfo | None:
        try:
            return PostmasterInfo.read_from_pgdata(self.pgdata)
        except (OSError, AssertionError, ValueError):
            return None  # not there, or being rewritten as the server starts or stops

    def running(self) -> bool:
        info = self.info()
        return info is not None and info.is_running()

    def url(self) -> str:
        info = self.info()
        if info is None or not info.is_running():
            raise RuntimeError(f"the embedded PostgreSQL in {self.pgdata} is not running")
        self._socket_dir = info.socket_dir
        return info.get_uri(database=EMBEDDED_DATABASE)

    def stop(self) -> None:
        info = self.info()
        if info is not None and info.socket_dir is not None:
            self._socket_dir = info.socket_dir
        self._pg_ctl(["-m", "fast", "-w", "stop"])

    def start(self) -> None:
        if self._socket_dir is None:
            raise RuntimeError("start() needs the socket folder of an earlier run")
        # pgserver's own arguments: no TCP listener, its socket folder, its log file.
        args = ["-w", "-o", '-h ""', "-o", f"-k {self._socket_dir}", "-l", str(self.pgdata / "log")]
        try:
            self._pg_ctl([*args, "start"])
        except subprocess.CalledProcessError:
            if not self.running():  # else a service process started it first, as pgserver does
                raise

    def stop_if_running(self) -> bool:
        """Stop it if it still runs (the drill started it, through its service); whether it
        had to."""
        if not self.running():
            return False
        self.stop()
        return True

    def _pg_ctl(self, args: list[str]) -> None:
        # As root, pgserver runs PostgreSQL as the data folder's owner; so must pg_ctl.
        owner = self.pgdata.stat().st_uid
        user = owner if os.geteuid() == 0 and owner != 0 else None
        subprocess.run(
            [str(PG_CTL), "-D", str(self.pgdata), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            user=user,
            timeout=60,
        )
