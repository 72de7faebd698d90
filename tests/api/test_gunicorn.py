"""The service as it is deployed: a real gunicorn (two worker processes, service.wsgi:app)
on a free local port, configured only through the environment, driven over real HTTP; and
gunicorn with `make run`'s own configuration, sharing kept-alive connections out evenly among
its workers (service/runtime/balanced_worker.py)."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil
import pytest
import requests

from service.bootstrap import Container
from service.runtime.config import PROJECT_ROOT, Settings
from tests.builders import easy_deck
from tests.gunicorn_workers import held_connections

GUNICORN = Path(sys.executable).parent / "gunicorn"
CONFIG = PROJECT_ROOT / "service" / "runtime" / "gunicorn_config.py"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: IO[bytes]

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def stop(self) -> int:
        """SIGTERM, as a process manager stops it: gunicorn lets its workers finish."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def _wait_until_up(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"gunicorn exited with {server.process.returncode}:\n{server.output()}")
        try:
            if requests.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass  # not listening yet, or its workers still booting
        time.sleep(0.1)
    server.stop()
    pytest.fail(f"gunicorn did not answer /healthz in {START_TIMEOUT:.0f} s:\n{server.output()}")


def _environment(database_url: str, settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("APP_ENV", "CERTIFICATION_MODE")}
    return env | {
        "DATABASE_URL": database_url,
        "SEED_ENCRYPTION_KEYS": settings.seed_keys[0],
        "CERTIFICATION_MODE": "1",
        "APP_ENV": "test",
        "DB_POOL_MAX": "4",
    }


