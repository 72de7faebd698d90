"""The audit answers to its own login, and no money leaves before the history behind it verifies
(issue 36, migrations/0037; service/services/verification.py). Through the real PostgreSQL as
each login, and over HTTP with the web process's own login and a real worker."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from service.app import create_app
from service.bootstrap import Container, build
from service.errors import VerificationUnavailable, WithdrawalHeld, WithdrawalUnverified
from service.services import history_audits as audit
from service.services.players import Players
from service.services.verification import verify_behind, verify_player
from tests.credentials import staff
from tests.integration.conftest import OPERATOR, World, as_player
from tests.integration.test_audit import _tamper
from tests.integration.test_insider import _refused
from tests.workers import celery_processes

Conn = psycopg.Connection[tuple[Any, ...]]


def _point(container: Container, player_id: uuid.UUID) -> int | None:
    with container.unit_of_work() as uow:
        row = uow.conn.execute(
            "SELECT through_posting FROM verified_points WHERE player_id = %s", (player_id,)
        ).fetchone()
    return None if row is None else int(row[0])


def _head(container: Container, player_id: uuid.UUID) -> int:
    with container.unit_of_work() as uow:
        row = uow.conn.execute("SELECT wallet_head(%s)", (f"player:{player_id}",)).fetchone()
    assert row is not None
    return int(row[0])


def _played(world: World, balance: int = 5_000) -> tuple[Any, uuid.UUID]:
    """A player with a real-money game dealt and collected."""
    player = world.player(balance=balance)
    game_id = uuid.UUID(world.game(player).state.game_id)
    world.c.games.collect(as_player(player.player_id), game_id)
    return player, game_id


# --- the audit's own login ------------------------------------------------------------------------


def test_the_service_login_cannot_write_an_audit_s_answer(
    fresh_container: Container, insider: Conn
) -> None:
    """Item 8: every planned unit of a running audit inserted as clean before the workers
    checked it. Refused to the service login; the audit's login records its units."""
    _played(World(fresh_container))
    with fresh_container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "test-auditor")
    (units,) = chunks
    _refused(
        insider,
        "INSERT INTO audit_units (audit_id, unit, ok) SELECT %s, unit, true FROM audit_plan"
        " WHERE audit_id = %s",
        (audit_id, audit_id),
    )
    _refused(insider, "UPDATE audits SET status = 'done' WHERE audit_id = %s", (audit_id,))
    _refused(
        insider,
        "INSERT INTO audit_findings (audit_id, unit, seq, check_name, location, expected, found)"
        " VALUES (%s, 'ledger', 0, 'x', 'x', 'x', 'x')",
        (audit_id,),
    )
    _refused(insider, "INSERT INTO audit_plan (audit_id, unit) VALUES (%s, 'x')", (audit_id,))
    # The honest counterpart: the audit's login checks and records every unit.
    audit.check_chunk(
        fresh_container.audit_unit_of_work,
        audit_id,
        units,
        fresh_container.settings.paytables,
        fresh_container.anchors.findings,
    )
    with fresh_container.unit_of_work() as uow:
        done = audit.status(uow, audit_id)
    assert done is not None
    assert (done.status, done.checked, done.findings) == ("done", len(units), ())


