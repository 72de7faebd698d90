"""HTTP load as a user would see it: gunicorn exactly as `make run` starts it, driven by wrk (a
compiled load generator, Debian's package) with Lua scripts, on this machine.

Method. The server runs on a scratch database of the server in use (TEST_DATABASE_URL, else the
embedded one). Players, sessions, money and the games the scripts need are made beforehand
through the services (not measured). Then, each at a fixed number of connections (32) for a
fixed time after a short warm-up, one wrk run per phase:

- GET /healthz with plain wrk, then through a Lua request() like the other scripts: the same
  rate shows the scripting is not what limits the figures;
- plays: each connection draws through a Klondike game of its own and turns the waste over
  when the stock runs out (one wrk thread per connection, so no two requests race on a game);
  /healthz and plays run back to back in BENCH_HTTP_ROUNDS rounds (3), and the plays' ratio to
  /healthz is the median of the rounds' paired ratios;
- deals: each connection deals one game for each of its own players in turn;
- collects: each connection collects the games the deals phase dealt.

Each phase reports its rate, p50 and p99 (wrk's own latency histogram), failed requests (any
non-2xx, counted by the scripts), its ratio to plain /healthz, and who used the two cores: the
load generator (its own rusage), gunicorn (every process of the server) and PostgreSQL (its
backends, when it runs on this machine), in CPU-milliseconds per request.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import psutil
import requests
from cryptography.fernet import Fernet

from service.bootstrap import Container, build
from service.core.context import Actor, RequestContext
from service.errors import GameInProgress
from service.runtime import gunicorn_config
from service.runtime.config import PROJECT_ROOT, Settings
from tests.credentials import OPERATOR, staff
from tests.dbtools import as_owner, scratch_database, server_admin_url
from tests.debian import missing_after_install
from tests.gunicorn_workers import held_connections

CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "32"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
#: Rounds of /healthz then plays, each round's ratio paired (the figure: their median).
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "3"))
WARMUP = int(os.environ.get("BENCH_WARMUP_SECONDS", "2"))
SETTLE = 1.0  # seconds between a warm-up and its measured run
#: Players each connection deals for in the deals phase: more than it can reach.
DEALERS = int(os.environ.get("BENCH_DEALERS_PER_CONNECTION", "120"))
#: Games to hold for collecting, per deal a second the deals phase made: collects run at 2.5
#: to 3.6 times the deals' rate, and the collects phase is at least a second long.
COLLECTS_PER_DEAL = 6
LUA = Path(__file__).parent / "lua"
CONFIG = str(PROJECT_ROOT / "service" / "runtime" / "gunicorn_config.py")
STAKE = 520


@dataclass(frozen=True)
class Phase:
    name: str
    rate: float
    p50_ms: float
    p99_ms: float
    failed: int
    cpu: dict[str, float]  # CPU-ms per request: wrk, gunicorn, postgres
    spread: tuple[int, ...] = ()  # wrk's connections on each gunicorn worker, mid-phase

    def line(self, healthz: float) -> str:
        used = ", ".join(f"{who} {ms:.2f}" for who, ms in self.cpu.items())
        failed = f"; {self.failed} FAILED" if self.failed else ""
        spread = f"; connections by worker {'/'.join(map(str, self.spread))}" if self.spread else ""
        return (
            f"{self.name}: {self.rate:,.0f}/s ({self.rate / healthz:.2f} x /healthz), "
            f"p50 {self.p50_ms:.1f} ms, p99 {self.p99_ms:.1f} ms; CPU-ms per request: "
            f"{used}{failed}{spread}"
        )


def _wrk() -> str:
    found = None if missing_after_install({"wrk": "wrk"}) else shutil.which("wrk")
    if found is None:
        raise SystemExit("the http suite needs wrk: apt-get install wrk (Debian's package)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start_gunicorn(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "gunicorn", "-c", CONFIG, "service.wsgi:app"]
    process = subprocess.Popen(
        command, env={**env, "PORT": str(port), "LOG_LEVEL": "warning"}, start_new_session=True
    )
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


class Usage:
    """CPU seconds used since the last call by wrk (this process's children), the server's
    processes and this machine's PostgreSQL backends."""

    def __init__(self, server: subprocess.Popen[bytes], port: int) -> None:
        self._server = psutil.Process(server.pid)
        self._port = port
        self._last = self._sample()

    def _sample(self) -> dict[str, float]:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        found = {"wrk": children.ru_utime + children.ru_stime, "gunicorn": 0.0, "postgres": 0.0}
        for process in [self._server, *self._server.children(recursive=True)]:
            try:
                times = process.cpu_times()
                found["gunicorn"] += times.user + times.system
            except psutil.Error:
                pass
        for process in psutil.process_iter(["name"]):
            if process.info["name"] in ("postgres", "postmaster"):
                try:
                    times = process.cpu_times()
                    found["postgres"] += times.user + times.system
                except psutil.Error:
                    pass
        return found

    def spread(self) -> tuple[int, ...]:
        """The clients' connections each gunicorn worker holds, most first."""
        held = held_connections(self._server, self._port)
        return tuple(sorted((len(ports) for ports in held.values()), reverse=True))

    def since(self) -> dict[str, float]:
        now = self._sample()
        used = {who: now[who] - self._last.get(who, 0.0) for who in now}
        self._last = now
        return used


class Bench:
    def __init__(self, wrk: str, base: str, usage: Usage, data_dir: Path) -> None:
        self.wrk, self.base, self.usage, self.data_dir = wrk, base, usage, data_dir

    def run(
        self,
        name: str,
        script: str | None,
        lines: list[str] | None = None,
        seconds: int = SECONDS,
    ) -> Phase:
        """One wrk run (after a warm-up of the same script unless it changes state)."""
        env = dict(os.environ, BENCH_LUA=str(LUA))
        if lines is not None:
            data = self.data_dir / f"{name}.txt"
            data.write_text("\n".join(lines) + "\n")
            env["BENCH_DATA"] = str(data)
        threads = CONNECTIONS if script else 2
        command = [self.wrk, f"-t{threads}", f"-c{CONNECTIONS}", "--latency"]
        if script:
            command += ["-s", str(LUA / script)]
        url = self.base if script else f"{self.base}/healthz"
        if name in ("healthz", "healthz via Lua", "plays"):
            warm = [*command, "-d", f"{WARMUP}s", url]
            subprocess.run(warm, env=env, capture_output=True, check=True)
            # The warm-up's connections close all at once: the workers see each close only
            # as they get to it, and connections opened meanwhile are shared out by counts
            # that still hold the closing ones (a client's connections are never all
            # replaced in the same instant in use).
            time.sleep(SETTLE)
        self.usage.since()
        spread: list[tuple[int, ...]] = []
        sampler = threading.Timer(seconds / 2, lambda: spread.append(self.usage.spread()))
        sampler.start()
        out = subprocess.run(
            [*command, "-d", f"{seconds}s", url], env=env, capture_output=True, text=True
        )
        sampler.join()
        used = self.usage.since()
        phase = _phase(name, out.stdout, used, out.stderr.strip().splitlines()[:1])
        return replace(phase, spread=spread[0] if spread else ())


def _phase(name: str, out: str, used: dict[str, float], first_failure: list[str]) -> Phase:
    summary = next((json.loads(x) for x in out.splitlines() if x.startswith("{")), None)
    if summary is None:  # plain wrk: read its text
        summary = _plain_summary(out)
    count = max(int(summary["requests"]), 1)
    return Phase(
        name if not first_failure else f"{name} [first failure: {first_failure[0][:160]}]",
        summary["requests"] / summary["seconds"],
        summary["p50_us"] / 1000,
        summary["p99_us"] / 1000,
        int(summary.get("failed", 0)) + int(summary.get("status_errors", 0)),
        {who: seconds * 1000 / count for who, seconds in used.items()},
    )


def _plain_summary(out: str) -> dict[str, float]:
    def duration(text: str) -> float:
        units = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7}
        for unit in ("us", "ms", "s", "m"):
            if text.endswith(unit):
                return float(text[: -len(unit)]) * units[unit]
        raise ValueError(text)

    found: dict[str, float] = {"status_errors": 0.0}
    for line in out.splitlines():
        words = line.split()
        if words[:1] == ["50%"]:
            found["p50_us"] = duration(words[1])
        elif words[:1] == ["99%"]:
            found["p99_us"] = duration(words[1])
        elif "requests in" in line:
            found["requests"] = float(words[0])
            found["seconds"] = duration(words[3].rstrip(",")) / 1e6
        elif line.strip().startswith("Non-2xx"):
            found["status_errors"] = float(words[-1])
    return found


