"""Stalls named (issue 36): a transaction held open holds the log's horizon back; the horizon
watch names it as a significant event once it has been held past its threshold, once."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import psycopg

from service.bootstrap import Container
from service.services.horizon import HorizonWatch
from tests.dbtools import ScratchDatabase

Conn = psycopg.Connection[tuple[Any, ...]]


def _stalls(container: Container) -> list[dict[str, Any]]:
    with container.unit_of_work() as uow:
        return [e.details for e in uow.significant.page(kind="log-stalled")]


def test_a_transaction_held_open_is_named_once_and_nothing_else_is(
    fresh_container: Container, fresh_database: ScratchDatabase
) -> None:
    watch = HorizonWatch(fresh_container.unit_of_work, timedelta(seconds=0.5))
    assert watch.check() is None  # nothing held: nothing named
    # the service's own login holding a transaction id open, as an insider's session would
    with psycopg.connect(fresh_database.service_url) as held:
        xid = held.execute("SELECT pg_current_xact_id()::text").fetchone()
        assert xid is not None
        assert watch.check() is None  # not yet past the threshold
        time.sleep(0.7)
        assert watch.check() == xid[0]
        assert watch.check() is None  # named once
        held.rollback()
    (named,) = _stalls(fresh_container)
    assert named["xid"] == xid[0]
    assert named["held_seconds"] >= 0.5
    assert named["application_name"] is not None  # this login's session: which one is shown
    # the honest counterpart: short transactions come and go, and nothing more is named
    for _ in range(3):
        with fresh_container.unit_of_work() as uow:
            uow.conn.execute("SELECT pg_current_xact_id()")
            uow.commit()
        assert watch.check() is None
    assert len(_stalls(fresh_container)) == 1
