"""Finance through the real PostgreSQL: the checkpointed daily totals, the daily report, and the
reconciliation of the ledger against the game events."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg

from service import finance
from service import game as g
from service.wiring import Container
from tests.integration.conftest import OPERATOR, World, as_player


def _today() -> date:
    return datetime.now(UTC).date()


def _scenario(world: World) -> dict[str, str]:
    """Draw-1: one game collected with 3 cards (150), one voided; draw-3: one left open."""
    a = world.player(balance=10_000)
    won = world.easy_game(a)
    gid = uuid.UUID(won.state.game_id)
    for _ in range(3):
        world.c.games.play(as_player(a.player_id), gid, g.Draw())
        world.c.games.play(as_player(a.player_id), gid, g.MoveCards("waste", "foundation"))
    world.c.games.collect(as_player(a.player_id), gid)
    b = world.player(balance=10_000)
    voided = world.game(b, stake=1_040)
    world.c.games.void(OPERATOR, uuid.UUID(voided.state.game_id), "malfunction")
    c = world.player(balance=10_000)
    open_game = world.game(c, stake=2_080, variant="vegas-draw3")
    return {
        "won": won.state.game_id,
        "voided": voided.state.game_id,
        "open": open_game.state.game_id,
    }


def test_daily_totals_are_projected_once_however_often_the_projector_runs(
    fresh_container: Container,
) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        first = finance.catch_up(uow)
    with fresh_container.unit_of_work() as uow:
        again = finance.catch_up(uow)
    assert (first, again) == (5, 0)  # 3 stakes, 1 collect, 1 void; nothing new the 2nd time
    with fresh_container.unit_of_work() as uow:
        report = finance.daily_report(uow, _today(), _today(), "GBP")
    by_variant = {line.variant: line for line in report.lines}
    draw1, draw3 = by_variant["vegas-draw1"], by_variant["vegas-draw3"]
    assert (draw1.totals.games_started, draw1.totals.games_finished) == (2, 2)
    assert (draw1.totals.stakes, draw1.totals.payouts, draw1.totals.refunds) == (1_560, 150, 1_040)
    assert draw1.totals.ggr == 1_560 - 150 - 1_040
    assert draw1.totals.rtp == "0.2885"  # 150 / (1560 - 1040)
    assert draw1.held_at_end == 0
    assert (draw3.totals.games_started, draw3.totals.games_finished) == (1, 0)
    assert draw3.held_at_end == 2_080
    assert draw3.totals.rtp == "0.0000"
    assert report.lifetime.stakes == 3_640
    assert report.month_to_date.payouts == 150


def test_the_report_has_zero_rows_for_days_without_play(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        finance.catch_up(uow)
    start = _today() - timedelta(days=2)
    with fresh_container.unit_of_work() as uow:
        report = finance.daily_report(uow, start, _today(), "GBP")
    assert [(line.day, line.variant) for line in report.lines] == [
        (start + timedelta(days=d), v) for d in range(3) for v in ("vegas-draw1", "vegas-draw3")
    ]
    quiet = [line for line in report.lines if line.day < _today()]
    assert all(line.totals.stakes == 0 and line.held_at_end == 0 for line in quiet)
    assert all(line.totals.rtp is None for line in quiet)
    with fresh_container.unit_of_work() as uow:
        euros = finance.daily_report(uow, _today(), _today(), "EUR")
    assert all(line.totals.games_started == 0 for line in euros.lines)


def test_the_report_as_csv(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        finance.catch_up(uow)
    with fresh_container.unit_of_work() as uow:
        text = finance.report_csv(finance.daily_report(uow, _today(), _today(), "GBP"))
    lines = text.splitlines()
    assert lines[0].split(",") == [
        "day", "variant", "currency", "games_started", "games_finished", "stakes", "payouts",
        "refunds", "ggr", "rtp", "held_at_end",
    ]  # fmt: skip
    assert f"{_today().isoformat()},vegas-draw1,GBP,2,2,1560,150,1040,370,0.2885,0" in lines
    assert lines[-1].startswith("lifetime,all,GBP,3,2,3640,150,1040,2450")


def test_a_day_reconciles_when_the_ledger_matches_the_events(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        result = finance.reconcile(uow, _today())
    assert result["reconciled"] is True
    assert result["mismatches"] == []
    gbp = result["currencies"]["GBP"]
    assert gbp["events"] == gbp["ledger"] == {"stake": 3_640, "winnings": 150, "refund": 1_040}
    assert gbp["balanced"] is True


def test_reconciliation_lists_a_tampered_transaction_by_game(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    games = _scenario(World(fresh_container))
    with fresh_admin_conn.transaction():
        fresh_admin_conn.execute("SET LOCAL session_replication_role = replica")
        fresh_admin_conn.execute(
            "UPDATE ledger_transactions SET amount = 999"
            " WHERE cause_stream = %s AND kind = 'winnings'",
            (f"game-{games['won']}",),
        )
    with fresh_container.unit_of_work() as uow:
        result = finance.reconcile(uow, _today())
    assert result["reconciled"] is False
    assert result["mismatches"] == [
        {
            "game_id": games["won"],
            "event": f"game-{games['won']} v9",
            "check": "ledger-vs-events",
            "expected": "winnings 150 GBP",
            "found": "winnings 999 GBP",
        }
    ]
    assert result["currencies"]["GBP"]["balanced"] is False


def test_a_stored_reconciliation_is_read_back(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        stored = finance.store_reconciliation(uow, _today())
    with fresh_container.unit_of_work() as uow:
        found = finance.stored_reconciliation(uow, _today())
    assert found is not None
    assert found[1] == stored