def _player(container: Container, funds: int) -> tuple[uuid.UUID, str]:
    """A funded player and a session token (through the services: setup, not measured)."""
    opened = container.players.open_account(OPERATOR, f"bench-{uuid.uuid4()}", "GBP")
    player_id = opened.row.player_id
    container.players.deposit(OPERATOR, player_id, funds, f"bench-{uuid.uuid4()}")
    return player_id, container.access.open_session(staff(container), player_id).token


def _players(container: Container, count: int, funds: int) -> list[tuple[uuid.UUID, str]]:
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda _: _player(container, funds), range(count)))


def _open_games(container: Container, players: list[tuple[uuid.UUID, str]]) -> dict[str, str]:
    """Each player's game in progress, by token."""
    found = {}
    for player_id, token in players:
        page = container.games.history(player_id, limit=1)
        if page and page[0].ended_at is None:
            found[token] = str(page[0].game_id)
    return found


def _top_up(
    container: Container, dealers: list[tuple[uuid.UUID, str]], games: dict[str, str], wanted: int
) -> None:
    """Deal through the services (not measured) until ``games`` holds ``wanted`` games: a
    short deals phase (BENCH_SECONDS under 10) deals too few for the shortest collects phase
    wrk runs, a second, and a game collected twice would count as a failure. A dealer without
    a game in progress has not dealt yet and still holds its stake, unless its deal was still
    being answered when wrk stopped and committed after ``games`` was read."""
    for player_id, token in dealers:
        if len(games) >= wanted:
            return
        if token not in games:
            actor = RequestContext(Actor(str(player_id), "player"), credential=token)
            try:
                loaded = container.games.start(actor, player_id, "vegas-draw3", STAKE)
                games[token] = loaded.state.game_id
            except GameInProgress as late:
                games[token] = str(late.game_id)


