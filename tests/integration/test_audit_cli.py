"""`flask --app service audit run`: the same audit from the command line, on the workers or in
the command's own process, with the findings printed and the exit code telling."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from flask import Flask

from service.app import create_app
from service.bootstrap import Container
from service.core import game_decider as g
from service.rtp.experts import golf
from service.runtime.config import Settings
from tests.integration.conftest import World, as_player
from tests.workers import worker_environment


def _collected_game(world: World) -> tuple[uuid.UUID, uuid.UUID]:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    me = as_player(player.player_id)
    world.c.games.play(me, game_id, g.Draw())
    world.c.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    world.c.games.collect(me, game_id)
    return player.player_id, game_id


def _cli(container: Container) -> Flask:
    return create_app(container)


def test_the_command_runs_an_audit_on_the_workers(container: Container, worker: Settings) -> None:
    player_id, _ = _collected_game(World(container))
    result = (
        _cli(container)
        .test_cli_runner()
        .invoke(
            args=["audit", "run", "--player", str(player_id), "--by", "cli-test"],
            env=worker_environment(worker),
        )
    )
    assert result.exit_code == 0, result.output
    assert "done, 3 of 3 checked, 0 with findings" in result.output


def test_the_command_prints_the_findings_and_fails(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    _, game_id = _collected_game(World(fresh_container))
    stream = f"game-{game_id}"
    with fresh_admin_conn.transaction():
        fresh_admin_conn.execute("SET LOCAL session_replication_role = replica")
        fresh_admin_conn.execute(
            """UPDATE events SET metadata = jsonb_set(metadata, '{actor}', '"someone-else"') """
            "WHERE stream_id = %s AND version = 3",
            (stream,),
        )
    result = (
        _cli(fresh_container)
        .test_cli_runner()
        .invoke(args=["audit", "run", "--local"], env=worker_environment(fresh_container.settings))
    )
    assert result.exit_code == 1, result.output
    assert "1 with findings" in result.output
    assert f"{stream}\thash-chain\t{stream} v3" in result.output


def test_the_command_refuses_a_backwards_range(container: Container) -> None:
    result = (
        _cli(container)
        .test_cli_runner()
        .invoke(args=["audit", "run", "--from", "2026-02-01", "--to", "2026-01-01"])
    )
    assert result.exit_code == 2
    assert "--to is before --from" in result.output


def test_the_rtp_lab_runs_on_the_workers(container: Container, worker: Settings) -> None:
    result = (
        _cli(container)
        .test_cli_runner()
        .invoke(
            args=["rtp", "simulate", "--game", "golf", "--games", "12", "--chunk", "5"],
            env=worker_environment(worker),
        )
    )
    assert result.exit_code == 0, result.output
    assert "deals       12" in result.output


def test_the_strong_player_runs_on_the_workers_and_agrees_with_a_local_run(
    container: Container, worker: Settings
) -> None:
    """Strong play fans out in chunks like the bot's; the workers' answer is the local one
    (chunks are pure and seeded, so where a chunk runs, or how often, changes nothing)."""
    runner = _cli(container).test_cli_runner()
    args = ["rtp", "simulate", "--game", "golf", "--player", "strong", "--games", "6"]
    remote = runner.invoke(args=[*args, "--chunk", "2"], env=worker_environment(worker))
    local = runner.invoke(args=[*args, "--local"], env=worker_environment(worker))
    assert remote.exit_code == local.exit_code == 0, remote.output + local.output
    assert golf.STRONG_VERSION in remote.output
    figures = [line for line in remote.output.splitlines() if line.startswith(("mean", "RTP"))]
    assert figures == [
        line for line in local.output.splitlines() if line.startswith(("mean", "RTP"))
    ]
