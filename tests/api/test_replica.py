"""Staff's read-only work on a streaming replica (REPLICA_DATABASE_URL;
service/services/staff_reads.py), over HTTP: a primary and its replica of the test's own
(pgserver's binaries, streaming replication over their sockets), the service on both.

Auditors' replays, checkpoints, audits' status and significant events, and finance's daily
report and reconciliation read the replica once it has replayed what the primary had committed
when the read began; a replica further behind than REPLICA_MAX_WAIT_MS, or down, is passed over
for the primary, so no answer is ever older than the primary's."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet

from service.app import create_app
from service.bootstrap import Container, build
from service.runtime.config import Settings
from service.runtime.database import outage, with_user
from tests.api.client import Http
from tests.api.factories import Calls, GameFactory
from tests.builders import easy_deck
from tests.dbtools import SERVICE_ROLE, ScratchDatabase, split_database
from tests.postgres_servers import LocalServer, init_cluster, shared_folder
from tests.workers import with_broker

READS = "service.services.staff_reads"


@dataclass
class Replicated:
    primary: LocalServer
    replica: LocalServer
    database: ScratchDatabase
    container: Container
    http: Http

    def on_replica(self, statement: str) -> Any:
        """A statement as the replica's superuser (pausing and resuming its replay)."""
        url = self.replica.url(self.database.name)
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(statement).fetchone()
        return None if row is None else row[0]


@pytest.fixture(scope="module")
def replicated(data_dir: Path) -> Iterator[Replicated]:
    folder = shared_folder(Path(tempfile.mkdtemp(prefix="vegas-replica-")))
    primary = LocalServer(folder / "primary")
    replica: LocalServer | None = None
    try:
        init_cluster(primary.pgdata)
        primary.start()
        with split_database(primary.url()) as database:
            replica = primary.replica(folder / "replica")
            replica.start()
            settings = replace(
                with_broker(Settings(), data_dir),
                environment="test",
                database_url=database.service_url,
                migration_database_url=database.owner_url,
                # a report's catch-up is background work's (migrations/0042)
                background_database_url=database.background_url,
                audit_database_url=database.audit_url,
                replica_database_url=with_user(replica.url(database.name), SERVICE_ROLE),
                replica_max_wait_ms=300,
                seed_keys=(Fernet.generate_key().decode(),),
                certification_mode=True,
            )
            container = build(settings, migrate=False)
            try:
                app = create_app(container)
                keys = {
                    role: container.access.create_key(f"replica-{role}", role)
                    for role in ("operator", "auditor", "finance")
                }
                http = Http(app.test_client(), keys["operator"], keys["auditor"], keys["finance"])
                Calls.http = http
                yield Replicated(primary, replica, database, container, http)
            finally:
                Calls.http = None
                container.close()
    finally:
        for server in (replica, primary):
            if server is not None and server.running():
                server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _finished_game(http: Http) -> str:
    """A certification game dealt and collected at once."""
    game = GameFactory.create(deck=list(easy_deck()))
    collected = http.post(f"/v1/games/{game.id}/collect", game.player.token)
    assert collected.status_code == 200, collected.get_json()
    return game.id


def _reads(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == READS]


def _staff_reads(replicated: Replicated, game_id: str) -> list[int]:
    """The staff routes that read the replica, each asked once: their statuses."""
    http = replicated.http
    today = datetime.now(UTC).date().isoformat()
    return [
        http.get(f"/v1/games/{game_id}/replay", http.auditor_key).status_code,
        http.get("/v1/checkpoints", http.auditor_key).status_code,
        http.get("/v1/significant-events", http.auditor_key).status_code,
        http.get(
            f"/v1/reports/daily?from={today}&to={today}&currency=GBP", http.finance_key
        ).status_code,
        http.get(f"/v1/reconciliation?date={today}", http.finance_key).status_code,
    ]


def test_staff_reads_go_to_the_replica_once_it_holds_what_the_primary_had(
    replicated: Replicated, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=READS)
    game_id = _finished_game(replicated.http)  # just committed on the primary
    assert _staff_reads(replicated, game_id) == [200] * 5
    reads = _reads(caplog)
    assert len(reads) == 5, reads
    assert all(r.startswith("reading the replica") for r in reads), reads
    # A player's own replay is not staff's work: it reads the primary.
    caplog.clear()
    http = replicated.http
    game = GameFactory.create(deck=list(easy_deck()))
    http.post(f"/v1/games/{game.id}/collect", game.player.token)
    assert http.get(f"/v1/games/{game.id}/replay", game.player.token).status_code == 200
    assert _reads(caplog) == []


def test_a_replica_behind_the_primary_is_passed_over_and_nothing_older_is_read(
    replicated: Replicated, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=READS)
    http = replicated.http
    replicated.on_replica("SELECT pg_wal_replay_pause()")
    try:
        game_id = _finished_game(http)  # on the primary only: the replica is not replaying
        replay = http.get(f"/v1/games/{game_id}/replay", http.auditor_key)
        assert replay.status_code == 200, replay.get_json()
        assert replay.get_json()["game_id"] == game_id
        taken = http.post("/v1/checkpoints", http.auditor_key)
        assert taken.status_code in (200, 201), taken.get_json()
        newest = http.get("/v1/checkpoints?limit=1", http.auditor_key).get_json()
        assert newest["items"][0]["seq"] == taken.get_json()["seq"]
        reads = _reads(caplog)
        assert reads, "no staff read"
        assert all("reading the primary" in r for r in reads), reads
    finally:
        replicated.on_replica("SELECT pg_wal_replay_resume()")
    caplog.clear()
    assert http.get(f"/v1/games/{game_id}/replay", http.auditor_key).status_code == 200
    assert _reads(caplog)[-1].startswith("reading the replica")


def test_a_replica_that_is_down_is_passed_over(
    replicated: Replicated, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=READS)
    http = replicated.http
    game_id = _finished_game(http)
    replicated.replica.stop()
    try:
        assert _staff_reads(replicated, game_id) == [200] * 5
        reads = _reads(caplog)
        assert len(reads) == 5, reads
        assert all("reading the primary" in r for r in reads), reads
    finally:
        replicated.replica.start()


def test_a_read_the_replica_cancels_is_an_outage_to_retry_not_a_bug() -> None:
    # A hot standby cancels a query that conflicts with what it replays (SQLSTATE 40001): the
    # API answers 503 with Retry-After, as for a lock timeout, never 500.
    conflict = psycopg.errors.SerializationFailure(
        "canceling statement due to conflict with recovery"
    )
    assert outage(conflict) == "busy"
    assert outage(psycopg.errors.QueryCanceled()) == "busy"
    assert outage(psycopg.errors.UniqueViolation()) is None
