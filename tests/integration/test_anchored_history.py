"""Anchored history against the real PostgreSQL: signed checkpoints of the whole log, and the
tampering the per-stream hash chain alone cannot show (a stream deleted whole, a tail cut off,
a stream rewritten and re-hashed by the owner), each found by the audit and named."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from events.anchor import Checkpoint
from events.chain import event_hash
from events.json_text import canonical_json
from service.bootstrap import Container
from service.core import game_decider as g
from service.services import history_audits as audit
from tests.credentials import sign_checkpoint
from tests.integration.conftest import World, as_player
from tests.integration.test_audit import _history, _run, _tamper


def _checks(result: audit.AuditStatus) -> set[tuple[str, str]]:
    return {(f.check, f.location) for f in result.findings}


def _log_findings(result: audit.AuditStatus) -> set[str]:
    return {f.check for f in result.findings if f.unit == audit.LOG_UNIT}


def test_checkpoints_chain_and_sign_only_what_is_new(fresh_container: Container) -> None:
    history = _history(World(fresh_container))
    first, made = sign_checkpoint(fresh_container, "test")
    assert (first.seq, made) == (1, True)
    again, made = sign_checkpoint(fresh_container, "test")
    assert (again, made) == (first, False)  # nothing appended since: the same one

    player = history["a"]
    game_id = _open_game(fresh_container, player.player_id)  # it takes one more move
    fresh_container.games.play(as_player(player.player_id), game_id, g.Draw())
    second, made = sign_checkpoint(fresh_container, "test")
    assert (second.seq, made) == (2, True)

    one, two = Checkpoint.from_message(first.message), Checkpoint.from_message(second.message)
    assert (two.previous_position, two.previous_log_hash) == (one.position, one.log_hash)
    assert two.events == one.events + 1
    assert two.streams == 1  # only the game that moved
    with fresh_container.unit_of_work() as uow:
        assert uow.checkpoints.heads()[2] == [(f"game-{game_id}", 3, _head_hash(uow, game_id))]
    assert _run(fresh_container, audit.Scope("all")).findings == ()


def _head_hash(uow: Any, game_id: uuid.UUID) -> str:
    return str(uow.events.read_stream(f"game-{game_id}")[-1].hash)


def test_a_whole_stream_deleted_is_found_and_named(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    history = _history(World(fresh_container))
    sign_checkpoint(fresh_container, "test")
    stream = f"game-{history['seeded']}"
    _tamper(fresh_admin_conn, "DELETE FROM events WHERE stream_id = %s", stream)

    result = _run(fresh_container, audit.Scope("all"))
    assert ("stream-deleted", stream) in _checks(result)
    assert {"log-hash", "stream-deleted", "ledger-cause", "projection-stream"} <= (
        _log_findings(result)
    )
    assert ("projection-stream", stream) in _checks(result)


def test_a_stream_tail_cut_off_is_found_and_named(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    """The open game's last move leaves no posting behind, so without the checkpoint nothing
    would show it was there: the chain of what is left is whole."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    game = world.game(player)
    game_id = uuid.UUID(game.state.game_id)
    for _ in range(3):
        world.c.games.play(as_player(player.player_id), game_id, g.Draw())
    sign_checkpoint(fresh_container, "test")
    stream = f"game-{game_id}"
    _tamper(fresh_admin_conn, "DELETE FROM events WHERE stream_id = %s AND version > 3", stream)
    _tamper(fresh_admin_conn, "UPDATE game_history SET version = 3 WHERE game_id = %s", game_id)

    result = _run(fresh_container, audit.Scope("all"))
    assert ("stream-truncated", stream) in _checks(result)
    truncated = next(f for f in result.findings if f.check == "stream-truncated")
    assert truncated.found == "ends at v3"
    # The cut took the log's last events: the signed checkpoint now lies beyond its end too.
    assert _log_findings(result) == {"log-hash", "stream-truncated", "checkpoint-beyond-log"}


