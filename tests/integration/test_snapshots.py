"""Snapshot rows (service/core/snapshots.py, migration 0014): every few versions a command writes
its game's folded state beside its events, so a process that has never seen the game reads that row
and the events after it, not the stream; and a row the service did not write is never read."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from events.postgres import PostgresEventStore
from service.core import game_decider as g
from service.core import snapshots
from service.core.streams import game_stream
from service.services.games import Games, LoadedGame
from tests.integration.conftest import World, as_player

DbConn = psycopg.Connection[tuple[Any, ...]]


def _fresh(world: World) -> Games:
    """The game service as another process has it: nothing cached."""
    c = world.c
    return Games(
        c.unit_of_work,
        dict(c.settings.paytables),
        c.vault,
        c.safer,
        certification_mode=c.settings.certification_mode,
    )


def _played(world: World, commands: int) -> LoadedGame:
    """A certification game (an easy deck) after ``commands`` draws and recycles."""
    player = world.player(balance=520)
    loaded = world.easy_game(player)
    game_id = uuid.UUID(loaded.state.game_id)
    for _ in range(commands):
        legal = g.legal_commands(loaded.state)
        command = next(c for c in legal if isinstance(c, g.Draw | g.Recycle))
        loaded = world.c.games.play(as_player(player.player_id), game_id, command)
    return loaded


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every stream read: (stream, the version read after)."""
    seen: list[tuple[str, int]] = []
    real = PostgresEventStore.read_stream

    def spy(self: PostgresEventStore, stream_id: str, **kw: Any) -> Any:
        seen.append((stream_id, kw.get("after_version", 0)))
        return real(self, stream_id, **kw)

    monkeypatch.setattr(PostgresEventStore, "read_stream", spy)
    return seen


def _snapshot_version(conn: DbConn, stream: str) -> int | None:
    row = conn.execute(
        "SELECT version FROM game_snapshots WHERE stream_id = %s", (stream,)
    ).fetchone()
    return None if row is None else int(row[0])


def test_a_command_writes_a_snapshot_every_few_versions(world: World, admin_conn: DbConn) -> None:
    loaded = _played(world, 2 * snapshots.EVERY)
    stream = game_stream(loaded.state.game_id)
    version = loaded.state.version
    assert _snapshot_version(admin_conn, stream) == version - version % snapshots.EVERY


def test_a_process_that_never_saw_the_game_reads_its_snapshot_and_what_follows(
    world: World, admin_conn: DbConn, reads: list[tuple[str, int]]
) -> None:
    loaded = _played(world, snapshots.EVERY + 3)
    stream = game_stream(loaded.state.game_id)
    snapshot = _snapshot_version(admin_conn, stream)
    assert snapshot is not None
    assert 0 < snapshot < loaded.state.version
    reads.clear()
    seen = _fresh(world).game(uuid.UUID(loaded.state.game_id))
    assert reads == [(stream, snapshot)]  # only the events after the snapshot
    assert seen == loaded


def test_a_snapshot_the_service_did_not_write_is_ignored(
    world: World, admin_conn: DbConn, reads: list[tuple[str, int]]
) -> None:
    loaded = _played(world, snapshots.EVERY)
    stream = game_stream(loaded.state.game_id)
    admin_conn.execute(
        "UPDATE game_snapshots SET state = replace(state, '\"units\":0', '\"units\":52')"
        " WHERE stream_id = %s",
        (stream,),
    )
    reads.clear()
    seen = _fresh(world).game(uuid.UUID(loaded.state.game_id))
    assert reads == [(stream, 0)]  # the whole stream, folded
    assert seen == loaded


def test_another_game_s_snapshot_is_ignored(
    world: World, admin_conn: DbConn, reads: list[tuple[str, int]]
) -> None:
    first = _played(world, snapshots.EVERY)
    second = _played(world, snapshots.EVERY)
    theirs, ours = game_stream(first.state.game_id), game_stream(second.state.game_id)
    admin_conn.execute(
        "UPDATE game_snapshots SET (version, state, mac) ="
        " (SELECT version, state, mac FROM game_snapshots WHERE stream_id = %s)"
        " WHERE stream_id = %s",
        (theirs, ours),
    )
    reads.clear()
    seen = _fresh(world).game(uuid.UUID(second.state.game_id))
    assert reads == [(ours, 0)]
    assert seen == second
