"""Games idle longer than the configured time are collected once, with what they hold."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet

from service.bootstrap import Container
from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import winnings
from service.games.golf import GOLF
from service.services.idle import collect_idle
from service.services.seed_vault import SeedVault, rotate_keys
from tests.integration.conftest import World, as_player

DAY = timedelta(hours=24)
GOLF_SEED = bytes([2]) * 32  # its golf deal has a column card to play at once, and more


def _age(admin: psycopg.Connection[Any], game_id: str, hours: float) -> None:
    """The game as the collector's scan sees it after ``hours`` idle, and the database's clock
    that many hours on (tests/dbtools.py), so the database's own rule, idle past the collection
    policy by its events' times (migrations/0031), agrees."""
    admin.execute(
        "UPDATE game_history SET last_event_at = statement_timestamp() - %s WHERE game_id = %s",
        (timedelta(hours=hours), uuid.UUID(game_id)),
    )
    admin.execute("UPDATE test_clock SET ahead = greatest(ahead, %s)", (timedelta(hours=hours),))


def _count(admin: psycopg.Connection[Any], sql: str, *params: object) -> int:
    row = admin.execute(sql, params).fetchone()
    assert row is not None
    return int(row[0])


def test_a_game_idle_past_the_limit_is_collected_with_its_winnings(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    player = world.player(balance=520)
    game_id = world.easy_game(player).state.game_id
    me = as_player(player.player_id)
    for _ in range(2):  # two aces up: 100 held
        world.c.games.play(me, uuid.UUID(game_id), g.Draw())
        world.c.games.play(me, uuid.UUID(game_id), g.MoveCards("waste", "foundation"))
    fresh = world.easy_game(world.player(balance=520)).state.game_id

    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == []  # nothing idle yet
    _age(fresh_admin_conn, game_id, 25)
    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == [uuid.UUID(game_id)]
    done = world.c.games.game(uuid.UUID(game_id)).state
    assert (done.status, done.end_reason, done.payout) == ("collected", "timeout", 100)
    assert world.sandbox_balance(player) == 100 - 520  # a certification game's money
    assert world.c.games.game(uuid.UUID(fresh)).state.status == "in_progress"


def test_two_collectors_at_once_collect_exactly_once(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    players = [world.player(balance=520) for _ in range(4)]
    games = []
    for p in players:
        game_id = world.easy_game(p).state.game_id
        world.c.games.play(as_player(p.player_id), uuid.UUID(game_id), g.Draw())
        world.c.games.play(
            as_player(p.player_id), uuid.UUID(game_id), g.MoveCards("waste", "foundation")
        )
        _age(fresh_admin_conn, game_id, 30)
        games.append(game_id)
    barrier = threading.Barrier(2)
    results: list[list[uuid.UUID]] = []

    def run() -> None:
        barrier.wait()
        results.append(collect_idle(world.c.games, world.c.unit_of_work, DAY))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    collected = sorted(str(x) for r in results for x in r)
    assert collected == sorted(games)  # each game by exactly one of the two
    for game_id in games:
        stream = f"game-{game_id}"
        assert (
            _count(
                fresh_admin_conn,
                "SELECT count(*) FROM events WHERE stream_id = %s AND type = 'Collected'",
                stream,
            )
            == 1
        )
        assert (
            _count(
                fresh_admin_conn,
                "SELECT count(*) FROM ledger_transactions"
                " WHERE cause_stream = %s AND kind = 'winnings'",
                stream,
            )
            == 1
        )
    assert [world.sandbox_balance(p) for p in players] == [50 - 520] * 4  # certification games


def test_a_game_played_since_the_scan_is_left_alone(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any], monkeypatch: Any
) -> None:
    world = World(fresh_container)
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    _age(fresh_admin_conn, str(game_id), 30)
    from service.services import idle

    real = idle.idle_games

    def scan_then_player_moves(*args: Any, **kwargs: Any) -> list[tuple[uuid.UUID, int]]:
        found = real(*args, **kwargs)
        world.c.games.play(as_player(player.player_id), game_id, g.Draw())  # just in time
        return found

    monkeypatch.setattr(idle, "idle_games", scan_then_player_moves)
    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == []
    assert world.c.games.game(game_id).state.status == "in_progress"


def test_an_idle_golf_game_is_collected_with_the_cards_it_cleared(
    fresh_container: Container,
    fresh_admin_conn: psycopg.Connection[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Golf with a deal whose first plays clear column cards: collected by timeout, paid
    floor(cleared x stake x M / 35)."""
    monkeypatch.setattr(shuffle, "new_server_seed", lambda: GOLF_SEED)
    world = World(fresh_container)
    player = world.player(balance=1_040)
    game_id = uuid.UUID(world.game(player, stake=1_040, variant="golf").state.game_id)
    me = as_player(player.player_id)
    for _ in range(3):
        state = world.c.games.game(game_id).state
        move = next(c for c in g.legal_commands(state) if isinstance(c, g.MoveCards))
        world.c.games.play(me, game_id, move)
    held = world.c.games.game(game_id).state
    assert held.units == 3
    owed = winnings(3, 1_040, GOLF.multiplier, GOLF.max_units)
    assert held.winnings == owed == 104  # 3 x 1040 x 1.17 / 35 = 104.29, rounded down

    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == []
    _age(fresh_admin_conn, str(game_id), 25)
    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == [game_id]
    done = world.c.games.game(game_id).state
    assert (done.status, done.end_reason, done.units, done.payout) == (
        "collected",
        "timeout",
        3,
        owed,
    )
    assert done.server_seed == GOLF_SEED.hex()
    assert world.balance(player) == owed
    row = world.c.games.history(player.player_id)[0]
    assert (row.variant, row.status, row.foundation_count, row.end_reason) == (
        "golf",
        "collected",
        3,
        "timeout",
    )
    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == []  # once only


def test_a_game_that_cannot_be_collected_is_reported_and_the_others_are_collected(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    broken = world.easy_game(world.player(balance=520)).state.game_id
    fine = world.easy_game(world.player(balance=520)).state.game_id
    for game_id in (broken, fine):
        _age(fresh_admin_conn, game_id, 25)
    # The broken game's sealed secret can no longer be decrypted (its key was dropped).
    fresh_admin_conn.execute(
        "UPDATE game_seeds SET ciphertext = %s WHERE game_id = %s",
        (b"gAAAAAnot-a-token", uuid.UUID(broken)),
    )
    collected = collect_idle(world.c.games, world.c.unit_of_work, DAY)
    assert collected == [uuid.UUID(fine)]
    assert world.c.games.game(uuid.UUID(broken)).state.status == "in_progress"
    reported = "SELECT count(*) FROM significant_events WHERE kind = %s AND game_id = %s"
    assert _count(fresh_admin_conn, reported, "collection-failed", uuid.UUID(broken)) == 1
    # The next run tries again, and does not report the same game again the same day.
    assert collect_idle(world.c.games, world.c.unit_of_work, DAY) == []
    assert _count(fresh_admin_conn, reported, "collection-failed", uuid.UUID(broken)) == 1


def test_rotating_the_seed_key_re_encrypts_every_sealed_secret(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    game_id = world.easy_game(world.player(balance=520)).state.game_id
    old_key = fresh_container.settings.seed_keys[0]
    new_key = Fernet.generate_key().decode()
    rotated = SeedVault([new_key, old_key])
    assert rotate_keys(rotated, world.c.owner_unit_of_work) >= 1
    row = fresh_admin_conn.execute(
        "SELECT key_id, ciphertext FROM game_seeds WHERE game_id = %s", (uuid.UUID(game_id),)
    ).fetchone()
    assert row is not None
    assert row[0] == rotated.key_id
    # Readable with the new key alone: the old one may now be dropped.
    assert SeedVault([new_key]).decrypt(bytes(row[1]))
    assert rotate_keys(rotated, world.c.owner_unit_of_work) == 0  # nothing left to re-encrypt
