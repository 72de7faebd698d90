"""The double-entry wallet ledger, through the real PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from typing import Any

import psycopg
import pytest

from events.catalog import StakePlaced
from events.records import NewEvent
from service.bootstrap import Container
from service.core import ledger
from service.core.ledger import InsufficientFunds, TransactionIdReused
from tests.integration.conftest import OPERATOR, World, player_token


def _postings(admin_conn: psycopg.Connection[Any], account_id: str) -> list[tuple[Any, ...]]:
    return admin_conn.execute(
        "SELECT amount, balance_before, balance_after, cause_stream, cause_version "
        "FROM postings WHERE account_id = %s ORDER BY posting_id",
        (account_id,),
    ).fetchall()


def test_a_deposit_posts_two_balanced_lines_naming_its_event(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player()
    posted = world.c.players.deposit(
        OPERATOR, player.player_id, 5_000, "dep-1-" + str(uuid.uuid4())
    )
    assert posted.kind == "deposit"
    assert sum(p.amount for p in posted.postings) == 0
    accounts = {p.account_id: p for p in posted.postings}
    wallet = accounts[f"player:{player.player_id}"]
    assert (wallet.amount, wallet.balance_before, wallet.balance_after) == (5_000, 0, 5_000)
    assert accounts["cashier:GBP"].amount == -5_000
    assert (posted.cause_stream, posted.cause_version) == (f"player-{player.player_id}", 2)
    event = admin_conn.execute(
        "SELECT type, data FROM events WHERE stream_id = %s AND version = 2",
        (posted.cause_stream,),
    ).fetchone()
    assert event is not None
    assert event[0] == "FundsDeposited"
    assert event[1]["amount"] == 5_000
    assert world.balance(player) == 5_000


def test_the_same_transaction_id_is_applied_once(world: World) -> None:
    player = world.player()
    tx = f"dep-{uuid.uuid4()}"
    first = world.c.players.deposit(OPERATOR, player.player_id, 700, tx)
    again = world.c.players.deposit(OPERATOR, player.player_id, 700, tx)
    assert again.transaction_id == first.transaction_id
    assert again.replayed
    assert world.balance(player) == 700
    with pytest.raises(TransactionIdReused):
        world.c.players.deposit(OPERATOR, player.player_id, 701, tx)
    with pytest.raises(TransactionIdReused):  # same id, other kind of movement
        world.c.players.withdraw(OPERATOR, player.player_id, 700, tx)
    assert world.balance(player) == 700


def test_a_withdrawal_beyond_the_balance_is_refused_and_moves_nothing(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=1_000)
    with pytest.raises(InsufficientFunds):
        world.c.players.withdraw(OPERATOR, player.player_id, 1_001, f"wd-{uuid.uuid4()}")
    assert world.balance(player) == 1_000
    assert len(_postings(admin_conn, f"player:{player.player_id}")) == 1
    versions = admin_conn.execute(
        "SELECT max(version) FROM events WHERE stream_id = %s", (f"player-{player.player_id}",)
    ).fetchone()
    assert versions == (2,)  # registered, deposited; no withdrawal event
    world.c.players.withdraw(OPERATOR, player.player_id, 1_000, f"wd-{uuid.uuid4()}")
    assert world.balance(player) == 0


def test_balances_before_and_after_chain_through_every_posting(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    player = world.player(balance=2_000)
    world.c.players.withdraw(OPERATOR, player.player_id, 300, f"wd-{uuid.uuid4()}")
    world.c.players.deposit(OPERATOR, player.player_id, 50, f"dep-{uuid.uuid4()}")
    lines = _postings(admin_conn, f"player:{player.player_id}")
    assert [(a, b, c) for a, b, c, _, _ in lines] == [
        (2_000, 0, 2_000),
        (-300, 2_000, 1_700),
        (50, 1_700, 1_750),
    ]
    statement = world.c.players.statement(player.player_id)
    assert [line.amount for line in statement] == [50, -300, 2_000]  # newest first
    assert [line.kind for line in statement] == ["deposit", "withdrawal", "deposit"]
    page = world.c.players.statement(player.player_id, before=statement[0].posting_id, limit=1)
    assert [line.amount for line in page] == [-300]


def test_every_transaction_in_the_ledger_sums_to_zero(
    world: World, admin_conn: psycopg.Connection[Any]
) -> None:
    world.game(world.player(balance=520))
    unbalanced = admin_conn.execute(
        "SELECT transaction_id FROM postings GROUP BY transaction_id HAVING sum(amount) <> 0"
    ).fetchall()
    assert unbalanced == []


def test_the_database_refuses_an_unbalanced_transaction(container: Container) -> None:
    player = World(container).player(balance=100)
    account = ledger.player_account(str(player.player_id), "GBP")
    lopsided = ledger.Entry(
        f"bad-{uuid.uuid4()}",
        "deposit",
        "GBP",
        100,
        ((account, 100),),  # one line: money from nowhere
        f"player-{player.player_id}",
        99,
    )
    with (
        container.unit_of_work() as uow,
        pytest.raises(psycopg.errors.CheckViolation, match="does not balance"),
    ):
        uow.ledger.post(lopsided)  # refused by the posting function, before commit
    assert World(container).balance(player) == 100


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE postings SET amount = amount + 1",
        "DELETE FROM postings",
        "UPDATE ledger_transactions SET amount = 1",
        "DELETE FROM ledger_transactions",
    ],
)
def test_postings_are_never_updated_or_deleted(
    container: Container, admin_conn: psycopg.Connection[Any], statement: str
) -> None:
    World(container).player(balance=10)
    with container.unit_of_work() as uow, pytest.raises(psycopg.errors.InsufficientPrivilege):
        uow.conn.execute(statement)
    with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
        admin_conn.execute(statement)


def test_a_player_balance_can_never_be_set_negative(admin_conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(psycopg.errors.CheckViolation):
        admin_conn.execute(
            "UPDATE account_balances SET balance = -1 WHERE kind = 'player' "
            "AND account_id = (SELECT account_id FROM account_balances WHERE kind = 'player' "
            "LIMIT 1)"
        )


def test_simultaneous_stakes_never_overdraw_a_balance(fresh_container: Container) -> None:
    """20 stake debits race for a balance that covers exactly 7 of them, each in its own
    transaction and without the service's write lock, so the balance row's own guard decides.
    (Ledger entries with no game behind them: a database of its own keeps that from others.)"""
    container = fresh_container
    player = World(container).player(balance=7 * 520)
    barrier = threading.Barrier(20)
    outcomes: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    def stake(n: int) -> None:
        game_id = str(uuid.uuid4())
        stream = f"game-{game_id}"
        entry = ledger.stake(str(player.player_id), "GBP", 520, game_id, (stream, 1))
        # The cause the database requires of a stake (migrations/0028): the game's StakePlaced.
        placed = StakePlaced(
            game_id, str(player.player_id), "vegas-draw1", 520, "GBP", "5", 52, "gbp", 1, "r"
        )
        token = player_token(player.player_id)
        meta = {"actor": str(player.player_id), "role": "player"}
        barrier.wait()
        try:
            with container.unit_of_work() as uow:
                uow.recorder.append(token, stream, [NewEvent.of(placed, meta)], 0)
                uow.ledger.post(entry)
                uow.commit()
            result = "debited"
        except InsufficientFunds:
            result = "refused"
        with lock:
            outcomes[result] += 1

    threads = [threading.Thread(target=stake, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert dict(outcomes) == {"debited": 7, "refused": 13}
    assert World(container).balance(player) == 0


def test_simultaneous_withdrawals_never_overdraw_a_balance(container: Container) -> None:
    player = World(container).player(balance=1_000)
    barrier = threading.Barrier(10)
    refused: list[int] = []

    def withdraw(n: int) -> None:
        barrier.wait()
        try:
            container.players.withdraw(OPERATOR, player.player_id, 300, f"race-{uuid.uuid4()}")
        except InsufficientFunds:
            refused.append(n)

    threads = [threading.Thread(target=withdraw, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(refused) == 7  # 3 x 300 fit in 1,000
    assert World(container).balance(player) == 100
