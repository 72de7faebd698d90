"""Projections rebuilt from the event log equal the live tables kept in the same transaction."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from click.testing import CliRunner

from service.bootstrap import Container
from service.core import game_decider as g
from service.services.rebuild import rebuild
from tests.integration.conftest import OPERATOR, World, as_player


def _scenario(world: World) -> None:
    """A little of everything: deposits, a withdrawal, games collected, voided and open."""
    a = world.player(balance=5_000)
    b = world.player(balance=3_000, currency="EUR")
    world.c.players.withdraw(OPERATOR, a.player_id, 100, f"wd-{uuid.uuid4()}")
    won = world.easy_game(a)
    me = as_player(a.player_id)
    gid = uuid.UUID(won.state.game_id)
    for _ in range(2):
        world.c.games.play(me, gid, g.Draw())
        world.c.games.play(me, gid, g.MoveCards("waste", "foundation"))
    world.c.games.collect(me, gid)
    voided = world.game(b, stake=1_040)
    world.c.games.void(OPERATOR, uuid.UUID(voided.state.game_id), "test void")
    world.game(a)  # left open


def test_rebuilding_from_the_log_reproduces_the_live_tables(container: Container) -> None:
    _scenario(World(container))
    with container.unit_of_work() as uow:
        report = rebuild(uow, apply=False)
    assert report.events > 0
    assert report.differences == ()


def test_rebuild_finds_and_repairs_a_damaged_projection(
    container: Container, admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(container)
    player = world.player(balance=1_000)
    loaded = world.game(player)
    admin_conn.execute(
        "UPDATE game_history SET foundation_count = 9 WHERE game_id = %s",
        (uuid.UUID(loaded.state.game_id),),
    )
    admin_conn.execute(
        "UPDATE account_balances SET balance = balance + 1 WHERE account_id = %s",
        (f"player:{player.player_id}",),
    )
    admin_conn.execute("DELETE FROM players WHERE player_id = %s", (player.player_id,))
    with container.unit_of_work() as uow:
        found = rebuild(uow, apply=False)
    assert {(d.table, d.key) for d in found.differences} == {
        ("game_history", loaded.state.game_id),
        ("account_balances", f"player:{player.player_id}"),
        ("players", str(player.player_id)),
    }
    with container.unit_of_work() as uow:
        repaired = rebuild(uow, apply=True)
    assert len(repaired.differences) == 3
    with container.unit_of_work() as uow:
        assert rebuild(uow, apply=False).differences == ()
    assert world.balance(player) == 480
    assert world.c.games.history(player.player_id)[0].foundation_count == 0


def test_the_rebuild_command_reports_no_differences(
    container: Container,
    database_url: str,
    migration_database_url: str,
    settings: Any,
    monkeypatch: Any,
) -> None:
    from service import create_app

    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("MIGRATION_DATABASE_URL", migration_database_url)
    monkeypatch.setenv("SEED_ENCRYPTION_KEYS", settings.seed_keys[0])
    monkeypatch.setenv("APP_ENV", "test")
    runner = CliRunner()
    app = create_app()
    result = runner.invoke(app.cli, ["projections", "rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "0 row(s) differ" in result.output
    upgrade = runner.invoke(app.cli, ["db", "upgrade"])
    assert upgrade.exit_code == 0, upgrade.output
    assert "up to date" in upgrade.output
