"""Shared fixtures. The database ones start only when a test asks for them.

Tests run against a real PostgreSQL: the server named by TEST_DATABASE_URL (CI points it at the
machine's PostgreSQL), or else the embedded server the project starts itself. Each test session
creates its own database, migrates it as an owner role, and drops it at the end, so runs never
collide; the services under test log in as their own role, a member of vegas_app only, as in
production (tests/dbtools.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from cryptography.fernet import Fernet

from service.bootstrap import Container, build
from service.runtime.config import Settings
from tests.dbtools import ScratchDatabase, server_admin_url, split_database
from tests.workers import celery_processes, delete_queue, new_data_dir, with_broker


@pytest.fixture(scope="session")
def admin_server_url() -> str:
    """A superuser URL on the server the tests use (not on the test database)."""
    return server_admin_url()


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    """The run's own data folder (the filesystem broker's queues when no broker is given)."""
    folder = new_data_dir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _test_settings(database: ScratchDatabase, data_dir: Path) -> Settings:
    """Settings for a test database, on the test broker with a queue of their own."""
    settings = replace(
        Settings(),
        environment="test",
        database_url=database.service_url,
        migration_database_url=database.owner_url,
        audit_database_url=database.audit_url,
        background_database_url=database.background_url,
        seed_keys=(Fernet.generate_key().decode(),),
        certification_mode=True,
        pool_max_size=20,
    )
    return with_broker(settings, data_dir)


@pytest.fixture(scope="session")
def test_database(admin_server_url: str) -> Iterator[ScratchDatabase]:
    """The session's database: every test that keeps the books consistent shares it."""
    with split_database(admin_server_url) as found:
        yield found


@pytest.fixture(scope="session")
def database_url(test_database: ScratchDatabase) -> str:
    """The session's database as the service logs in to it (DATABASE_URL)."""
    return test_database.service_url


@pytest.fixture(scope="session")
def migration_database_url(test_database: ScratchDatabase) -> str:
    """The session's database as its owner logs in to it (MIGRATION_DATABASE_URL)."""
    return test_database.owner_url


@pytest.fixture(scope="session")
def settings(test_database: ScratchDatabase, data_dir: Path) -> Iterator[Settings]:
    chosen = _test_settings(test_database, data_dir)
    yield chosen
    delete_queue(chosen)  # whatever tests queued and no worker took


@pytest.fixture(scope="session")
def worker(settings: Settings, container: Container) -> Iterator[Settings]:
    """A real Celery worker on the session's database and queue, as `make run` starts one."""
    with celery_processes(settings):
        yield settings


@pytest.fixture(scope="session")
def container(settings: Settings) -> Iterator[Container]:
    built = build(settings, migrate=False)
    try:
        yield built
    finally:
        built.close()


@pytest.fixture(scope="session")
def background(settings: Settings, container: Container) -> Iterator[Container]:
    """The services as the worker builds them: on background work's own login (migrations/
    0039), for what no request does (idle collection, duel sweeps, signing checkpoints)."""
    built = build(settings, migrate=False, background=True)
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def fresh_database(admin_server_url: str) -> Iterator[ScratchDatabase]:
    """A database of the test's own, migrated, dropped afterwards."""
    with split_database(admin_server_url) as found:
        yield found


@pytest.fixture
def fresh_container(fresh_database: ScratchDatabase, data_dir: Path) -> Iterator[Container]:
    """A container on a database of its own, for tests that break the books on purpose
    (tampering, ledger entries without events) and must not leave that for other tests."""
    built = build(_test_settings(fresh_database, data_dir), migrate=False)
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def fresh_background(fresh_container: Container) -> Iterator[Container]:
    """fresh_container's services on background work's own login, as the worker's."""
    built = build(fresh_container.settings, migrate=False, background=True)
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def fresh_admin_conn(
    fresh_database: ScratchDatabase, fresh_container: Container
) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A superuser connection to fresh_container's database, as admin_conn is to the
    session's."""
    with psycopg.connect(fresh_database.admin_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def admin_conn(test_database: ScratchDatabase) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A superuser connection to the test database, autocommit, for looking behind the
    service's back (and, in tamper tests, editing history as an attacker would: the service's
    own login cannot)."""
    with psycopg.connect(test_database.admin_url, autocommit=True) as conn:
        yield conn
