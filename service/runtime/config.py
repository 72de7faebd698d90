"""Configuration, read once from the environment. The service reads os.environ only here,
except gunicorn's own configuration file (service/runtime/gunicorn_config.py: bind, workers,
threads, logging) and the supervisor's launcher (service/runtime/run.py), which pass the environment
on to the processes they start."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path

from service.core.duel_decider import (
    DuelPaytable,
    default_duel_paytables,
    duel_paytables_from_config,
)
from service.core.paytable import Paytable, default_paytables, paytables_from_config
from service.games import STANDALONE

PROJECT_ROOT = Path(__file__).resolve().parents[2]


#: The only settings that are not production; anything else, or nothing, is.
NOT_PRODUCTION = ("development", "test")


class ConfigError(Exception):
    """The configuration is unusable; the message says which setting and why."""


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


@dataclass(frozen=True)
class Settings:
    #: "development" or "test"; anything else (an unset APP_ENV included) is production.
    environment: str = "development"
    #: What the service connects as: a login role that is a member of vegas_app and nothing
    #: more. None: start the embedded PostgreSQL (pgserver) in data_dir, which sets up both roles.
    database_url: str | None = None
    #: What migrations connect as: the owner of the tables. None: database_url (so an existing
    #: set-up still migrates; in production the service then refuses to start as the owner).
    migration_database_url: str | None = None
    #: What the audit connects as (the worker's and the CLI's, never the web process's): a login
    #: role that is a member of vegas_audit and nothing more (migrations/0037). None with
    #: DATABASE_URL: this process runs no audit; without DATABASE_URL the embedded database's.
    audit_database_url: str | None = None
    #: What background work connects as (the worker's: idle collection, duel sweeps, the
    #: projector, checkpoints): a login that is a member of vegas_background and nothing more
    #: (migrations/0039: it alone signs checkpoints without a staff key). None with
    #: DATABASE_URL: this process does no background work.
    background_database_url: str | None = None
    data_dir: Path = PROJECT_ROOT / ".data"
    #: The group role every pooled connection switches to (SET ROLE): it may only read and
    #: append the history tables. Empty to work with the login role's own (inherited) grants.
    db_role: str = "vegas_app"
    pool_min_size: int = 1
    pool_max_size: int = 10
    #: How long a request waits for a connection before it is answered 503 (a database
    #: outage fails fast rather than hanging every request).
    pool_timeout_s: float = 5.0
    #: The longest pause between reconnection attempts once the database is gone, so the
    #: service is back within seconds of the database's return.
    reconnect_max_delay_s: float = 2.0
    #: How long a connect attempt may take before it counts as failed.
    connect_timeout_s: int = 3
    #: A streaming replica of the database, as the service logs in to it, for staff's
    #: read-only work (service/services/staff_reads.py). None: everything reads the primary.
    replica_database_url: str | None = None
    #: How long a staff read waits for the replica to replay what the primary had committed
    #: when the read began, before it reads the primary instead.
    replica_max_wait_ms: int = 500
    lock_timeout_ms: int = 5_000
    idle_in_transaction_timeout_ms: int = 30_000
    statement_timeout_ms: int = 30_000
    #: Fernet keys (urlsafe base64) for seeds at rest; the first encrypts, all decrypt.
    #: Empty: in embedded mode a key is generated into data_dir on first run.
    seed_keys: tuple[str, ...] = ()
    #: The Ed25519 private key (PEM) that signs checkpoints of the event log, kept outside the
    #: database. None: in development and test a key is generated into data_dir.
    anchor_key_file: Path | None = None
    #: Public keys (PEM bundle) of retired signing keys, so older checkpoints still verify.
    anchor_retired_keys_file: Path | None = None
    #: How often beat signs a checkpoint of the log, in seconds.
    checkpoint_every: float = 60.0
    #: A transaction held open this long, holding the log's horizon back, is a significant event
    #: (service/services/horizon.py); beat looks every ``horizon_check_every``.
    log_stall_after: float = 30.0
    horizon_check_every: float = 15.0
    #: How long a withdrawal waits for the audit's verification of the player's history since
    #: their last verified point (service/services/verification.py) before it is answered 503.
    withdrawal_verify_timeout: float = 20.0
    #: How often beat advances players' verified points, so a withdrawal re-verifies little.
    verify_players_every: float = 30.0
    #: How long a finance report waits for background work to fold the log into the finance
    #: projections up to the moment it was asked (migrations/0042) before it is answered 503.
    projection_catch_up_timeout: float = 20.0
    #: How long POST /v1/audits waits for the audit's worker to plan the audit, so its answer
    #: carries its total (planning is a few reads); then it answers with total 0 until planned.
    audit_plan_wait: float = 5.0
    certification_mode: bool = False
    idle_collect_after: timedelta = timedelta(hours=24)
    #: A player session lapses after this long without a request (GLI-19 s2.5.4: 30 minutes).
    session_idle: timedelta = timedelta(minutes=30)
    paytables: Mapping[str, Paytable] = field(default_factory=default_paytables)
    #: None: Celery uses kombu's filesystem transport in data_dir (no server to install).
    celery_broker_url: str | None = None
    celery_result_backend: str | None = None
    celery_queue: str = "vegas"
    #: A payout at or above this (minor units) goes to the significant-events log.
    big_win_threshold: int = 100_000
    #: How often beat runs the idle collector and the finance projector, in seconds.
    idle_check_every: float = 60.0
    projector_every: float = 30.0
    #: The longest any background task may run, in seconds (a stuck task is stopped).
    task_time_limit_s: int = 1_800
    #: How often beat sweeps duels (fill times, seats' clocks, settlements), in seconds.
    duel_sweep_every: float = 5.0
    #: How often beat runs the advantage-play watcher (service/services/advantage.py), in seconds.
    advantage_watch_every: float = 3_600.0
    duel_paytables: Mapping[str, DuelPaytable] = field(default_factory=default_duel_paytables)
    #: Whose wallet holds the players' money (issue 37): "transfer", the server's own (the
    #: operator deposits and withdraws), or "seamless", the operator's, called for each bet,
    #: win and rollback (service/services/seamless.py). One mode a deployment.
    wallet_mode: str = "transfer"
    #: The operator's wallet API (seamless): https in production.
    wallet_url: str | None = None
    #: The server's RSA private key (PEM) that signs every call to the operator's wallet.
    wallet_signing_key_file: Path | None = None
    #: The operator's RSA public keys (PEM) its answers are verified with: two during a rotation.
    wallet_operator_key_files: tuple[Path, ...] = ()
    #: How long one call waits for the operator's wallet.
    wallet_timeout_ms: int = 3_000
    #: The longest pause between two calls of a win or a rollback still unacknowledged.
    wallet_retry_max_seconds: float = 30.0
    #: A win or rollback unacknowledged this long is a significant event (each threshold once);
    #: after ``wallet_give_up_after`` it is left for review and retries stop.
    wallet_flag_after: tuple[timedelta, ...] = (timedelta(hours=1), timedelta(hours=24))
    wallet_give_up_after: timedelta = timedelta(hours=72)
    #: How often beat looks for wins and rollbacks due.
    wallet_sweep_every: float = 2.0
    #: Besides this host's loopback interface, the networks whose scrapes of GET /metrics need
    #: no staff key (the Prometheus server's address).
    metrics_allow_from: tuple[IPv4Network | IPv6Network, ...] = ()

    @property
    def is_production(self) -> bool:
        """Production unless explicitly development or test: a forgotten setting fails
        closed (no certification mode, no embedded database, no generated key)."""
        return self.environment not in NOT_PRODUCTION

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        environment = env.get("APP_ENV", "").strip() or "production"
        certification = _flag(env.get("CERTIFICATION_MODE"))
        if environment not in NOT_PRODUCTION:
            if certification:
                raise ConfigError(
                    "CERTIFICATION_MODE cannot be on in production (APP_ENV is not development "
                    "or test)"
                )
            # No embedded database, no generated key and no filesystem broker in production:
            # each must be given.
            for required in (
                "DATABASE_URL",
                "SEED_ENCRYPTION_KEYS",
                "CELERY_BROKER_URL",
                "ANCHOR_SIGNING_KEY_FILE",
            ):
                if not env.get(required):
                    raise ConfigError(
                        f"{required} is required in production (APP_ENV is not development or "
                        "test; set APP_ENV=development to run locally)"
                    )
        if env.get("MIGRATION_DATABASE_URL") and not env.get("DATABASE_URL"):
            raise ConfigError(
                "MIGRATION_DATABASE_URL needs DATABASE_URL (the service's own login); with "
                "neither, the embedded database sets up both roles"
            )
        paytables = default_paytables()
        if env.get("PAYTABLES_FILE"):
            try:
                entries = json.loads(Path(env["PAYTABLES_FILE"]).read_text())
                paytables = paytables_from_config(entries)
                for table in paytables.values():
                    unknown = sorted({g for g, _ in table.rates} - set(STANDALONE))
                    if unknown:
                        raise ValueError(f"paytable {table.id}: no game {', '.join(unknown)}")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"PAYTABLES_FILE: {exc}") from exc
        wallet_mode = env.get("WALLET_MODE", "").strip() or "transfer"
        if wallet_mode not in ("transfer", "seamless"):
            raise ConfigError(f"WALLET_MODE is transfer or seamless, not {wallet_mode!r}")
        wallet_url = env.get("WALLET_URL", "").strip() or None
        operator_keys = tuple(
            Path(f.strip()) for f in env.get("WALLET_OPERATOR_KEY_FILE", "").split(",") if f.strip()
        )
        if wallet_mode == "seamless":
            for required, given in (
                ("WALLET_URL", wallet_url),
                ("WALLET_SIGNING_KEY_FILE", env.get("WALLET_SIGNING_KEY_FILE")),
                ("WALLET_OPERATOR_KEY_FILE", operator_keys),
            ):
                if not given:
                    raise ConfigError(f"{required} is required with WALLET_MODE=seamless")
            assert wallet_url is not None
            if environment not in NOT_PRODUCTION and not wallet_url.startswith("https://"):
                raise ConfigError("WALLET_URL must be https in production")
            if len(operator_keys) > 2:
                raise ConfigError(
                    "WALLET_OPERATOR_KEY_FILE names one key, or two during a rotation"
                )
        duel_paytables = default_duel_paytables()
        if env.get("DUEL_PAYTABLES_FILE"):
            try:
                entries = json.loads(Path(env["DUEL_PAYTABLES_FILE"]).read_text())
                duel_paytables = duel_paytables_from_config(entries)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"DUEL_PAYTABLES_FILE: {exc}") from exc
        try:
            return cls(
                environment=environment,
                database_url=env.get("DATABASE_URL") or None,
                migration_database_url=env.get("MIGRATION_DATABASE_URL") or None,
                audit_database_url=env.get("AUDIT_DATABASE_URL") or None,
                background_database_url=env.get("BACKGROUND_DATABASE_URL") or None,
                data_dir=Path(env.get("DATA_DIR") or PROJECT_ROOT / ".data"),
                db_role=env.get("DB_ROLE", "vegas_app"),
                pool_min_size=int(env.get("DB_POOL_MIN", "1")),
                pool_max_size=int(env.get("DB_POOL_MAX", "10")),
                pool_timeout_s=float(env.get("DB_POOL_TIMEOUT_SECONDS", "5")),
                reconnect_max_delay_s=float(env.get("DB_RECONNECT_MAX_DELAY_SECONDS", "2")),
                connect_timeout_s=int(env.get("DB_CONNECT_TIMEOUT_SECONDS", "3")),
                lock_timeout_ms=int(env.get("DB_LOCK_TIMEOUT_MS", "5000")),
                idle_in_transaction_timeout_ms=int(env.get("DB_IDLE_TX_TIMEOUT_MS", "30000")),
                statement_timeout_ms=int(env.get("DB_STATEMENT_TIMEOUT_MS", "30000")),
                replica_database_url=env.get("REPLICA_DATABASE_URL") or None,
                replica_max_wait_ms=int(env.get("REPLICA_MAX_WAIT_MS", "500")),
                seed_keys=tuple(k for k in env.get("SEED_ENCRYPTION_KEYS", "").split(",") if k),
                anchor_key_file=_path(env.get("ANCHOR_SIGNING_KEY_FILE")),
                anchor_retired_keys_file=_path(env.get("ANCHOR_RETIRED_PUBLIC_KEYS_FILE")),
                checkpoint_every=float(env.get("CHECKPOINT_EVERY_SECONDS", "60")),
                log_stall_after=float(env.get("LOG_STALL_AFTER_SECONDS", "30")),
                horizon_check_every=float(env.get("HORIZON_CHECK_EVERY_SECONDS", "15")),
                withdrawal_verify_timeout=float(env.get("WITHDRAWAL_VERIFY_TIMEOUT_SECONDS", "20")),
                verify_players_every=float(env.get("VERIFY_PLAYERS_EVERY_SECONDS", "30")),
                projection_catch_up_timeout=float(
                    env.get("PROJECTION_CATCH_UP_TIMEOUT_SECONDS", "20")
                ),
                audit_plan_wait=float(env.get("AUDIT_PLAN_WAIT_SECONDS", "5")),
                certification_mode=certification,
                idle_collect_after=timedelta(
                    seconds=int(env.get("IDLE_COLLECT_AFTER_SECONDS", str(24 * 3600)))
                ),
                session_idle=timedelta(minutes=float(env.get("SESSION_IDLE_MINUTES", "30"))),
                paytables=paytables,
                celery_broker_url=env.get("CELERY_BROKER_URL") or None,
                celery_result_backend=env.get("CELERY_RESULT_BACKEND") or None,
                celery_queue=env.get("CELERY_QUEUE", "vegas"),
                big_win_threshold=int(env.get("BIG_WIN_THRESHOLD", "100000")),
                idle_check_every=float(env.get("IDLE_CHECK_EVERY_SECONDS", "60")),
                projector_every=float(env.get("PROJECTOR_EVERY_SECONDS", "30")),
                duel_sweep_every=float(env.get("DUEL_SWEEP_EVERY_SECONDS", "5")),
                advantage_watch_every=float(env.get("ADVANTAGE_WATCH_EVERY_SECONDS", "3600")),
                task_time_limit_s=int(env.get("TASK_TIME_LIMIT_SECONDS", "1800")),
                duel_paytables=duel_paytables,
                wallet_mode=wallet_mode,
                wallet_url=wallet_url,
                wallet_signing_key_file=_path(env.get("WALLET_SIGNING_KEY_FILE")),
                wallet_operator_key_files=operator_keys,
                wallet_timeout_ms=int(env.get("WALLET_TIMEOUT_MS", "3000")),
                wallet_retry_max_seconds=float(env.get("WALLET_RETRY_MAX_SECONDS", "30")),
                wallet_flag_after=tuple(
                    timedelta(seconds=float(s))
                    for s in env.get("WALLET_FLAG_AFTER_SECONDS", "3600,86400").split(",")
                    if s.strip()
                ),
                wallet_give_up_after=timedelta(
                    seconds=float(env.get("WALLET_GIVE_UP_AFTER_SECONDS", str(72 * 3600)))
                ),
                wallet_sweep_every=float(env.get("WALLET_SWEEP_EVERY_SECONDS", "2")),
                metrics_allow_from=tuple(
                    ip_network(n.strip())
                    for n in env.get("METRICS_ALLOW_FROM", "").split(",")
                    if n.strip()
                ),
            )
        except ValueError as exc:
            raise ConfigError(f"a numeric setting is not a number: {exc}") from exc
