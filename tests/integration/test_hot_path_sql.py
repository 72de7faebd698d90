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
