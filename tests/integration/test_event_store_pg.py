"""What only the PostgreSQL store can show: the database refusing edits, tamper detection,
multi-stream transactions, and a tailing reader that never skips a late commit. The store's
shape-only append is the owner's (migrations/0031: the service appends through record_events),
so these test streams are written as the owner and read as the service."""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from psycopg import pq

from events import chain
from events.catalog import CardDrawn, CardTurned
from events.records import NewEvent, RecordedEvent
from service.bootstrap import Container
from tests.dbtools import SERVICE_ROLE


def _stream() -> str:
    return f"test-{uuid.uuid4()}"


def _new(card: str = "AS") -> NewEvent:
    return NewEvent.of(CardDrawn("stock", "waste", (card,)), {"actor": "tester", "role": "system"})


def _append(container: Container, stream: str, count: int = 1, start: int = 0) -> None:
    with container.owner_unit_of_work() as uow:
        uow.events.append(stream, [_new() for _ in range(count)], start)
        uow.commit()


def _read(container: Container, stream: str) -> list[RecordedEvent]:
    with container.unit_of_work() as uow:
        return uow.events.read_stream(stream)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET data = '{}' WHERE stream_id = %(s)s",
        "DELETE FROM events WHERE stream_id = %(s)s",
        "TRUNCATE events",
    ],
)
def test_the_service_role_may_not_update_or_delete_events(
    container: Container, statement: str
) -> None:
    stream = _stream()
    _append(container, stream)
    with container.unit_of_work() as uow, pytest.raises(psycopg.errors.InsufficientPrivilege):
        uow.conn.execute(statement, {"s": stream})
    assert len(_read(container, stream)) == 1


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET data = '{}' WHERE stream_id = %(s)s",
        "DELETE FROM events WHERE stream_id = %(s)s",
    ],
)
def test_even_a_superuser_is_refused_by_the_trigger(
    container: Container, admin_conn: psycopg.Connection[Any], statement: str
) -> None:
    stream = _stream()
    _append(container, stream)
    with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
        admin_conn.execute(statement, {"s": stream})
    assert len(_read(container, stream)) == 1


def _tamper(admin_conn: psycopg.Connection[Any], sql: str, params: dict[str, Any]) -> None:
    """Edit history as an attacker with superuser rights would: around the trigger."""
    with admin_conn.transaction():
        admin_conn.execute("SET LOCAL session_replication_role = replica")  # triggers off
        admin_conn.execute(sql, params)


