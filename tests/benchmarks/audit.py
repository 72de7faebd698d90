"""Whole-history audit figures: games fully verified (replay through the decider, hash chain,
seed commitment and deck, payout, ledger postings) per second by real Celery workers, with one
worker process and with two, over a generated history of finished games.

The history (10,000 games by default, BENCH_AUDIT_GAMES) is written into a scratch database on
the server in use (TEST_DATABASE_URL, else the embedded PostgreSQL), dropped afterwards:

- players are opened and funded through the real service (``Players``);
- each game is dealt with the service's own deal (``Games._deal``: a fresh server seed, its
  commitment, sometimes a client seed), played in memory with the decider (random legal
  commands, then a collect revealing the seed), and written in one transaction with the
  service's own code: event store appends (so the database computes the hash chain), each
  request's event metadata, ``Games._post_money`` (stake debit, winnings credit), the
  encrypted seed, ``Games._log_significant`` and ``Games._project`` (history row). The deal and
  the commands go in one append and the collect in a second, so they share a timestamp where
  the service would record one per request; nothing an audit checks depends on that;
- BENCH_AUDIT_WRITERS processes (3) play and write, each player's games one after another.

Workers are started as ``celery -A service.worker.app worker --pool=prefork`` on a queue of
their own, with the broker in CELERY_BROKER_URL if set, else kombu's filesystem transport in a
temporary data folder. Each audit covers the whole history (every game stream, every player
stream, the whole ledger) and is timed from sending ``vegas.run_audit`` until it is done.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from cryptography.fernet import Fernet

from events.catalog import GameEvent
from events.records import NewEvent
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core.context import event_metadata
from service.core.paytable import Paytable
from service.core.streams import game_stream
from service.games import game_named
from service.runtime.config import PROJECT_ROOT, Settings
from service.services import history_audits as audit
from service.services.games import Games
from service.storage.projections import history_row
from tests.credentials import OPERATOR, as_player
from tests.dbtools import server_admin_url, split_database

GAMES = int(os.environ.get("BENCH_AUDIT_GAMES", "10000"))
PLAYERS = 200
WRITERS = int(os.environ.get("BENCH_AUDIT_WRITERS", "3"))
MAX_COMMANDS = 120
CURRENCY = "GBP"
WORKER_COUNTS = (1, 2)
AUDIT_TIMEOUT = 1800.0


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """One game played in memory: the events of each request (the deal, each command, the
    collect), and the state it ends in."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    seed: bytes
    steps: list[list[GameEvent]]
    state: g.Game


def _stake(rng: random.Random, table: Paytable) -> int:
    """Mostly the everyday stakes (up to GBP 104), now and then a high roller's."""
    everyday = [s for s in table.ladder if s <= 10_400]
    high = [s for s in table.ladder if s > 10_400]
    return rng.choice(high if high and rng.random() < 0.05 else everyday)


def _play(index: int, player_id: uuid.UUID, table: Paytable) -> PlayedGame:
    """Deal as the service deals, then random legal commands, then collect with the seed."""
    rng = random.Random(index)
    game_id = uuid.uuid4()
    client_seed = f"{rng.getrandbits(64):016x}" if rng.random() < 0.5 else None
    variant = rng.choice(("vegas-draw1", "vegas-draw3"))
    _, seed, start = Games._deal(
        game_id, player_id, variant, _stake(rng, table), table, client_seed, None
    )
    sealed = g.hidden_cards(game_named(variant), start.deck)
    steps = [g.decide(g.INITIAL, start)]
    state = g.fold(steps[0])
    for _ in range(rng.randint(10, MAX_COMMANDS)):
        options = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not options:
            break
        steps.append(g.decide(state, rng.choice(options), sealed))
        state = g.fold(steps[-1], state)
    steps.append(g.decide(state, g.Collect(reason="player", server_seed=seed.hex())))
    state = g.fold(steps[-1], state)
    return PlayedGame(game_id, player_id, seed, steps, state)


