"""The service as it is deployed: a real gunicorn (two worker processes, service.wsgi:app)
on a free local port, configured only through the environment, driven over real HTTP."""

from __future__ import annotations

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

import pytest
import requests

from service.bootstrap import Container
from service.runtime.config import PROJECT_ROOT, Settings
from tests.builders import easy_deck

GUNICORN = Path(sys.executable).parent / "gunicorn"
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


@pytest.fixture(scope="module")
def gunicorn(database_url: str, settings: Settings, tmp_path_factory: Any) -> Iterator[Server]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("APP_ENV", "CERTIFICATION_MODE")}
    env |= {
        "DATABASE_URL": database_url,
        "SEED_ENCRYPTION_KEYS": settings.seed_keys[0],
        "CERTIFICATION_MODE": "1",
        "APP_ENV": "test",
        "DB_POOL_MAX": "4",
    }
    log_path = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    with log_path.open("w+b") as log:
        process = subprocess.Popen(
            [str(GUNICORN), "-w", "2", "-b", f"127.0.0.1:{port}", "service.wsgi:app"],
            cwd=PROJECT_ROOT,
            env=env,
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
