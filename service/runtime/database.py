"""Where the database comes from (DATABASE_URL, or an embedded PostgreSQL), its migrations, and
the connection pool the service uses.

Separate logins, never one: migrations run as the owner of the tables (MIGRATION_DATABASE_URL),
the service as its own login role whose only rights come from membership of the group role
``vegas_app`` (DATABASE_URL), so it cannot take the owner's rights back with one ``RESET ROLE``
and disable the append-only triggers; the audit (the worker's and the CLI's, never the web
process's) as a member of ``vegas_audit`` (AUDIT_DATABASE_URL), the only login that writes the
audit's answers (migrations/0037). The embedded database sets up all three itself."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import time
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from events import json_text
from service.runtime.config import PROJECT_ROOT, ConfigError, Settings

log = logging.getLogger(__name__)

MIGRATIONS_DIR = PROJECT_ROOT / "migrations"
EMBEDDED_DATABASE = "vegas"
#: The group role migrations grant the service's rights to (migrations/0001 creates it too).
APP_GROUP = "vegas_app"
#: The group role of the audit's login (migrations/0037 creates it too): it reads everything and
#: alone writes audits, stored reconciliations and players' verified points.
AUDIT_GROUP = "vegas_audit"
#: The group role of the background work's login (migrations/0039): the service's rights, and
#: alone what no request does: signing the log's checkpoints without a staff key.
BACKGROUND_GROUP = "vegas_background"
#: The embedded database's logins: the owner of everything the migrations create, the service,
#: a member of APP_GROUP and nothing else, the auditor, a member of AUDIT_GROUP alone, and the
#: background work's, a member of BACKGROUND_GROUP alone.
EMBEDDED_OWNER = "vegas_owner"
EMBEDDED_SERVICE = "vegas_service"
EMBEDDED_AUDITOR = "vegas_auditor"
EMBEDDED_BACKGROUND = "vegas_worker"


@dataclass(frozen=True)
class DatabaseUrls:
    #: What the service connects as.
    service: str
    #: What migrations connect as: the owner.
    migration: str
    #: What the audit connects as (the worker's and the CLI's); None: not configured.
    audit: str | None = None
    #: What background work connects as (the worker's); None: not configured.
    background: str | None = None


def with_database(url: str, dbname: str) -> str:
    """The same server URL pointing at another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


def with_user(url: str, user: str) -> str:
    """The same server and database URL, logging in as ``user`` (no password: the embedded
    server and the test servers trust local logins)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(user, safe='')}@{host}"))


def embedded_server(data_dir: Path) -> Any:
    """Start (or join) the embedded PostgreSQL in ``data_dir/pg`` (a pgserver handle).

    pgserver keeps one server per data folder, shared by every process that asks for it, and
    stops it when the last of them exits normally (under `make run`,
    service/runtime/database_keeper.py stops it with the rest)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        from pgserver.postgres_server import get_server

        data_dir.mkdir(parents=True, exist_ok=True)
        return get_server(data_dir / "pg", cleanup_mode="stop")


def stop_embedded_server(server: Any) -> None:
    """Stop the embedded server now, whoever else uses it: a fast shutdown rolls back open
    transactions and ends every session (nothing half-done survives), then stops."""
    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def embedded_server_url(data_dir: Path) -> str:
    """Start (or join) the embedded PostgreSQL in ``data_dir/pg``; its admin URL."""
    return str(embedded_server(data_dir).get_uri())


# Provisioning runs one at a time on a server (several processes start together under
# `make run`, and test runs share a server): a session lock, held until the admin connection
# closes. Advisory locks are per database, and every provisioner connects to the admin one.
PROVISION_LOCK_SQL = "SELECT pg_advisory_lock(hashtext('vegas-provision'))"

# Whether a role exists.
ROLE_EXISTS_SQL = "SELECT 1 FROM pg_roles WHERE rolname = %(role)s"

