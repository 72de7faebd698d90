"""The composition root: the one place that builds the database pool, the seed vault and the
services from the settings, and hands them to the HTTP app, the CLI and the tasks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from celery import Celery
from celery.result import AsyncResult
from psycopg_pool import ConnectionPool

from service.core import seamless as wire
from service.core.clock import system_clock
from service.core.wallet_verification import AnswerCheck
from service.gateways.operator_wallet import (
    OperatorWallet,
    load_private_key,
    load_public_key,
    verified,
)
from service.runtime import database as db
from service.runtime.config import ConfigError, Settings
from service.services.access import Access
from service.services.checkpoints import Anchors, load_keys
from service.services.compliance import Audits
from service.services.controls import Controls
from service.services.corrections import Corrections
from service.services.duels import Duels
from service.services.finance_reports import FinanceCatchUp, Reports
from service.services.games import Games
from service.services.operations import Operations
from service.services.players import Players
from service.services.safer_gambling import SaferGambling
from service.services.seamless import Seamless, Settled, WalletPolicy, WalletReviews
from service.services.seed_vault import SeedVault, embedded_key
from service.services.staff_reads import StaffReads
from service.services.unit_of_work import UnitOfWork
from service.services.verification import Verification, WithdrawalGate, verify_player
from service.worker.config import make_celery


@dataclass
class Container:
    settings: Settings
    database_url: str
    pool: ConnectionPool
    #: The streaming replica's pool (REPLICA_DATABASE_URL), for staff's reads; None without.
    replica_pool: ConnectionPool | None
    vault: SeedVault
    players: Players
    #: Operators' corrections of found forgeries, answering withdrawals' holds (0041).
    corrections: Corrections
    games: Games
    duels: Duels
    access: Access
    audits: Audits
    reports: Reports
    anchors: Anchors
    safer: SaferGambling
    controls: Controls
    celery: Celery
    #: The owner's one-connection pool, once a command that needs it (staff keys) has run.
    owner_pools: list[ConnectionPool]
    #: A unit of work as the owner (MIGRATION_DATABASE_URL): staff keys, and the event store's
    #: shape-only append, which the service's login may not call (migrations/0031).
    owner_unit_of_work: Callable[[], UnitOfWork]
    #: A unit of work as the audit's login (AUDIT_DATABASE_URL), opened on first use: the
    #: worker's and the CLI's audits, reconciliations and verified points (migrations/0037).
    #: ConfigError in a process that does not hold it (the web process never does).
    audit_unit_of_work: Callable[[], UnitOfWork]
    #: The audit pool, once opened.
    audit_pools: list[ConnectionPool]
    #: A unit of work as background work's login (BACKGROUND_DATABASE_URL): the finance
    #: projections (migrations/0042). ConfigError in a process that does not hold it.
    background_unit_of_work: Callable[[], UnitOfWork]
    #: Its pool, once opened (none in the worker, whose own pool it is).
    background_pools: list[ConnectionPool]
    #: Operators' work on seamless movements under review (409 wallet-mode in transfer mode).
    wallet_reviews: WalletReviews
    #: What an operator watches that lives in the database (GET /metrics).
    operations: Operations
    #: Seamless mode's calls to the operator's wallet (issue 37); None in transfer mode.
    seamless: Seamless | None = None
    #: Whether a kept wallet answer is the operator's (its keys, WALLET_OPERATOR_KEY_FILE), for
    #: the audit; None where they are not configured.
    answer_check: AnswerCheck | None = None

    def unit_of_work(self) -> UnitOfWork:
        return UnitOfWork(self.pool)

    def settle_wallet(
        self, only: Any = None, stopping: Callable[[], bool] = lambda: False
    ) -> list[Settled]:
        """Send the wins and rollbacks due to the operator's wallet (seamless mode; as
        background work's login: the worker's), each win once the audit has verified the
        player's history through its round."""
        if self.seamless is None:
            return []

        def verify(player_id: Any) -> bool:
            done = verify_player(
                self.audit_unit_of_work,
                player_id,
                self.settings.paytables,
                answer_check=self.answer_check,
            )
            return done.hold is None and not done.findings

        return self.seamless.settle_due(self.unit_of_work, verify, only=only, stopping=stopping)

    def queue_depth(self) -> int | None:
        """Tasks waiting in the workers' queue (None: the broker did not say in time)."""
        try:
            with self.celery.connection_for_read() as conn:
                conn.ensure_connection(max_retries=1, timeout=1)
                declared = conn.default_channel.queue_declare(
                    queue=self.settings.celery_queue, passive=True
                )
                return int(declared.message_count)
        except Exception:  # no broker, or no such queue yet: the scrape goes on without it
            return None

    def send_task(self, name: str, *args: Any) -> AsyncResult:
        """Queue background work by task name (service.worker.tasks) for the workers."""
        return self.celery.send_task(name, args=args, queue=self.settings.celery_queue)

    def close(self) -> None:
        self.pool.close()
        for owner in [*self.owner_pools, *self.audit_pools, *self.background_pools]:
            owner.close()
        if self.replica_pool is not None:
            self.replica_pool.close()


