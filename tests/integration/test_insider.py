"""The database is the last guard (issue 22): with the service's own login an insider cannot
back-date the log, stop the checkpoints, move a balance without its postings, replace a stored
reconciliation or swap games' sealed secrets; the service login writes history only through
the owner's functions (migrations/0016). Each forgery is tried as the service login against
the real PostgreSQL and refused; done around the service (as the owner or a superuser, whom no
grant stops), the service refuses to build on it and the audit names it."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import astuple, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    Collected,
    Dealt,
    DuelCancelled,
    DuelSettled,
    FundsDeposited,
    GamingSwitched,
    LimitChanged,
    Payout,
    PlayerExcluded,
    RealityCheckAcknowledged,
    SeatFinished,
)
from events.chain import GENESIS, event_hash
from events.postgres import append_params
from events.records import NewEvent
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core import shuffle
from service.core.clock import instant
from service.core.context import RequestContext
from service.core.ledger import InsufficientFunds, player_account
from service.core.paytable import default_paytables, paytable_for
from service.errors import Disabled, GameInProgress, IntegrityBreach
from service.runtime import database as db
from service.services import finance_books as finance
from service.services import history_audits as audit
from service.services.controls import Controls
from service.services.players import Players
from service.services.safer_gambling import SaferGambling
from service.storage.projections import PLAYER_SQL, history_json
from tests.credentials import sign_checkpoint, staff
from tests.dbtools import ScratchDatabase, bare_database, migrate_through, prepare_scratch
from tests.integration.conftest import OPERATOR, World, as_player, player_token
from tests.integration.test_audit import _run, _tamper

Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture
def owner(fresh_database: ScratchDatabase, fresh_container: Container) -> Iterator[Conn]:
    """The owner's login on fresh_container's database (autocommit): writes around the service."""
    with psycopg.connect(fresh_database.owner_url, autocommit=True) as conn:
        yield conn


def _refused(conn: Conn, statement: str, params: tuple[object, ...] = ()) -> None:
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement, params)
    finally:
        conn.rollback()


def _log_checks(result: audit.AuditStatus) -> set[tuple[str, str]]:
    return {(f.check, f.location) for f in result.findings if f.unit == audit.LOG_UNIT}


# --- the log --------------------------------------------------------------------------------------


def test_a_back_dated_event_at_position_zero_is_refused_to_the_service_login(
    fresh_container: Container, insider: Conn
) -> None:
    """The forgery tried on 2026-11-26: a deposit event at position 0, back-dated, with a
    correct hash."""
    player = World(fresh_container).player(balance=100)
    stream = f"player-{player.player_id}"
    at = datetime(2020, 1, 1, tzinfo=UTC)
    data = json.dumps({"amount": 5_000_000, "currency": "GBP", "transaction_id": "forged"})
    event_id = uuid.uuid4()
    digest = event_hash(GENESIS, stream, 0, event_id, "FundsDeposited", 1, at, data, "{}")
    _refused(
        insider,
        "INSERT INTO events (position, stream_id, version, event_id, type, schema_version, "
        " data, metadata, recorded_at, prev_hash, hash) OVERRIDING SYSTEM VALUE "
        "VALUES (0, %s, 0, %s, 'FundsDeposited', 1, %s, '{}', %s, %s, %s)",
        (stream, event_id, data, at, GENESIS, digest),
    )


def test_the_append_function_gives_the_next_positions_and_the_server_s_clock(
    fresh_container: Container, insider: Conn, owner: Conn
) -> None:
    """The shape-only append is the owner's (migrations/0031): the service's login may not call
    it. Even the owner appends only at a stream's head, at positions the sequence hands out,
    stamped now, whatever it would like to say."""
    World(fresh_container).player()
    item = [str(uuid.uuid4()), "Note", 1, "{}", "{}"]
    _refused(insider, "SELECT * FROM append_events('note-1', 0, %s)", (json.dumps([item]),))
    before = owner.execute("SELECT max(position), statement_timestamp() FROM events").fetchone()
    assert before is not None
    rows = owner.execute(
        "SELECT position, version, recorded_at FROM append_events('note-1', 0, %s)",
        (json.dumps([item, [str(uuid.uuid4()), "Note", 1, "{}", "{}"]]),),
    ).fetchall()
    assert [r[1] for r in rows] == [1, 2]
    assert all(r[0] > before[0] and r[2] >= before[1] for r in rows)
    with pytest.raises(psycopg.errors.UniqueViolation):  # never behind the head
        owner.execute("SELECT * FROM append_events('note-1', 1, %s)", (json.dumps([item]),))


def test_an_event_out_of_place_in_the_log_is_named_by_the_audit(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    """Done around the service (a superuser, who may drop a constraint): at position 0, and at
    a fresh position with a time from the past."""
    World(fresh_container).player(balance=100)
    signed, _ = sign_checkpoint(fresh_container, "test")
    exported = fresh_container.anchors.exported(signed.seq)  # the auditor's file
    at = datetime(2020, 1, 1, tzinfo=UTC)
    fresh_admin_conn.execute("ALTER TABLE events DROP CONSTRAINT events_position_positive")
    insert = (
        "INSERT INTO events (position, stream_id, version, event_id, type, schema_version, "
        " data, metadata, recorded_at, prev_hash, hash) OVERRIDING SYSTEM VALUE "
        "VALUES (%s, %s, %s, %s, 'Note', 1, '{}', '{}', %s, %s, %s)"
    )
    taken = fresh_admin_conn.execute("SELECT nextval('events_position_seq')").fetchone()
    assert taken is not None
    fresh_admin_conn.execute(insert, (0, "forged-a", 1, uuid.uuid4(), at, GENESIS, "0" * 64))
    fresh_admin_conn.execute(insert, (taken[0], "forged-b", 1, uuid.uuid4(), at, GENESIS, "0" * 64))
    checks = _log_checks(_run(fresh_container, audit.Scope("all")))
    assert ("event-position", "forged-a v1 (position 0)") in checks
    assert ("event-back-dated", f"forged-b v1 (position {taken[0]})") in checks
    # and checking the kept file against the live log says so (on 2026-11-26 it said verified)
    document = fresh_container.anchors.check_document(exported)
    assert not document.verified
    assert ("event-position", "forged-a v1 (position 0)") in {
        (f.check, f.location) for f in document.findings
    }


# --- checkpoints ----------------------------------------------------------------------------------


def _checkpoint_args(seq: int, position: int) -> tuple[object, ...]:
    return (seq, position, "{}", "forged", "k", "insider", datetime.now(UTC), [], [], [])


ADD_CHECKPOINT = "SELECT add_checkpoint(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"


@pytest.fixture
def background_login(fresh_database: ScratchDatabase, fresh_container: Container) -> Iterator[Conn]:
    """Background work's own login (migrations/0039) on fresh_container's database, as the
    worker's pool opens it: the only one that signs checkpoints without a staff key."""
    with psycopg.connect(fresh_database.background_url) as conn:
        yield conn


def test_a_checkpoint_row_at_the_end_of_time_is_refused_to_the_service_login(
    fresh_container: Container, insider: Conn, background_login: Conn
) -> None:
    World(fresh_container).player()
    sign_checkpoint(fresh_container, "test")
    _refused(
        insider,
        "INSERT INTO log_checkpoints (seq, position, message, signature, key_id, requested_by)"
        " VALUES (2, 9223372036854775807, '{}', 'x', 'k', 'insider')",
    )
    _refused(insider, ADD_CHECKPOINT, _checkpoint_args(2, 9223372036854775807))
    # Even background work's own login keeps to the log's order.
    with pytest.raises(psycopg.errors.CheckViolation, match="inside the log"):
        background_login.execute(ADD_CHECKPOINT, _checkpoint_args(2, 9223372036854775807))
    background_login.rollback()
    with pytest.raises(psycopg.errors.CheckViolation, match="does not follow"):
        background_login.execute(ADD_CHECKPOINT, _checkpoint_args(5, 1))
    background_login.rollback()


ADD_CHECKPOINT_AS = "SELECT add_checkpoint_as(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"