def test_a_stream_rewritten_and_rehashed_by_the_owner_is_found_and_named(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    """Rewrite who asked for every event of a finished game and re-hash its whole chain: the
    game still verifies on its own; only the signed checkpoint shows it."""
    history = _history(World(fresh_container))
    sign_checkpoint(fresh_container, "test")
    stream = f"game-{history['won']}"
    _rewrite_and_rehash(fresh_admin_conn, stream)
    with fresh_container.unit_of_work() as uow:
        records = uow.events.read_stream(stream)
        assert audit.check_unit(uow, stream, fresh_container.settings.paytables, _none) == []

    result = _run(fresh_container, audit.Scope("all"))
    assert ("stream-rewritten", f"{stream} v{len(records)}") in _checks(result)
    assert _log_findings(result) == {"log-hash", "stream-rewritten"}
    # The game's own unit still passes: the chain was re-hashed consistently.
    assert stream not in {f.unit for f in result.findings}


def _none(uow: Any) -> list[Any]:
    return []


def _rewrite_and_rehash(admin: psycopg.Connection[Any], stream: str) -> None:
    rows = admin.execute(
        "SELECT version, event_id, type, schema_version, recorded_at, data, metadata "
        "FROM events WHERE stream_id = %s ORDER BY version",
        (stream,),
    ).fetchall()
    prev = "0" * 64
    with admin.transaction():
        admin.execute("SET LOCAL session_replication_role = replica")
        for version, event_id, type_, schema, at, data, metadata in rows:
            metadata = {**metadata, "rewritten": True}
            new_hash = event_hash(
                prev,
                stream,
                version,
                event_id,
                type_,
                schema,
                at,
                canonical_json(data),
                canonical_json(metadata),
            )
            admin.execute(
                "UPDATE events SET metadata = %s::jsonb, prev_hash = %s, hash = %s "
                "WHERE stream_id = %s AND version = %s",
                (canonical_json(metadata), prev, new_hash, stream, version),
            )
            prev = new_hash


def test_a_deleted_or_forged_checkpoint_is_found(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    history = _history(world)
    sign_checkpoint(fresh_container, "test")
    player = history["b"]
    a = history["a"].player_id
    world.c.games.collect(as_player(a), _open_game(fresh_container, a))
    sign_checkpoint(fresh_container, "test")
    world.game(player)
    sign_checkpoint(fresh_container, "test")
    _tamper(fresh_admin_conn, "DELETE FROM checkpoint_heads WHERE seq = 2")
    _tamper(fresh_admin_conn, "DELETE FROM log_checkpoints WHERE seq = 2")
    _tamper(
        fresh_admin_conn,
        "UPDATE log_checkpoints SET message = replace(message, '\"events\":', '\"events\":1') "
        "WHERE seq = 3",
    )
    result = _run(fresh_container, audit.Scope("all"))
    assert ("checkpoint-missing", "checkpoint 2") in _checks(result)
    assert ("checkpoint-signature", "checkpoint 3") in _checks(result)


def _open_game(container: Container, player_id: uuid.UUID) -> uuid.UUID:
    with container.unit_of_work() as uow:
        row = uow.projections.open_game(player_id)
    assert row is not None
    return row.game_id


def test_an_exported_checkpoint_checks_the_live_log(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    anchors = fresh_container.anchors
    history = _history(World(fresh_container))
    stored, _ = sign_checkpoint(fresh_container, "test")
    document = anchors.exported(stored.seq)
    assert anchors.check_document(document).verified

    forged = {**document, "checkpoint": {**document["checkpoint"], "events": 1}}
    checked = anchors.check_document(forged)
    assert (checked.verified, [f.check for f in checked.findings]) == (
        False,
        ["checkpoint-signature"],
    )

    # The owner deletes a stream and every checkpoint: the copy kept elsewhere still shows it.
    _tamper(fresh_admin_conn, "DELETE FROM events WHERE stream_id = %s", f"game-{history['won']}")
    _tamper(fresh_admin_conn, "DELETE FROM checkpoint_heads")
    _tamper(fresh_admin_conn, "DELETE FROM log_checkpoints")
    checked = anchors.check_document(document)
    assert not checked.verified
    assert [f.check for f in checked.findings] == [
        "log-hash",
        "checkpoint-heads",
        "checkpoint-stored",
    ]
