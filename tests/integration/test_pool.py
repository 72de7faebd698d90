"""The connection pool under a database that is gone: requests fail fast (a 503, not a hang),
and reconnection attempts pause at most a couple of seconds, so the service is back within
seconds of the database's return."""

from __future__ import annotations

import time
from dataclasses import replace

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from service.api.problems import from_exception
from service.runtime.config import Settings
from service.runtime.database import CappedBackoff, create_pool


def test_reconnection_pauses_double_but_never_exceed_the_cap() -> None:
    attempt = CappedBackoff(timeout=300.0, cap=2.0)
    now = 0.0
    delays = []
    for _ in range(12):
        attempt.update_delay(now)
        delays.append(attempt.delay)
        now += attempt.delay
    assert 0.8 <= delays[0] <= 1.2  # the first pause, about a second
    assert max(delays) == pytest.approx(2.0)
    assert all(d <= 2.0 for d in delays)
    assert sum(delays) < 25  # twelve attempts in under half a minute, not hours


def test_a_request_that_cannot_get_a_connection_is_answered_503_within_the_timeout(
    database_url: str, settings: Settings
) -> None:
    chosen = replace(settings, pool_min_size=1, pool_max_size=1, pool_timeout_s=0.5)
    pool = create_pool(database_url, chosen, name="pool-test")
    try:
        with pool.connection():
            started = time.monotonic()
            with pytest.raises(PoolTimeout) as waited, pool.connection():
                pass  # pragma: no cover - never reached
            assert time.monotonic() - started < 2.0
        problem = from_exception(waited.value)
        assert (problem.type.slug, problem.type.status) == ("service-unavailable", 503)
    finally:
        pool.close()


def test_a_connection_the_server_dropped_is_replaced_on_checkout(
    database_url: str, settings: Settings, admin_server_url: str
) -> None:
    chosen = replace(settings, pool_min_size=1, pool_max_size=1)
    pool = create_pool(database_url, chosen, name="pool-drop-test")
    try:
        with pool.connection() as conn:
            pid = conn.info.backend_pid
        with psycopg.connect(admin_server_url, autocommit=True) as admin:
            # Waits until the backend is gone: the server has dropped the connection.
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
        with pool.connection() as conn:  # checked, found dead, replaced: no error here
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != pid
    finally:
        pool.close()