def _checkpoint_as_args(credential: str | None, seq: int, position: int) -> tuple[object, ...]:
    return (credential, seq, position, "{}", "forged", "k", datetime.now(UTC), [], [], [])


def test_signing_cannot_be_starved_by_rows_the_service_login_writes(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 10: a forged checkpoint at the log's head each time the log moved, so beat found
    the head covered and signed nothing. The service's login signs no checkpoint; a request
    signs one only with an auditor's or operator's key as presented (no key, a made-up one, a
    player's or finance's is refused), named as made by that key's holder; beat's signing, on
    background work's login, goes on."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    first, _ = sign_checkpoint(fresh_container, "beat")
    world.game(player)  # the log moves on
    head = insider.execute("SELECT max(position) FROM events").fetchone()
    assert head is not None
    _refused(insider, ADD_CHECKPOINT, _checkpoint_args(first.seq + 1, head[0]))
    finance = staff(fresh_container, "finance").credential
    token = as_player(player.player_id).credential
    for credential in (None, "vsk_made-up", finance, token):
        _refused(
            insider, ADD_CHECKPOINT_AS, _checkpoint_as_args(credential, first.seq + 1, head[0])
        )
    made, created = sign_checkpoint(fresh_container, "beat")
    assert created
    assert (made.seq, made.position) == (first.seq + 1, head[0])
    # The honest counterpart: an auditor signs one on demand, named as its maker.
    auditor = staff(fresh_container, "auditor")
    world.player()  # the log moves on
    on_demand, created = fresh_container.anchors.checkpoint(auditor.actor.id, auditor.credential)
    assert created
    assert (on_demand.seq, on_demand.requested_by) == (made.seq + 1, auditor.actor.id)
    assert _log_checks(_run(fresh_container, audit.Scope("all"))) == set()


def test_a_forged_checkpoint_neither_stops_the_signing_nor_escapes_the_audit(
    fresh_container: Container, insider: Conn, background_login: Conn, fresh_admin_conn: Conn
) -> None:
    """Around the service's login (background work's own, whose signature the database cannot
    check, and one beyond the log as a superuser): the next checkpoint passes over both,
    extends the last good one, and the audit names them."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    first, _ = sign_checkpoint(fresh_container, "test")
    world.player()  # the log moves on
    head = insider.execute("SELECT max(position) FROM events").fetchone()
    assert head is not None
    _refused(insider, ADD_CHECKPOINT, _checkpoint_args(2, head[0]))
    background_login.execute(ADD_CHECKPOINT, _checkpoint_args(2, head[0]))
    background_login.commit()
    fresh_admin_conn.execute(
        "INSERT INTO log_checkpoints (seq, position, message, signature, key_id, requested_by)"
        " VALUES (3, 9223372036854775807, '{}', 'x', 'k', 'insider')"
    )
    world.game(player)  # the log moves on again
    made, created = sign_checkpoint(fresh_container, "beat")
    assert created
    assert made.seq == 4
    assert made.position > head[0]
    checks = _log_checks(_run(fresh_container, audit.Scope("all")))
    assert ("checkpoint-signature", "checkpoint 2") in checks
    assert ("checkpoint-beyond-log", "checkpoint 3") in checks
    assert {c for c, _ in checks} <= {"checkpoint-signature", "checkpoint-beyond-log"}
    del first


def test_the_finance_projections_are_refused_to_the_service_login(
    fresh_container: Container, insider: Conn, fresh_admin_conn: Conn
) -> None:
    """Item 10: daily_totals and daily_cashier zeroed with the service's login, so that the
    day's report shows payouts 0, or the projector's checkpoint moved past events so that they
    are never folded: refused (migrations/0042: only background work's login writes them). Rows
    altered around every grant (a superuser, triggers off) are named by the whole-history audit,
    which folds the log again. The honest counterpart: background work folds them, and the
    report shows the day's money."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    game = world.game(player)
    fresh_container.games.collect(as_player(player.player_id), uuid.UUID(game.state.game_id))
    with fresh_container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    assert not {c for c, _ in _log_checks(_run(fresh_container, audit.Scope("all")))}
    for statement in (
        "UPDATE daily_totals SET stakes = 0, payouts = 0, games_started = 0",
        "UPDATE daily_cashier SET deposits = 0",
        "DELETE FROM daily_depositors",
        "INSERT INTO daily_totals (day, currency, variant, payouts) VALUES (now(), 'GBP', 'x', 9)",
        "UPDATE projection_checkpoints SET position = position + 1000"
        " WHERE name IN ('daily-totals', 'daily-cashier')",
        "DELETE FROM projection_checkpoints WHERE name = 'daily-totals'",
    ):
        _refused(insider, statement)
    day = datetime.now(UTC).date()
    report = fresh_container.reports.daily(day, day, "GBP")
    assert report.period.stakes == 520  # the day's one game, folded by background work
    _tamper(fresh_admin_conn, "UPDATE daily_totals SET stakes = 0, payouts = 0, games_started = 0")
    _tamper(fresh_admin_conn, "UPDATE daily_cashier SET deposits = 0")
    checks = _log_checks(_run(fresh_container, audit.Scope("all")))
    assert ("daily-totals", f"daily_totals {day} GBP vegas-draw1") in checks
    assert ("daily-cashier", f"daily_cashier {day} GBP") in checks
    assert {c for c, _ in checks} == {"daily-totals", "daily-cashier"}


def _forge_idempotency(insider: Conn, request: RequestContext, result: dict[str, Any]) -> None:
    """An idempotency record written with the service's login (it may write them) for a
    request not yet made, as if it had completed with ``result``."""
    assert request.idempotency_key is not None
    insider.execute(
        "INSERT INTO idempotency_keys (scope, key, fingerprint, result) VALUES (%s, %s, %s, %s)",
        (request.actor.id, request.idempotency_key, request.fingerprint, Jsonb(result)),
    )
    insider.commit()


def test_an_idempotency_record_is_not_authority(fresh_container: Container, insider: Conn) -> None:
    """A stored result naming another player's game, a deposit for a withdrawal or another
    player, or another external reference's account, is checked against its request before it
    is answered: refused (IntegrityBreach), nothing applied; an honest retry is answered."""
    world = World(fresh_container)
    ann, bob = world.player(balance=5_000), world.player(balance=5_000)
    anns = world.game(ann)
    deal = replace(as_player(bob.player_id), idempotency_key="deal-1", fingerprint="f")
    _forge_idempotency(insider, deal, {"game_id": anns.state.game_id, "version": 2})
    with pytest.raises(IntegrityBreach, match="idempotency record names game"):
        fresh_container.games.start(deal, bob.player_id, "vegas-draw1", 520)
    deposit = fresh_container.players.deposit(OPERATOR, ann.player_id, 100, f"d-{uuid.uuid4()}")
    cash = replace(OPERATOR, idempotency_key="cash-1", fingerprint="f")
    _forge_idempotency(insider, cash, {"client_transaction_id": deposit.client_transaction_id})
    with pytest.raises(IntegrityBreach, match="idempotency record names no transfer"):
        fresh_container.players.withdraw(cash, bob.player_id, 100, f"w-{uuid.uuid4()}")
    opening = replace(OPERATOR, idempotency_key="open-1", fingerprint="f")
    _forge_idempotency(insider, opening, {"player_id": str(ann.player_id), "created": False})
    with pytest.raises(IntegrityBreach, match="idempotency record names player"):
        fresh_container.players.open_account(opening, f"ext-{uuid.uuid4()}", "GBP")
    assert world.balance(bob) == 5_000  # nothing applied
    # The honest counterpart: a real retry is answered as the first attempt was.
    honest = replace(as_player(bob.player_id), idempotency_key="deal-2", fingerprint="f")
    first = fresh_container.games.start(honest, bob.player_id, "vegas-draw1", 520)
    again = fresh_container.games.start(honest, bob.player_id, "vegas-draw1", 520)
    assert (again.state.game_id, again.replayed) == (first.state.game_id, True)


# --- balances -------------------------------------------------------------------------------------


def test_a_balance_cannot_be_moved_without_its_postings(
    fresh_container: Container, insider: Conn, fresh_admin_conn: Conn
) -> None:
    """The forgery: UPDATE account_balances, then withdraw what it added. Refused to the
    service login; done as the owner, the withdrawal is refused by the posting function itself
    (the balance is not the one its postings leave) and nothing moves."""
    world = World(fresh_container)
    player = world.player(balance=100)
    account = player_account(str(player.player_id), "GBP").account_id
    _refused(insider, "UPDATE account_balances SET balance = balance + 2000000")
    _refused(
        insider,
        "INSERT INTO postings (transaction_id, account_id, amount, balance_before, balance_after,"
        " cause_stream, cause_version) VALUES (%s, %s, 1, 0, 1, 'x', 1)",
        (uuid.uuid4(), account),
    )
    _tamper(
        fresh_admin_conn,
        "UPDATE account_balances SET balance = balance + 2000000 WHERE account_id = %s",
        account,
    )
    with pytest.raises(IntegrityBreach, match=account):
        fresh_container.players.withdraw(OPERATOR, player.player_id, 2_000_000, "w-1")
    assert world.balance(player) == 2_000_100  # as tampered: nothing was posted on it
    with fresh_container.unit_of_work() as uow:
        assert uow.ledger.statement(account)[0].balance_after == 100
    ledger_findings = {
        (f.check, f.location)
        for f in _run(fresh_container, audit.Scope("all")).findings
        if f.unit == audit.LEDGER_UNIT
    }
    assert ("ledger", f"account {account}") in ledger_findings


def test_a_posting_function_call_that_does_not_balance_is_refused(
    fresh_container: Container, insider: Conn
) -> None:
    player = World(fresh_container).player(balance=100)
    account = player_account(str(player.player_id), "GBP").account_id
    with pytest.raises(psycopg.errors.CheckViolation, match="does not balance"):
        insider.execute(
            "SELECT * FROM post_transaction(%s, 'forged', 'deposit', 'f', 'GBP', 100, 'x', 1,"
            " NULL, %s, %s)",
            (uuid.uuid4(), [account], [2_000_000]),
        )
    insider.rollback()


# --- what a ledger write means (issue 36, migrations/0028) ----------------------------------------

POST = (
    "SELECT * FROM post_transaction(%s, %s, %s, 'f', 'GBP', %s, %s, %s, NULL, %s::text[],"
    " %s::bigint[])"
)


def _items(*events: tuple[str, dict[str, Any]], meta: dict[str, Any] | None = None) -> str:
    """Events of any type, with data of the insider's choosing, as the append functions take
    them (events.postgres.append_params: what the service sends)."""
    new = [NewEvent(t, 1, d, meta or {}) for t, d in events]
    return append_params("insider", new, 0)["events"]  # type: ignore[no-any-return]


def _forge(owner: Conn, stream: str, expected: int, *events: tuple[str, dict[str, Any]]) -> None:
    """Append events of the insider's choosing around the service: as the owner, through the
    shape-only append (the service's login may not call it, nor record them: see
    _not_recorded), to show what the posting function does with such a cause."""
    owner.execute("SELECT FROM append_events(%s, %s, %s)", (stream, expected, _items(*events)))


#: What an insider presents for a credential: none, or one made up.
FORGED_CREDENTIALS = (None, "vsk_" + "f" * 43, "vsp_" + "f" * 43)


def _not_recorded(
    insider: Conn,
    stream: str,
    expected: int,
    event: tuple[str, dict[str, Any]],
    error: type[psycopg.Error],
    match: str,
) -> None:
    """record_events, the service's one way into the log, refuses the forged event whatever the
    insider presents for a credential: no credential must pass the what-rule named by ``match``
    (a made-up one is refused as not live)."""
    meta = {"actor": "system", "role": "system", "request_id": "x"}
    for credential in FORGED_CREDENTIALS:
        expected_error, expected_match = (
            (error, match)
            if credential is None
            else (psycopg.errors.InsufficientPrivilege, "the credential presented is not live")
        )
        try:
            with pytest.raises(expected_error, match=expected_match):
                insider.execute(
                    "SELECT FROM record_events(%s, %s, %s, %s)",
                    (credential, stream, expected, _items(event, meta=meta)),
                )
        finally:
            insider.rollback()


def _collected(winnings: int, units: int = 52) -> tuple[str, dict[str, Any]]:
    return (
        "Collected",
        {
            "reason": "player",
            "winnings": winnings,
            "currency": "GBP",
            "units": units,
            "server_seed": None,
            "deck": None,
            "ended_at": None,
        },
    )


def _refused_posting(conn: Conn, match: str, params: tuple[object, ...]) -> None:
    try:
        with pytest.raises(psycopg.errors.CheckViolation, match=match):
            conn.execute(POST, params)
    finally:
        conn.rollback()


@pytest.mark.parametrize("event_type", ["Collected", "BonusGranted"])
def test_winnings_caused_by_an_event_on_a_stream_of_the_insider_s_naming_are_refused(
    fresh_container: Container, insider: Conn, owner: Conn, event_type: str
) -> None:
    """Item 1: winnings from house-payouts to a player, caused by a well-formed Collected (or a
    made-up type) on 'payouts-manual': no such stream moves money (ledger_entry_of)."""
    world = World(fresh_container)
    player = world.player(balance=100)
    wallet = player_account(str(player.player_id), "GBP").account_id
    _, data = _collected(1_500_000)
    _not_recorded(
        insider,
        "payouts-manual",
        0,
        (event_type, data),
        psycopg.errors.CheckViolation,
        "stream payouts-manual is of no kind the service records",
    )
    _forge(owner, "payouts-manual", 0, (event_type, data))
    _refused_posting(
        insider,
        "has no cause: payouts-manual v1 moves no money",
        (
            uuid.uuid4(),
            "winnings:forged",
            "winnings",
            1_500_000,
            "payouts-manual",
            1,
            ["house-payouts:GBP", wallet],
            [-1_500_000, 1_500_000],
        ),
    )
    assert world.balance(player) == 100
    # the honest counterpart: a won game's winnings are posted, as its Collected says
    winner = world.player()
    gid = uuid.UUID(world.easy_game(winner).state.game_id)
    fresh_container.games.play(as_player(winner.player_id), gid, g.Draw())
    fresh_container.games.play(as_player(winner.player_id), gid, g.MoveCards("waste", "foundation"))
    collected = fresh_container.games.collect(as_player(winner.player_id), gid)
    assert collected.state.winnings > 0
    assert world.sandbox_balance(winner) == collected.state.winnings - 520


def test_winnings_above_a_game_s_own_paytable_are_refused(
    fresh_container: Container, insider: Conn, owner: Conn
) -> None:
    """A forged Collected on the player's own open game, paying 1,500,000 on a 520 stake (a full
    win pays 2,600): the SQL mapping pays only units x stake x M / max_units."""
    world = World(fresh_container)
    player = world.player(balance=520)
    game = world.game(player)
    stream = f"game-{game.state.game_id}"
    wallet = player_account(str(player.player_id), "GBP").account_id
    _not_recorded(
        insider,
        stream,
        game.state.version,
        _collected(1_500_000),
        psycopg.errors.InsufficientPrivilege,
        f"a Collected of game {game.state.game_id} is recorded by its player",
    )
    _forge(owner, stream, game.state.version, _collected(1_500_000))
    _refused_posting(
        insider,
        f"has no cause: {stream} v{game.state.version + 1} moves no money",
        (
            uuid.uuid4(),
            f"winnings:{game.state.game_id}",
            "winnings",
            1_500_000,
            stream,
            game.state.version + 1,
            ["house-payouts:GBP", wallet],
            [-1_500_000, 1_500_000],
        ),
    )
    assert world.balance(player) == 0


def test_a_deposit_from_one_player_s_wallet_to_another_s_is_refused(
    fresh_container: Container, insider: Conn, owner: Conn
) -> None:
    """Item 2: a 'deposit' moving money from A's wallet to B's, its cause in an invented stream,
    then on B's own stream: a deposit moves money from the cashier to the stream's player."""
    world = World(fresh_container)
    a, b = world.player(balance=10_000), world.player()
    wallet_a = player_account(str(a.player_id), "GBP").account_id
    wallet_b = player_account(str(b.player_id), "GBP").account_id
    deposited = {"amount": 10_000, "currency": "GBP", "transaction_id": "t-forged"}
    _not_recorded(
        insider,
        f"player-{b.player_id}",
        1,
        ("FundsDeposited", deposited),
        psycopg.errors.InsufficientPrivilege,
        "a FundsDeposited needs an operator",
    )
    _forge(owner, "transfers-manual", 0, ("FundsDeposited", deposited))
    args: list[object] = [
        uuid.uuid4(),
        "cashier:t-forged",
        "deposit",
        10_000,
        "transfers-manual",
        1,
        [wallet_a, wallet_b],
        [-10_000, 10_000],
    ]
    _refused_posting(insider, "has no cause: transfers-manual v1 moves no money", tuple(args))
    _forge(owner, f"player-{b.player_id}", 1, ("FundsDeposited", deposited))
    args[4:6] = [f"player-{b.player_id}", 2]
    _refused_posting(insider, f"is not what player-{b.player_id} v2 moves", tuple(args))
    assert (world.balance(a), world.balance(b)) == (10_000, 0)
    # the honest counterpart: the operator's deposit moves the cashier's money to B
    fresh_container.players.deposit(OPERATOR, b.player_id, 10_000, "t-honest")
    assert world.balance(b) == 10_000


def test_a_player_s_wallet_cannot_be_opened_as_a_house_account(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 4: a new player's 'player:<id>' opened as 'house-payouts', which has no floor: an
    account's kind follows from its id (accounts_kind_follows_id)."""
    player_id = uuid.uuid4()
    try:
        with pytest.raises(psycopg.errors.CheckViolation, match="accounts_kind_follows_id"):
            insider.execute(
                "SELECT open_accounts(%s, %s, %s, %s::uuid[])",
                ([f"player:{player_id}"], ["house-payouts"], ["GBP"], [None]),
            )
    finally:
        insider.rollback()
    # the honest counterpart: a registered player's wallet is a player wallet, never below zero
    player = World(fresh_container).player()
    with fresh_container.unit_of_work() as uow:
        assert uow.conn.execute(
            "SELECT kind FROM accounts WHERE account_id = %s", (f"player:{player.player_id}",)
        ).fetchone() == ("player",)
    with pytest.raises(InsufficientFunds):
        fresh_container.players.withdraw(OPERATOR, player.player_id, 1, "w-none")


@pytest.mark.parametrize("cause", ["missing", "money-less"])
def test_winnings_whose_cause_is_missing_or_moves_no_money_are_refused(
    fresh_container: Container, insider: Conn, cause: str
) -> None:
    """Found only afterwards before: a house-to-player posting naming a version the game never
    reached, or a Dealt (an event that moves no money)."""
    world = World(fresh_container)
    player = world.player(balance=520)
    game = world.game(player)
    stream = f"game-{game.state.game_id}"
    version = game.state.version + 50 if cause == "missing" else 2
    wallet = player_account(str(player.player_id), "GBP").account_id
    _refused_posting(
        insider,
        f"has no cause: {stream} v{version} moves no money",
        (
            uuid.uuid4(),
            f"winnings:{game.state.game_id}",
            "winnings",
            2_600,
            stream,
            version,
            ["house-payouts:GBP", wallet],
            [-2_600, 2_600],
        ),
    )
    assert world.balance(player) == 0
    # the honest counterpart: the stake the deal caused was posted, from this player
    with fresh_container.unit_of_work() as uow:
        assert uow.ledger.statement(wallet)[0].kind == "stake"


# --- who asks (issue 36, migrations/0030) ---------------------------------------------------------

MINT = "SELECT * FROM mint_session(%s, %s, %s, interval '8 hours', interval '30 minutes')"


def test_the_service_login_mints_no_staff_key_and_no_session(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 7: an operator key and a ten-year session written straight into the tables."""
    player = World(fresh_container).player()
    digest = hashlib.sha256(b"vsk_forged").hexdigest()
    _refused(
        insider,
        "INSERT INTO api_keys (key_id, name, role, key_hash)"
        " VALUES (%s, 'insider', 'operator', %s)",
        (uuid.uuid4(), digest),
    )
    _refused(
        insider,
        "INSERT INTO player_sessions (token_hash, player_id, created_by, expires_at)"
        " VALUES (%s, %s, 'insider', now() + interval '10 years')",
        (hashlib.sha256(b"vsp_forged").hexdigest(), player.player_id),
    )
    _refused(
        insider,
        "UPDATE player_sessions SET expires_at = now() + interval '10 years', revoked_at = NULL",
    )
    # the honest counterpart: the owner's login (the CLI's) makes a key, which mints a session
    key = fresh_container.access.create_key("desk", "operator")
    minted = fresh_container.access.open_session(_operator(fresh_container, key), player.player_id)
    assert fresh_container.access.authenticate(minted.token) is not None


def _operator(container: Container, key: str) -> RequestContext:
    principal = container.access.authenticate(key)
    assert principal is not None
    return RequestContext(principal.actor, credential=key)


@pytest.mark.parametrize("presented", ["none", "made-up", "a-player-s", "an-auditor-s", "revoked"])
def test_a_session_is_minted_only_with_a_live_operator_key(
    fresh_container: Container, insider: Conn, presented: str
) -> None:
    """The minting function, called as an attacker would: no credential, a made-up one, a real
    one of another role, a revoked operator key; each refused by the key check."""
    world = World(fresh_container)
    player = world.player()
    access = fresh_container.access
    credential: str | None = {
        "none": None,
        "made-up": "vsk_" + "x" * 43,
        "an-auditor-s": access.create_key(f"audit-{presented}", "auditor"),
    }.get(presented)
    if presented == "a-player-s":
        operator = _operator(fresh_container, access.create_key("desk-p", "operator"))
        credential = access.open_session(operator, player.player_id).token
    if presented == "revoked":
        credential = access.create_key("desk-r", "operator")
        access.revoke_key("desk-r")
    token_hash = hashlib.sha256(f"vsp_{uuid.uuid4()}".encode()).hexdigest()
    try:
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege,
            match="refused: this needs a live operator credential",
        ):
            insider.execute(MINT, (credential, player.player_id, token_hash))
    finally:
        insider.rollback()
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="live operator"):
            insider.execute("SELECT revoke_player_sessions(%s, %s)", (credential, player.player_id))
    finally:
        insider.rollback()
    # the honest counterpart: a live operator key mints it
    key = access.create_key(f"desk-ok-{presented}", "operator")
    minted = insider.execute(MINT, (key, player.player_id, token_hash)).fetchone()
    insider.commit()
    assert minted is not None


def test_a_session_is_touched_only_with_its_token_not_its_hash(
    fresh_container: Container, insider: Conn
) -> None:
    """The table's hashes are readable: presenting one touches nothing and names nobody."""
    access = fresh_container.access
    player = World(fresh_container).player()
    operator = _operator(fresh_container, access.create_key("desk-t", "operator"))
    token = access.open_session(operator, player.player_id).token
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert insider.execute("SELECT * FROM touch_session(%s)", (digest,)).fetchall() == []
    assert insider.execute("SELECT revoke_session(%s)", (digest,)).fetchone() == (None,)
    insider.rollback()
    # the honest counterpart: the token itself
    touched = insider.execute("SELECT player_id FROM touch_session(%s)", (token,)).fetchall()
    insider.commit()
    assert touched == [(player.player_id,)]


# --- what an append means, and who asks for it (issue 36, migrations/0031-0032) ----------------

RECORD = "SELECT FROM record_events(%s, %s, %s, %s)"


def _encoded(*events: Any, meta: dict[str, Any]) -> str:
    """Catalog events as record_events takes them, with the metadata the insider chooses."""
    new = [NewEvent.of(event, meta) for event in events]
    return append_params("insider", new, 0)["events"]  # type: ignore[no-any-return]


def _as(credential: str | None, container: Container) -> dict[str, Any]:
    """The metadata an insider writes for the credential presented: its holder's, so the actor
    check passes and the rule named is the one that stops it."""
    if credential is None or not credential.startswith(("vsk_", "vsp_")):
        return {"actor": "system", "role": "system", "request_id": "forged"}
    principal = container.access.authenticate(credential)
    if principal is None:
        return {"actor": "nobody", "role": "operator", "request_id": "forged"}
    return {"actor": principal.actor.id, "role": principal.actor.role, "request_id": "forged"}


def _recording_refused(
    insider: Conn,
    container: Container,
    credential: str | None,
    stream: str,
    expected: int,
    events: tuple[Any, ...],
    error: type[psycopg.Error],
    match: str,
) -> None:
    items = _encoded(*events, meta=_as(credential, container))
    try:
        with pytest.raises(error, match=match):
            insider.execute(RECORD, (credential, stream, expected, items))
    finally:
        insider.rollback()


NOT_LIVE = (psycopg.errors.InsufficientPrivilege, "the credential presented is not live")


def test_a_forged_deposit_needs_an_operator_s_key(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 3: FundsDeposited on a player's stream, presented with no credential, a made-up
    one, the player's own session or an auditor's key: only an operator records a deposit."""
    world = World(fresh_container)
    player = world.player()
    stream = f"player-{player.player_id}"
    event = FundsDeposited(1_000_000, "GBP", "forged")
    auditor = staff(fresh_container, "auditor").credential
    needs = (psycopg.errors.InsufficientPrivilege, "a FundsDeposited needs an operator")
    for credential, (error, match) in (
        (None, needs),
        ("vsk_" + "f" * 43, NOT_LIVE),
        (player_token(player.player_id), needs),
        (auditor, (psycopg.errors.InsufficientPrivilege, "the auditor role records nothing")),
    ):
        _recording_refused(insider, fresh_container, credential, stream, 1, (event,), error, match)
    assert world.balance(player) == 0
    # the honest counterpart: the operator's deposit
    fresh_container.players.deposit(OPERATOR, player.player_id, 1_000, "honest")
    assert world.balance(player) == 1_000


def _deal_of(player_id: uuid.UUID, seed: bytes) -> tuple[str, tuple[Any, ...]]:
    """A deal an insider makes up: a Klondike game from a seed of its own choosing, exactly as
    the service's decider would record it."""
    game_id = uuid.uuid4()
    table = paytable_for(default_paytables(), "GBP")
    deck = shuffle.derive_deck(seed)
    start = g.StartGame(
        game_id=str(game_id),
        player_id=str(player_id),
        variant="vegas-draw1",
        stake=520,
        paytable=table,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(seed),
        now=datetime.now(UTC),
    )
    return f"game-{game_id}", tuple(g.decide(g.INITIAL, start))


def test_a_game_dealt_from_a_seed_of_the_insider_s_choosing_is_refused(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 5: a winning deal made up and recorded for a player: only that player deals their
    game (an operator only a certification one)."""
    world = World(fresh_container)
    player, other = world.player(balance=5_000), world.player(balance=5_000)
    stream, events = _deal_of(player.player_id, b"\x07" * 32)
    game_id = stream.removeprefix("game-")
    for credential, (error, match) in (
        (None, (psycopg.errors.InsufficientPrivilege, "StakePlaced of game .* by its player")),
        ("vsp_" + "f" * 43, NOT_LIVE),
        (player_token(other.player_id), (psycopg.errors.InsufficientPrivilege, "not this player")),
        (
            staff(fresh_container).credential,
            (psycopg.errors.InsufficientPrivilege, "an operator records a game's void"),
        ),
    ):
        _recording_refused(insider, fresh_container, credential, stream, 0, events, error, match)
    with fresh_container.unit_of_work() as uow:
        assert uow.events.stream_version(stream) == 0
    del game_id
    # the honest counterpart: the player deals their own game
    dealt = world.game(player)
    assert dealt.state.player_id == str(player.player_id)


def test_a_seed_is_kept_only_at_its_deal_for_a_commitment_of_its_own(
    fresh_container: Container, insider: Conn, owner: Conn
) -> None:
    """Item 6, the seed oracle: a live game's ciphertext kept for a fake deal that carries its
    commitment. Refused to the service's login for any game not dealt in its transaction, and
    even to the owner for a deal whose commitment another game has."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    live = world.game(player)
    with fresh_container.unit_of_work() as uow:
        row = uow.conn.execute(
            "SELECT key_id, ciphertext FROM game_seeds WHERE game_id = %s",
            (uuid.UUID(live.state.game_id),),
        ).fetchone()
    assert row is not None
    key_id, ciphertext = row
    for game in (uuid.uuid4(), uuid.UUID(live.state.game_id)):
        try:
            with pytest.raises(
                psycopg.errors.CheckViolation, match="not dealt in this transaction"
            ):
                insider.execute("SELECT keep_seed(%s, %s, %s, 'seed')", (game, key_id, ciphertext))
        finally:
            insider.rollback()
    # around the service: a fake deal carrying the live game's commitment, then its secret
    stream, events = _deal_of(player.player_id, b"\x09" * 32)
    assert live.state.info is not None
    taken = live.state.info.seed_commitment
    forged = tuple(replace(e, seed_commitment=taken) if isinstance(e, Dealt) else e for e in events)
    with pytest.raises(psycopg.errors.CheckViolation, match="no other game or duel has"):
        _deal_and_keep(owner, stream, forged, key_id, ciphertext)
    # the honest counterpart: every deal keeps its own secret, at its deal
    again = world.game(world.player(balance=5_000))
    with fresh_container.unit_of_work() as uow:
        assert uow.seeds.get(uuid.UUID(again.state.game_id)) is not None


def _deal_and_keep(
    owner: Conn, stream: str, events: tuple[Any, ...], key_id: str, ciphertext: bytes
) -> None:
    """A deal recorded and its secret kept in one transaction, as the owner: the most an
    insider around the service could do."""
    with owner.transaction():
        owner.execute(
            "SELECT FROM append_events(%s, 0, %s)",
            (stream, _encoded(*events, meta={"actor": "x", "role": "player"})),
        )
        game_id = uuid.UUID(stream.removeprefix("game-"))
        owner.execute("SELECT keep_seed(%s, %s, %s, 'seed')", (game_id, key_id, ciphertext))


def test_the_service_login_cannot_re_encrypt_a_secret(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 10: rekey_seed with garbage made a game uncollectable; re-encryption is the owner's
    (the CLI's `seeds rotate`)."""
    world = World(fresh_container)
    game = world.game(world.player(balance=520))
    _refused(
        insider,
        "SELECT rekey_seed(%s, 'k2', '\\x00'::bytea)",
        (uuid.UUID(game.state.game_id),),
    )
    # the honest counterpart: the game collects with its secret as kept
    collected = fresh_container.games.collect(
        as_player(uuid.UUID(game.state.player_id)), uuid.UUID(game.state.game_id)
    )
    assert collected.state.status == "collected"


def test_nothing_follows_a_game_s_end(fresh_container: Container, insider: Conn) -> None:
    """Found only afterwards before: a second Collected on a finished game. Even with the
    player's own session, nothing is recorded after a game's end."""
    world = World(fresh_container)
    player = world.player(balance=520)
    game = world.game(player)
    me = as_player(player.player_id)
    done = fresh_container.games.collect(me, uuid.UUID(game.state.game_id))
    stream = f"game-{game.state.game_id}"
    again = Collected("player", 2_600, "GBP", 52, "ab" * 32)
    for credential in (None, player_token(player.player_id)):
        _recording_refused(
            insider,
            fresh_container,
            credential,
            stream,
            done.state.version,
            (again,),
            psycopg.errors.CheckViolation,
            "has ended: nothing follows its Collected",
        )
    assert world.balance(player) == 0


def test_an_auto_complete_on_an_open_game_is_recorded_only_by_its_player(
    fresh_container: Container, insider: Conn
) -> None:
    """Found only afterwards before: an illegal AutoCompleted on an open game, which the player
    then collected and the service paid."""
    world = World(fresh_container)
    player = world.player(balance=520)
    game = world.game(player)
    stream = f"game-{game.state.game_id}"
    auto = AutoCompleted(tuple(AutoMove("stock", "foundation:0", "AS") for _ in range(3)))
    _recording_refused(
        insider,
        fresh_container,
        None,
        stream,
        game.state.version,
        (auto,),
        psycopg.errors.InsufficientPrivilege,
        "a AutoCompleted of game .* is recorded by its player",
    )
    # the honest counterpart: the player plays it
    fresh_container.games.play(as_player(player.player_id), uuid.UUID(game.state.game_id), g.Draw())


def test_a_self_exclusion_is_never_ended_by_a_forged_exclusion(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 9: PlayerExcluded (24 hours, ended yesterday) appended over a five-year
    self-exclusion. Only the player or an operator records one, and even then an exclusion
    only ever extends."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    fresh_container.safer.exclude(as_player(player.player_id), player.player_id, "five-years")
    stream = f"player-{player.player_id}"
    yesterday = instant(datetime.now(UTC) - timedelta(days=1))
    ended = PlayerExcluded("24-hours", "time-out", yesterday)
    shorter = PlayerExcluded("24-hours", "time-out", instant(datetime.now(UTC) + timedelta(days=1)))
    version = _version(fresh_container, stream)
    for credential, event, (error, match) in (
        (None, ended, (psycopg.errors.InsufficientPrivilege, "or an operator records")),
        ("vsk_" + "f" * 43, ended, NOT_LIVE),
        (OPERATOR.credential, ended, (psycopg.errors.CheckViolation, "only ever extends")),
        (OPERATOR.credential, shorter, (psycopg.errors.CheckViolation, "only ever extends")),
    ):
        _recording_refused(
            insider, fresh_container, credential, stream, version, (event,), error, match
        )
    found = fresh_container.safer.exclusion(player.player_id)
    assert found is not None
    assert found.kind == "self-exclusion"
    # the honest counterpart: a time-out taken while none is in force
    other = world.player()
    fresh_container.safer.exclude(as_player(other.player_id), other.player_id, "24-hours")


@pytest.mark.parametrize("limit", ["deposit-day", "max-stake"])
def test_a_limit_is_never_loosened_sooner_than_24_hours(
    fresh_container: Container, insider: Conn, limit: str
) -> None:
    """Item 9: LimitChanged events lifting a deposit limit and a maximum stake at once."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    me = as_player(player.player_id)
    fresh_container.safer.set_limit(me, player.player_id, limit, 520)
    stream = f"player-{player.player_id}"
    now = instant(datetime.now(UTC))
    for value in (None, 100_000):
        lifted = LimitChanged(limit, 520, value, now)
        version = _version(fresh_container, stream)
        for credential, (error, match) in (
            (None, (psycopg.errors.InsufficientPrivilege, "or an operator records")),
            (OPERATOR.credential, (psycopg.errors.CheckViolation, "a looser limit waits 24 hours")),
            (player_token(player.player_id), (psycopg.errors.CheckViolation, "waits 24 hours")),
        ):
            _recording_refused(
                insider, fresh_container, credential, stream, version, (lifted,), error, match
            )
    shown = fresh_container.safer.limits(player.player_id).limits
    assert [v.value for v in shown if v.limit == limit] == [520]
    # the honest counterpart: stricter at once, looser a day later
    fresh_container.safer.set_limit(me, player.player_id, limit, 104)
    fresh_container.safer.set_limit(me, player.player_id, limit, 1_040)
    shown = fresh_container.safer.limits(player.player_id).limits
    assert [(v.value, v.pending) for v in shown if v.limit == limit] == [(104, 1_040)]


def test_gaming_is_switched_back_on_only_by_an_operator(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 9: GamingSwitched turning back on a player blocked for an AML review, and a game
    disabled for an RNG defect."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    controls = fresh_container.controls
    controls.switch(OPERATOR, "player", str(player.player_id), False, "AML review")
    controls.switch(OPERATOR, "game", "golf", False, "RNG defect")
    version = _version(fresh_container, "gaming-controls")
    for scope, target in (("player", str(player.player_id)), ("game", "golf")):
        on = GamingSwitched(scope, target, True, "cleared")
        for credential, (error, match) in (
            (None, (psycopg.errors.InsufficientPrivilege, "only an operator switches gaming")),
            ("vsk_" + "f" * 43, NOT_LIVE),
            (
                player_token(player.player_id),
                (psycopg.errors.InsufficientPrivilege, "only an operator switches gaming"),
            ),
        ):
            _recording_refused(
                insider,
                fresh_container,
                credential,
                "gaming-controls",
                version,
                (on,),
                error,
                match,
            )
    with pytest.raises(Disabled):
        world.game(player)
    # the honest counterpart: an operator switches the player back on
    controls.switch(OPERATOR, "player", str(player.player_id), True, "cleared")
    world.game(player)


def _version(container: Container, stream: str) -> int:
    with container.unit_of_work() as uow:
        return uow.events.stream_version(stream)


def test_without_a_credential_a_game_is_collected_only_once_idle_past_the_policy(
    fresh_container: Container, insider: Conn, owner: Conn
) -> None:
    """What the service's own tasks may record is what the database's clock decides: a game
    collected as timed out before it has lain idle past collection_policy is refused."""
    world = World(fresh_container)
    game = world.game(world.player(balance=520))
    stream = f"game-{game.state.game_id}"
    timeout = Collected("timeout", 0, "GBP", 0, "ab" * 32)
    _recording_refused(
        insider,
        fresh_container,
        None,
        stream,
        game.state.version,
        (timeout,),
        psycopg.errors.InsufficientPrivilege,
        "may only be collected once idle past the policy",
    )
    # the honest counterpart: a day on, on the database's clock, the collector may
    owner.execute("UPDATE test_clock SET ahead = interval '25 hours'")
    items = _encoded(timeout, meta=_as(None, fresh_container))
    insider.execute(RECORD, (None, stream, game.state.version, items))
    insider.rollback()


def test_a_duel_s_seats_finish_and_settle_by_its_own_rules(
    fresh_container: Container, insider: Conn
) -> None:
    """A seat finished by another player, a full duel cancelled as unfilled, a duel settled
    before its seats have finished: each refused, whatever credential the insider presents."""
    world = World(fresh_container)
    a, b = world.player(balance=5_000), world.player(balance=5_000)
    joined = fresh_container.duels.join(as_player(a.player_id), a.player_id, 500)
    assert joined.state.opened is not None
    duel_id = uuid.UUID(joined.state.opened.duel_id)
    full = fresh_container.duels.join(as_player(b.player_id), b.player_id, 500)
    stream, version = f"duel-{duel_id}", full.state.version
    now = instant(datetime.now(UTC))
    payouts = (Payout(0, str(a.player_id), 900),)
    for credential, event, (error, match) in (
        (
            player_token(b.player_id),
            SeatFinished(0, None, 0, 0, "player", now),
            (psycopg.errors.InsufficientPrivilege, "is finished by its player"),
        ),
        (
            None,
            DuelCancelled("not-filled", (), False, "ab" * 32),
            (psycopg.errors.CheckViolation, "cancelled unfilled only after its fill-by time"),
        ),
        (
            player_token(a.player_id),
            DuelSettled(1_000, 100, payouts, "ab" * 32),
            (psycopg.errors.CheckViolation, "settles once every seat has finished"),
        ),
    ):
        _recording_refused(
            insider, fresh_container, credential, stream, version, (event,), error, match
        )
    # the honest counterpart: both seats deal and stop, and the duel settles
    for player in (a, b):
        me = as_player(player.player_id)
        fresh_container.duels.deal(me, duel_id, player.player_id)
        fresh_container.duels.play(me, duel_id, player.player_id, g.Collect())
    assert fresh_container.duels.duel(duel_id).state.status == "settled"


def test_an_event_names_the_one_asking(fresh_container: Container, insider: Conn) -> None:
    """An event's actor is the credential's holder, and a reality check is acknowledged only in
    the session presented."""
    world = World(fresh_container)
    player, other = world.player(balance=520), world.player()
    game = world.game(player)
    stream = f"game-{game.state.game_id}"
    token = player_token(player.player_id)
    drawn = CardDrawn("stock", "waste", ("AS",))
    posing = {"actor": str(other.player_id), "role": "player", "request_id": "forged"}
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="names another actor"):
            insider.execute(
                RECORD, (token, stream, game.state.version, _encoded(drawn, meta=posing))
            )
    finally:
        insider.rollback()
    ack = RealityCheckAcknowledged(
        "2020-01-01T00:00:00.000000Z", instant(datetime.now(UTC)), 60, 0, 0, 0
    )
    _recording_refused(
        insider,
        fresh_container,
        token,
        f"player-{player.player_id}",
        _version(fresh_container, f"player-{player.player_id}"),
        (ack,),
        psycopg.errors.InsufficientPrivilege,
        "only the player acknowledges a reality check, in its own session",
    )
    # the honest counterpart: the player's own draw, named as the player
    mine = {"actor": str(player.player_id), "role": "player", "request_id": "honest"}
    insider.execute(RECORD, (token, stream, game.state.version, _encoded(drawn, meta=mine)))
    insider.rollback()


# --- the read models the checks rely on (issue 36, item 10, migrations/0033) -------------------


def test_an_open_game_s_history_row_is_neither_deleted_nor_ended_by_the_service_login(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 10: an open game's game_history row deleted, so the player deals a second game while
    the first is open and idle collection forgets it."""
    world = World(fresh_container)
    player = world.player(balance=5_000)
    game = world.game(player)
    game_id = uuid.UUID(game.state.game_id)
    _refused(insider, "DELETE FROM game_history WHERE game_id = %s", (game_id,))
    _refused(insider, "UPDATE game_history SET ended_at = now() WHERE game_id = %s", (game_id,))
    _refused(insider, "SELECT save_game_history(NULL::game_history)")
    with fresh_container.unit_of_work() as uow:
        row = uow.projections.game_row(game_id)
    assert row is not None
    ended = history_json(replace(row, ended_at=datetime.now(UTC), status="collected"))
    for args, match in (
        ((game_id, None), "has its history row: it is not removed"),
        ((game_id, ended), "is not what its log says"),
    ):
        try:
            with pytest.raises(psycopg.errors.CheckViolation, match=match):
                insider.execute("SELECT restore_game_history(%s, %s::jsonb)", args)
        finally:
            insider.rollback()
    # the honest counterpart: the game is still the player's open one
    with pytest.raises(GameInProgress):
        world.game(player)
    assert fresh_container.players.wallet(player.player_id).open_game_id == game_id


def test_players_external_refs_are_not_swapped_by_the_service_login(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 10: two players' external_ref swapped, so an operator's registration of one casino
    customer answers the other's id and their deposits land in the wrong wallet."""
    world = World(fresh_container)
    a, b = world.player(), world.player()
    _refused(
        insider,
        "UPDATE players SET external_ref = CASE player_id WHEN %s THEN %s ELSE %s END"
        " WHERE player_id IN (%s, %s)",
        (a.player_id, b.external_ref, a.external_ref, a.player_id, b.player_id),
    )
    _refused(insider, "DELETE FROM players WHERE player_id = %s", (a.player_id,))
    _refused(
        insider,
        "INSERT INTO players VALUES (%s, 'someone-else', 'GBP', now())",
        (uuid.uuid4(),),
    )
    # the honest counterpart: the operator's registration of a's customer answers a
    again = fresh_container.players.open_account(OPERATOR, a.external_ref, "GBP")
    assert (again.row.player_id, again.created) == (a.player_id, False)
    assert insider.execute("SELECT restore_player(%s)", (a.player_id,)).fetchone() == (1,)
    insider.rollback()


# --- reconciliations ------------------------------------------------------------------------------


def test_a_stored_reconciliation_cannot_be_replaced_from_the_future(
    fresh_container: Container, insider: Conn, fresh_admin_conn: Conn
) -> None:
    day = datetime.now(UTC).date()
    with fresh_container.audit_unit_of_work() as uow:
        finance.store_reconciliation(uow, day)
    forged = {"date": day.isoformat(), "currencies": {}, "mismatches": [], "reconciled": True}
    _refused(
        insider,
        "INSERT INTO reconciliations (day, computed_at, result) VALUES (%s, %s, %s)",
        (day, datetime.now(UTC) + timedelta(days=1), Jsonb(forged)),
    )
    # A stored reconciliation is the audit's answer: the audited may not store one (0037).
    _refused(insider, "SELECT store_reconciliation(%s, %s)", (day, Jsonb(forged)))
    with fresh_container.audit_unit_of_work() as uow:
        stamped = uow.conn.execute(
            "SELECT store_reconciliation(%s, %s), statement_timestamp()", (day, Jsonb(forged))
        ).fetchone()
    assert stamped is not None
    assert stamped[0] == stamped[1]  # the server's time, not the caller's

    fresh_admin_conn.execute(
        "INSERT INTO reconciliations (day, computed_at, result) VALUES (%s, %s, %s)",
        (day, datetime.now(UTC) + timedelta(days=1), Jsonb(forged)),
    )
    checks = {c for c, _ in _log_checks(_run(fresh_container, audit.Scope("all")))}
    assert checks == {"reconciliation-time"}


# --- sealed secrets -------------------------------------------------------------------------------


def test_a_game_s_sealed_secret_cannot_be_swapped_for_another_s(
    fresh_container: Container, insider: Conn, fresh_admin_conn: Conn
) -> None:
    """Refused to the service login; swapped around it, the game refuses to deal from a secret
    its commitment does not name, and nothing is applied."""
    world = World(fresh_container)
    a, b = world.player(balance=5_000), world.player(balance=5_000)
    game_a, game_b = world.game(a), world.game(b)
    id_a, id_b = uuid.UUID(game_a.state.game_id), uuid.UUID(game_b.state.game_id)
    _refused(
        insider,
        "UPDATE game_seeds SET ciphertext = (SELECT ciphertext FROM game_seeds WHERE game_id = %s)"
        " WHERE game_id = %s",
        (id_b, id_a),
    )
    _refused(insider, "DELETE FROM game_seeds WHERE game_id = %s", (id_a,))
    _tamper(
        fresh_admin_conn,
        "UPDATE game_seeds SET ciphertext = (SELECT ciphertext FROM game_seeds WHERE game_id = %s)"
        " WHERE game_id = %s",
        id_b,
        id_a,
    )
    other = build(fresh_container.settings, migrate=False)  # a worker that never saw the deal
    try:
        with pytest.raises(IntegrityBreach, match=str(id_a)):
            other.games.play(as_player(a.player_id), id_a, g.Draw())
        other.games.play(as_player(b.player_id), id_b, g.Draw())  # b's is untouched
    finally:
        other.close()
    with fresh_container.unit_of_work() as uow:
        assert uow.events.stream_version(f"game-{id_a}") == game_a.state.version


# --- upgrade in place -----------------------------------------------------------------------------

#: What the release before migrations/0016 wrote with its INSERT and UPDATE grants (its
#: service/storage SQL, kept here as that release's writer): accounts, postings, a game's
#: secret and a checkpoint.
OLDER_WRITES = {
    "service.storage.ledger.ENSURE_ACCOUNTS_SQL": """
WITH wanted AS (
    SELECT * FROM unnest(%(ids)s::text[], %(kinds)s::text[], %(currencies)s::text[],
                         %(players)s::uuid[]) AS a(account_id, kind, currency, player_id)
), opened AS (
    INSERT INTO accounts (account_id, kind, currency, player_id)
    SELECT account_id, kind, currency, player_id FROM wanted
    ON CONFLICT (account_id) DO NOTHING
    RETURNING account_id, kind, currency
)
INSERT INTO account_balances (account_id, kind, currency, balance)
SELECT account_id, kind, currency, 0 FROM opened
""",
    "service.storage.ledger.POST_SQL": """
WITH wanted AS (
    SELECT * FROM unnest(%(accounts)s::text[], %(amounts)s::bigint[]) AS p(account_id, amount)
), moved AS (
    UPDATE account_balances b
       SET balance = b.balance + w.amount
      FROM wanted w
     WHERE b.account_id = w.account_id
       AND b.currency = %(currency)s
       AND (b.kind <> 'player' OR b.balance + w.amount >= 0)
    RETURNING b.account_id, w.amount, b.balance - w.amount AS before, b.balance AS after
), tx AS (
    INSERT INTO ledger_transactions (transaction_id, client_transaction_id, kind, fingerprint,
                                     currency, amount, cause_stream, cause_version, request_id)
    VALUES (%(transaction_id)s, %(client_transaction_id)s, %(kind)s, %(fingerprint)s,
            %(currency)s, %(amount)s, %(cause_stream)s, %(cause_version)s, %(request_id)s)
    RETURNING transaction_id, created_at
)
INSERT INTO postings (transaction_id, account_id, amount, balance_before, balance_after,
                      cause_stream, cause_version)
SELECT tx.transaction_id, m.account_id, m.amount, m.before, m.after,
       %(cause_stream)s, %(cause_version)s
  FROM moved m CROSS JOIN tx
RETURNING posting_id, account_id, amount, balance_before, balance_after, created_at
""",
    "service.storage.seeds.INSERT_SQL": """
INSERT INTO game_seeds (game_id, key_id, ciphertext, kind)
VALUES (%(game_id)s, %(key_id)s, %(ciphertext)s, %(kind)s)
""",
    # It appended through append_events (0014), asking nobody's credential, and wrote the test
    # sessions World.player mints as it wrote sessions, straight into the table.
    "service.storage.recording.RECORD_SQL": """
SELECT position, version, recorded_at, prev_hash, hash
  FROM append_events(%(stream_id)s, %(expected_version)s, %(events)s)
""",
    "service.storage.game_writes.RECORD_SQL": """
SELECT position, version, recorded_at, prev_hash, hash
  FROM record_game_events(%(stream_id)s, %(expected_version)s, %(events)s,
                          %(history)s::text::jsonb, %(over)s, %(snapshot)s, %(snapshot_mac)s)
""",
    "tests.credentials.MINT_SQL": """
INSERT INTO player_sessions (created_by, player_id, token_hash, expires_at)
VALUES ('scratch-operator' || left(%s, 0), %s, %s, statement_timestamp() + interval '24 hours')
""",
    "service.storage.checkpoints.INSERT_SQL": """
WITH added AS (
    INSERT INTO log_checkpoints (seq, position, message, signature, key_id, requested_by,
                                 created_at)
    VALUES (%(seq)s, %(position)s, %(message)s, %(signature)s, %(key_id)s, %(requested_by)s,
            %(created_at)s)
    RETURNING seq
)
INSERT INTO checkpoint_heads (seq, stream_id, version, hash)
SELECT added.seq, h.stream_id, h.version, h.hash
  FROM added, unnest(%(streams)s::text[], %(versions)s::int[], %(hashes)s::text[])
       AS h(stream_id, version, hash)
""",
}


def test_a_database_of_the_release_before_upgrades_in_place_and_still_verifies(
    fresh_container: Container, monkeypatch: pytest.MonkeyPatch, admin_server_url: str
) -> None:
    """History written through the older grants (migrations up to 0015), then 0016 applied in
    place: every stream, posting and checkpoint still verifies, and the service goes on from
    them through the functions."""
    with bare_database(admin_server_url, "vegas_test_upgrade") as found:
        migrate_through(found.owner_url, "0015.advantage-play")
        settings = replace(
            fresh_container.settings,
            database_url=found.service_url,
            audit_database_url=found.audit_url,
            background_database_url=found.background_url,
        )

        for constant, sql_text in OLDER_WRITES.items():
            monkeypatch.setattr(constant, sql_text)
        # It wrote the players row itself (migrations/0033's trigger writes it since).
        registering = Players.open_account

        def open_account(self: Players, *args: Any, **kwargs: Any) -> Any:
            opened = registering(self, *args, **kwargs)
            with psycopg.connect(found.owner_url, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO players (player_id, external_ref, currency, created_at)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    astuple(opened.row),
                )
            return opened

        monkeypatch.setattr(Players, "open_account", open_account)
        # The release before had no limits (0017) nor switches (0019): it checked none.
        monkeypatch.setattr(SaferGambling, "check_wager_in", lambda *_: None)
        monkeypatch.setattr(SaferGambling, "check_deposit_in", lambda *_: None)
        monkeypatch.setattr(Controls, "check_open_in", lambda *_: None)
        # It read the player unlocked, under the writers' lock (0036 has lock_player).
        monkeypatch.setattr("service.storage.projections.PLAYER_LOCKED_SQL", PLAYER_SQL)
        before = build(settings, migrate=False)
        try:
            world = World(before)
            player = world.player(balance=5_000)
            game = world.game(player)
            game_id = uuid.UUID(game.state.game_id)
            before.games.play(as_player(player.player_id), game_id, g.Draw())
            before.games.collect(as_player(player.player_id), game_id)
            first, _ = sign_checkpoint(before, "beat")
        finally:
            before.close()
        monkeypatch.undo()

        applied = db.migrate(found.owner_url)
        assert {"0016.functions-not-tables", "0017.safer-gambling", "0019.gaming-controls"} <= set(
            applied
        )
        prepare_scratch(found.owner_url)  # the operator key the tests present from here on
        after = build(settings, migrate=False)
        try:
            assert _run(after, audit.Scope("all")).findings == ()
            world = World(after)
            world.player(balance=700)
            after.games.collect(
                as_player(player.player_id), uuid.UUID(world.game(player).state.game_id)
            )
            second, made = sign_checkpoint(after, "beat")
            assert made
            assert second.seq == first.seq + 1
            assert _run(after, audit.Scope("all")).findings == ()
        finally:
            after.close()


# --- safer gambling -------------------------------------------------------------------------------


def test_a_player_s_limit_cannot_be_lifted_by_the_service_login(
    fresh_container: Container, insider: Conn
) -> None:
    """The limits the service enforces change only as a LimitChanged is appended to the log
    (migrations/0017): the service's login can neither edit, delete nor add a limit row, nor
    call the trigger's function."""
    player = World(fresh_container).player(balance=0)
    fresh_container.safer.set_limit(as_player(player.player_id), player.player_id, "loss-day", 520)
    _refused(insider, "UPDATE player_limits SET value = NULL")
    _refused(insider, "DELETE FROM player_limits")
    _refused(
        insider,
        "INSERT INTO player_limits VALUES (%s, 'max-stake', NULL, 10, now(), now())",
        (player.player_id,),
    )
    _refused(insider, "SELECT project_limit_change()")
    limits = fresh_container.safer.limits(player.player_id).limits
    assert [v.value for v in limits if v.limit == "loss-day"] == [520]


def test_a_player_s_exclusion_cannot_be_ended_by_the_service_login(
    fresh_container: Container, insider: Conn
) -> None:
    """An exclusion the service enforces changes only as a PlayerExcluded is appended
    (migrations/0018)."""
    player = World(fresh_container).player(balance=0)
    fresh_container.safer.exclude(as_player(player.player_id), player.player_id, "six-months")
    _refused(insider, "UPDATE player_exclusions SET until = now()")
    _refused(insider, "DELETE FROM player_exclusions")
    _refused(insider, "SELECT project_exclusion()")
    found = fresh_container.safer.exclusion(player.player_id)
    assert found is not None
    assert found.kind == "self-exclusion"


#: What the safer-gambling checks read, and a column of each.
SAFER_GAMBLING_TABLES = {
    "player_limits": "value",
    "player_exclusions": "until",
    "gaming_controls": "enabled",
    "player_reality_checks": "acknowledged_at",
}


def test_the_service_login_only_reads_what_safer_gambling_enforces(
    fresh_container: Container, insider: Conn
) -> None:
    """Every table the safer-gambling checks read is written only by the triggers on the log
    (migrations/0017-0020)."""
    for table, column in SAFER_GAMBLING_TABLES.items():
        name = sql.Identifier(table)
        _refused(insider, sql.SQL("DELETE FROM {}").format(name).as_string(insider))
        update = sql.SQL("UPDATE {} SET {} = NULL").format(name, sql.Identifier(column))
        _refused(insider, update.as_string(insider))
    _refused(insider, "SELECT project_reality_check()")
    _refused(insider, "SELECT project_gaming_switch()")
