"""`make run`'s supervision, for real: the processes it starts (``python -m service.runtime.run``,
what `make run` execs) restart alone when they crash while the API keeps serving, die with the
supervisor even when it is killed with -9 (the port is free again, the embedded database stopped),
and stop cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil
import requests

from service.bootstrap import Container
from service.runtime.config import PROJECT_ROOT, Settings
from tests.workers import worker_environment

START_TIMEOUT = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_free(port: int) -> bool:
    """Whether a server could listen on the port again (as gunicorn binds: SO_REUSEADDR, so the
    requests' closed connections in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


class Service:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.log = log
        self.supervisor = psutil.Process(process.pid)

    def healthy(self) -> bool:
        try:
            return requests.get(f"http://127.0.0.1:{self.port}/healthz", timeout=2).ok
        except requests.RequestException:
            return False

    def program(self, name: str) -> psutil.Process | None:
        """The supervisor's child running ``name`` (web, worker, beat or database)."""
        marks = {
            "web": "gunicorn",
            "worker": " worker ",
            "beat": " beat ",
            "database": "database_keeper",
        }
        for child in self.supervisor.children():
            try:
                if marks[name] in " ".join(child.cmdline()) + " ":
                    return child
            except psutil.NoSuchProcess:
                continue
        return None

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@contextmanager
def supervised(env: dict[str, str], tmp: Path) -> Iterator[Service]:
    port = _free_port()
    env = env | {"PORT": str(port), "WEB_WORKERS": "1", "WORKER_CONCURRENCY": "1"}
    log = tmp / "run.log"
    # Append: supervisord reopens /dev/stdout for each program (its own offset otherwise).
    with log.open("ab") as out:
        if "DATABASE_URL" not in env:  # (the suite has migrated its own database already)
            # `make run` is `make migrate`, then `python -m service.runtime.run`.
            migrate = [sys.executable, "-m", "flask", "--app", "service", "db", "upgrade"]
            subprocess.run(migrate, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=out, check=True)
        process = subprocess.Popen(
            [sys.executable, "-m", "service.runtime.run"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    service = Service(process, port, log)
    everything: list[psutil.Process] = []
    try:
        assert _wait(service.healthy, START_TIMEOUT), service.output()
        everything = service.supervisor.children(recursive=True)
        yield service
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        for leftover in everything:  # never leave a process behind, whatever the test did
            with suppress(psutil.NoSuchProcess):
                leftover.kill()


def _environment(settings: Settings, tmp: Path, *, embedded: bool) -> dict[str, str]:
    env = worker_environment(
        settings, DATA_DIR=str(tmp / "data"), CELERY_QUEUE=f"vegas-sup-{uuid.uuid4().hex[:8]}"
    )
    if embedded:  # the embedded database and the filesystem broker, as a bare `make run`
        for name in ("DATABASE_URL", "MIGRATION_DATABASE_URL", "CELERY_BROKER_URL"):
            env.pop(name, None)
    return env


def test_a_crashed_process_is_restarted_alone_and_the_api_keeps_serving(
    settings: Settings, tmp_path: Path
) -> None:
    with supervised(_environment(settings, tmp_path, embedded=False), tmp_path) as service:
        database = service.program("database")
        assert database is None or not database.is_running()  # DATABASE_URL: nothing to keep
        for name in ("worker", "beat", "web"):
            before = service.program(name)
            assert before is not None, service.output()
            others = {n: service.program(n) for n in ("web", "worker", "beat") if n != name}
            old_pid = before.pid
            before.kill()
            if name != "web":
                assert service.healthy(), f"the API stopped with the {name}"

            def restarted(name: str = name, old: int = old_pid) -> bool:
                now = service.program(name)
                return now is not None and now.pid != old

            assert _wait(restarted, 30), service.output()
            assert _wait(service.healthy, 30), service.output()
            for other, process in others.items():  # the rest kept running, untouched
                assert process is not None
                assert process.is_running(), f"{other} stopped when {name} was killed"
                assert service.program(other) == process


def test_the_processes_die_with_a_killed_supervisor(settings: Settings, tmp_path: Path) -> None:
    """Embedded: the keeper stops the embedded PostgreSQL too, and a second start is clean."""
    env = _environment(settings, tmp_path, embedded=True)
    pgdata = str(tmp_path / "data" / "pg")

    def embedded_postgres() -> list[psutil.Process]:
        found = []
        for process in psutil.process_iter(["cmdline"]):
            cmdline = process.info["cmdline"] or []
            if "-D" in cmdline and pgdata in cmdline:
                found.append(process)
        return found

    with supervised(env, tmp_path) as service:
        assert embedded_postgres()
        children = service.supervisor.children(recursive=True)
        os.kill(service.process.pid, signal.SIGKILL)
        service.process.wait(10)

        def all_gone() -> bool:
            return not any(p.is_running() and p.status() != "zombie" for p in children)

        assert _wait(all_gone, 30), [p.cmdline() for p in children if p.is_running()]
        assert _wait(lambda: _port_free(service.port), 10)
        assert _wait(lambda: not embedded_postgres(), 30)
    with supervised(env, tmp_path) as again:  # the same port and data folder start cleanly
        assert again.healthy()


#: A stop's deadline: every process gone, none killed after a timeout (issue 38).
STOP_DEADLINE = 5.0


def test_sigterm_stops_everything_cleanly(
    settings: Settings, container: Container, tmp_path: Path
) -> None:
    """With a whole-history audit's chunks in flight on the worker: every process gone within
    the deadline, exit 0, nothing killed (the worker hands back what it held)."""
    auditor = container.access.create_key(f"stop-{uuid.uuid4().hex[:8]}", "auditor")
    with supervised(_environment(settings, tmp_path, embedded=False), tmp_path) as service:
        children = service.supervisor.children(recursive=True)
        base = f"http://127.0.0.1:{service.port}"
        started = requests.post(
            f"{base}/v1/audits", json={}, headers={"Authorization": f"Bearer {auditor}"}, timeout=30
        )
        assert started.status_code == 202, started.text
        audit = started.headers["Location"]

        def checking() -> bool:
            status = requests.get(
                f"{base}{audit}", headers={"Authorization": f"Bearer {auditor}"}, timeout=10
            ).json()
            return bool(status["checked"]) or status["status"] != "running"

        assert _wait(checking, 60), service.output()
        stopping = time.monotonic()
        service.process.send_signal(signal.SIGTERM)
        assert service.process.wait(60) == 0, service.output()
        took = time.monotonic() - stopping
        # (each program's line filter ends as its pipe closes, a moment after its program)
        _, alive = psutil.wait_procs(children, timeout=2)
        assert alive == []
        assert _port_free(service.port)
        log = (tmp_path / "data" / "supervisord.log").read_text()
        assert "SIGKILL" not in log, log[-2000:]
        assert took < STOP_DEADLINE, f"the stop took {took:.1f} s\n{log[-1500:]}"


def test_sigterm_stops_the_embedded_default_as_quickly(settings: Settings, tmp_path: Path) -> None:
    """A bare `make run` (embedded PostgreSQL, the filesystem broker): the same deadline."""
    with supervised(_environment(settings, tmp_path, embedded=True), tmp_path) as service:
        stopping = time.monotonic()
        service.process.send_signal(signal.SIGTERM)
        assert service.process.wait(60) == 0, service.output()
        took = time.monotonic() - stopping
        log = (tmp_path / "data" / "supervisord.log").read_text()
        assert "SIGKILL" not in log, log[-2000:]
        assert took < STOP_DEADLINE, f"the stop took {took:.1f} s\n{log[-1500:]}"


def test_a_port_in_use_is_a_clear_error_and_nothing_starts(tmp_path: Path) -> None:
    """`make run` on a port another program holds: a message naming it and a non-zero exit
    within seconds, before anything is started (no banner, no supervisor)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        began = time.monotonic()
        ran = subprocess.run(
            ["make", "--no-print-directory", "run"],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path / "data")},
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - began
    assert ran.returncode != 0
    assert f"127.0.0.1:{port} is in use" in ran.stderr, ran.stderr
    assert "API on" not in ran.stdout
    assert took < 10, took
    assert not (tmp_path / "data" / "supervisord.pid").exists()


#: supervisord's own lines (it is not the web, the worker or beat): its timestamped format.
SUPERVISOR_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARN|CRIT|ERRO|DEBG) ")


def test_every_line_the_processes_write_is_json(settings: Settings, tmp_path: Path) -> None:
    """The web's, the worker's and beat's lines (gunicorn's and Celery's own included, their
    shutdown too) are JSON objects; one line a request, with its request id, route and status."""
    with supervised(_environment(settings, tmp_path, embedded=False), tmp_path) as service:
        base = f"http://127.0.0.1:{service.port}"
        requests.get(f"{base}/healthz", headers={"X-Request-Id": "probe-1.a_b"}, timeout=5)
        requests.get(f"{base}/v1/variants", headers={"X-Request-Id": "not ok!"}, timeout=5)
        requests.get(f"{base}/v1/players/{uuid.uuid4()}", timeout=5)  # a 401
        time.sleep(1.5)  # beat's and the worker's first tasks
        service.process.send_signal(signal.SIGTERM)
        assert service.process.wait(60) == 0
    lines = [line for line in (tmp_path / "run.log").read_text().splitlines() if line.strip()]
    parsed = []
    for line in lines:
        if SUPERVISOR_LINE.match(line):
            continue
        found = json.loads(line)  # a line that is not JSON fails here, naming itself
        assert isinstance(found, dict), line
        assert {"time", "level", "logger", "message"} <= set(found), line
        parsed.append(found)
    served = [p for p in parsed if p["logger"] == "service.access"]
    assert len(served) >= 3
    named = next(p for p in served if p["request_id"] == "probe-1.a_b")
    assert (named["route"], named["status"], named["method"]) == ("/healthz", 200, "GET")
    assert named["duration_ms"] >= 0
    refused = next(p for p in served if p["status"] == 401)
    assert (refused["route"], refused["problem"]) == (
        "/v1/players/<uuid:player_id>",
        "unauthorized",
    )
    assert all(p["request_id"] != "not ok!" for p in served)
    assert any(p["logger"].startswith("gunicorn") for p in parsed)
    assert any(p["logger"] == "celery.output" or p["logger"].startswith("celery") for p in parsed)