def run() -> Iterator[str]:
    wrk = _wrk()
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        key = Fernet.generate_key().decode()
        settings = replace(
            Settings(),
            database_url=url,
            migration_database_url=as_owner(url),
            seed_keys=(key,),
            pool_max_size=8,
        )
        container = build(settings, migrate=False)
        port = _free_port()
        env = {**os.environ, "APP_ENV": "development", "DATABASE_URL": url}
        env["SEED_ENCRYPTION_KEYS"] = key
        server = _start_gunicorn(env, port)
        base = f"http://127.0.0.1:{port}"
        data_dir = PROJECT_ROOT / ".data" / "bench"
        data_dir.mkdir(parents=True, exist_ok=True)
        try:
            players = _players(container, CONNECTIONS, 10**9)
            plays = []
            for player_id, token in players:
                player = RequestContext(Actor(str(player_id), "player"), credential=token)
                loaded = container.games.start(player, player_id, "klondike", STAKE)
                plays.append(f"{token} {loaded.state.game_id}")
            dealers = _players(container, CONNECTIONS * DEALERS, STAKE)
            bench = Bench(wrk, base, Usage(server, port), data_dir)
            yield (
                f"gunicorn as make run starts it (service/runtime/gunicorn_config.py: "
                f"{gunicorn_config.workers} workers x {gunicorn_config.threads} threads), wrk "
                f"{_version(wrk)}, {CONNECTIONS} connections, {SECONDS} s a phase"
            )
            ratios, tails = [], []
            for round_ in range(1, ROUNDS + 1):
                # /healthz and plays back to back, so the machine is alike for both: a shared
                # one's speed drifts by more than the figures it measures.
                plain = bench.run("healthz", None)
                healthz = plain.rate
                yield f"round {round_}: {plain.line(healthz)}"
                if round_ == 1:
                    yield bench.run("healthz via Lua", "healthz.lua").line(healthz)
                played = bench.run("plays", "plays.lua", plays)
                yield f"round {round_}: {played.line(healthz)}"
                ratios.append(played.rate / healthz)
                tails.append(played.p99_ms)
            yield (
                f"plays / healthz, the median of {ROUNDS} rounds' paired ratios: "
                f"{statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}); "
                f"plays p99 median {statistics.median(tails):.1f} ms"
            )
            by_connection = [dealers[i::CONNECTIONS] for i in range(CONNECTIONS)]
            deal_lines = [" ".join(token for _, token in mine) for mine in by_connection]
            # Half the time: a connection's players must outlast it, however unevenly the
            # connections are served.
            deals = bench.run("deals", "deals.lua", deal_lines, max(1, SECONDS // 2))
            yield f"{deals.line(healthz)} ({max(1, SECONDS // 2)} s)"
            games = _open_games(container, dealers)
            _top_up(container, dealers, games, int(COLLECTS_PER_DEAL * max(deals.rate, 1.0)))
            # Dealt unevenly across connections: shared out again evenly for collecting.
            dealt = [f"{token} {game}" for token, game in games.items()]
            collect_lines = [
                " ".join(dealt[i::CONNECTIONS]) or "none none" for i in range(CONNECTIONS)
            ]
            # Each game is collected once: the phase is kept short enough not to run out.
            seconds = max(1, min(SECONDS, int(len(games) / (4 * max(deals.rate, 1.0)))))
            collects = bench.run("collects", "collects.lua", collect_lines, seconds)
            yield f"{collects.line(healthz)} ({seconds} s, {len(games)} games dealt)"
        finally:
            server.terminate()
            server.wait(timeout=30)
            container.close()


def _version(wrk: str) -> str:
    out = subprocess.run([wrk, "--version"], capture_output=True, text=True)
    words = (out.stdout or out.stderr).split()
    return words[1] if len(words) > 1 else "?"
