"""Scratch databases for tests and benchmarks, on the server they are pointed at.

Each is set up as production should be: migrated by an owner login, used by a service login
that is only a member of vegas_app (service/runtime/database.py), so the whole suite proves those
grants are enough. The two roles are cluster-wide and test runs share the server, so they are
created if missing and never dropped; each run's database is dropped at the end.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from service.runtime import database as db
from service.runtime.config import PROJECT_ROOT

#: The test databases' owner, which runs their migrations.
OWNER_ROLE = "vegas_test_owner"
#: What the services under test log in as.
SERVICE_ROLE = "vegas_test_service"

#: Every scratch database's operator key, stored by its owner as the CLI stores a key: what a
#: test acting for "an operator" through the services presents (tests/credentials.py), since
#: the database checks who asks (migrations/0030).
TEST_OPERATOR_KEY = "vsk_scratch-operator-key-of-test-databases-only"
TEST_OPERATOR_ID = uuid.UUID("00000000-0000-4000-8000-00000000000a")

# What a scratch database adds as its owner after migrating: the operator key above, and a clock
# the tests can move. The database's rules read the time through db_clock() (migrations/0031);
# here it runs ahead by test_clock.ahead, which only the owner writes (tests/dbtools.py
# move_db_clock), so a test that moves the service's clock moves the database's with it.
OPERATOR_KEY_SQL = """
INSERT INTO api_keys (key_id, name, role, key_hash)
VALUES (%(key_id)s, 'scratch-operator', 'operator', %(key_hash)s)
"""
CLOCK_SQL = """
CREATE TABLE test_clock (
    only_row  boolean  PRIMARY KEY DEFAULT true CHECK (only_row),
    ahead     interval NOT NULL
);
INSERT INTO test_clock (ahead) VALUES (interval '0');
GRANT SELECT ON test_clock TO vegas_app;  -- the service reads the clock too, never moves it
CREATE OR REPLACE FUNCTION db_clock() RETURNS timestamptz
LANGUAGE sql STABLE AS $$ SELECT transaction_timestamp() + (SELECT ahead FROM test_clock) $$;
"""

# The database's clock set to read ``at`` now (NULL: the real time again).
MOVE_CLOCK_SQL = """
UPDATE test_clock SET ahead = coalesce(%(at)s::timestamptz - clock_timestamp(), interval '0')
"""


@dataclass(frozen=True)
class ScratchDatabase:
    name: str
    #: The server's superuser on this database: for looking behind the service's back, and for
    #: tampering with history on purpose.
    admin_url: str
    #: The owner (migrations).
    owner_url: str
    #: The service's own login.
    service_url: str
    #: The audit's own login (migrations/0037).
    audit_url: str
    #: Background work's own login (migrations/0039).
    background_url: str


def server_admin_url() -> str:
    """TEST_DATABASE_URL (CI: the machine's PostgreSQL), else the embedded server."""
    return os.environ.get("TEST_DATABASE_URL") or db.embedded_server_url(PROJECT_ROOT / ".data")


@contextmanager
def bare_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[ScratchDatabase]:
    """A new, empty database on the server, owned by OWNER_ROLE (not migrated: an upgrade test
    applies a release's migrations itself), dropped on the way out."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    urls = db.provision(admin_server_url, name, owner=OWNER_ROLE, service=SERVICE_ROLE)
    try:
        yield ScratchDatabase(
            name=name,
            admin_url=db.with_database(admin_server_url, name),
            owner_url=urls.migration,
            service_url=urls.service,
            audit_url=urls.audit or "",
            background_url=urls.background or "",
        )
    finally:
        with psycopg.connect(admin_server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def split_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[ScratchDatabase]:
    """A new database on the server, owned and migrated by OWNER_ROLE, dropped on the way out."""
    with bare_database(admin_server_url, prefix) as found:
        db.migrate(found.owner_url)
        prepare_scratch(found.owner_url)
        yield found


@contextmanager
def scratch_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[str]:
    """A new, migrated database on the server, dropped on the way out: the service's URL."""
    with split_database(admin_server_url, prefix) as found:
        yield found.service_url


def as_owner(url: str) -> str:
    """A scratch database's URL as its owner, who may make tables of its own there."""
    return db.with_user(url, OWNER_ROLE)


def migrate_through(owner_url: str, last: str) -> None:
    """The migrations up to and including ``last`` only: a release before's schema, for an
    upgrade test to write on before migrating it in place."""
    from yoyo import get_backend, read_migrations
    from yoyo.migrations import MigrationList

    parts = urlsplit(owner_url)
    backend = get_backend(urlunsplit(("postgresql+psycopg", *parts[1:4], "")))
    release = MigrationList(m for m in read_migrations(str(db.MIGRATIONS_DIR)) if m.id <= last)
    with backend.lock():
        backend.apply_migrations(backend.to_apply(release))


def prepare_scratch(owner_url: str) -> None:
    """What a migrated scratch database adds as its owner: the operator key tests present, and
    the clock they move."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        digest = hashlib.sha256(TEST_OPERATOR_KEY.encode()).hexdigest()
        conn.execute(OPERATOR_KEY_SQL, {"key_id": TEST_OPERATOR_ID, "key_hash": digest})
        conn.execute(CLOCK_SQL)


def move_db_clock(owner_url: str, at: datetime | None) -> None:
    """Make the scratch database's clock read ``at`` now (None: the real time)."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(MOVE_CLOCK_SQL, {"at": at})