def _serve(
    port: int, arguments: list[str], env: dict[str, str], log: IO[bytes]
) -> Iterator[Server]:
    process = subprocess.Popen(
        [str(GUNICORN), *arguments, "service.wsgi:app"],
        cwd=PROJECT_ROOT,
        env=env | {"PORT": str(port)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        _wait_until_up(server)
        yield server
    finally:
        if process.poll() is None:
            server.stop()


@pytest.fixture(scope="module")
def gunicorn(database_url: str, settings: Settings, tmp_path_factory: Any) -> Iterator[Server]:
    log_path = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    env = _environment(database_url, settings)
    with log_path.open("w+b") as log:
        port = _free_port()
        yield from _serve(port, ["-w", "2", "-b", f"127.0.0.1:{port}"], env, log)


def _check(response: requests.Response, status: int) -> Any:
    assert response.status_code == status, (response.status_code, response.text)
    if response.content:
        assert response.headers["Content-Type"].startswith("application/")
        return response.json()
    return None


def test_a_game_over_real_http_from_deposit_to_wallet(
    gunicorn: Server, container: Container
) -> None:
    url = gunicorn.url
    with requests.Session() as http:
        assert _check(http.get(f"{url}/readyz", timeout=10), 200) == {"status": "ready"}

        key = container.access.create_key(f"gunicorn-{uuid.uuid4().hex[:8]}", "operator")
        operator = {"Authorization": f"Bearer {key}"}
        player = _check(
            http.post(
                f"{url}/v1/players",
                json={"external_ref": f"gunicorn-{uuid.uuid4()}", "currency": "GBP"},
                headers=operator,
                timeout=10,
            ),
            201,
        )
        player_id = player["id"]
        players = f"{url}/v1/players/{player_id}"
        deposit = {"amount": 5_200, "transaction_id": f"gunicorn-{uuid.uuid4()}"}
        paid = _check(
            http.post(f"{players}/deposits", json=deposit, headers=operator, timeout=10), 201
        )
        assert paid["balance_after"] == 5_200
        session = _check(http.post(f"{players}/sessions", headers=operator, timeout=10), 201)
        me = {"Authorization": f"Bearer {session['token']}"}

        # Certification mode (on for this server): the operator deals a known deck, whose
        # stock plays straight up to the foundations.
        deal = {"variant": "vegas-draw1", "stake": 520, "player_id": player_id}
        dealt = http.post(
            f"{url}/v1/games", json=deal | {"deck": list(easy_deck())}, headers=operator, timeout=10
        )
        game = _check(dealt, 201)
        assert game["certification"] is True
        assert dealt.headers["Location"].endswith(f"/v1/games/{game['id']}")
        games = f"{url}/v1/games/{game['id']}"

        etag = {"If-Match": dealt.headers["ETag"]}
        drawn = http.post(f"{games}/draw", headers=me | etag, timeout=10)
        view = _check(drawn, 200)
        assert view["waste_count"] == 1
        assert view["waste_playable"] is True
        moved = http.post(
            f"{games}/move", json={"from": "waste", "to": "foundation"}, headers=me, timeout=10
        )
        assert _check(moved, 200)["foundation_count"] == 1
        collected = _check(http.post(f"{games}/collect", headers=me, timeout=10), 200)
        assert collected["status"] == "collected"
        assert collected["payout"] == 50  # one card at 520 * 5 / 52

        # A certification game is played for the sandbox: the real balance is as deposited.
        wallet = _check(http.get(f"{players}/wallet", headers=me, timeout=10), 200)
        assert wallet == {
            "player_id": player_id,
            "currency": "GBP",
            "balance": 5_200,
            "held": 0,
            "open_game_id": None,
            "sandbox": {"currency": "XTS", "balance": -520 + 50, "held": 0},
            "wallet_mode": "transfer",
            "unsettled": 0,
        }
        assert _check(http.get(f"{players}/wallet", timeout=10), 401)["status"] == 401


def test_both_workers_serve_many_requests_at_once(gunicorn: Server) -> None:
    """Sixteen concurrent requests over separate connections: two workers, no errors."""

    def ready(_: int) -> int:
        return requests.get(f"{gunicorn.url}/readyz", timeout=10).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(ready, range(16))) == {200}


def test_gunicorn_stops_cleanly_on_sigterm(gunicorn: Server) -> None:
    assert gunicorn.process.poll() is None, gunicorn.output()
    assert gunicorn.stop() == 0, gunicorn.output()
    output = gunicorn.output()
    assert "Shutting down: Master" in output
    assert "Traceback" not in output, output
    assert "[ERROR]" not in output, output


# --- `make run`'s configuration: kept-alive connections shared out evenly ---------------------


@pytest.fixture
def deployed(database_url: str, settings: Settings, tmp_path: Path) -> Iterator[Server]:
    """gunicorn as `make run` starts it (its configuration file), with four workers."""
    env = _environment(database_url, settings) | {"WEB_WORKERS": "4", "WEB_THREADS": "2"}
    with (tmp_path / "gunicorn.log").open("w+b") as log:
        # Kept alive longer than configured (5 s), so no idle connection of the tests' closes
        # while a worker boots.
        arguments = ["-c", str(CONFIG), "--keep-alive", "120"]
        for server in _serve(_free_port(), arguments, env, log):
            # One worker answering is not all four up: until a worker has loaded the app, it
            # takes no connections and its siblings do not wait for it.
            deadline = time.monotonic() + START_TIMEOUT
            while len(_polling(server)) < 4:
                assert time.monotonic() < deadline, server.output()
                time.sleep(0.1)
            yield server


def _polling(server: Server) -> set[int]:
    """The workers whose event loop is polling the listening socket (Linux: each epoll
    instance lists the descriptors it watches in /proc/<pid>/fdinfo as "tfd: <fd>")."""
    listening = {
        c.fd for c in psutil.Process(server.process.pid).net_connections("tcp") if c.fd >= 0
    }
    found = set()
    for worker in _workers(server):
        try:
            descriptors = list(Path(f"/proc/{worker.pid}/fd").iterdir())
        except OSError:  # gone
            continue
        for fd in descriptors:
            try:  # a booting worker opens and closes files as it goes
                if os.readlink(fd) != "anon_inode:[eventpoll]":
                    continue
                lines = Path(f"/proc/{worker.pid}/fdinfo/{fd.name}").read_text().splitlines()
            except OSError:
                continue
            watched = {int(line.split()[1]) for line in lines if line.startswith("tfd:")}
            if listening & watched:
                found.add(worker.pid)
    return found


def _connect(server: Server) -> http.client.HTTPConnection:
    """A connection kept alive after one answered request."""
    port = int(server.url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/healthz")
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 200
    return connection


def _workers(server: Server) -> list[psutil.Process]:
    return psutil.Process(server.process.pid).children()


def _held(server: Server) -> dict[int, set[int]]:
    """Each live worker's pid: the client ports of the connections it holds."""
    port = int(server.url.rsplit(":", 1)[1])
    return held_connections(psutil.Process(server.process.pid), port)


def _counts(server: Server) -> list[int]:
    return sorted(len(ports) for ports in _held(server).values())


def test_kept_alive_connections_are_shared_out_evenly(deployed: Server) -> None:
    """gthread alone leaves each connection with whichever worker woke first (18/7/5/2 seen)."""
    connections = [_connect(deployed) for _ in range(24)]
    try:
        assert _counts(deployed) == [6, 6, 6, 6], deployed.output()
    finally:
        for connection in connections:
            connection.close()


def test_a_worker_started_again_takes_the_next_connections(deployed: Server) -> None:
    """A killed worker's slot is freed (the master's child_exit hook) and its successor, holding
    none, takes every new connection until it holds as many as its siblings."""
    connections = [_connect(deployed) for _ in range(12)]
    try:
        victim, *survivors = _workers(deployed)
        old = {victim.pid, *(worker.pid for worker in survivors)}
        victim.kill()
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # until the successor polls: a survivor takes connections until then
            assert time.monotonic() < deadline, deployed.output()
            fresh = _connect(deployed)
            connections.append(fresh)
            if _owner(deployed, fresh) not in old:
                break
            fresh.close()
            time.sleep(0.2)
        time.sleep(0.1)  # the survivors see their new sibling within RECHECK (0.02 s)
        connections += [_connect(deployed) for _ in range(2)]
        while _counts(deployed) != [3, 3, 3, 3]:  # until the survivors have seen the closes
            assert time.monotonic() < deadline, (_counts(deployed), deployed.output())
            time.sleep(0.1)
    finally:
        for connection in connections:
            connection.close()


def _owner(server: Server, connection: http.client.HTTPConnection) -> int | None:
    client_port = connection.sock.getsockname()[1]
    return next((pid for pid, ports in _held(server).items() if client_port in ports), None)


def test_make_runs_gunicorn_stops_cleanly_on_sigterm(deployed: Server) -> None:
    _connect(deployed).close()
    assert deployed.stop() == 0, deployed.output()
    output = deployed.output()
    assert "Traceback" not in output, output
    assert "[ERROR]" not in output, output
