"""The privilege split (issue 12): the service logs in as a role of its own that may read and
append history but never change, delete or empty it, nor take the owner's rights back (RESET
ROLE, SET ROLE) and disable the append-only triggers; production refuses to start with a login
that could; the embedded database sets up both logins itself."""

from __future__ import annotations

import logging
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, LiteralString
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

from service.bootstrap import Container, build
from service.runtime import database as db
from service.runtime.config import ConfigError, Settings
from service.services import finance_books as finance
from tests.dbtools import OWNER_ROLE, SERVICE_ROLE, ScratchDatabase

#: The tables that hold history: read and appended by the service, never changed.
PROTECTED = (
    "events",
    "ledger_transactions",
    "postings",
    "accounts",
    "significant_events",
    "reconciliations",
)
#: Each way of changing or losing rows, as the statement that tries it.
CHANGES = {
    "UPDATE": "UPDATE {} SET {} = {}",
    "DELETE": "DELETE FROM {}",
    "TRUNCATE": "TRUNCATE {}",
}
#: A column of each protected table, for the UPDATE.
COLUMN = {
    "events": "type",
    "ledger_transactions": "kind",
    "postings": "amount",
    "accounts": "kind",
    "significant_events": "actor",
    "reconciliations": "result",
}
#: A login role that may SET ROLE to the test databases' owner, and one that may write every
#: table (created if missing, as the other test roles are: roles are cluster-wide, and test
#: runs share the server).
OWNER_MEMBER = "vegas_test_owner_member"
WRITER = "vegas_test_writer"

Conn = psycopg.Connection[tuple[Any, ...]]


def _attempt(conn: Conn, statement: sql.Composed | LiteralString) -> None:
    """Run a statement that must be refused, and undo it whatever happens."""
    try:
        conn.execute(statement)
    finally:
        conn.rollback()


def _change(table: str, change: str) -> sql.Composed:
    column = sql.Identifier(COLUMN[table])
    if change == "UPDATE":
        return sql.SQL(CHANGES[change]).format(sql.Identifier(table), column, column)
    return sql.SQL(CHANGES[change]).format(sql.Identifier(table))


@pytest.fixture
def service_conn(database_url: str) -> Iterator[Conn]:
    """A connection as the service's own login, as the pool opens them (SET ROLE vegas_app)."""
    with psycopg.connect(database_url) as conn:
        conn.execute("SET ROLE vegas_app")
        conn.commit()
        yield conn


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("table", PROTECTED)
@pytest.mark.parametrize("reset", [False, True], ids=["as-vegas_app", "after-reset-role"])
def test_the_service_login_cannot_change_or_empty_history(
    service_conn: Conn, table: str, change: str, reset: bool
) -> None:
    if reset:  # the login's own rights: before the split, the superuser's
        service_conn.execute("RESET ROLE")
        service_conn.commit()
        assert service_conn.execute("SELECT current_user").fetchone() == (SERVICE_ROLE,)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _attempt(service_conn, _change(table, change))