# Whether a role is already a member of another (GRANT again would only warn, but racing
# GRANTs of one membership can fail).
IS_MEMBER_SQL = """
SELECT 1 FROM pg_auth_members m
  JOIN pg_roles r ON r.oid = m.roleid
  JOIN pg_roles u ON u.oid = m.member
 WHERE r.rolname = %(role)s AND u.rolname = %(member)s
"""

# A database's owner, or no row if there is no such database.
DATABASE_OWNER_SQL = """
SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %(dbname)s
"""

# Tables (with their indexes and identity sequences) in the database's schema that are not the
# owner's: what an older version made while migrating as the server's superuser.
FOREIGN_TABLES_SQL = """
SELECT c.relname FROM pg_class c
 WHERE c.relnamespace = current_schema()::regnamespace
   AND c.relkind IN ('r', 'p')
   AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = %(owner)s)
 ORDER BY c.relname
"""

# The new owner, for ADOPT_FUNCTIONS_SQL to read (a DO block takes no parameters).
SET_ADOPTER_SQL = "SELECT set_config('vegas.adopter', %(owner)s, true)"

# Functions in the schema that are not the owner's become its; a function is named by its
# signature, which only the server renders reliably (regprocedure), hence a DO block.
ADOPT_FUNCTIONS_SQL = """
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = current_schema()::regnamespace
                AND p.proowner <> (SELECT oid FROM pg_roles
                                    WHERE rolname = current_setting('vegas.adopter'))
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f, current_setting('vegas.adopter'));
    END LOOP;
END
$$
"""

# The login roles' attributes: the owner may create roles because migrations/0001 creates the
# group role if missing (PostgreSQL refuses CREATE ROLE before it looks for a duplicate); the
# service may do nothing but log in.
OWNER_ATTRIBUTES = sql.SQL("LOGIN CREATEROLE NOSUPERUSER NOCREATEDB NOBYPASSRLS")
SERVICE_ATTRIBUTES = sql.SQL("LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS")
GROUP_ATTRIBUTES = sql.SQL("NOLOGIN")


def ensure_database(admin_url: str, dbname: str) -> None:
    """Create ``dbname`` on the server if it does not exist yet."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))


def _create_role(conn: psycopg.Connection[Any], role: str, attributes: sql.SQL) -> None:
    """Create a role if missing. Roles are cluster-wide and other databases on the server (other
    test runs, the developer's own) may use them, so they are never dropped or altered."""
    if conn.execute(ROLE_EXISTS_SQL, {"role": role}).fetchone():
        return
    statement = sql.SQL("CREATE ROLE {} {}").format(sql.Identifier(role), attributes)
    # Made meanwhile by someone not taking our lock (migrations/0001, an older version): fine.
    with contextlib.suppress(psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
        conn.execute(statement)


def provision(
    admin_url: str,
    dbname: str,
    *,
    owner: str,
    service: str,
    auditor: str = EMBEDDED_AUDITOR,
    background: str = EMBEDDED_BACKGROUND,
) -> DatabaseUrls:
    """On a server reached as a superuser: the owner, service, auditor and background login
    roles (created if missing), ``dbname`` owned by the owner (created if missing, else adopted
    with everything in it), and the URLs that log in as each."""
    database_admin_url = with_database(admin_url, dbname)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(PROVISION_LOCK_SQL)
        _create_role(conn, owner, OWNER_ATTRIBUTES)
        # Background work's login has the service's rights and its own (migrations/0039).
        logins = (
            (service, (APP_GROUP,)),
            (auditor, (AUDIT_GROUP,)),
            (background, (APP_GROUP, BACKGROUND_GROUP)),
        )
        for login, groups in logins:
            _create_role(conn, login, SERVICE_ATTRIBUTES)
            for group in groups:
                _create_role(conn, group, GROUP_ATTRIBUTES)
                if not conn.execute(IS_MEMBER_SQL, {"role": group, "member": login}).fetchone():
                    conn.execute(
                        sql.SQL("GRANT {} TO {}").format(
                            sql.Identifier(group), sql.Identifier(login)
                        )
                    )
        found = conn.execute(DATABASE_OWNER_SQL, {"dbname": dbname}).fetchone()
        if found is None:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(dbname), sql.Identifier(owner)
                )
            )
        elif found[0] != owner:
            conn.execute(
                sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                    sql.Identifier(dbname), sql.Identifier(owner)
                )
            )
        adopt(database_admin_url, owner)  # still under the lock
    return DatabaseUrls(
        service=with_user(database_admin_url, service),
        migration=with_user(database_admin_url, owner),
        audit=with_user(database_admin_url, auditor),
        background=with_user(database_admin_url, background),
    )


