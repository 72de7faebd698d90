"""What the withdrawal gate adds (issue 36; service/services/verification.py): the time of a
withdrawal, as the web process makes it (its own login only, so it asks the audit's worker to
verify the player and waits), for a player with 1, 100 and 1,000 real-money games since their
last verified point, against a withdrawal with nothing left to verify.

In a scratch database on the server in use (TEST_DATABASE_URL, else the embedded PostgreSQL),
dropped afterwards: each player is opened, funded, and plays their games through the real
services (dealt and collected). One real Celery worker (``--pool=solo``, as `make run` starts
it) holds the audit's login, on the broker in TEST_CELERY_BROKER_URL, else kombu's filesystem
transport. Before each timed withdrawal the player's verified point is removed as the owner
(its trigger off for that statement), so each one verifies the player's whole history again.
Figures are milliseconds from the call to the paid withdrawal; p99 of this few is their
slowest.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
from cryptography.fernet import Fernet

from service.bootstrap import Container, build
from service.runtime.config import Settings
from tests.credentials import OPERATOR, as_player, mint_test_session
from tests.dbtools import server_admin_url, split_database
from tests.workers import celery_processes, delete_queue, with_broker

SIZES = tuple(int(n) for n in os.environ.get("BENCH_WITHDRAWAL_GAMES", "1,100,1000").split(","))
#: Timed withdrawals per size (each re-verifies the whole history).
ROUNDS = int(os.environ.get("BENCH_WITHDRAWAL_ROUNDS", "10"))
STAKE = 104
VARIANT = "vegas-draw1"

# Forget a player's verified point, as the owner (the table refuses deletes otherwise).
FORGET_SQL = (
    "ALTER TABLE verified_points DISABLE TRIGGER verified_points_kept",
    "DELETE FROM verified_points WHERE player_id = %(player_id)s",
    "ALTER TABLE verified_points ENABLE TRIGGER verified_points_kept",
)


def _player_with_games(container: Container, games: int) -> uuid.UUID:
    opened = container.players.open_account(OPERATOR, f"bench-{uuid.uuid4()}", "GBP").row
    player_id = opened.player_id
    mint_test_session(container, player_id)
    container.players.deposit(OPERATOR, player_id, games * STAKE + 10_000, f"d-{uuid.uuid4()}")
    me = as_player(player_id)
    for _ in range(games):
        game = container.games.start(me, player_id, VARIANT, STAKE)
        container.games.collect(me, uuid.UUID(game.state.game_id))
    return player_id


def _timed(web: Container, owner_url: str, player_id: uuid.UUID, forget: bool) -> float:
    if forget:
        with psycopg.connect(owner_url) as conn:  # one transaction: the trigger is off for it
            for statement in FORGET_SQL:
                conn.execute(statement, {"player_id": player_id} if "%(" in statement else None)
    started = time.perf_counter()
    web.players.withdraw(OPERATOR, player_id, 1, f"w-{uuid.uuid4()}")
    return (time.perf_counter() - started) * 1000


def _figures(times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms (n={len(ordered)})"


def run() -> Iterator[str]:
    with (
        tempfile.TemporaryDirectory(prefix="vegas-bench-withdrawal-") as tmp,
        split_database(server_admin_url(), prefix="vegas_bench") as found,
    ):
        settings = with_broker(
            replace(
                Settings(),
                environment="test",
                database_url=found.service_url,
                migration_database_url=found.owner_url,
                audit_database_url=found.audit_url,
                background_database_url=found.background_url,
                seed_keys=(Fernet.generate_key().decode(),),
                pool_max_size=4,
            ),
            Path(tmp),
        )
        writer = build(settings, migrate=False)
        web = build(settings, migrate=False, audit_login=False)  # as the web process
        try:
            started = time.perf_counter()
            players = {size: _player_with_games(writer, size) for size in SIZES}
            yield (
                f"history: players with {', '.join(map(str, SIZES))} games, played through the "
                f"services in {time.perf_counter() - started:.1f} s"
            )
            with celery_processes(settings):
                _timed(web, found.owner_url, players[SIZES[0]], forget=True)  # warm the worker
                base = [
                    _timed(web, found.owner_url, players[SIZES[0]], forget=False)
                    for _ in range(ROUNDS)
                ]
                yield f"nothing to verify (the point at the head): {_figures(base)}"
                for size in SIZES:
                    times = [
                        _timed(web, found.owner_url, players[size], forget=True)
                        for _ in range(ROUNDS)
                    ]
                    added = statistics.median(times) - statistics.median(base)
                    yield (
                        f"{size} game(s) since the last verified point: {_figures(times)}; "
                        f"adds {added:.1f} ms at p50"
                    )
        finally:
            web.close()
            writer.close()
            delete_queue(settings)
