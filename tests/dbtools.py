"""Scratch databases for tests and benchmarks, on the server they are pointed at."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

from service import db
from service.config import PROJECT_ROOT


def server_admin_url() -> str:
    """TEST_DATABASE_URL (CI: the machine's PostgreSQL), else the embedded server."""
    return os.environ.get("TEST_DATABASE_URL") or db.embedded_server_url(PROJECT_ROOT / ".data")


@contextmanager
def scratch_database(admin_server_url: str, prefix: str = "vegas_test") -> Iterator[str]:
    """A new, migrated database on the server, dropped on the way out."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = db.with_database(admin_server_url, name)
    try:
        db.migrate(url)
        yield url
    finally:
        with psycopg.connect(admin_server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