@pytest.mark.parametrize("role", [OWNER_ROLE, "postgres", "pg_write_all_data"])
def test_the_service_login_cannot_become_the_owner(service_conn: Conn, role: str) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _attempt(service_conn, sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _attempt(service_conn, sql.SQL("SET SESSION AUTHORIZATION {}").format(sql.Identifier(role)))


@pytest.mark.parametrize("reset", [False, True], ids=["as-vegas_app", "after-reset-role"])
def test_the_service_login_cannot_disable_the_append_only_triggers(
    service_conn: Conn, reset: bool
) -> None:
    if reset:
        service_conn.execute("RESET ROLE")
        service_conn.commit()
    for statement in (
        "ALTER TABLE events DISABLE TRIGGER events_append_only",
        "ALTER TABLE events DISABLE TRIGGER ALL",
        "DROP TRIGGER events_append_only ON events",
        "SET session_replication_role = replica",  # which would skip every trigger
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _attempt(service_conn, statement)


#: What the service writes history through (migrations/0016): functions, not tables.
WRITERS = (
    # the log, as the credential's holder (migrations/0031)
    "record_events(text, text, integer, text)",
    "record_game_events(text, text, integer, text, jsonb, boolean, text, text)",
    "open_accounts(text[], text[], text[], uuid[])",
    "post_transaction(uuid, text, text, text, text, bigint, text, integer, text, text[], bigint[])",
    "restore_balances(text[])",
    # a checkpoint signed on demand with a staff key; beat's own is background work's (0039)
    "add_checkpoint_as(text, integer, bigint, text, text, text, timestamptz, text[], integer[],"
    " text[])",
    "keep_seed(uuid, text, bytea, text)",
    # an audit asked for with an auditor's key; the audit's answers are its own login's (0037)
    "request_audit(text, uuid, jsonb)",
    # who asks (migrations/0030): sessions minted with an operator's key, used with their token
    "mint_session(text, uuid, text, interval, interval)",
    "touch_session(text)",
    "revoke_session(text)",
    "revoke_player_sessions(text, uuid)",
    # the read models the checks rely on, restored from the log (migrations/0033)
    "restore_player(uuid)",
    "restore_game_history(uuid, jsonb)",
)
#: The shape-only appends (migrations/0031) and re-encryption (0032): the owner's alone.
OWNERS_ONLY = (
    "append_events(text, integer, text)",
    "record_game_events(text, integer, text, jsonb, boolean, text, text)",
    "rekey_seed(uuid, text, bytea)",  # seeds rotate, the CLI's (migrations/0032)
    "save_game_history(game_history)",  # record_game_events' and the loaders' (0033)
)
#: Tables the service reads but writes only through those functions.
THROUGH_FUNCTIONS = (
    "events",
    "accounts",
    "ledger_transactions",
    "postings",
    "account_balances",
    "log_checkpoints",
    "checkpoint_heads",
    "reconciliations",
    "game_seeds",
    "api_keys",
    "player_sessions",
    "players",
    "game_history",
)


def test_the_service_reads_history_and_writes_it_only_through_the_owner_s_functions(
    container: Container,
) -> None:
    """What the grants are for: the whole suite runs through them, and this says so plainly."""
    with container.unit_of_work() as uow:
        login = uow.conn.execute("SELECT session_user").fetchone()
        for table in THROUGH_FUNCTIONS:
            for privilege, allowed in (("SELECT", True), ("INSERT", False), ("UPDATE", False)):
                found = uow.conn.execute(
                    "SELECT has_table_privilege(%s, %s)", (table, privilege)
                ).fetchone()
                assert found == (allowed,), (table, privilege)
        for function in WRITERS:
            row = uow.conn.execute(
                "SELECT has_function_privilege(%s, 'EXECUTE'), p.prosecdef,"
                "       array_to_string(p.proconfig, ',')"
                "  FROM pg_proc p WHERE p.oid = to_regprocedure(%s)",
                (function, function),
            ).fetchone()
            # Callable, run with the owner's rights, and blind to the caller's search_path.
            assert row == (True, True, "search_path=public, pg_temp"), function
        assert uow.conn.execute(
            "SELECT has_table_privilege('significant_events', 'INSERT')"
        ).fetchone() == (True,)
        for function in OWNERS_ONLY:
            assert uow.conn.execute(
                "SELECT has_function_privilege(%s, 'EXECUTE')", (function,)
            ).fetchone() == (False,), function
    assert login == (SERVICE_ROLE,)


# --- the history tables' own triggers -----------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE reconciliations SET result = '{}'",
        "DELETE FROM reconciliations",
        "TRUNCATE reconciliations",
        "TRUNCATE significant_events",
    ],
)
def test_even_the_owner_cannot_change_them_without_disabling_a_trigger(
    test_database: ScratchDatabase, statement: LiteralString
) -> None:
    with psycopg.connect(test_database.owner_url) as owner:
        owner.execute(
            "INSERT INTO reconciliations (day, result) VALUES (current_date, '{}')"
        )  # a row to change, rolled back with the rest
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
            _attempt(owner, statement)


