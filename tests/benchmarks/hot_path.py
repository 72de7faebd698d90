"""What a play costs through the WSGI app, in one process: the commands' hot path against
Flask's dispatch, and the database's share (issue 25).

Method. Four threads, as one gthread worker's, each play through Klondike games of their own:
a draw (or a recycle when the stock is empty) sent without a body, which the hot path answers,
or with a body of ``{}``, which goes through Flask's URL map, request context and
flask-smorest's and webargs's wrappers to the same service. The two alternate in blocks of
plays, so a shared machine's drift falls on both alike; each figure is the median over its
blocks of the process's CPU time a play, and of the PostgreSQL backends' when the server runs
on this machine. No server and no client in the way: the http suite measures those.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import psutil
from cryptography.fernet import Fernet
from flask import Flask
from psycopg.conninfo import conninfo_to_dict

from service.app import create_app
from service.bootstrap import build
from service.core.context import Actor, RequestContext
from service.runtime.config import Settings
from tests.benchmarks.http import STAKE, _player
from tests.dbtools import as_owner, scratch_database, server_admin_url

THREADS = int(os.environ.get("BENCH_HOT_PATH_THREADS", "4"))
BLOCK = int(os.environ.get("BENCH_HOT_PATH_BLOCK", "60"))  # plays a thread makes a block
BLOCKS = int(os.environ.get("BENCH_HOT_PATH_BLOCKS", "10"))  # blocks of each path
GAMES = 6  # a thread's games, played in turn


@dataclass
class _Game:
    token: str
    game_id: uuid.UUID
    action: str = "draw"


def _play(app: Flask, game: _Game, *, through_flask: bool) -> None:
    body = b"{}" if through_flask else b""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"/v1/games/{game.game_id}/{game.action}",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_AUTHORIZATION": f"Bearer {game.token}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "REMOTE_ADDR": "127.0.0.1",
        "SCRIPT_NAME": "",
    }
    if through_flask:
        environ["CONTENT_TYPE"] = "application/json"
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]], *_: Any) -> Any:
        status.append(line)

    answer = b"".join(app(environ, start_response))
    if not status[0].startswith("200"):
        raise RuntimeError(f"{status[0]}: {answer[:200]!r}")
    empty = b'"stock_count":0,' in answer or b'"stock_count":0}' in answer
    game.action = "recycle" if empty else "draw"


def _backends(database: str) -> float:
    """CPU seconds used so far by this database's PostgreSQL backends on this machine."""
    used = 0.0
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] in ("postgres", "postmaster") and any(
            database in part for part in process.info["cmdline"] or ()
        ):
            try:
                times = process.cpu_times()
                used += times.user + times.system
            except psutil.Error:
                pass
    return used


def run() -> Iterator[str]:
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        key = Fernet.generate_key().decode()
        settings = replace(
            Settings(),
            database_url=url,
            migration_database_url=as_owner(url),  # a staff key for the sessions
            seed_keys=(key,),
            pool_max_size=THREADS + 1,
        )
        container = build(settings, migrate=False)
        database = str(conninfo_to_dict(url)["dbname"])
        try:
            app = create_app(container)
            games = []
            for _ in range(THREADS):
                mine = []
                for _ in range(GAMES):
                    player_id, token = _player(container, 10**9)
                    actor = RequestContext(Actor(str(player_id), "player"), credential=token)
                    dealt = container.games.start(actor, player_id, "klondike", STAKE)
                    mine.append(_Game(token, uuid.UUID(dealt.state.game_id)))
                games.append(mine)
            figures = _alternate(app, games, database)
        finally:
            container.close()
    yield (
        f"{THREADS} threads in one process, blocks of {BLOCK * THREADS} plays alternating, "
        f"{BLOCKS} of each; CPU-ms a play, median of the blocks"
    )
    hot, flask = figures["hot path"], figures["Flask's dispatch"]
    for name, (app_ms, db_ms) in figures.items():
        yield f"{name}: the process {app_ms:.2f}, PostgreSQL {db_ms:.2f}"
    ratio = flask[0] / hot[0]
    yield f"the process's CPU a play, Flask's dispatch against the hot path: {ratio:.2f}x"


def _alternate(
    app: Flask, games: list[list[_Game]], database: str
) -> dict[str, tuple[float, float]]:
    through: list[bool] = [False]
    start, done = threading.Barrier(THREADS + 1), threading.Barrier(THREADS + 1)
    failures: list[BaseException] = []
    rounds = 2 * BLOCKS + 2  # the first pair warms up

    def worker(mine: list[_Game]) -> None:
        played = 0
        for _ in range(rounds):
            start.wait()
            try:
                for _ in range(BLOCK):
                    _play(app, mine[played % GAMES], through_flask=through[0])
                    played += 1
            except BaseException as error:  # reported after the blocks
                failures.append(error)
            done.wait()

    threads = [threading.Thread(target=worker, args=(mine,)) for mine in games]
    for thread in threads:
        thread.start()
    samples: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for block in range(rounds):
        through[0] = block % 2 == 1
        db_before, cpu_before = _backends(database), time.process_time()
        start.wait()
        done.wait()
        cpu, db = time.process_time() - cpu_before, _backends(database) - db_before
        if block >= 2:
            plays = BLOCK * THREADS
            samples[through[0]].append((cpu * 1000 / plays, db * 1000 / plays))
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return {
        name: (
            statistics.median(app_ms for app_ms, _ in samples[flask]),
            statistics.median(db_ms for _, db_ms in samples[flask]),
        )
        for name, flask in (("hot path", False), ("Flask's dispatch", True))
    }
