"""The game service through the real PostgreSQL: money and events move together or not at all."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from events import chain
from events.catalog import CardDrawn, Collected, Dealt, StakePlaced
from events.records import NewEvent
from service.bootstrap import Container
from service.core import game_decider as g
from service.core import shuffle
from service.core.context import Actor, RequestContext
from service.core.dealing import CertificationDeal
from service.core.ledger import InsufficientFunds
from service.core.streams import game_stream
from service.errors import (
    CertificationDisabled,
    GameInProgress,
    KeyReused,
    NotFound,
    RuleViolation,
    VersionMismatch,
)
from service.games import klondike
from service.games.klondike import VEGAS_DRAW1
from service.rules.table import Table, seal
from service.services.games import Games
from service.storage.game_writes import GameWrites
from service.storage.ledger import LedgerStore
from tests.builders import easy_deck, pile
from tests.integration.conftest import OPERATOR, World, as_player


def _stream_types(admin: psycopg.Connection[Any], game_id: uuid.UUID | str) -> list[str]:
    rows = admin.execute(
        "SELECT type FROM events WHERE stream_id = %s ORDER BY version", (game_stream(game_id),)
    ).fetchall()
    return [r[0] for r in rows]


def _ledger(admin: psycopg.Connection[Any], game_id: uuid.UUID | str) -> list[tuple[Any, ...]]:
    return admin.execute(
        "SELECT kind, amount, cause_version FROM ledger_transactions WHERE cause_stream = %s "
        "ORDER BY cause_version",
        (game_stream(game_id),),
    ).fetchall()


def _dealt_from(seed: bytes) -> Table:
    """The table a Vegas draw-one deal of ``seed``'s deck shows: face-down cards sealed."""
    return seal(VEGAS_DRAW1.deal(shuffle.derive_deck(seed)))[0]


def _stored_secret(admin: psycopg.Connection[Any], game_id: uuid.UUID) -> tuple[str, bytes]:
    row = admin.execute(
        "SELECT kind, ciphertext FROM game_seeds WHERE game_id = %s", (game_id,)
    ).fetchone()
    assert row is not None
    return str(row[0]), bytes(row[1])


def test_starting_a_game_debits_the_stake_and_deals_in_one_transaction(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=2_000)
    loaded = world.game(player, stake=1_040, variant="vegas-draw3")
    state = loaded.state
    assert state.status == "in_progress"
    assert (state.stake, state.win_rate, state.version) == (1_040, 100, 2)
    assert world.balance(player) == 2_000 - 1_040
    assert world.c.players.wallet(player.player_id).held == 1_040
    assert _stream_types(admin_conn, state.game_id) == ["StakePlaced", "Dealt"]
    assert _ledger(admin_conn, state.game_id) == [("stake", 1_040, 1)]
    row = world.c.games.history(player.player_id)[0]
    assert (row.status, row.stake, row.variant, row.version) == (
        "in_progress",
        1_040,
        "vegas-draw3",
        2,
    )


