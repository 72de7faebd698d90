"""The benchmarks' history loader (tests/benchmarks/history.py) writes a history the service
cannot tell from its own: a small one, loaded into a database of its own, passes every check
the service makes of a real one."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from service.bootstrap import Container
from service.core import game_decider as g
from service.core.streams import game_stream
from service.games import STANDALONE
from service.services import finance_books as finance
from service.services import history_audits as audit
from service.services.games import decode_records
from service.services.rebuild import rebuild
from tests.benchmarks.history import load_for
from tests.credentials import sign_checkpoint
from tests.dbtools import ScratchDatabase
from tests.integration.conftest import World, as_player

EVENTS = 3_000


def _load(container: Container, database: ScratchDatabase) -> None:
    report = load_for(container, database.admin_url, EVENTS, templates_per_game=2, seed=25)
    assert report.events >= EVENTS * 0.9
    assert report.duels >= 1
    assert report.checkpoints >= 2


def test_a_loaded_history_passes_every_check_of_the_service(
    fresh_container: Container, fresh_database: ScratchDatabase
) -> None:
    container = fresh_container
    _load(container, fresh_database)

    with psycopg.connect(fresh_database.admin_url) as conn:
        variants = {r[0] for r in conn.execute("SELECT DISTINCT variant FROM game_history")}
        days = [r[0] for r in conn.execute("SELECT DISTINCT day FROM daily_totals ORDER BY 1")]
        books = conn.execute(
            "SELECT a.currency, sum(p.amount) FROM postings p JOIN accounts a USING (account_id)"
            " GROUP BY 1"
        ).fetchall()
        snapshotted = [
            uuid.UUID(r[0].removeprefix("game-"))
            for r in conn.execute("SELECT stream_id FROM game_snapshots ORDER BY stream_id")
        ]
    assert variants == set(STANDALONE)  # every game a player deals alone
    assert books
    assert all(total == 0 for _, total in books)  # the ledger sums to zero in each currency

    # The whole-history audit: every game and duel replayed and verified, every player stream,
    # the ledger, and the log against its signed checkpoints (causes, read models, back-dating).
    with container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "test")
    for units in chunks:
        audit.check_chunk(
            container.audit_unit_of_work,
            audit_id,
            units,
            container.settings.paytables,
            container.anchors.findings,
        )
    result = container.audits.audit(audit_id)
    assert result.findings == ()
    assert result.status == "done"
    assert result.checked == result.total
    assert any(u.startswith("duel-") for chunk in chunks for u in chunk)

    # Every read model is what the log says (players, history, balances, duels).
    with container.unit_of_work() as uow:
        assert rebuild(uow, apply=False).differences == ()

    # A snapshot loads as the fold of its stream.
    assert snapshotted
    for game_id in snapshotted[:20]:
        loaded = container.games.game(game_id)
        with container.unit_of_work() as uow:
            records = uow.events.read_stream(game_stream(game_id))
        assert loaded.state == g.fold(decode_records(records))

    # Each day reconciles, and the daily totals are what the projector folds from the log.
    for day in days:
        with container.unit_of_work() as uow:
            reconciled = finance.reconcile(uow, day)
        assert reconciled["mismatches"] == []
        assert reconciled["events_checked"] > 0
    with container.background_unit_of_work() as uow:  # the projector's login writes them
        loaded_totals = _totals(uow.conn)
        assert all(loaded_totals)  # games, their lifetime, deposits and withdrawals, depositors
        for table in ("daily_totals", "daily_cashier", "daily_depositors"):
            uow.conn.execute(f"DELETE FROM {table}")
        uow.conn.execute(
            "DELETE FROM projection_checkpoints WHERE name IN ('daily-totals', 'daily-cashier')"
        )
        uow.commit()
    with container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    with container.unit_of_work() as uow:
        assert _totals(uow.conn) == loaded_totals

    # The service writes on from the loaded history: money, a game, a checkpoint.
    player = World(container).player(balance=10_000)
    me = as_player(player.player_id)
    game = container.games.start(me, player.player_id, "golf", 520)
    container.games.collect(me, uuid.UUID(game.state.game_id))
    _, made = sign_checkpoint(container, "test")
    assert made
    with container.unit_of_work() as uow:
        assert container.anchors.findings(uow) == []


def _totals(conn: psycopg.Connection[Any]) -> list[list[tuple[Any, ...]]]:
    """The finance projector's tables: the games' daily totals and their lifetime sums, the
    cashier's by day, and who deposited each day."""
    return [
        [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()]
        for table in ("daily_totals", "lifetime_totals", "daily_cashier", "daily_depositors")
    ]