def test_an_audit_is_asked_for_only_with_an_auditor_s_key(
    fresh_container: Container, insider: Conn
) -> None:
    """The service's part of an audit is its request, made with an auditor's key as presented:
    no key, a made-up one, an operator's or a player's is refused; the planning is the audit
    login's."""
    player, _ = _played(World(fresh_container))
    scope = Jsonb({"kind": "all", "from": None, "to": None, "player_id": None})
    operator = staff(fresh_container, "operator").credential
    auditor = staff(fresh_container, "auditor").credential
    for credential in (None, "vsk_made-up", operator, as_player(player.player_id).credential):
        _refused(insider, "SELECT request_audit(%s, %s, %s)", (credential, uuid.uuid4(), scope))
    asked = uuid.uuid4()
    insider.execute("SELECT request_audit(%s, %s, %s)", (auditor, asked, scope))
    insider.commit()
    _refused(
        insider, "UPDATE audits SET total = 0, planned_at = now() WHERE audit_id = %s", (asked,)
    )
    with fresh_container.audit_unit_of_work() as uow:
        chunks = audit.plan_requested(uow, asked)
    with fresh_container.audit_unit_of_work() as uow:
        assert audit.plan_requested(uow, asked) == []  # planned once, whoever asks again
    for units in chunks:
        audit.check_chunk(
            fresh_container.audit_unit_of_work,
            asked,
            units,
            fresh_container.settings.paytables,
            fresh_container.anchors.findings,
        )
    with fresh_container.unit_of_work() as uow:
        done = audit.status(uow, asked)
    assert done is not None
    assert done.requested_by.startswith("key:")  # the auditor the key names, not the caller's say
    assert (done.status, done.findings) == ("done", ())
    assert done.total == done.checked == sum(map(len, chunks)) > 0


# --- the withdrawal gate --------------------------------------------------------------------------


def test_an_honest_withdrawal_is_verified_then_paid(fresh_container: Container) -> None:
    world = World(fresh_container)
    player, _ = _played(world)
    before = world.balance(player)
    assert _point(fresh_container, player.player_id) is None
    fresh_container.players.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    assert world.balance(player) == before - 1_000
    assert _point(fresh_container, player.player_id) == _head(fresh_container, player.player_id)
    # A second withdrawal finds nothing new to verify: its predecessor only took money out.
    fresh_container.players.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    assert world.balance(player) == before - 2_000


