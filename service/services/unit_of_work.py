"""One database transaction with every store bound to it. It rolls back unless committed.

The hot path (a game command) reads outside any transaction and writes in one round trip:
``outside_transaction`` puts the connection in autocommit, so each read is one statement with no
BEGIN or COMMIT around it, and ``one_trip`` then sends every write and the COMMIT together as one
pipeline. ``snapshot`` instead runs the reads that follow in one REPEATABLE READ, READ ONLY
transaction, for a check that must see the database as of one moment. Leaving the unit of work
puts the connection back as the pool lent it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from events.postgres import LOCK_SQL, PostgresEventStore
from service.core.context import RequestContext
from service.storage.access import AccessStore
from service.storage.advantage import AdvantageReads
from service.storage.checkpoints import CheckpointStore
from service.storage.controls import ControlStore
from service.storage.duels import DuelStore
from service.storage.game_writes import GameWrites
from service.storage.horizon import HorizonReads
from service.storage.idempotency import IdempotencyStore
from service.storage.ledger import LedgerStore
from service.storage.limits import LimitStore
from service.storage.projections import ProjectionStore
from service.storage.recording import Recorder
from service.storage.seeds import SeedStore
from service.storage.significant import SignificantStore
from service.storage.wallet import WalletStore


class UnitOfWork:
    conn: psycopg.Connection[Any]
    events: PostgresEventStore
    ledger: LedgerStore
    projections: ProjectionStore
    seeds: SeedStore
    idempotency: IdempotencyStore
    access: AccessStore
    significant: SignificantStore
    duels: DuelStore
    checkpoints: CheckpointStore
    game_writes: GameWrites
    advantage: AdvantageReads
    limits: LimitStore
    controls: ControlStore
    recorder: Recorder
    horizon: HorizonReads
    wallet: WalletStore

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._lease: AbstractContextManager[psycopg.Connection[Any]] | None = None
        self._committed = False
        self._autocommit = False
        self._snapshot = False

    def __enter__(self) -> UnitOfWork:
        self._lease = self._pool.connection()
        self.conn = self._lease.__enter__()
        self.events = PostgresEventStore(self.conn)
        self.ledger = LedgerStore(self.conn)
        self.projections = ProjectionStore(self.conn)
        self.seeds = SeedStore(self.conn)
        self.idempotency = IdempotencyStore(self.conn)
        self.access = AccessStore(self.conn)
        self.significant = SignificantStore(self.conn)
        self.duels = DuelStore(self.conn)
        self.checkpoints = CheckpointStore(self.conn)
        self.game_writes = GameWrites(self.conn)
        self.advantage = AdvantageReads(self.conn)
        self.limits = LimitStore(self.conn)
        self.controls = ControlStore(self.conn)
        self.recorder = Recorder(self.conn)
        self.horizon = HorizonReads(self.conn)
        self.wallet = WalletStore(self.conn)
        return self

    def outside_transaction(self) -> None:
        """Run the reads that follow as single statements outside any transaction (no BEGIN,
        no COMMIT: one round trip each), until ``one_trip`` writes."""
        self.conn.autocommit = True
        self._autocommit = True

    def snapshot(self) -> None:
        """Run the reads that follow in one transaction that sees the database as of its first
        statement (REPEATABLE READ), so nothing committed between two of them shows in one and
        not the other. READ ONLY: it cannot write, and a transaction that only reads is never
        failed by a concurrent writer (no serialization failure), so whatever the caller writes
        goes in a unit of work of its own. Ends when the unit of work does; call it before any
        statement (psycopg refuses once a transaction is open)."""
        if self._autocommit:
            self.conn.autocommit = False
            self._autocommit = False
        self.conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        self.conn.read_only = True
        self._snapshot = True

    @contextmanager
    def one_trip(self) -> Iterator[None]:
        """Queue the writes issued inside and commit them, all sent and answered together: one
        round trip. Nothing may be fetched inside (a fetch would send what is queued and wait);
        read results after the block."""
        if self._autocommit:
            self.conn.autocommit = False
            self._autocommit = False
        with self.conn.pipeline():
            yield
            self.commit()

    def lock_for_write(self) -> None:
        """Take the writers' lock now, before the first write, so every transaction that takes
        it runs one at a time from here on: the ledger's balance rows and the projections it
        writes are then never contended and never deadlock. Those that move money or open
        accounts take it; a game command that moves no money writes only its own game's rows
        and takes none."""
        self.conn.execute(LOCK_SQL)

    def claim(self, request: RequestContext) -> dict[str, Any] | None:
        """With an idempotency key: None if this request is the first (the key is held until
        this transaction ends), else what the first one stored. KeyReused if the key was used
        for a different request."""
        if request.idempotency_key is None:
            return None
        return self.idempotency.claim(
            request.actor.id, request.idempotency_key, request.fingerprint
        )

    def stored_result(self, request: RequestContext) -> dict[str, Any] | None:
        """What a completed earlier attempt of this request stored, without claiming its key
        (a command in steps claims it in the step that completes it)."""
        if request.idempotency_key is None:
            return None
        return self.idempotency.find(request.actor.id, request.idempotency_key, request.fingerprint)

    def open_command(self, request: RequestContext) -> dict[str, Any] | None:
        """The opening of a command that writes under the log's lock: claim the request, then
        take the lock (claim first, so two retries of one request can never wait on each
        other in opposite orders). Returns what the first attempt stored when this is a retry
        (then nothing is locked and the caller answers it), else None."""
        stored = self.claim(request)
        if stored is None:
            self.lock_for_write()
        return stored

    def remember(self, request: RequestContext, result: dict[str, Any]) -> None:
        """Store what the request produced, for its retries; commits with everything else."""
        if request.idempotency_key is not None:
            self.idempotency.complete(request.actor.id, request.idempotency_key, result)

    def commit(self) -> None:
        self.conn.commit()
        self._committed = True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._lease is not None
        try:
            if not self._committed and not self.conn.closed:
                self.conn.rollback()  # a no-op, keeping prepared statements, if nothing began
            if self._autocommit and not self.conn.closed:
                self.conn.autocommit = False
            if self._snapshot and not self.conn.closed:  # the pool's next borrower begins plainly
                self.conn.isolation_level = None
                self.conn.read_only = None
        finally:
            self._lease.__exit__(exc_type, exc, tb)