def build(
    settings: Settings | None = None,
    *,
    migrate: bool = True,
    audit_login: bool = True,
    background: bool = False,
    background_login: bool = True,
) -> Container:
    """The services for ``settings``. ``audit_login=False`` (the web process): this process
    never logs in as the audit, and a withdrawal asks the audit's worker to verify the player
    (service/services/verification.py). ``background=True`` (the worker): the services log in
    as the background work's login (BACKGROUND_DATABASE_URL, migrations/0039): the service's
    rights, and the only one that signs the log's checkpoints without a staff key and writes the
    finance projections (0042). ``background_login=False`` (the web process): this process never
    logs in as background work either, and a finance report asks the worker to fold the log
    first (service/services/finance_reports.py FinanceCatchUp)."""
    settings = settings or Settings.from_env()
    urls = db.database_urls(settings)
    if migrate:
        db.migrate(urls.migration)  # as the owner; the service never logs in as it
    if background:
        if urls.background is None:
            raise ConfigError(
                "background work runs as its own login: set BACKGROUND_DATABASE_URL to a login "
                f"that is a member of {db.BACKGROUND_GROUP} (README: Database roles)"
            )
        url = urls.background
        # No SET ROLE: the login's rights are both its groups' (vegas_app and vegas_background).
        pool = db.create_pool(url, settings, name="vegas-background", role="")
    else:
        url = urls.service
        pool = db.create_pool(url, settings)
    keys = settings.seed_keys or (embedded_key(settings.data_dir),)
    vault = SeedVault(keys)
    signer, anchor_keys = load_keys(settings)

    def unit_of_work() -> UnitOfWork:
        return UnitOfWork(pool)

    # The owner's login, for staff keys alone (migrations/0030), opened only if asked for.
    owner_pools: list[ConnectionPool] = []

    def owner_unit_of_work() -> UnitOfWork:
        if not owner_pools:
            owner_pools.append(db.owner_pool(urls.migration, settings))
        return UnitOfWork(owner_pools[0])

    # The audit's login, for the processes that hold it, opened only if asked for.
    audit_pools: list[ConnectionPool] = []
    audit_url = urls.audit if audit_login else None

    def audit_unit_of_work() -> UnitOfWork:
        if audit_url is None:
            raise ConfigError(
                "this work runs as the audit's login: set AUDIT_DATABASE_URL to a login that is "
                f"a member of {db.AUDIT_GROUP} (README: Database roles)"
            )
        if not audit_pools:
            role = db.AUDIT_GROUP if settings.db_role else ""
            audit_pools.append(db.create_pool(audit_url, settings, name="vegas-audit", role=role))
        return UnitOfWork(audit_pools[0])

    # Background work's login, for a process that holds it but serves with the service's (the
    # CLI, the tests): opened only if asked for. The worker's own pool is it already.
    background_pools: list[ConnectionPool] = []
    background_url = urls.background if background_login else None

    def background_unit_of_work() -> UnitOfWork:
        if background:
            return UnitOfWork(pool)
        if background_url is None:
            raise ConfigError(
                "this work runs as background work's login: set BACKGROUND_DATABASE_URL to a "
                f"login that is a member of {db.BACKGROUND_GROUP} (README: Database roles)"
            )
        if not background_pools:
            background_pools.append(
                db.create_pool(background_url, settings, name="vegas-background", role="")
            )
        return UnitOfWork(background_pools[0])

    celery = make_celery(settings)

    def send_task(name: str, *args: Any) -> AsyncResult:
        return celery.send_task(name, args=args, queue=settings.celery_queue)

    answer_check, seamless = _wallet(settings, lambda: send_task("vegas.settle_wallet"))
    _enter_wallet_mode(pool, settings.wallet_mode)

    def verify_here(player_id: Any) -> Verification:
        return verify_player(
            audit_unit_of_work, player_id, settings.paytables, answer_check=answer_check
        )

    # Staff's read-only work reads a streaming replica when one is configured and caught up.
    replica_pool = (
        db.create_pool(settings.replica_database_url, settings, name="vegas-replica", wait=False)
        if settings.replica_database_url
        else None
    )
    reads = StaffReads(
        unit_of_work,
        (lambda: UnitOfWork(replica_pool)) if replica_pool is not None else None,
        max_wait_s=settings.replica_max_wait_ms / 1000,
    )

    anchors = Anchors(unit_of_work, signer, anchor_keys, reads)
    safer = SaferGambling(
        unit_of_work,
        settings.paytables,
        clock=system_clock,
        deposit_limits=settings.wallet_mode == "transfer",
    )
    games = Games(
        unit_of_work,
        dict(settings.paytables),
        vault,
        safer,
        certification_mode=settings.certification_mode,
        big_win_threshold=settings.big_win_threshold,
        clock=system_clock,
        seamless=seamless,
    )
    return Container(
        settings=settings,
        database_url=url,
        pool=pool,
        replica_pool=replica_pool,
        vault=vault,
        players=Players(
            unit_of_work,
            dict(settings.paytables),
            safer,
            WithdrawalGate(
                unit_of_work,
                send_task,
                settings.withdrawal_verify_timeout,
                verify_here if audit_url is not None else None,
            ),
            seamless,
        ),
        corrections=Corrections(unit_of_work, dict(settings.paytables)),
        games=games,
        duels=Duels(
            unit_of_work,
            games,
            settings.duel_paytables,
            settings.paytables,
            vault,
            safer,
            certification_mode=settings.certification_mode,
            big_win_threshold=settings.big_win_threshold,
            clock=system_clock,
            seamless=seamless,
        ),
        access=Access(
            unit_of_work,
            owner_unit_of_work=owner_unit_of_work,
            session_idle=settings.session_idle,
            seamless=seamless,
        ),
        audits=Audits(unit_of_work, settings.paytables, send_task, reads, settings.audit_plan_wait),
        reports=Reports(
            settings.paytables,
            reads,
            FinanceCatchUp(
                unit_of_work,
                send_task,
                settings.projection_catch_up_timeout,
                background_unit_of_work if background or background_url is not None else None,
            ),
            settings.wallet_mode,
        ),
        anchors=anchors,
        safer=safer,
        controls=Controls(unit_of_work),
        celery=celery,
        owner_pools=owner_pools,
        owner_unit_of_work=owner_unit_of_work,
        audit_unit_of_work=audit_unit_of_work,
        audit_pools=audit_pools,
        background_unit_of_work=background_unit_of_work,
        background_pools=background_pools,
        seamless=seamless,
        wallet_reviews=WalletReviews(unit_of_work, seamless),
        operations=Operations(unit_of_work),
        answer_check=answer_check,
    )


