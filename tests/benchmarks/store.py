"""Event-store figures, all measured in one run on one server (TEST_DATABASE_URL, else the
embedded PostgreSQL), in a scratch database dropped afterwards. Three contenders append one
event per transaction, each writer on a stream of its own, for the same time, with 1 and with 8
writers (separate processes, each with its own connection, so the client's GIL is not what is
measured), in two alternating rounds so that the machine's noise falls on all alike (the better
round is reported):

- raw: a plain psycopg loop of single-row INSERTs, each its own transaction, into a table with
  the events table's columns, constraints and indexes (CREATE TABLE ... LIKE events INCLUDING
  ALL: no triggers, no hash), the values precomputed: the database's ceiling;
- ours: PostgresEventStore.append as the command path calls it, one statement that is its own
  transaction (the version check, the hash chain, the insert);
- eventsourcing: the ``eventsourcing`` library's PostgresApplicationRecorder (a benchmark-only
  dependency: ``pip install -e '.[bench]'``), insert_events of one StoredEvent per call.

Then the load + decode + fold time of a finished game (no cache).
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from multiprocessing.synchronize import Barrier
from typing import Any

import psycopg
from cryptography.fernet import Fernet
from psycopg.conninfo import conninfo_to_dict

from events.catalog import CardMoved
from events.codec import decode_game
from events.json_text import canonical_json
from events.records import NewEvent
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.runtime.config import Settings
from tests.benchmarks.rules import play_random_game
from tests.dbtools import as_owner, scratch_database, server_admin_url

SECONDS = float(os.environ.get("BENCH_STORE_SECONDS", "5"))
WRITERS = (1, 8)
CONTENDERS = ("raw", "ours", "eventsourcing")
META = {"actor": "bench", "role": "player", "request_id": "3f1c"}


def _event() -> NewEvent:
    return NewEvent.of(CardMoved("waste", "tableau:3", ("QH",)), META)


# --- one writer process per contender and writer ---------------------------------------------


def _raw(url: str) -> Callable[[int], None]:
    conn = psycopg.connect(url, autocommit=True)
    stream = f"bench-{uuid.uuid4()}"
    event = _event()
    data, meta = canonical_json(event.data), canonical_json(event.metadata)
    digest = "0" * 64
    insert = (
        "INSERT INTO bench_raw (stream_id, version, event_id, type, schema_version, data,"
        " metadata, recorded_at, prev_hash, hash)"
        " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, statement_timestamp(), %s, %s)"
    )

    def append(version: int) -> None:
        row = (stream, version, uuid.uuid4(), event.type, 1, data, meta, digest, digest)
        conn.execute(insert, row, prepare=True)

    return append


def _ours(url: str) -> Callable[[int], None]:
    from events.postgres import PostgresEventStore

    # Each append its own transaction, as the owner: the shape-only append is the owner's
    # (migrations/0031), and these streams are of no kind the service records.
    conn = psycopg.connect(as_owner(url), autocommit=True)
    store = PostgresEventStore(conn)
    stream = f"bench-{uuid.uuid4()}"

    def append(version: int) -> None:
        store.append(stream, [_event()], version - 1)

    return append


def _eventsourcing(url: str) -> Callable[[int], None]:
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.postgres import PostgresApplicationRecorder

    recorder = PostgresApplicationRecorder(_datastore(url), events_table_name="bench_es_events")
    originator = uuid.uuid4()
    state = canonical_json(_event().data).encode()

    def append(version: int) -> None:
        recorder.insert_events([StoredEvent(originator, version, "bench:CardMoved", state)])

    return append


def _datastore(url: str) -> Any:
    """The eventsourcing library's connection settings for ``url`` (one connection). libpq
    reads the URL, so a socket directory in its query (the embedded server's
    ``?host=/.../.data/postgres``) is the host, as psycopg would use it."""
    from eventsourcing.postgres import PostgresDatastore

    parts = conninfo_to_dict(url)
    return PostgresDatastore(
        dbname=str(parts.get("dbname") or ""),
        host=str(parts.get("host") or "127.0.0.1"),
        port=str(parts.get("port") or 5432),
        user=str(parts.get("user") or ""),
        password=str(parts.get("password") or ""),
        pool_size=1,
    )


MAKERS: dict[str, Callable[[str], Callable[[int], None]]] = {
    "raw": _raw,
    "ours": _ours,
    "eventsourcing": _eventsourcing,
}


def _writer(kind: str, url: str, seconds: float, barrier: Barrier, counts: Any) -> None:
    append = MAKERS[kind](url)
    append(1)  # the first use prepares
    version = 1
    barrier.wait()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        version += 1
        append(version)
    counts.put(version - 1)


def _rate(kind: str, url: str, writers: int) -> float:
    """Appends per second of ``writers`` processes (spawned: the parent holds threads)."""
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(writers + 1, timeout=120)
    counts = spawn.Queue()
    processes = [
        spawn.Process(target=_writer, args=(kind, url, SECONDS, barrier, counts))
        for _ in range(writers)
    ]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.perf_counter()
    total = sum(counts.get(timeout=SECONDS + 120) for _ in processes)
    elapsed = time.perf_counter() - started
    for process in processes:
        process.join()
    return float(total) / max(elapsed, SECONDS)


def _prepare_tables(owner_url: str) -> None:
    """The baselines' tables, made by the owner (the service login may not make tables)."""
    from eventsourcing.postgres import PostgresApplicationRecorder

    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_raw (LIKE events INCLUDING ALL)")
    datastore = _datastore(owner_url)
    PostgresApplicationRecorder(datastore, events_table_name="bench_es_events").create_table()
    datastore.close()


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
            uow.outside_transaction()
            records = uow.events.read_stream(stream)
        state = g.fold(decode_game(r.type, r.schema_version, r.data) for r in records)
        timings.append(time.perf_counter() - started)
    assert state.status == "collected"
    return statistics.median(timings) * 1000, len(records)


def run() -> Iterator[str]:
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        owner = as_owner(url)
        _prepare_tables(owner)
        # The baselines write as the owner, who made their tables; ours as the service does.
        urls = {"raw": owner, "ours": url, "eventsourcing": owner}
        with psycopg.connect(url) as conn:
            version = conn.execute("SHOW server_version").fetchone()
        yield f"server: PostgreSQL {version[0] if version else '?'}; {SECONDS:.0f} s a run"
        best: dict[tuple[str, int], float] = {}
        for _round in range(2):
            for writers in WRITERS:
                for kind in CONTENDERS:
                    rate = _rate(kind, urls[kind], writers)
                    best[kind, writers] = max(best.get((kind, writers), 0.0), rate)
        for writers in WRITERS:
            raw, ours, lib = (best[kind, writers] for kind in CONTENDERS)
            yield (
                f"{writers} writer{'s' if writers > 1 else ''}: raw INSERTs {raw:,.0f}/s, "
                f"our appends {ours:,.0f}/s ({ours / raw:.2f} x raw), eventsourcing's recorder "
                f"{lib:,.0f}/s (ours {ours / lib:.1f} x)"
            )
        settings = replace(
            Settings(), database_url=url, seed_keys=(Fernet.generate_key().decode(),)
        )
        container = build(settings, migrate=False)
        try:
            ms, count = _load_and_fold_ms(container)
            yield f"load + decode + fold of a finished game ({count} events): {ms:.2f} ms median"
        finally:
            container.close()
