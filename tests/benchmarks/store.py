"""Event-store figures, all measured in one run on one server (TEST_DATABASE_URL, else the
embedded PostgreSQL), in a scratch database dropped afterwards:

- the database's own ceiling: single-row INSERT commits per second from a plain psycopg loop;
- game-command appends per second through the store, each in its own committed transaction,
  with 1 and with 8 concurrent writers (each on its own game stream);
- the ratio of the two;
- load + fold time of a finished game (read the stream, decode, fold; no cache).
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace

import psycopg
from cryptography.fernet import Fernet

from events.catalog import CardMoved
from events.codec import decode_game
from events.records import NewEvent
from service import game as g
from service.config import Settings
from service.wiring import Container, build
from tests.benchmarks.rules import play_random_game
from tests.dbtools import as_owner, scratch_database, server_admin_url

SECONDS = 5.0


def _raw_inserts_per_second(url: str) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_raw (id bigint GENERATED ALWAYS AS IDENTITY, v text)")
        count = 0
        started = time.perf_counter()
        while time.perf_counter() - started < SECONDS:
            conn.execute("INSERT INTO bench_raw (v) VALUES (%s)", ("x",))
            count += 1
        elapsed = time.perf_counter() - started
        conn.execute("DROP TABLE bench_raw")
    return count / elapsed


def _command_event() -> NewEvent:
    return NewEvent.of(
        CardMoved("waste", "tableau:3", ("QH",)),
        {"actor": "bench", "role": "player", "request_id": str(uuid.uuid4())},
    )


def _appends_per_second(container: Container, writers: int) -> float:
    counts = [0] * writers
    stop = threading.Event()
    barrier = threading.Barrier(writers + 1)

    def write(n: int) -> None:
        stream = f"bench-{uuid.uuid4()}"
        version = 0
        barrier.wait()
        while not stop.is_set():
            with container.unit_of_work() as uow:
                uow.events.append(stream, [_command_event()], version)
                uow.commit()
            version += 1
        counts[n] = version

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - started)


def _load_and_fold_ms(container: Container) -> tuple[float, int]:
    events, *_ = play_random_game(7)
    stream = f"game-{uuid.uuid4()}"
    with container.unit_of_work() as uow:
        meta = {"actor": "bench", "role": "player"}
        uow.events.append(stream, [NewEvent.of(e, meta) for e in events], 0)
        uow.commit()
    timings = []
    for _ in range(200):
        started = time.perf_counter()
        with container.unit_of_work() as uow:
            records = uow.events.read_stream(stream)
        state = g.fold(decode_game(r.type, r.schema_version, r.data) for r in records)
        timings.append(time.perf_counter() - started)
    assert state.status == "collected"
    return statistics.median(timings) * 1000, len(records)


def run() -> Iterator[str]:
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        settings = replace(
            Settings(),
            database_url=url,
            seed_keys=(Fernet.generate_key().decode(),),
            pool_max_size=10,
        )
        container = build(settings, migrate=False)
        try:
            with psycopg.connect(url) as conn:
                version = conn.execute("SHOW server_version").fetchone()
            yield f"server: PostgreSQL {version[0] if version else '?'}"
            raw = _raw_inserts_per_second(as_owner(url))  # the service may not make tables
            yield f"raw single-row INSERT commits: {raw:,.0f}/s (plain psycopg loop)"
            one = _appends_per_second(container, 1)
            yield f"store appends, 1 writer: {one:,.0f}/s ({one / raw:.2f} x raw inserts)"
            eight = _appends_per_second(container, 8)
            yield f"store appends, 8 writers: {eight:,.0f}/s ({eight / raw:.2f} x raw inserts)"
            ms, count = _load_and_fold_ms(container)
            yield f"load + decode + fold of a finished game ({count} events): {ms:.2f} ms median"
        finally:
            container.close()
