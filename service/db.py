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
from psycopg_pool.base import AttemptWithBackoff

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


class CappedBackoff(AttemptWithBackoff):
    """Reconnection attempts whose pause doubles from 1 s but never exceeds ``cap``: without
    the cap, a 40 s outage left the service waiting up to 17 s more after the database came
    back."""

    def __init__(self, *, timeout: float, cap: float) -> None:
        super().__init__(timeout=timeout)
        self.cap = cap

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, self.cap)


class ResilientPool(ConnectionPool):
    """psycopg's pool, reconnecting with a capped backoff (psycopg_pool offers no setting for
    it; this hooks the one place it starts an attempt)."""

    max_reconnect_delay = 2.0

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        if attempt is None:
            attempt = CappedBackoff(timeout=self.reconnect_timeout, cap=self.max_reconnect_delay)
        super()._add_connection(attempt, growing)


def create_pool(url: str, settings: Settings, *, name: str = "vegas") -> ConnectionPool:
    """An open psycopg pool whose sessions run as the service's restricted role."""
    role = settings.db_role

    def configure(conn: psycopg.Connection[Any]) -> None:
        if role:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        conn.commit()

    pool = ResilientPool(
        url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        kwargs={
            "options": session_options(settings),
            "application_name": f"{name}-{os.getpid()}",
            "connect_timeout": settings.connect_timeout_s,
        },
        configure=configure,
        # A connection that died with the server is found and replaced on checkout, not
        # handed to a request to fail with.
        check=ConnectionPool.check_connection,
        timeout=settings.pool_timeout_s,
        name=name,
        open=False,
    )
    pool.max_reconnect_delay = settings.reconnect_max_delay_s
    pool.open(wait=True, timeout=30)
    return pool
