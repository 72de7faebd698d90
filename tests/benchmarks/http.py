"""HTTP load: simulated players playing real games against gunicorn, and a trivial endpoint
against the same server configuration, in one run.

Each simulated player (a thread with its own keep-alive connection) deals, plays random legal
commands taken from the game view, and collects, again and again. Every request of a game
(deal, commands, collect) counts as a command. The client runs on the same 2-core machine as
gunicorn and PostgreSQL, so the figures are a floor for a real deployment, not a ceiling.
"""

from __future__ import annotations

import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import requests
from cryptography.fernet import Fernet

from service.config import PROJECT_ROOT, Settings
from service.wiring import build
from tests.dbtools import scratch_database, server_admin_url

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "16"))
WORKERS = int(os.environ.get("BENCH_WEB_WORKERS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
MAX_COMMANDS = 60
CONFIG = str(PROJECT_ROOT / "service" / "gunicorn_config.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start_gunicorn(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """gunicorn exactly as `make run` starts it (service/gunicorn_config.py), on a free port."""
    command = [sys.executable, "-m", "gunicorn", "-c", CONFIG, "service.wsgi:app"]
    settings = {"PORT": str(port), "WEB_WORKERS": str(WORKERS), "LOG_LEVEL": "warning"}
    process = subprocess.Popen(command, env={**env, **settings})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5).ok:
                return process
        except requests.RequestException:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("gunicorn did not become ready")


class Player:
    def __init__(self, base: str, operator: str, index: int) -> None:
        self.base = base
        self.http = requests.Session()
        self.rng = random.Random(index)
        staff = {"Authorization": f"Bearer {operator}"}
        opened = self.http.post(
            f"{base}/v1/players",
            json={"external_ref": f"bench-{uuid.uuid4()}", "currency": "GBP"},
            headers=staff,
        ).json()
        self.id = opened["id"]
        self.http.post(
            f"{base}/v1/players/{self.id}/deposits",
            json={"amount": 10**9, "transaction_id": f"bench-{uuid.uuid4()}"},
            headers=staff,
        ).raise_for_status()
        token = self.http.post(f"{base}/v1/players/{self.id}/sessions", headers=staff).json()
        self.http.headers["Authorization"] = f"Bearer {token['token']}"

    def _timed(self, latencies: list[float], method: str, path: str, **kw: Any) -> Any:
        started = time.perf_counter()
        response = self.http.request(method, f"{self.base}{path}", **kw)
        latencies.append(time.perf_counter() - started)
        if response.status_code >= 500:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    def play(self, stop: threading.Event, latencies: list[float], errors: list[str]) -> None:
        while not stop.is_set():
            variant = self.rng.choice(("vegas-draw1", "vegas-draw3"))
            view = self._timed(
                latencies, "POST", "/v1/games", json={"variant": variant, "stake": 520}
            )
            game = view["id"]
            for _ in range(self.rng.randint(5, MAX_COMMANDS)):
                if stop.is_set() or view.get("status") != "in_progress":
                    break
                options = [m for m in view["legal_moves"] if m["action"] != "collect"]
                if not options:
                    break
                move = self.rng.choice(options)
                body = {k: v for k, v in move.items() if k != "action"}
                view = self._timed(
                    latencies, "POST", f"/v1/games/{game}/{move['action']}", json=body or None
                )
                if "type" in view:  # a problem: should not happen for a listed legal move
                    errors.append(str(view))
                    break
            self._timed(latencies, "POST", f"/v1/games/{game}/collect")


def _run_players(players: list[Player]) -> tuple[int, float, list[float], list[str]]:
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in players]
    errors: list[str] = []
    threads = [
        threading.Thread(target=p.play, args=(stop, latencies[i], errors))
        for i, p in enumerate(players)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    merged = [x for part in latencies for x in part]
    return len(merged), elapsed, merged, errors


def _run_trivial(base: str) -> tuple[int, float]:
    stop = threading.Event()
    counts = [0] * PLAYERS

    def hammer(i: int) -> None:
        session = requests.Session()
        while not stop.is_set():
            session.get(f"{base}/healthz").raise_for_status()
            counts[i] += 1

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(PLAYERS)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(SECONDS / 2)
    stop.set()
    for t in threads:
        t.join()
    return sum(counts), time.perf_counter() - started


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def run() -> Iterator[str]:
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        key = Fernet.generate_key().decode()
        settings = replace(Settings(), database_url=url, seed_keys=(key,), pool_max_size=4)
        container = build(settings, migrate=False)
        operator = container.access.create_key("bench-operator", "operator")
        container.close()
        port = _free_port()
        env = {
            **os.environ,
            "APP_ENV": "development",
            "DATABASE_URL": url,
            "SEED_ENCRYPTION_KEYS": key,
        }
        server = _start_gunicorn(env, port)
        base = f"http://127.0.0.1:{port}"
        try:
            players = [Player(base, operator, i) for i in range(PLAYERS)]
            commands, elapsed, latencies, errors = _run_players(players)
            rate = commands / elapsed
            yield (
                f"gunicorn ({WORKERS} workers x 4 threads, as make run), {PLAYERS} concurrent "
                f"players, {elapsed:.0f} s: {commands} game requests"
            )
            yield f"game commands: {rate:,.0f}/s"
            yield (
                f"latency: p50 {_percentile(latencies, 50) * 1000:.1f} ms, "
                f"p99 {_percentile(latencies, 99) * 1000:.1f} ms"
            )
            if errors:
                yield f"refused legal moves (should be none): {len(errors)}: {errors[0][:200]}"
            trivial, trivial_elapsed = _run_trivial(base)
            trivial_rate = trivial / trivial_elapsed
            yield f"trivial endpoint (GET /healthz), same server and client: {trivial_rate:,.0f}/s"
            yield f"ratio game commands / trivial requests: {rate / trivial_rate:.2f}"
        finally:
            server.terminate()
            server.wait(timeout=30)
