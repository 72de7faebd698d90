"""A game command's write keeps its plans (migration 0026, issue 25): PostgreSQL parses and
plans a LANGUAGE sql function it cannot inline on every call, so the functions on the write
path are PL/pgSQL (plans kept for the session) or SQL that is inlined into its caller's plan.
And the chain's hash is still the one events.chain documents."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg

from events.chain import GENESIS, event_hash
from service.bootstrap import Container
from service.core.streams import game_stream
from service.rules.actions import Draw
from tests.integration.conftest import World, as_player

Conn = psycopg.Connection[tuple[Any, ...]]

HASH_ARGS = (
    GENESIS,
    "game-hot-path",
    7,
    uuid.UUID("5f1c2f8e-3b8f-4e2b-a1c9-0c2b8b7e9a11"),
    "CardDrawn",
    3,
    datetime(2026, 11, 27, 7, 38, 5, 123456, tzinfo=UTC),
    '{"cards":["9H","QC","6S"],"from":"stock","to":"waste"}',
    '{"actor":"x","note":"caf\\u00e9"}',
)
HASH_SQL = "SELECT event_hash(%s, %s, %s, %s, %s, %s, %s, %s, %s)"


def test_the_chain_hash_is_inlined_into_the_plan_that_calls_it(admin_conn: Conn) -> None:
    rows = admin_conn.execute("EXPLAIN (VERBOSE, COSTS OFF) " + HASH_SQL, HASH_ARGS).fetchall()
    plan = "\n".join(str(row[0]) for row in rows)
    assert "sha256" in plan  # the body, expanded in place
    assert "event_hash(" not in plan  # not a call, which would be parsed and planned each time


def test_the_database_hash_is_the_documented_one(admin_conn: Conn) -> None:
    row = admin_conn.execute(HASH_SQL, HASH_ARGS).fetchone()
    assert row is not None
    assert row[0] == event_hash(*HASH_ARGS)


def test_the_functions_a_command_writes_through_keep_their_plans(admin_conn: Conn) -> None:
    languages: dict[Any, Any] = dict(
        admin_conn.execute(
            """
            SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
             WHERE p.proname IN ('record_game_events', 'append_events', 'save_game_history')
            """
        ).fetchall()
    )
    assert languages == {
        "record_game_events": "plpgsql",
        "append_events": "plpgsql",
        "save_game_history": "plpgsql",
    }


def test_a_play_action_reads_the_limits_and_the_new_events_in_one_statement(
    world: World, container: Container
) -> None:
    """LimitStore.limits_and_stream answers what the two reads it replaces answer, with and
    without limits, with and without events after the version asked for."""
    player = world.player(balance=520)
    game = world.game(player)
    stream = game_stream(game.state.game_id)
    ctx = as_player(player.player_id)
    for _ in range(3):
        container.games.play(ctx, uuid.UUID(game.state.game_id), Draw())
    for limit_set in (False, True):
        if limit_set:
            container.safer.set_limit(ctx, player.player_id, "max-stake", 500)
            container.safer.set_limit(ctx, player.player_id, "session-time", 90)
        with container.unit_of_work() as uow:
            for after in (0, 2, 4, 99):
                limits, events = uow.limits.limits_and_stream(player.player_id, stream, after)
                assert events == uow.events.read_stream(stream, after_version=after)
                assert limits == uow.limits.limits(player.player_id)
                assert bool(limits) is limit_set
        assert [e.version for e in events] == []  # after 99: none