def adopt(database_admin_url: str, owner: str) -> list[str]:
    """Make ``owner`` the owner of every table and function in the database's schema (an older
    version migrated as the superuser); the tables changed. Nothing to do the second time."""
    with psycopg.connect(database_admin_url, autocommit=True) as conn, conn.transaction():
        tables = [str(row[0]) for row in conn.execute(FOREIGN_TABLES_SQL, {"owner": owner})]
        for table in tables:
            conn.execute(
                sql.SQL("ALTER TABLE {} OWNER TO {}").format(
                    sql.Identifier(table), sql.Identifier(owner)
                )
            )
        conn.execute(SET_ADOPTER_SQL, {"owner": owner})
        conn.execute(ADOPT_FUNCTIONS_SQL)
    if tables:
        log.warning("the database's tables now belong to %s: %s", owner, ", ".join(tables))
    return tables


def database_urls(settings: Settings) -> DatabaseUrls:
    """DATABASE_URL (and MIGRATION_DATABASE_URL, else the same) if configured; else the
    embedded server's own database, with its owner and service logins set up."""
    if settings.database_url:
        return DatabaseUrls(
            service=settings.database_url,
            migration=settings.migration_database_url or settings.database_url,
            audit=settings.audit_database_url,
            background=settings.background_database_url,
        )
    admin = embedded_server_url(settings.data_dir)
    return provision(admin, EMBEDDED_DATABASE, owner=EMBEDDED_OWNER, service=EMBEDDED_SERVICE)


def database_url(settings: Settings) -> str:
    """What the service connects as."""
    return database_urls(settings).service


def migrate(url: str) -> list[str]:
    """Apply the pending migrations in migrations/ with yoyo; the ids applied, in order."""
    from yoyo import get_backend, read_migrations

    parts = urlsplit(url)
    scheme = "postgresql+psycopg"
    # yoyo passes query arguments (e.g. host=/socket/dir) through to the driver as keywords.
    query = urlencode(parse_qsl(parts.query))
    yoyo_url = urlunsplit((scheme, parts.netloc, parts.path, query, ""))
    try:
        backend = get_backend(yoyo_url)
        migrations = read_migrations(str(MIGRATIONS_DIR))
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise ConfigError(
            f"migrations must run as the owner of the database's tables, not {parts.username!r} "
            f"({str(exc).strip()}): set MIGRATION_DATABASE_URL to the owner's login"
        ) from exc
    applied = [m.id for m in pending]
    if applied:
        log.info("applied migrations: %s", ", ".join(applied))
    return applied


