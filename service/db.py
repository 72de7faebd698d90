"""Where the database comes from (DATABASE_URL, or an embedded PostgreSQL), its migrations, and
the connection pool the service uses."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from service.config import PROJECT_ROOT, Settings

log = logging.getLogger(__name__)

MIGRATIONS_DIR = PROJECT_ROOT / "migrations"
EMBEDDED_DATABASE = "vegas"


def with_database(url: str, dbname: str) -> str:
    """The same server URL pointing at another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


def embedded_server_url(data_dir: Path) -> str:
    """Start (or join) the embedded PostgreSQL in ``data_dir/pg``; its admin URL.

    pgserver keeps one server per data folder, shared by every process that asks for it, and
    stops it when the last of them exits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        from pgserver.postgres_server import get_server

        data_dir.mkdir(parents=True, exist_ok=True)
        server = get_server(data_dir / "pg", cleanup_mode="stop")
    return str(server.get_uri())


def ensure_database(admin_url: str, dbname: str) -> None:
    """Create ``dbname`` on the server if it does not exist yet."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))


def database_url(settings: Settings) -> str:
    """DATABASE_URL if configured; else the embedded server's own database, created if new."""
    if settings.database_url:
        return settings.database_url
    admin = embedded_server_url(settings.data_dir)
    ensure_database(admin, EMBEDDED_DATABASE)
    return with_database(admin, EMBEDDED_DATABASE)


def migrate(url: str) -> list[str]:
    """Apply the pending migrations in migrations/ with yoyo; the ids applied, in order."""
    from yoyo import get_backend, read_migrations

    parts = urlsplit(url)
    scheme = "postgresql+psycopg"
    # yoyo passes query arguments (e.g. host=/socket/dir) through to the driver as keywords.
    query = urlencode(parse_qsl(parts.query))
    yoyo_url = urlunsplit((scheme, parts.netloc, parts.path, query, ""))
    backend = get_backend(yoyo_url)
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with backend.lock():
        pending = backend.to_apply(migrations)
        backend.apply_migrations(pending)
    applied = [m.id for m in pending]
    if applied:
        log.info("applied migrations: %s", ", ".join(applied))
    return applied


def session_options(settings: Settings) -> str:
    """Server settings every pooled session starts with: nothing waits or idles forever."""
    return " ".join(
        (
            f"-c lock_timeout={settings.lock_timeout_ms}",
            f"-c idle_in_transaction_session_timeout={settings.idle_in_transaction_timeout_ms}",
            f"-c statement_timeout={settings.statement_timeout_ms}",
            "-c timezone=UTC",
        )
    )


def create_pool(url: str, settings: Settings, *, name: str = "vegas") -> ConnectionPool:
    """An open psycopg pool whose sessions run as the service's restricted role."""
    role = settings.db_role

    def configure(conn: psycopg.Connection[Any]) -> None:
        if role:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        conn.commit()

    pool = ConnectionPool(
        url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        kwargs={
            "options": session_options(settings),
            "application_name": f"{name}-{os.getpid()}",
        },
        configure=configure,
        name=name,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