def _write(container: Container, game: PlayedGame) -> None:
    """Write a finished game in one transaction with the service's own code: its events with
    each request's metadata (the deal and the commands in one append, the collect in a second),
    the stake and winnings postings, the encrypted seed, the significant-events log and the
    history projection. The append lock is taken by the first append, so the next game's
    parameters are prepared while another writer holds it."""
    table = container.settings.paytables[CURRENCY]
    stream = game_stream(game.game_id)
    player, game_id = str(game.player_id), str(game.game_id)
    rules = game.state.info.rules_version if game.state.info else None
    requests = [as_player(game.player_id) for _ in game.steps]
    new = [
        [NewEvent.of(e, event_metadata(request, table.id, table.version, rules)) for e in events]
        for request, events in zip(requests, game.steps, strict=True)
    ]
    played = [e for events in game.steps[:-1] for e in events]
    collect = game.steps[-1]
    # As the owner, as a loader writes history: the shape-only append is the owner's
    # (migrations/0031).
    with container.owner_unit_of_work() as uow:
        recorded = uow.events.append(stream, [e for step in new[:-1] for e in step], 0)
        Games._post_money(uow, stream, 0, player, game_id, played)
        uow.seeds.add(game.game_id, container.vault.key_id, container.vault.encrypt(game.seed))
        recorded += uow.events.append(stream, new[-1], len(played))
        Games._post_money(uow, stream, len(played), player, game_id, collect)
        container.games._log_significant(uow, requests[-1], game.state, collect)
        first, last = recorded[0].recorded_at, recorded[-1].recorded_at
        uow.projections.save_history([history_row(game.state, first, last, last)])
        uow.commit()


_writer: Container | None = None  # a generating process's services


def _start_writer(settings: Settings) -> None:
    global _writer
    _writer = build(settings, migrate=False)


def _play_and_write(player_id: uuid.UUID, indexes: Sequence[int]) -> int:
    """Play one player's games one after another, writing each; how many events they have."""
    assert _writer is not None
    table = _writer.settings.paytables[CURRENCY]
    events = 0
    for index in indexes:
        game = _play(index, player_id, table)
        _write(_writer, game)
        events += sum(len(step) for step in game.steps)
    return events


def _open_players(container: Container) -> list[uuid.UUID]:
    """Players opened and funded through the service, as an operator would."""
    players = []
    for n in range(PLAYERS):
        opened = container.players.open_account(OPERATOR, f"bench-{uuid.uuid4()}", CURRENCY)
        player_id = opened.row.player_id
        container.players.deposit(OPERATOR, player_id, 10**10, f"bench-deposit-{n}-{uuid.uuid4()}")
        players.append(player_id)
    return players


def _generate(container: Container) -> tuple[int, int, float]:
    """Open the players, then play and write GAMES finished games in WRITERS processes, each
    player's games one after another in one process; (games, events, seconds)."""
    started = time.perf_counter()
    players = _open_players(container)
    indexes = [range(n, GAMES, PLAYERS) for n in range(PLAYERS)]
    # Spawned, not forked: this process already runs the connection pool's threads.
    with ProcessPoolExecutor(
        max_workers=WRITERS,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_writer,
        initargs=(container.settings,),
    ) as pool:
        events = sum(pool.map(_play_and_write, players, indexes))
    return GAMES, events, time.perf_counter() - started


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


class Worker:
    """``celery worker`` as a subprocess on its own queue; stopped with SIGTERM (warm)."""

    def __init__(self, env: dict[str, str], queue: str, concurrency: int, log: Path) -> None:
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "service.worker.app",
            "worker",
            f"--concurrency={concurrency}",
            "--pool=prefork",
            "-Q",
            queue,
            "-n",
            f"{queue}@%h",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        self.log = log
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=PROJECT_ROOT,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def stop(self) -> None:
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait(timeout=30)
        finally:
            self._out.close()

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _on_queue(container: Container, queue: str) -> Container:
    """The same container, sending its tasks to ``queue`` (a worker's own queue)."""
    return replace(container, settings=replace(container.settings, celery_queue=queue))


@dataclass(frozen=True, slots=True)
class AuditRun:
    games: int
    units: int
    checked: int
    findings: int
    failed_units: int
    seconds: float


