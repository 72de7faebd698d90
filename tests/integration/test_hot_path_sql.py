"""A game command's write keeps its plans (migration 0026, issue 25): PostgreSQL parses and
plans a LANGUAGE sql function it cannot inline on every call, so the functions on the write
path are PL/pgSQL (plans kept for the session) or SQL that is inlined into its caller's plan.
And the chain's hash is still the one events.chain documents; and the write reads no more of
the log for a long game than for a short one (migration 0027)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from events.chain import GENESIS, event_hash
from service.bootstrap import Container
from service.core.streams import game_stream
from service.games import klondike
from service.rules.actions import Draw, Recycle
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


#: A long game's events (draws and recycles), and the short streams beside it that make the
#: planner expect a stream to be short, as a log of many finished games does.
LONG_GAME = 150
SHORT_STREAMS = 400


def test_a_command_write_reads_one_index_entry_a_lookup_however_long_the_game(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    """Migration 0027: the history row's time came from a join on the row's version, for
    which the session's generic plan, expecting a short stream, read every event of the game
    and filtered them (events_pkey read about as many entries a play as the game had events).
    Here the planner expects a stream of an event or two (ANALYZE over many short ones), the
    long game has 150, and one more command's write, planned generically (as a pooled
    session's statements are after their first five runs), may read only a handful of index
    entries."""
    world = World(fresh_container)
    player = world.player(balance=520)
    game = world.game(player, variant="klondike")
    game_id = uuid.UUID(game.state.game_id)
    ctx = as_player(player.player_id)
    loaded = game
    while loaded.state.version < LONG_GAME:
        assert loaded.state.table is not None
        stock_empty = not loaded.state.table.piles[klondike.S].cards
        loaded = fresh_container.games.play(ctx, game_id, Recycle() if stock_empty else Draw())
    conn = fresh_admin_conn
    for n in range(SHORT_STREAMS):
        conn.execute("SELECT FROM append_events(%s, 0, %s)", (f"test-short-{n}", _one_event()))
    conn.execute("ANALYZE events")
    stream = game_stream(game.state.game_id)
    row = conn.execute(
        "SELECT to_jsonb(h), version FROM game_history h WHERE game_id = %s", (game_id,)
    ).fetchone()
    assert row is not None
    history, version = row
    assert version >= LONG_GAME
    conn.execute("SET plan_cache_mode = force_generic_plan")
    reads = []
    for n in range(4):  # the plans made by the first writes; each counted alone
        with conn.transaction():
            before = _index_entries_read(conn)
            history["version"] = version + n + 1
            conn.execute(
                "SELECT FROM record_game_events(%s, %s, %s, %s, false, NULL, NULL)",
                (stream, version + n, _one_event(), Jsonb(history)),
            )
            reads.append(_index_entries_read(conn) - before)
    read = reads[-1]
    # The head's lookup, the first event's and the new version's: one entry each. A stream
    # scan reads the game's 150.
    assert read <= 6, f"events_pkey read {reads} entries for each command's write"


def _index_entries_read(conn: Conn) -> int:
    """Entries of events_pkey this transaction has read so far."""
    row = conn.execute(
        # idx_tup_read's counter, for this transaction (pg_stat_xact_user_tables has no index).
        "SELECT pg_stat_get_xact_tuples_returned('events_pkey'::regclass)"
    ).fetchone()
    assert row is not None
    return int(row[0])


def _one_event() -> str:
    """append_events' argument for one event of no game (this test's database is its own)."""
    return json.dumps([[str(uuid.uuid4()), "Noted", 1, "{}", "{}"]])


#: Stream ids and hashes near the edges of 0002's shapes: lengths, classes, case, whitespace.
NEAR_MISSES = [
    *("g" + "a" * n for n in (0, 98, 99, 100)),
    "game-1",
    "Game-1",
    "1game",
    "-game",
    "game_1",
    "game-1\n",
    " game",
    "",
    "gamé",
    *("a" * n for n in (63, 64, 65)),
    *("0123456789abcdef" * 4 + tail for tail in ("", "0", "\n")),
    "0123456789ABCDEF" * 4,
    "0123456789abcdeg" * 4,
    "é" * 32,
]


def test_the_log_s_shape_checks_keep_0002_s_rules(admin_conn: Conn) -> None:
    """0040's cheaper CHECKs on events (an unbounded class and a length) accept exactly what
    0002's bounded regexes accepted."""
    rows = admin_conn.execute(
        """
        SELECT s,
               s ~ '^[a-z][a-z0-9-]{0,99}$',
               char_length(s) <= 100 AND s ~ '^[a-z][a-z0-9-]*$',
               s ~ '^[0-9a-f]{64}$',
               octet_length(s) = 64 AND s ~ '^[0-9a-f]*$'
          FROM unnest(%s::text[]) AS s
        """,
        (NEAR_MISSES,),
    ).fetchall()
    for text, old_id, new_id, old_hash, new_hash in rows:
        assert (old_id, old_hash) == (new_id, new_hash), text
    assert any(r[1] for r in rows)  # an id's shape met somewhere
    assert any(r[3] for r in rows)  # and a hash's
    kept = {
        str(r[0])
        for r in admin_conn.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass"
            " AND contype = 'c' AND convalidated"
        ).fetchall()
    }
    assert {"events_stream_id_shape", "events_prev_hash_shape", "events_hash_shape"} <= kept
    assert not kept & {"events_stream_id_check", "events_prev_hash_check", "events_hash_check"}
