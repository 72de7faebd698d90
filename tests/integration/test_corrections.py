"""An operator's correction answers a withdrawal's hold (issue 36, migrations/0041;
service/services/corrections.py): what the audit found stays in the log, the correction names
it and moves the money back, and the held withdrawal, asked again, pays. Through the real
PostgreSQL as each login, and over HTTP."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from events.catalog import BalanceCorrected, FindingNamed
from service.app import create_app
from service.bootstrap import Container
from service.errors import InvalidArgument, NotFound, WithdrawalHeld
from service.services.verification import verify_behind
from tests.credentials import staff
from tests.integration.conftest import OPERATOR, World, player_token
from tests.integration.test_audit import _tamper
from tests.integration.test_insider import RECORD, _as, _encoded
from tests.integration.test_withdrawal_gate import _head, _played, _point

Conn = psycopg.Connection[tuple[Any, ...]]


def _held(container: Container, admin: Conn) -> tuple[Any, WithdrawalHeld]:
    """A player whose game's record was edited around every grant (its stake), and the hold
    their withdrawal met."""
    world = World(container)
    player, game_id = _played(world)
    _tamper(
        admin,
        "UPDATE events SET data = jsonb_set(data, '{stake}', '1') WHERE stream_id = %s"
        " AND version = 1",
        f"game-{game_id}",
    )
    with pytest.raises(WithdrawalHeld) as held:
        container.players.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    return player, held.value


def _holds(admin: Conn, player_id: uuid.UUID) -> int:
    row = admin.execute(
        "SELECT count(*) FROM significant_events WHERE kind = 'withdrawal-held' AND player_id = %s",
        (player_id,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _version(admin: Conn, player_id: uuid.UUID) -> int:
    row = admin.execute(
        "SELECT max(version) FROM events WHERE stream_id = %s", (f"player-{player_id}",)
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_held_withdrawal_pays_once_an_operator_s_correction_answers_its_hold(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    c = fresh_container
    world = World(c)
    player, held = _held(c, fresh_admin_conn)
    before = world.balance(player)
    at = _version(fresh_admin_conn, player.player_id)
    # A hold not this player's, or a finding the hold does not name: refused, nothing recorded.
    with pytest.raises(NotFound):
        c.corrections.correct(OPERATOR, player.player_id, held.hold + 10_000, "no such hold")
    made_up = {"check": "ledger", "location": "posting 1", "expected": "x", "found": "y"}
    with pytest.raises(InvalidArgument, match="findings"):
        c.corrections.correct(OPERATOR, player.player_id, held.hold, "r", findings=[made_up])
    assert _version(fresh_admin_conn, player.player_id) == at
    # The operator takes back what the edited stake would have paid for, naming every finding.
    done = c.corrections.correct(
        OPERATOR,
        player.player_id,
        held.hold,
        "game's stake edited in the database; its value taken back",
        amount=519,
        direction="debit",
        account="house-stakes",
    )
    assert done.transaction is not None
    assert (done.transaction.kind, done.transaction.amount) == ("correction", 519)
    assert {p.account_id: p.amount for p in done.transaction.postings} == {
        f"player:{player.player_id}": -519,
        "house-stakes:GBP": 519,
    }
    assert set(held.checks) <= {f.check for f in done.event.findings}
    assert world.balance(player) == before - 519
    # What was found stays found; the correction answers it, so the withdrawal pays.
    c.players.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    assert world.balance(player) == before - 519 - 1_000
    assert _point(c, player.player_id) == _head(c, player.player_id)
    # A retry of the correction under its Idempotency-Key answers it, moving nothing again.
    keyed = replace(OPERATOR, idempotency_key=f"fix-{uuid.uuid4()}", fingerprint="fix")
    first = c.corrections.correct(keyed, player.player_id, held.hold, "again", amount=0)
    again = c.corrections.correct(keyed, player.player_id, held.hold, "again", amount=0)
    assert (again.replayed, again.correction_id, again.transaction) == (
        True,
        first.correction_id,
        None,
    )


def test_only_an_operator_corrects_and_only_a_hold_the_audit_recorded(
    fresh_container: Container, fresh_admin_conn: Conn, insider: Conn
) -> None:
    """With the service's login: a hold of its own making is refused (only the audit's login
    records one), and a correction recorded with no credential, a made-up one, the player's
    own session or an operator's key naming no hold of the player's is refused; nothing moves.
    The honest counterpart: the operator's correction of the audit's hold."""
    c = fresh_container
    world = World(c)
    player, held = _held(c, fresh_admin_conn)
    finding = {"check": "ledger", "location": "posting 1", "expected": "a", "found": "b"}
    try:
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="only the audit's login records"
        ):
            insider.execute(
                "INSERT INTO significant_events (kind, actor, details, player_id)"
                " VALUES ('withdrawal-held', 'audit', %s, %s)",
                (Jsonb({"checks": ["ledger"], "findings": [finding]}), player.player_id),
            )
    finally:
        insider.rollback()
    stream = f"player-{player.player_id}"
    version = _version(fresh_admin_conn, player.player_id)
    operator = staff(c, "operator").credential
    needs = (psycopg.errors.InsufficientPrivilege, "a BalanceCorrected needs an operator")
    for credential, hold, (error, match) in (
        (None, held.hold, needs),
        ("vsk_" + "f" * 43, held.hold, (psycopg.errors.InsufficientPrivilege, "not live")),
        (player_token(player.player_id), held.hold, needs),
        (operator, held.hold + 10_000, (psycopg.errors.CheckViolation, "names a hold of theirs")),
        (operator, held.hold, (psycopg.errors.CheckViolation, "names a hold of theirs")),
    ):
        # The last names the real hold, with a finding it does not list.
        event = BalanceCorrected(
            str(uuid.uuid4()), hold, (FindingNamed(**finding),), "forged", 4_000, "GBP",
            "credit", "house-payouts",
        )  # fmt: skip
        items = _encoded(event, meta=_as(credential, c))
        try:
            with pytest.raises(error, match=match):
                insider.execute(RECORD, (credential, stream, version, items))
        finally:
            insider.rollback()
    assert _version(fresh_admin_conn, player.player_id) == version
    before = world.balance(player)
    c.corrections.correct(OPERATOR, player.player_id, held.hold, "honest", amount=10)
    assert world.balance(player) == before - 10


def test_beat_lets_a_standing_hold_stand_and_each_withdrawal_is_held_anew(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    c = fresh_container
    player, _ = _held(c, fresh_admin_conn)
    assert _holds(fresh_admin_conn, player.player_id) == 1
    for _ in range(2):
        verify_behind(c.audit_unit_of_work, c.settings.paytables)
    assert _holds(fresh_admin_conn, player.player_id) == 1
    with pytest.raises(WithdrawalHeld):
        c.players.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    assert _holds(fresh_admin_conn, player.player_id) == 2


def test_over_http_an_operator_answers_a_hold_and_the_withdrawal_pays(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    c = fresh_container
    client = create_app(c).test_client()
    world = World(c)
    operator = {"Authorization": f"Bearer {staff(c, 'operator').credential}"}
    player, game_id = _played(world)
    _tamper(
        fresh_admin_conn,
        "UPDATE events SET data = jsonb_set(data, '{stake}', '1') WHERE stream_id = %s"
        " AND version = 1",
        f"game-{game_id}",
    )
    withdrawal = {"amount": 1_000, "transaction_id": f"w-{uuid.uuid4()}"}
    url = f"/v1/players/{player.player_id}"
    held = client.post(f"{url}/withdrawals", json=withdrawal, headers=operator)
    assert held.status_code == 409, held.get_json()
    hold = held.get_json()["hold"]
    as_player = {"Authorization": f"Bearer {player_token(player.player_id)}"}
    body = {"hold": hold, "reason": "stake edited", "amount": 100}
    assert client.post(f"{url}/corrections", json=body, headers=as_player).status_code == 403
    bad = client.post(f"{url}/corrections", json={**body, "amount": -1}, headers=operator)
    assert bad.status_code == 422, bad.get_json()
    other = client.post(f"{url}/corrections", json={**body, "hold": hold + 999}, headers=operator)
    assert other.status_code == 404, other.get_json()
    before = world.balance(player)
    done = client.post(f"{url}/corrections", json=body, headers=operator)
    assert done.status_code == 201, done.get_json()
    answer = done.get_json()
    assert (answer["hold"], answer["amount"], answer["direction"]) == (hold, 100, "debit")
    assert answer["transaction"]["kind"] == "correction"
    assert answer["transaction"]["balance_after"] == before - 100
    paid = client.post(f"{url}/withdrawals", json=withdrawal, headers=operator)
    assert paid.status_code == 201, paid.get_json()
    assert world.balance(player) == before - 100 - 1_000