def session_options(settings: Settings) -> str:
    """Server settings every pooled session starts with: nothing waits or idles forever, and no
    query is JIT-compiled (the service's queries are short; a report's plan crossed the JIT
    threshold once the history held a few thousand days of totals, and compiling it cost more
    than running it: 35.5 ms with JIT, 5.8 ms without, on a 100-day loaded history)."""
    return " ".join(
        (
            f"-c lock_timeout={settings.lock_timeout_ms}",
            f"-c idle_in_transaction_session_timeout={settings.idle_in_transaction_timeout_ms}",
            f"-c statement_timeout={settings.statement_timeout_ms}",
            "-c timezone=UTC",
            "-c jit=off",
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


#: A connection returned to the pool this recently is lent again without a liveness check: the
#: check is a round trip of its own, and under load nearly every checkout is of such a one.
RECENTLY_USED_S = 1.0


class ResilientPool(ConnectionPool):
    """psycopg's pool, reconnecting with a capped backoff (psycopg_pool offers no setting for
    it; this hooks the one place it starts an attempt), and checking a connection on checkout
    only when it has been idle a while (``check_if_idle``).

    A connection's return is noted in ``putconn``, in the returning thread, not by a ``reset``
    callback: with one, psycopg_pool hands every returned connection to its worker thread, so
    each request paid a thread handoff (and its GIL switches) before the connection could be
    lent again."""

    max_reconnect_delay = 2.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._returned: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        super().__init__(*args, check=self.check_if_idle, **kwargs)

    def putconn(self, conn: psycopg.Connection[Any]) -> None:
        self._returned[conn] = time.monotonic()
        super().putconn(conn)

    def check_if_idle(self, conn: psycopg.Connection[Any]) -> None:
        """A connection that died with the server is found and replaced on checkout, not handed
        to a request to fail with. One in use a moment ago is checked without a round trip: an
        idle connection's socket has nothing to read unless the server has said goodbye (a
        terminated backend, a shutdown) or closed it."""
        returned = self._returned.get(conn)
        recent = returned is not None and time.monotonic() - returned <= RECENTLY_USED_S
        if not recent or conn.closed or select.select([conn.pgconn.socket], [], [], 0)[0]:
            ConnectionPool.check_connection(conn)

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        if attempt is None:
            attempt = CappedBackoff(timeout=self.reconnect_timeout, cap=self.max_reconnect_delay)
        super()._add_connection(attempt, growing)


# Who the service logged in as (session_user: a SET ROLE does not change it), and what about
# that login could let it change history: being a superuser, creating roles (before
# PostgreSQL 16 that includes granting itself any role), bypassing row security, owning the
# event store's tables, being a member of their owner's role (it may SET ROLE to it), or being
# granted a write to the log some other way (pg_write_all_data, a stray GRANT): since
# migrations/0016 the service appends only through append_events, so even INSERT is too much.
LOGIN_SQL = """
SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolbypassrls, t.owner,
       coalesce(pg_has_role(session_user, t.owner, 'MEMBER'), false),
       coalesce(has_table_privilege(session_user, t.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'),
                false)
  FROM pg_roles r
  LEFT JOIN (SELECT oid, pg_get_userbyid(relowner) AS owner
               FROM pg_class WHERE oid = to_regclass('events')) t ON true
 WHERE r.rolname = session_user
"""


def privileged_login(conn: psycopg.Connection[Any]) -> tuple[str, list[str]]:
    """The login role of ``conn`` and what about it could rewrite history (empty: nothing)."""
    row = conn.execute(LOGIN_SQL).fetchone()
    conn.rollback()  # leave the connection as found, outside a transaction
    if row is None:  # pragma: no cover - session_user is always a role
        raise ConfigError("the database does not know the role the service logged in as")
    role, superuser, createrole, bypassrls, owner, member, may_change = row
    reasons = []
    if superuser:
        reasons.append("is a superuser")
    if createrole:
        reasons.append("may create roles (CREATEROLE)")
    if bypassrls:
        reasons.append("bypasses row security (BYPASSRLS)")
    if owner is not None and owner == role:
        reasons.append("owns the event store's tables")
    elif member:
        reasons.append(f"may SET ROLE to {owner!r}, the owner of the event store's tables")
    elif may_change:
        reasons.append("may INSERT, UPDATE, DELETE or TRUNCATE the event log")
    return str(role), reasons


def check_login(conn: psycopg.Connection[Any], settings: Settings) -> None:
    """Refuse (production) or warn about (development, test) a service login that could take
    back the owner's rights, disable the append-only triggers and rewrite history."""
    role, reasons = privileged_login(conn)
    if not reasons:
        return
    message = (
        f"the service is connected to the database as {role!r}, which {' and '.join(reasons)}: "
        "with that login a bug or an insider could disable the append-only triggers and rewrite "
        f"history. Set DATABASE_URL to a login role that is only a member of {APP_GROUP} (no "
        "superuser, CREATEROLE or BYPASSRLS, not the owner nor a member of the owner's role) "
        "and MIGRATION_DATABASE_URL to the owner, which runs the migrations (README: Database "
        "roles)"
    )
    if settings.is_production:
        raise ConfigError(message)
    log.warning(message)


def _checked_before_opening(url: str, kwargs: dict[str, Any], settings: Settings) -> bool:
    """check_login on a connection of its own, before the pool opens: a login that cannot even
    SET ROLE (an owner outside the group role) would otherwise only keep the pool retrying.
    False if the server cannot be reached yet (the pool waits for it, then checks)."""
    try:
        conn = psycopg.connect(url, **kwargs)
    except psycopg.OperationalError:
        return False
    with conn:
        check_login(conn, settings)
    return True


def owner_pool(url: str, settings: Settings) -> ConnectionPool:
    """Connections as the database's owner (MIGRATION_DATABASE_URL), for the few writes only the
    owner may make (staff keys, migrations/0030): the CLI's, never a request's. No SET ROLE: the
    owner acts as itself."""

    def configure(conn: psycopg.Connection[Any]) -> None:
        set_json_loads(json_text.loads, conn)
        conn.commit()

    kwargs: dict[str, Any] = {
        "options": session_options(settings),
        "application_name": f"vegas-owner-{os.getpid()}",
        "connect_timeout": settings.connect_timeout_s,
    }
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=settings.pool_max_size,
        kwargs=kwargs,
        configure=configure,
        name="vegas-owner",
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool


def create_pool(
    url: str,
    settings: Settings,
    *,
    name: str = "vegas",
    wait: bool = True,
    role: str | None = None,
) -> ConnectionPool:
    """An open psycopg pool whose sessions run as the service's restricted role (or ``role``:
    the auditor's group); ConfigError in production if the login could rewrite history
    (check_login). ``wait=False``: the pool opens without waiting for its first connection, and a
    request waits for one at most a second (a replica the service can do without: a read passes
    it over for the primary at once)."""
    role = settings.db_role if role is None else role

    def configure(conn: psycopg.Connection[Any]) -> None:
        set_json_loads(json_text.loads, conn)  # stored JSON read by orjson, as json.loads reads it
        if not wait:
            # Not checked before opening if the server was not there yet: each connection is.
            check_login(conn, settings)
        if role:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        conn.commit()

    kwargs: dict[str, Any] = {
        "options": session_options(settings),
        "application_name": f"{name}-{os.getpid()}",
        "connect_timeout": settings.connect_timeout_s,
    }
    checked = _checked_before_opening(url, kwargs, settings)
    pool = ResilientPool(
        url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        kwargs=kwargs,
        configure=configure,
        timeout=settings.pool_timeout_s if wait else min(settings.pool_timeout_s, 1.0),
        name=name,
        open=False,
    )
    pool.max_reconnect_delay = settings.reconnect_max_delay_s
    pool.open(wait=wait, timeout=30)
    if not checked and wait:
        try:
            with pool.connection() as conn:
                check_login(conn, settings)
        except BaseException:
            pool.close()
            raise
    return pool


def outage(error: BaseException) -> Literal["busy", "unreachable"] | None:
    """How a database error reads to a caller: ``busy`` (a lock wait or a statement timed out,
    or a streaming replica cancelled a staff read that conflicted with what it was replaying:
    retry at once), ``unreachable`` (the server is down or the connection broke: retry later),
    or None (not an outage). The API answers both with 503 (service/api/problems.py). The
    service runs no serializable transactions, so a serialization failure is only ever the
    replica's cancellation."""
    if isinstance(
        error,
        psycopg.errors.LockNotAvailable
        | psycopg.errors.QueryCanceled
        | psycopg.errors.SerializationFailure,
    ):
        return "busy"
    if isinstance(error, psycopg.OperationalError):
        return "unreachable"
    return None