def _wallet(
    settings: Settings, notify: Callable[[], object]
) -> tuple[AnswerCheck | None, Seamless | None]:
    """The operator's keys (for the audit, in any mode they are configured) and, in seamless
    mode, the wallet's client: ConfigError for a key that cannot be read or a configured
    currency the wire cannot carry exactly."""
    try:
        operator_keys = [
            load_public_key(p.read_bytes()) for p in settings.wallet_operator_key_files
        ]
        signing_key = (
            load_private_key(settings.wallet_signing_key_file.read_bytes())
            if settings.wallet_signing_key_file is not None
            else None
        )
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the wallet's keys (WALLET_*_KEY_FILE): {exc}") from exc

    def answer_check(body: bytes, signature: str | None) -> bool:
        return verified(operator_keys, body, signature)

    check = answer_check if operator_keys else None
    if settings.wallet_mode != "seamless":
        return check, None
    for currency in sorted({t.currency for t in settings.paytables.values()}):
        try:
            wire.exponent(currency)
        except wire.UnconvertibleCurrency as exc:
            raise ConfigError(f"WALLET_MODE=seamless cannot carry {currency}: {exc}") from exc
    assert settings.wallet_url is not None
    assert signing_key is not None
    client = OperatorWallet(
        settings.wallet_url, signing_key, operator_keys, settings.wallet_timeout_ms
    )
    policy = WalletPolicy(
        timeout_ms=settings.wallet_timeout_ms,
        retry_max_seconds=settings.wallet_retry_max_seconds,
        flag_after=settings.wallet_flag_after,
        give_up_after=settings.wallet_give_up_after,
    )
    return check, Seamless(client, policy, notify=notify)


def _enter_wallet_mode(pool: ConnectionPool, mode: str) -> None:
    """The database's wallet mode made the configured one (migrations/0044): refused, and the
    process not started, while anything of the other mode is left."""
    with UnitOfWork(pool) as uow:
        try:
            uow.wallet.switch_mode(mode)
        except psycopg.errors.ObjectNotInPrerequisiteState as exc:
            raise ConfigError(f"WALLET_MODE={mode}: {exc.diag.message_primary}") from exc
        except psycopg.errors.UndefinedFunction as exc:
            # A database before migrations/0044 knows the transfer mode only.
            if mode != "transfer":
                raise ConfigError(f"WALLET_MODE={mode} needs the database migrated (0044)") from exc
            return
        uow.commit()