def test_a_withdrawal_over_history_altered_behind_the_service_is_held_and_pays_nothing(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    """A game's record edited around every grant (a superuser with the triggers off): the
    withdrawal verifies the history behind the wallet first, finds it, and holds: a
    significant event naming what failed, no money moved, no event appended, nothing stored
    under the request's key (its retry is held again, not answered as paid)."""
    world = World(fresh_container)
    player, game_id = _played(world)
    _tamper(
        fresh_admin_conn,
        "UPDATE events SET data = jsonb_set(data, '{stake}', '1') WHERE stream_id = %s"
        " AND version = 1",
        f"game-{game_id}",
    )
    before = world.balance(player)
    request = replace(OPERATOR, idempotency_key=f"hold-{uuid.uuid4()}", fingerprint="w-held")
    for _ in range(2):
        with pytest.raises(WithdrawalHeld) as held:
            fresh_container.players.withdraw(request, player.player_id, 1_000, "w-held")
        assert "hash-chain" in held.value.checks
    assert world.balance(player) == before
    assert _point(fresh_container, player.player_id) is None
    row = fresh_admin_conn.execute(
        "SELECT kind, player_id, details->'checks' FROM significant_events WHERE id = %s",
        (held.value.hold,),
    ).fetchone()
    assert row is not None
    assert row[:2] == ("withdrawal-held", player.player_id)
    assert "hash-chain" in row[2]
    withdrawn = fresh_admin_conn.execute(
        "SELECT count(*) FROM events WHERE stream_id = %s AND type = 'FundsWithdrawn'",
        (f"player-{player.player_id}",),
    ).fetchone()
    assert withdrawn == (0,)
    # The honest counterpart: another player's withdrawal is verified and paid meanwhile.
    other, _ = _played(world)
    fresh_container.players.withdraw(OPERATOR, other.player_id, 1_000, f"w-{uuid.uuid4()}")


class _NoGate:
    """The service's code changed by an insider to skip the verification."""

    def ensure_verified(self, player_id: uuid.UUID, wallet: str) -> None:
        return None


def test_the_database_refuses_a_withdrawal_the_audit_has_not_verified(
    fresh_container: Container, insider: Conn
) -> None:
    """With the service's login and code, skipping the verification: the database refuses the
    withdrawal's posting until the audit's login has verified the player to their wallet's head;
    and the service's login can neither record a verified point nor move one."""
    world = World(fresh_container)
    player, _ = _played(world)
    skipping = Players(
        fresh_container.unit_of_work,
        dict(fresh_container.settings.paytables),
        fresh_container.safer,
        _NoGate(),  # type: ignore[arg-type]
    )
    before = world.balance(player)
    with pytest.raises(VerificationUnavailable) as raised:
        skipping.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    unverified = raised.value.__cause__
    assert isinstance(unverified, WithdrawalUnverified)
    refused = unverified.__cause__
    assert isinstance(refused, psycopg.errors.CheckViolation)
    assert str(refused.diag.message_primary).startswith("withdrawal held: player")
    assert world.balance(player) == before
    head = _head(fresh_container, player.player_id)
    _refused(
        insider,
        "INSERT INTO verified_points (player_id, through_posting) VALUES (%s, %s)",
        (player.player_id, head),
    )
    # The honest counterpart: verified by the audit's login, the same withdrawal pays.
    done = verify_player(
        fresh_container.audit_unit_of_work, player.player_id, fresh_container.settings.paytables
    )
    assert (done.through, done.findings, done.hold) == (head, (), None)
    _refused(
        insider,
        "UPDATE verified_points SET through_posting = through_posting + 1000 WHERE player_id = %s",
        (player.player_id,),
    )
    skipping.withdraw(OPERATOR, player.player_id, 1_000, f"w-{uuid.uuid4()}")
    assert world.balance(player) == before - 1_000
    with (
        fresh_container.audit_unit_of_work() as uow,
        pytest.raises(psycopg.errors.CheckViolation, match="only moves forward"),
    ):
        uow.conn.execute(
            "UPDATE verified_points SET through_posting = 0 WHERE player_id = %s",
            (player.player_id,),
        )


def test_beat_s_verification_advances_every_player_behind(fresh_container: Container) -> None:
    world = World(fresh_container)
    players = [_played(world)[0] for _ in range(3)]
    done = verify_behind(fresh_container.audit_unit_of_work, fresh_container.settings.paytables)
    assert {d.player_id for d in done} >= {p.player_id for p in players}
    for player in players:
        assert _point(fresh_container, player.player_id) == _head(fresh_container, player.player_id)
    assert verify_behind(fresh_container.audit_unit_of_work, {}) == []  # nobody behind now


def test_over_http_the_web_process_asks_the_audit_s_worker(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    """The web process holds only the service's login: its withdrawal waits for the audit's
    worker to verify the player (a real Celery worker on the broker), then pays; a history
    found altered answers 409 withdrawal-held, naming the hold."""
    settings = fresh_container.settings
    web = build(settings, migrate=False, audit_login=False)
    try:
        client = create_app(web).test_client()
        world = World(fresh_container)
        headers = {"Authorization": f"Bearer {staff(fresh_container, 'operator').credential}"}
        player, _ = _played(world)
        other, other_game = _played(world)
        _tamper(
            fresh_admin_conn,
            "UPDATE events SET data = jsonb_set(data, '{stake}', '1') WHERE stream_id = %s"
            " AND version = 1",
            f"game-{other_game}",
        )
        with celery_processes(settings):
            paid = client.post(
                f"/v1/players/{player.player_id}/withdrawals",
                json={"amount": 1_000, "transaction_id": f"w-{uuid.uuid4()}"},
                headers=headers,
            )
            assert paid.status_code == 201, paid.get_json()
            held = client.post(
                f"/v1/players/{other.player_id}/withdrawals",
                json={"amount": 1_000, "transaction_id": f"w-{uuid.uuid4()}"},
                headers=headers,
            )
        assert _point(fresh_container, player.player_id) == _head(fresh_container, player.player_id)
        assert held.status_code == 409, held.get_json()
        body = held.get_json()
        assert body["type"].endswith("/withdrawal-held")
        assert "hash-chain" in body["checks"]
        assert isinstance(body["hold"], int)
        assert World(fresh_container).balance(other) == 5_000 - 520
    finally:
        web.close()