def _audit(container: Container, worker: Worker) -> AuditRun:
    """Warm the worker up, then time one whole-history audit from sending it until done."""
    for result in [
        container.send_task("vegas.audit_chunk", str(uuid.uuid4()), []) for _ in range(2)
    ]:
        result.get(timeout=120)
    with container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "bench")
    units = [unit for chunk in chunks for unit in chunk]
    started = time.perf_counter()
    container.send_task("vegas.run_audit", str(audit_id), chunks)
    while True:
        with container.unit_of_work() as uow:
            state = audit.status(uow, audit_id, findings_limit=0)
        elapsed = time.perf_counter() - started
        assert state is not None
        if state.status == "done":
            break
        if worker.process.poll() is not None:
            raise RuntimeError(f"the celery worker exited:\n{worker.tail()}")
        if elapsed > AUDIT_TIMEOUT:
            raise RuntimeError(f"audit not done after {elapsed:.0f} s: {state.checked} checked")
        time.sleep(0.25)
    with container.unit_of_work() as uow:
        state = audit.status(uow, audit_id, findings_limit=1_000_000)
    assert state is not None
    return AuditRun(
        games=sum(unit.startswith("game-") for unit in units),
        units=len(units),
        checked=state.checked,
        findings=len(state.findings),
        failed_units=state.failed_units,
        seconds=elapsed,
    )


def run() -> Iterator[str]:
    broker = os.environ.get("CELERY_BROKER_URL") or None
    admin = server_admin_url()
    with (
        tempfile.TemporaryDirectory(prefix="vegas-bench-audit-") as tmp,
        split_database(admin, prefix="vegas_bench") as found,
    ):
        url = found.service_url
        data_dir = Path(tmp)
        key = Fernet.generate_key().decode()
        settings = replace(
            Settings(),
            database_url=url,
            migration_database_url=found.owner_url,
            audit_database_url=found.audit_url,
            background_database_url=found.background_url,
            data_dir=data_dir,
            seed_keys=(key,),
            celery_broker_url=broker,
            celery_result_backend=os.environ.get("CELERY_RESULT_BACKEND") or None,
            pool_max_size=4,
        )
        container = build(settings, migrate=False)
        try:
            with psycopg.connect(url) as conn:
                version = conn.execute("SHOW server_version").fetchone()
            where = "TEST_DATABASE_URL" if os.environ.get("TEST_DATABASE_URL") else "embedded"
            yield f"server: PostgreSQL {version[0] if version else '?'} ({where})"
            yield (
                f"broker: {_redacted(broker)}"
                if broker
                else f"broker: kombu filesystem transport (in {data_dir / 'celery'})"
            )
            games, events, seconds = _generate(container)
            yield (
                f"history: {games} finished games ({events} events, {events / games:.1f}/game) "
                f"for {PLAYERS} players, generated in {seconds:.1f} s "
                f"({games / seconds:,.0f} games/s)"
            )
            env = {
                **os.environ,
                "APP_ENV": "development",
                "DATABASE_URL": url,
                "AUDIT_DATABASE_URL": found.audit_url,  # the audit is the worker's (0037)
                "BACKGROUND_DATABASE_URL": found.background_url,  # the worker's own (0039)
                "DATA_DIR": str(data_dir),
                "SEED_ENCRYPTION_KEYS": key,
            }
            rates: dict[int, float] = {}
            for count in WORKER_COUNTS:
                queue = f"bench-audit-{uuid.uuid4().hex[:8]}"
                log = data_dir / f"worker-{count}.log"
                worker = Worker({**env, "CELERY_QUEUE": queue}, queue, count, log)
                try:
                    measured = _audit(_on_queue(container, queue), worker)
                finally:
                    worker.stop()
                rates[count] = measured.games / measured.seconds
                plural = "es" if count > 1 else ""
                yield (
                    f"{count} worker process{plural}: {measured.games} games verified in "
                    f"{measured.seconds:.1f} s = {rates[count]:,.0f} games/s "
                    f"({measured.checked}/{measured.units} units, with every player stream "
                    f"and the whole ledger)"
                )
                yield (
                    f"{count} worker process{plural}: findings {measured.findings} "
                    f"(failed units {measured.failed_units})"
                )
            first, last = WORKER_COUNTS[0], WORKER_COUNTS[-1]
            yield f"speed-up {last} / {first} workers: {rates[last] / rates[first]:.2f}x"
        finally:
            container.close()