def test_event_metadata_says_who_which_request_and_which_rules(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    loaded = world.game()
    meta = admin_conn.execute(
        "SELECT metadata FROM events WHERE stream_id = %s AND version = 1",
        (game_stream(loaded.state.game_id),),
    ).fetchone()
    assert meta is not None
    assert meta[0]["actor"] == loaded.state.player_id
    assert meta[0]["role"] == "player"
    assert meta[0]["rules_version"] == "vegas-klondike/1"
    assert meta[0]["paytable"] == {"id": "vegas-gbp", "version": 1}
    assert uuid.UUID(meta[0]["request_id"])


def test_the_seed_is_stored_encrypted_committed_to_and_revealed_at_the_end(
    world: World, container: Container, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=520)
    loaded = world.game(player)
    game_id = uuid.UUID(loaded.state.game_id)
    kind, ciphertext = _stored_secret(admin_conn, game_id)
    assert kind == "seed"
    seed = container.vault.decrypt(ciphertext)
    assert seed not in ciphertext  # not stored in the clear
    assert loaded.state.seed_commitment == shuffle.commitment(seed)
    assert loaded.state.table == _dealt_from(seed)  # the seed's deck, dealt and sealed
    assert loaded.state.server_seed is None
    done = container.games.collect(as_player(player.player_id), game_id)
    assert done.state.server_seed == seed.hex()
    collected = container.games.records(game_id)[-1].decode()
    assert isinstance(collected, Collected)
    assert collected.server_seed == seed.hex()


def test_a_stake_the_balance_cannot_cover_deals_nothing(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=519)
    with pytest.raises(InsufficientFunds):
        world.game(player, stake=520)
    assert world.balance(player) == 519
    assert world.c.games.history(player.player_id) == []
    assert world.c.players.wallet(player.player_id).open_game_id is None


def test_a_failure_between_the_deal_and_the_debit_leaves_neither(
    world: World, admin_conn: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """StakePlaced and Dealt are written first; the debit fails after them: nothing stays."""
    player = world.player(balance=520)
    events_before = admin_conn.execute("SELECT count(*) FROM events").fetchone()
    ledger_before = admin_conn.execute("SELECT count(*) FROM ledger_transactions").fetchone()
    appended: list[str] = []
    real_send = GameWrites.send

    def append_then_note(self: GameWrites, stream: str, *args: Any, **kw: Any) -> Any:
        pending = real_send(self, stream, *args, **kw)
        pending.records()  # its answer is in: the deal is written
        appended.append(stream)
        return pending

    def broken_post(self: LedgerStore, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the database went away between the deal and the debit")

    monkeypatch.setattr(GameWrites, "send", append_then_note)
    monkeypatch.setattr(LedgerStore, "post", broken_post)
    with pytest.raises(RuntimeError):
        world.game(player)
    monkeypatch.undo()
    assert len(appended) == 1  # the deal really was written before the failure
    assert admin_conn.execute("SELECT count(*) FROM events").fetchone() == events_before
    assert (
        admin_conn.execute("SELECT count(*) FROM ledger_transactions").fetchone() == ledger_before
    )
    assert world.balance(player) == 520
    assert world.c.games.history(player.player_id) == []


def test_a_failure_after_collected_is_appended_leaves_neither_event_nor_payout(
    world: World, admin_conn: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    player = world.player(balance=520)
    loaded = world.easy_game(player)
    game_id = uuid.UUID(loaded.state.game_id)
    for _ in range(4):  # four aces up: winnings 200
        loaded = world.c.games.play(as_player(player.player_id), game_id, g.Draw())
        loaded = world.c.games.play(
            as_player(player.player_id), game_id, g.MoveCards("waste", "foundation")
        )
    assert loaded.state.winnings == 200

    def broken_log(self: Games, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("crash after the event and its payout are sent, before the commit")

    monkeypatch.setattr(Games, "_log_significant", broken_log)
    with pytest.raises(RuntimeError):
        world.c.games.collect(as_player(player.player_id), game_id)
    monkeypatch.undo()
    assert "Collected" not in _stream_types(admin_conn, game_id)
    assert _ledger(admin_conn, game_id) == [("stake", 520, 1)]
    # a certification game: its money is the sandbox's, the real wallet keeps its 520
    assert (world.balance(player), world.sandbox_balance(player)) == (520, -520)
    done = world.c.games.collect(as_player(player.player_id), game_id)
    assert done.state.payout == 200
    assert (world.balance(player), world.sandbox_balance(player)) == (520, -520 + 200)
    assert _ledger(admin_conn, game_id) == [("stake", 520, 1), ("winnings", 200, 11)]


def test_one_game_in_progress_per_player(world: World) -> None:
    player = world.player(balance=2_000)
    first = world.game(player)
    with pytest.raises(GameInProgress):
        world.game(player)
    world.c.games.collect(as_player(player.player_id), uuid.UUID(first.state.game_id))
    second = world.game(player)
    assert second.state.game_id != first.state.game_id
    assert world.balance(player) == 2_000 - 2 * 520


def test_commands_apply_in_order_and_check_the_expected_version(world: World) -> None:
    player = world.player(balance=520)
    loaded = world.easy_game(player)
    game_id = uuid.UUID(loaded.state.game_id)
    me = as_player(player.player_id)
    loaded = world.c.games.play(me, game_id, g.Draw(), expected_version=2)
    assert loaded.state.version == 3
    with pytest.raises(VersionMismatch) as exc:
        world.c.games.play(me, game_id, g.Draw(), expected_version=2)
    assert (exc.value.expected, exc.value.actual) == (2, 3)
    with pytest.raises(RuleViolation) as rule:
        world.c.games.play(me, game_id, g.MoveCards("waste", "tableau:0"))
    assert rule.value.code == "not-one-rank-lower"
    assert world.c.games.game(game_id).state.version == 3


def test_a_conflicting_writer_makes_the_service_reload_and_retry_once(
    world: World, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer appends between this command's load and its append: the append fails on
    the expected version, the service reloads and decides again on the new state."""
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    real_decide = g.decide
    interfered: list[int] = []

    def decide_with_interference(state: g.Game, command: g.Command, *rest: Any) -> list[Any]:
        if not interfered:
            interfered.append(state.version)
            with container.owner_unit_of_work() as uow:  # a second writer gets in first
                uow.events.append(
                    game_stream(game_id),
                    [
                        NewEvent.of(
                            CardDrawn("stock", "waste", ("AS",)),
                            {"actor": "other", "role": "player"},
                        )
                    ],
                    state.version,
                )
                uow.commit()
        return real_decide(state, command, *rest)

    monkeypatch.setattr("service.services.games.g.decide", decide_with_interference)
    loaded = world.c.games.play(as_player(player.player_id), game_id, g.Draw())
    assert interfered == [2]
    assert loaded.state.version == 4  # the other writer's draw, then ours
    assert pile(loaded.state, "waste").cards == ("AS", "AH")


def test_collect_pays_the_winnings_and_ends_the_game(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    me = as_player(player.player_id)
    for _ in range(3):
        world.c.games.play(me, game_id, g.Draw())
        world.c.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    done = world.c.games.collect(me, game_id)
    assert (done.state.status, done.state.payout, done.state.units) == (
        "collected",
        150,
        3,
    )
    assert done.ended_at is not None
    assert (world.balance(player), world.sandbox_balance(player)) == (520, -520 + 150)
    assert _ledger(admin_conn, game_id)[-1] == ("winnings", 150, 9)
    row = world.c.games.history(player.player_id)[0]
    assert (row.status, row.payout, row.net, row.foundation_count) == ("collected", 150, -370, 3)
    with pytest.raises(RuleViolation) as exc:
        world.c.games.play(me, game_id, g.Draw())
    assert exc.value.code == "game-over"


def test_a_won_game_pays_five_times_the_stake(world: World) -> None:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    me = as_player(player.player_id)
    loaded = world.c.games.game(game_id)
    for _ in range(24):
        world.c.games.play(me, game_id, g.Draw())
        loaded = world.c.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    while loaded.state.status == "in_progress":
        table = loaded.state.table
        assert table is not None
        turn = next(iter(klondike.turnable_columns(table)), None)
        if turn is not None:
            loaded = world.c.games.play(me, game_id, g.Turn(f"tableau:{turn}"))
            continue
        source = next(
            m.source
            for m in klondike.legal_moves(table)
            if m.source.startswith("tableau:") and m.target.startswith("foundation")
        )
        loaded = world.c.games.play(me, game_id, g.MoveCards(source, "foundation"))
    assert loaded.state.status == "complete"
    done = world.c.games.collect(me, game_id)
    assert done.state.payout == 2_600 == 5 * 520
    assert (world.balance(player), world.sandbox_balance(player)) == (520, 2_600 - 520)


def test_void_refunds_the_stake_and_reveals_the_seed(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.game(player).state.game_id)
    voided = world.c.games.void(OPERATOR, game_id, "table malfunction")
    assert voided.state.status == "voided"
    assert voided.state.refund == 520
    assert voided.state.server_seed is not None
    assert world.balance(player) == 520
    assert _ledger(admin_conn, game_id) == [("stake", 520, 1), ("refund", 520, 3)]
    row = world.c.games.history(player.player_id)[0]
    assert (row.status, row.refund, row.net) == ("voided", 520, 0)


def test_a_retried_request_returns_the_first_result_and_appends_nothing(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    retry = as_player(player.player_id, key="draw-once", fingerprint="POST /draw {}")
    first = world.c.games.play(retry, game_id, g.Draw())
    again = world.c.games.play(retry, game_id, g.Draw())
    assert again.replayed
    assert again.state == first.state
    assert _stream_types(admin_conn, game_id) == ["StakePlaced", "Dealt", "CardDrawn"]
    other = as_player(player.player_id, key="draw-once", fingerprint="POST /undo {}")
    with pytest.raises(KeyReused):
        world.c.games.play(other, game_id, g.Undo())


def test_a_retried_start_deals_once_and_debits_once(world: World) -> None:
    player = world.player(balance=520)
    retry = as_player(player.player_id, key="deal-1", fingerprint="POST /v1/games ...")
    first = world.c.games.start(retry, player.player_id, "vegas-draw1", 520)
    again = world.c.games.start(retry, player.player_id, "vegas-draw1", 520)
    assert again.replayed
    assert again.state.game_id == first.state.game_id
    assert world.balance(player) == 0


def test_a_player_cannot_see_another_players_game(world: World) -> None:
    mine = world.game()
    stranger = Actor(str(uuid.uuid4()), "player")
    game_id = uuid.UUID(mine.state.game_id)
    with pytest.raises(NotFound):
        world.c.games.game(game_id, actor=stranger)
    with pytest.raises(NotFound):
        world.c.games.play(RequestContext(stranger), game_id, g.Draw())
    assert world.c.games.game(game_id, actor=Actor("auditor-1", "auditor")).state.version == 2


def test_a_game_can_be_read_as_it_was_at_any_version(world: World) -> None:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    me = as_player(player.player_id)
    world.c.games.play(me, game_id, g.Draw())
    world.c.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    at_3 = world.c.games.game(game_id, to_version=3).state
    assert at_3.version == 3
    assert at_3.units == 0
    assert world.c.games.game(game_id).state.units == 1
    records = world.c.games.records(game_id)
    assert [r.type for r in records] == ["StakePlaced", "Dealt", "CardDrawn", "CardMoved"]
    assert chain.verify(records) is None


def test_certification_deals_need_certification_mode(container: Container) -> None:
    player = World(container).player(balance=520)
    games = Games(
        container.unit_of_work, dict(container.settings.paytables), container.vault, container.safer
    )  # certification mode off
    with pytest.raises(CertificationDisabled):
        games.start(
            as_player(player.player_id),
            player.player_id,
            "vegas-draw1",
            520,
            certification=CertificationDeal(deck=easy_deck()),
        )
    assert World(container).balance(player) == 520


def test_a_certification_seed_deals_its_published_deck(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=520)
    seed = bytes(range(32))
    loaded = world.c.games.start(
        as_player(player.player_id),
        player.player_id,
        "vegas-draw1",
        520,
        certification=CertificationDeal(seed_hex=seed.hex()),
    )
    assert loaded.state.certification
    assert loaded.state.table == _dealt_from(seed)
    assert loaded.state.seed_commitment == shuffle.commitment(seed)
    kind, ciphertext = _stored_secret(admin_conn, uuid.UUID(loaded.state.game_id))
    assert (kind, world.c.vault.decrypt(ciphertext)) == ("seed", seed)


def test_stake_and_variant_rules_are_enforced_before_any_money_moves(world: World) -> None:
    player = world.player(balance=5_000)
    for variant, stake, code in [
        ("vegas-draw1", 500, "stake-not-multiple"),
        ("vegas-draw1", 52, "stake-out-of-range"),
        ("spider", 520, "unknown-variant"),
    ]:
        with pytest.raises(RuleViolation) as exc:
            world.game(player, stake=stake, variant=variant)
        assert exc.value.code == code
    assert world.balance(player) == 5_000


def test_betting_history_is_newest_first_and_paged(world: World) -> None:
    player = world.player(balance=5 * 520)
    ids = []
    for _ in range(3):
        loaded = world.game(player)
        ids.append(loaded.state.game_id)
        world.c.games.collect(as_player(player.player_id), uuid.UUID(loaded.state.game_id))
    rows = world.c.games.history(player.player_id)
    assert [str(r.game_id) for r in rows] == ids[::-1]
    page = world.c.games.history(
        player.player_id, before=(rows[0].started_at, rows[0].game_id), limit=1
    )
    assert [str(r.game_id) for r in page] == [ids[1]]


def test_stakeplaced_records_the_paytable_and_rules(world: World) -> None:
    loaded = world.game()
    records = world.c.games.records(uuid.UUID(loaded.state.game_id))
    placed, dealt = (r.decode() for r in records[:2])
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    assert (placed.paytable_id, placed.paytable_version) == ("vegas-gbp", 1)
    assert placed.rules_version == "vegas-klondike/1"
    assert (placed.variant, placed.multiplier, placed.max_units) == ("vegas-draw1", "5", 52)
    assert dealt.shuffle_algorithm == shuffle.ALGORITHM
    assert dealt.deck is None  # sealed: the deal shows its face-up cards only