def test_a_stored_reconciliation_is_never_overwritten_the_latest_wins(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    day = datetime.now(UTC).date()
    earlier = {"date": day.isoformat(), "currencies": {}, "mismatches": ["an earlier run"]}
    fresh_admin_conn.execute(
        "INSERT INTO reconciliations (day, result) VALUES (%s, %s)", (day, Jsonb(earlier))
    )
    with fresh_container.audit_unit_of_work() as uow:
        stored = finance.store_reconciliation(uow, day)
    with fresh_container.unit_of_work() as uow:
        latest = finance.stored_reconciliation(uow, day)
    assert latest is not None
    assert latest[1] == stored
    kept = fresh_admin_conn.execute(
        "SELECT result FROM reconciliations WHERE day = %s ORDER BY seq", (day,)
    ).fetchall()
    assert [row[0] for row in kept] == [earlier, stored]


# --- the start-up check ---------------------------------------------------------------------------


def _production(settings: Settings) -> Settings:
    return replace(settings, environment="production", pool_min_size=1, pool_max_size=1)


def _login_in(admin_server_url: str, role: str, *groups: str) -> None:
    """A login role that is a member of ``groups``, created if missing."""
    with psycopg.connect(admin_server_url, autocommit=True) as admin:
        admin.execute(db.PROVISION_LOCK_SQL)
        if not admin.execute(db.ROLE_EXISTS_SQL, {"role": role}).fetchone():
            admin.execute(
                sql.SQL("CREATE ROLE {} LOGIN IN ROLE {}").format(
                    sql.Identifier(role), sql.SQL(", ").join(map(sql.Identifier, groups))
                )
            )


@pytest.fixture(scope="module")
def owner_member_url(admin_server_url: str, test_database: ScratchDatabase) -> str:
    """A login that is not the owner but may SET ROLE to it."""
    _login_in(admin_server_url, OWNER_MEMBER, OWNER_ROLE)
    return db.with_user(test_database.service_url, OWNER_MEMBER)


@pytest.fixture(scope="module")
def writer_url(admin_server_url: str, test_database: ScratchDatabase) -> str:
    """A login in vegas_app that may also write every table (PostgreSQL's pg_write_all_data)."""
    _login_in(admin_server_url, WRITER, "vegas_app", "pg_write_all_data")
    return db.with_user(test_database.service_url, WRITER)


@pytest.mark.parametrize(
    ("login", "reason"),
    [
        ("owner", "owns the event store's tables"),
        ("superuser", "is a superuser"),
        ("owner_member", f"may SET ROLE to '{OWNER_ROLE}'"),
        ("writer", "may INSERT, UPDATE, DELETE or TRUNCATE the event log"),
    ],
)
def test_production_refuses_a_login_that_could_rewrite_history(
    test_database: ScratchDatabase,
    owner_member_url: str,
    writer_url: str,
    settings: Settings,
    login: str,
    reason: str,
) -> None:
    url = {
        "owner": test_database.owner_url,
        "superuser": test_database.admin_url,
        "owner_member": owner_member_url,
        "writer": writer_url,
    }[login]
    with pytest.raises(ConfigError) as refused:
        db.create_pool(url, _production(settings), name="privilege-test")
    message = str(refused.value)
    assert reason in message
    assert "DATABASE_URL" in message
    assert "MIGRATION_DATABASE_URL" in message


def test_production_accepts_the_service_login(database_url: str, settings: Settings) -> None:
    pool = db.create_pool(database_url, _production(settings), name="privilege-test")
    try:
        with pool.connection() as conn:
            assert conn.execute("SELECT session_user").fetchone() == (SERVICE_ROLE,)
    finally:
        pool.close()


def test_the_services_are_not_built_on_the_owners_login_in_production(
    test_database: ScratchDatabase, settings: Settings
) -> None:
    """The app, the worker and the CLI all get their pool from the composition root."""
    chosen = replace(_production(settings), database_url=test_database.owner_url)
    with pytest.raises(ConfigError, match="owns the event store's tables"):
        build(chosen, migrate=False)


def test_development_only_warns(
    test_database: ScratchDatabase, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """As an existing set-up that logs in as the server's superuser still may, locally."""
    chosen = replace(settings, pool_min_size=1, pool_max_size=1)
    with caplog.at_level(logging.WARNING, logger="service.runtime.database"):
        pool = db.create_pool(test_database.admin_url, chosen, name="privilege-test")
    pool.close()
    assert "which is a superuser" in caplog.text


def test_migrations_as_the_service_login_are_refused_with_a_clear_message(
    database_url: str,
) -> None:
    with pytest.raises(ConfigError, match="MIGRATION_DATABASE_URL"):
        db.migrate(database_url)


# --- the embedded database ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded_dir() -> Iterator[Path]:
    """A data folder of its own, with an embedded PostgreSQL that no one has set up before."""
    folder = Path(tempfile.mkdtemp(prefix="vegas-test-embedded-"))
    try:
        yield folder
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pgserver.postgres_server import get_server

            get_server(folder / "pg").cleanup()  # stops it: this process is its only user
        shutil.rmtree(folder, ignore_errors=True)


def _role(admin: Conn, role: str) -> tuple[Any, ...] | None:
    return admin.execute(
        "SELECT rolcanlogin, rolsuper, rolcreaterole, rolbypassrls,"
        "       pg_has_role(rolname, 'vegas_app', 'MEMBER')"
        "  FROM pg_roles WHERE rolname = %s",
        (role,),
    ).fetchone()


def _owners(url: str) -> set[str]:
    """Who owns the tables and functions of the database."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tableowner FROM pg_tables WHERE schemaname = 'public'"
            " UNION SELECT pg_get_userbyid(proowner) FROM pg_proc"
            "  WHERE pronamespace = 'public'::regnamespace"
        ).fetchall()
    return {str(row[0]) for row in rows}


def test_the_embedded_database_sets_up_an_owner_and_a_service_login(
    embedded_dir: Path, settings: Settings
) -> None:
    chosen = replace(
        settings, database_url=None, data_dir=embedded_dir, pool_min_size=1, pool_max_size=1
    )
    admin_url = db.embedded_server_url(embedded_dir)
    with psycopg.connect(admin_url) as admin:
        assert _role(admin, db.EMBEDDED_SERVICE) is None  # a clean clone: nobody yet
    urls = db.database_urls(chosen)
    db.migrate(urls.migration)
    with psycopg.connect(admin_url) as admin:
        #           login  super  createrole bypassrls member of vegas_app
        assert _role(admin, db.EMBEDDED_OWNER) == (True, False, True, False, False)
        assert _role(admin, db.EMBEDDED_SERVICE) == (True, False, False, False, True)
        owner = admin.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s",
            (db.EMBEDDED_DATABASE,),
        ).fetchone()
    assert owner == (db.EMBEDDED_OWNER,)
    assert _owners(urls.migration) == {db.EMBEDDED_OWNER}
    # The service logs in as its own role, which production accepts.
    pool = db.create_pool(urls.service, _production(chosen), name="privilege-test")
    try:
        with pool.connection() as conn:
            assert conn.execute("SELECT session_user").fetchone() == (db.EMBEDDED_SERVICE,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("ALTER TABLE events DISABLE TRIGGER ALL")
    finally:
        pool.close()
    assert db.database_urls(chosen) == urls  # the second time finds it all set up


def test_an_embedded_database_migrated_by_the_superuser_is_adopted_by_the_owner(
    embedded_dir: Path,
) -> None:
    """What an older version left in .data: everything owned by the server's superuser."""
    from yoyo import get_backend, read_migrations
    from yoyo.migrations import MigrationList

    admin_url = db.embedded_server_url(embedded_dir)
    db.ensure_database(admin_url, "legacy")
    legacy_admin = db.with_database(admin_url, "legacy")
    parts = urlsplit(legacy_admin)
    backend = get_backend(
        urlunsplit(("postgresql+psycopg", parts.netloc, parts.path, parts.query, ""))
    )
    older = MigrationList(
        m for m in read_migrations(str(db.MIGRATIONS_DIR)) if m.id <= "0010.audit-resume"
    )
    with backend.lock():
        backend.apply_migrations(backend.to_apply(older))
    assert _owners(legacy_admin) == {"postgres"}

    urls = db.provision(admin_url, "legacy", owner=db.EMBEDDED_OWNER, service=db.EMBEDDED_SERVICE)
    applied = db.migrate(urls.migration)  # the newer migrations, as the owner
    assert "0012.privilege-split" in applied
    assert _owners(legacy_admin) == {db.EMBEDDED_OWNER}
    with psycopg.connect(urls.service) as conn:
        conn.execute("SELECT count(*) FROM events")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE reconciliations SET result = result")
