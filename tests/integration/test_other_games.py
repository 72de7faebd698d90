"""Games other than Klondike through the real service: dealt, played by the legal commands the
rules list, undone, collected and paid by the one payout formula, with the ledger, the balance
and the betting history to match."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from events.catalog import CardMoved, Collected, PairRemoved, StakePlaced, Undone
from service.bootstrap import Container
from service.core import game_decider as g
from service.core import shuffle
from service.core.game_verification import CHECKS, verify_game
from service.core.paytable import winnings
from service.core.streams import game_stream
from service.games.golf import GOLF
from service.games.pyramid import PYRAMID
from service.rules.game import GameRules
from service.services.games import LoadedGame
from service.services.history_audits import stream_postings
from tests.integration.conftest import World, as_player

#: A seed whose deal gives both games something to play at once (the test fixes it).
SEED = bytes([2]) * 32
STAKE = 1_040


def _units_recorded(world: World, game_id: uuid.UUID) -> int:
    """Units counted from the events alone: golf's cards moved off the columns onto the
    waste, pyramid's cards removed to the foundation, less what was undone."""
    units = 0
    for record in world.c.games.records(game_id):
        event = record.decode()
        cleared = isinstance(event, CardMoved) and event.source.startswith("tableau:")
        if cleared or isinstance(event, PairRemoved):
            assert isinstance(event, CardMoved | PairRemoved)
            units += len(event.cards)
        elif isinstance(event, Undone):
            units -= sum(
                len(m.cards)
                for m in event.moves
                if m.source.startswith("tableau:") or m.target == "foundation"
            )
    return units


def _pick(state: g.Game) -> g.PlayAction:
    """A legal play, preferring a move or a removal to a draw (never collect or undo)."""
    legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect | g.Undo)]
    assert legal, "the rules list something to play"
    chosen = next((c for c in legal if not isinstance(c, g.Draw)), legal[0])
    assert not isinstance(chosen, g.Collect)
    return chosen


def _ledger(admin: psycopg.Connection[Any], game_id: uuid.UUID) -> list[tuple[Any, ...]]:
    return admin.execute(
        "SELECT kind, amount, cause_version FROM ledger_transactions WHERE cause_stream = %s "
        "ORDER BY cause_version",
        (game_stream(game_id),),
    ).fetchall()


@pytest.mark.parametrize("rules", [GOLF, PYRAMID], ids=lambda r: r.id)
def test_a_game_is_dealt_played_by_its_legal_commands_and_paid(
    fresh_container: Container,
    fresh_admin_conn: psycopg.Connection[Any],
    monkeypatch: pytest.MonkeyPatch,
    rules: GameRules,
) -> None:
    """Each game on a database of its own: both deal from SEED, and the database keeps a secret
    only for a commitment no other game has (migrations/0032)."""
    world, admin_conn = World(fresh_container), fresh_admin_conn
    monkeypatch.setattr(shuffle, "new_server_seed", lambda: SEED)
    player = world.player(balance=STAKE)
    loaded: LoadedGame = world.game(player, stake=STAKE, variant=rules.id)
    game_id = uuid.UUID(loaded.state.game_id)
    me = as_player(player.player_id)
    assert (loaded.state.variant, loaded.state.status, loaded.state.units) == (
        rules.id,
        "in_progress",
        0,
    )
    assert world.balance(player) == 0
    placed = world.c.games.records(game_id)[0].decode()
    assert isinstance(placed, StakePlaced)
    assert (placed.variant, placed.multiplier, placed.max_units, placed.rules_version) == (
        rules.id,
        rules.multiplier,
        rules.max_units,
        rules.rules_version,
    )

    # The first play, undone: the table is as it was, and the same play is legal again.
    before = loaded.state.table
    first = _pick(loaded.state)
    loaded = world.c.games.play(me, game_id, first)
    assert loaded.state.units == (1 if rules is GOLF else 2)
    assert g.Undo() in g.legal_commands(loaded.state)
    loaded = world.c.games.play(me, game_id, g.Undo())
    assert loaded.state.table == before
    assert (loaded.state.units, _pick(loaded.state)) == (0, first)

    for _ in range(8):
        loaded = world.c.games.play(me, game_id, _pick(world.c.games.game(game_id).state))
    units = loaded.state.units
    assert units == _units_recorded(world, game_id) > 0
    owed = winnings(units, STAKE, rules.multiplier, rules.max_units)
    assert loaded.state.winnings == owed > 0

    done = world.c.games.collect(me, game_id)
    assert (done.state.status, done.state.payout) == ("collected", owed)
    collected = world.c.games.records(game_id)[-1].decode()
    assert isinstance(collected, Collected)
    assert (collected.units, collected.winnings, collected.server_seed) == (
        units,
        owed,
        SEED.hex(),
    )
    assert world.balance(player) == owed
    assert _ledger(admin_conn, game_id) == [
        ("stake", STAKE, 1),
        ("winnings", owed, done.state.version),
    ]
    row = world.c.games.history(player.player_id)[0]
    assert (row.game_id, row.variant, row.status, row.foundation_count) == (
        game_id,
        rules.id,
        "collected",
        units,
    )
    assert (row.stake, row.payout, row.net) == (STAKE, owed, owed - STAKE)
    assert row.win_rate == winnings(1, STAKE, rules.multiplier, rules.max_units)

    with world.c.unit_of_work() as uow:
        postings = stream_postings(uow, game_stream(game_id))
    verified = verify_game(world.c.games.records(game_id), postings, world.c.settings.paytables)
    assert verified.findings == []
    assert verified.checks == dict.fromkeys(CHECKS, "pass")
