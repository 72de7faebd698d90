"""Scratch databases for tests and benchmarks, on the server they are pointed at.

Each is set up as production should be: migrated by an owner login, used by a service login
that is only a member of vegas_app (service/runtime/database.py), so the whole suite proves those
grants are enough. The two roles are cluster-wide and test runs share the server, so they are
created if missing and never dropped; each run's database is dropped at the end.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql

from service.runtime import database as db
from service.runtime.config import PROJECT_ROOT

#: The test databases' owner, which runs their migrations.
OWNER_ROLE = "vegas_test_owner"
#: What the services under test log in as.
SERVICE_ROLE = "vegas_test_service"


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


def server_admin_url() -> str:
    """TEST_DATABASE_URL (CI: the machine's PostgreSQL), else the embedded server."""
    return os.environ.get("TEST_DATABASE_URL") or db.embedded_server_url(PROJECT_ROOT / ".data")


@contextmanager
def split_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[ScratchDatabase]:
    """A new database on the server, owned and migrated by OWNER_ROLE, dropped on the way out."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    urls = db.provision(admin_server_url, name, owner=OWNER_ROLE, service=SERVICE_ROLE)
    found = ScratchDatabase(
        name=name,
        admin_url=db.with_database(admin_server_url, name),
        owner_url=urls.migration,
        service_url=urls.service,
    )
    try:
        db.migrate(found.owner_url)
        yield found
    finally:
        with psycopg.connect(admin_server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def scratch_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[str]:
    """A new, migrated database on the server, dropped on the way out: the service's URL."""
    with split_database(admin_server_url, prefix) as found:
        yield found.service_url


def as_owner(url: str) -> str:
    """A scratch database's URL as its owner, who may make tables of its own there."""
    return db.with_user(url, OWNER_ROLE)