def test_verification_catches_an_edit_made_behind_the_trigger(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    container, admin_conn = fresh_container, fresh_admin_conn
    stream = _stream()
    _append(container, stream, count=3)
    assert chain.verify(_read(container, stream)) is None
    _tamper(
        admin_conn,
        "UPDATE events SET data = jsonb_set(data, '{cards}', '[\"KH\"]') "
        "WHERE stream_id = %(s)s AND version = 2",
        {"s": stream},
    )
    found = chain.verify(_read(container, stream))
    assert found is not None
    assert (found.stream_id, found.version, found.problem) == (stream, 2, "hash-mismatch")


def test_verification_catches_a_deleted_event_and_a_forged_timestamp(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    container, admin_conn = fresh_container, fresh_admin_conn
    deleted, retimed = _stream(), _stream()
    _append(container, deleted, count=3)
    _append(container, retimed, count=2)
    _tamper(
        admin_conn, "DELETE FROM events WHERE stream_id = %(s)s AND version = 2", {"s": deleted}
    )
    _tamper(
        admin_conn,
        "UPDATE events SET recorded_at = recorded_at - interval '1 hour' WHERE stream_id = %(s)s "
        "AND version = 1",
        {"s": retimed},
    )
    gap = chain.verify(_read(container, deleted))
    assert gap is not None
    assert (gap.version, gap.problem) == (3, "version-gap")
    moved = chain.verify(_read(container, retimed))
    assert moved is not None
    assert (moved.version, moved.problem) == (1, "hash-mismatch")


def test_appends_to_two_streams_share_one_transaction(container: Container) -> None:
    a, b = _stream(), _stream()
    with container.owner_unit_of_work() as uow:
        uow.events.append(a, [_new()], 0)
        uow.events.append(b, [_new(), _new("2S")], 0)
        uow.commit()
    assert (len(_read(container, a)), len(_read(container, b))) == (1, 2)

    c, d = _stream(), _stream()
    with container.owner_unit_of_work() as uow:
        uow.events.append(c, [_new()], 0)
        uow.events.append(d, [_new()], 0)
        # no commit: leaving the unit of work rolls both back
    assert _read(container, c) == []
    assert _read(container, d) == []


def test_append_is_one_round_trip(container: Container) -> None:
    """The lock, the head check and the inserts are one statement: one Sync, one wait. (The
    statement's first use on a connection prepares it, a round trip of its own; every later
    append is one.)"""
    stream = _stream()
    new = [
        _new(),
        _new("2S"),
        NewEvent.of(CardTurned("tableau:0", "KS"), {"actor": "t", "role": "system"}),
    ]
    with container.owner_unit_of_work() as uow, tempfile.TemporaryFile("w+") as trace:
        uow.events.append(_stream(), [_new()], 0)  # prepared on this connection, if it was not
        uow.conn.execute("SELECT 1")  # the transaction's BEGIN, sent before we count
        uow.conn.pgconn.trace(trace.fileno())
        uow.conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        uow.events.append(stream, new, 0)
        uow.conn.pgconn.untrace()
        uow.commit()
        trace.seek(0)
        messages = [line.split("\t") for line in trace.read().splitlines()]
    sent = [m[2].split(" ")[0] for m in messages if m[0] == "F"]
    received = [m[2].split(" ")[0] for m in messages if m[0] == "B"]
    assert sent.count("Sync") == 1  # one request ...
    assert received.count("ReadyForQuery") == 1  # ... one answer
    assert sent.count("Execute") == 1  # one function call: the lock, the check, the inserts
    assert len(_read(container, stream)) == 3


def test_a_tailing_reader_never_skips_an_event_that_commits_late(container: Container) -> None:
    """Writers hold their transactions open for a while after appending, in random order, while
    a reader tails the log by position. Every committed event must reach the reader."""
    with container.unit_of_work() as uow:
        tail = uow.events.read_all(after_position=0, limit=10**9)
    checkpoint = tail[-1].position if tail else 0
    writers, appends_each = 6, 8
    done = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            stream = _stream()
            for i in range(appends_each):
                with container.owner_unit_of_work() as uow:
                    uow.events.append(stream, [_new(), _new("2S")], 2 * i)
                    time.sleep(0.002 * ((n * 7 + i) % 5))  # commit late, by varying amounts
                    uow.commit()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def read() -> None:
        position = checkpoint
        while True:
            finished = done.is_set()
            with container.unit_of_work() as uow:
                batch = uow.events.read_all(after_position=position, limit=7)
            for record in batch:
                seen.append(record.position)
                position = record.position
            if finished and not batch:
                return

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    reader = threading.Thread(target=read)
    reader.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    reader.join(timeout=60)
    assert not errors
    with container.unit_of_work() as uow:
        committed = [
            r.position for r in uow.events.read_all(after_position=checkpoint, limit=10**9)
        ]
    assert len(committed) >= writers * appends_each * 2
    assert seen == committed  # nothing skipped, nothing twice, in order


def test_lock_and_idle_timeouts_are_set_on_pooled_sessions(container: Container) -> None:
    with container.unit_of_work() as uow:
        lock = uow.conn.execute("SHOW lock_timeout").fetchone()
        idle = uow.conn.execute("SHOW idle_in_transaction_session_timeout").fetchone()
        role = uow.conn.execute("SELECT session_user, current_user").fetchone()
        jit = uow.conn.execute("SHOW jit").fetchone()
    assert jit == ("off",)  # short queries: compiling a plan cost more than running it
    assert lock is not None
    assert lock[0] == "5s"
    assert idle is not None
    assert idle[0] == "30s"
    # Logged in as the service's own role, working as the group role that holds its grants.
    assert role == (SERVICE_ROLE, "vegas_app")
