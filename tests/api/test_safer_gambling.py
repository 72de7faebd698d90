"""Safer gambling over HTTP and the real database (issue 24): a player's limits on deposits,
losses and stakes, set by the player or an operator, each change an event on the player's
stream; enforced in the transaction that moves the money, exactly at the boundary and under
races; stricter at once, looser only after 24 hours on the server's clock."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.bootstrap import Container
from service.core.safer_gambling import period_end
from tests.api.books import wallet
from tests.api.client import Http, assert_problem
from tests.api.factories import Player, WalletFactory
from tests.api.play import played
from tests.api.test_concurrency import race

DbConn = psycopg.Connection[tuple[object, ...]]


def _set(http: Http, token: str, player: Player, limit: str, value: int | None) -> Any:
    return http.put(f"/v1/players/{player.id}/limits/{limit}", token, json={"value": value})


def _limits(http: Http, player: Player) -> dict[str, dict[str, Any]]:
    shown = http.get(f"/v1/players/{player.id}/limits", player.token)
    assert shown.status_code == 200, shown.get_json()
    return {entry["limit"]: entry for entry in shown.get_json()["limits"]}


def _deal(http: Http, player: Player, stake: int) -> Any:
    return http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": stake})


def _lose(http: Http, player: Player, stake: int) -> None:
    """Deal a real-money game and collect it at once: the whole stake lost."""
    dealt = _deal(http, player, stake)
    assert dealt.status_code == 201, dealt.get_json()
    done = played(http, player.token, dealt.get_json()["id"], {"action": "collect"})
    assert done["status"] == "collected"
    assert done["winnings"] == 0


def _deposit(http: Http, player: Player, amount: int) -> Any:
    return http.post(
        f"/v1/players/{player.id}/deposits",
        http.operator_key,
        json={"amount": amount, "transaction_id": f"limit-{uuid.uuid4()}"},
    )


def test_a_player_sets_a_limit_reads_it_and_the_change_is_recorded(
    http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=0).player
    before = {name: entry["value"] for name, entry in _limits(http, player).items()}
    assert set(before) == {
        "deposit-day",
        "deposit-week",
        "deposit-month",
        "loss-day",
        "loss-week",
        "loss-month",
        "max-stake",
        "session-time",
        "reality-check",
    }
    assert set(before.values()) == {None}
    saved = _set(http, player.token, player, "loss-day", 1_040)
    assert saved.status_code == 200, saved.get_json()
    shown = _limits(http, player)["loss-day"]
    now = datetime.now(UTC)
    assert (shown["value"], shown["used"], shown["remaining"], shown["pending"]) == (
        1_040,
        0,
        1_040,
        None,
    )
    assert shown["resets_at"] == period_end("day", now).isoformat()
    (row,) = admin_conn.execute(
        "SELECT data, metadata FROM events WHERE stream_id = %s AND type = 'LimitChanged'",
        (f"player-{player.id}",),
    ).fetchall()
    data, metadata = row
    assert isinstance(data, dict)
    assert isinstance(metadata, dict)
    assert (data["limit"], data["previous"], data["value"]) == ("loss-day", None, 1_040)
    assert (metadata["actor"], metadata["role"]) == (player.id, "player")


def test_only_the_player_or_an_operator_sets_a_limit(http: Http) -> None:
    player = WalletFactory.create(balance=0).player
    other = WalletFactory.create(balance=0).player
    assert_problem(_set(http, other.token, player, "loss-day", 520), 404, "not-found")
    assert_problem(_set(http, http.auditor_key, player, "loss-day", 520), 403, "forbidden")
    assert _set(http, http.operator_key, player, "loss-day", 520).status_code == 200
    assert_problem(_set(http, player.token, player, "loss-hour", 520), 404, "not-found")
    assert_problem(_set(http, player.token, player, "loss-day", 0), 422, "validation-error")
    assert _limits(http, player)["loss-day"]["value"] == 520


def test_a_loss_limit_allows_a_stake_up_to_the_boundary_and_refuses_one_past_it(
    http: Http,
) -> None:
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "loss-day", 1_040).status_code == 200
    _lose(http, player, 520)
    _lose(http, player, 520)  # exactly at the limit: allowed
    refused = _deal(http, player, 520)
    assert_problem(refused, 422, "limit-exceeded")
    problem = refused.get_json()
    assert (problem["limit"], problem["remaining"]) == ("loss-day", 0)
    assert problem["resets_at"] == period_end("day", datetime.now(UTC)).isoformat()
    assert wallet(http, player)["balance"] == 5_200 - 1_040  # nothing taken by the refusal
    shown = _limits(http, player)
    assert (shown["loss-day"]["used"], shown["loss-week"]["used"]) == (1_040, 1_040)


def test_the_maximum_stake_refuses_a_bigger_stake_and_allows_its_own(http: Http) -> None:
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "max-stake", 520).status_code == 200
    refused = _deal(http, player, 1_040)
    assert_problem(refused, 422, "limit-exceeded")
    assert (refused.get_json()["limit"], refused.get_json()["remaining"]) == ("max-stake", 520)
    assert refused.get_json()["resets_at"] is None
    _lose(http, player, 520)


def test_a_deposit_limit_counts_gross_deposits_to_the_boundary(http: Http) -> None:
    player = WalletFactory.create(balance=0).player
    assert _set(http, player.token, player, "deposit-week", 1_000).status_code == 200
    assert _deposit(http, player, 600).status_code == 201
    withdrawn = http.post(
        f"/v1/players/{player.id}/withdrawals",
        http.operator_key,
        json={"amount": 600, "transaction_id": f"out-{uuid.uuid4()}"},
    )
    assert withdrawn.status_code == 201  # withdrawals are never limited, nor do they give back
    assert _deposit(http, player, 400).status_code == 201  # exactly at the limit
    refused = _deposit(http, player, 1)
    assert_problem(refused, 422, "limit-exceeded")
    assert (refused.get_json()["limit"], refused.get_json()["remaining"]) == ("deposit-week", 0)
    assert wallet(http, player)["balance"] == 400


def test_racing_deposits_against_a_limit_that_allows_k_let_exactly_k_through(
    app: Flask, http: Http
) -> None:
    player = WalletFactory.create(balance=0).player
    assert _set(http, player.token, player, "deposit-day", 500).status_code == 200

    def deposit(client: FlaskClient) -> Any:
        return client.post(
            f"/v1/players/{player.id}/deposits",
            headers=Http.bearer(http.operator_key),
            json={"amount": 100, "transaction_id": f"race-{uuid.uuid4()}"},
        )

    answers = race(app, [deposit] * 8)
    assert Counter(a.status_code for a in answers) == {201: 5, 422: 3}
    assert wallet(http, player)["balance"] == 500


def test_stricter_takes_effect_at_once_and_looser_only_after_24_hours(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "max-stake", 1_040).status_code == 200
    assert _set(http, player.token, player, "max-stake", 520).status_code == 200  # stricter
    assert_problem(_deal(http, player, 1_040), 422, "limit-exceeded")

    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start)
    loosened = _set(http, player.token, player, "max-stake", 2_080)
    assert loosened.status_code == 200, loosened.get_json()
    (shown,) = [e for e in loosened.get_json()["limits"] if e["limit"] == "max-stake"]
    assert (shown["value"], shown["pending"]) == (520, 2_080)
    pending_from = _a_day_after(start, shown["pending_from"])

    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(hours=23, minutes=59))
    assert_problem(_deal(http, player, 1_040), 422, "limit-exceeded")
    monkeypatch.setattr(container.safer, "clock", lambda: pending_from)
    assert _limits(http, player)["max-stake"]["value"] == 2_080
    _lose(http, player, 1_040)


def _a_day_after(start: datetime, shown: str) -> datetime:
    """A loosening's time: 24 hours after it was asked for, on the server's clock and never
    before the database's (whose rule checks it: migrations/0031), so a moment after ``start``
    plus a day."""
    pending_from = datetime.fromisoformat(shown)
    assert start + timedelta(hours=24) <= pending_from < start + timedelta(hours=24, minutes=1)
    return pending_from


def test_certification_play_is_not_limited(http: Http) -> None:
    """The sandbox's money is not the player's: an operator's certification deal is played
    whatever the player's limits say."""
    player = WalletFactory.create(balance=0).player
    assert _set(http, player.token, player, "max-stake", 52).status_code == 200
    dealt = http.post(
        "/v1/games",
        http.operator_key,
        json={"variant": "vegas-draw1", "stake": 520, "player_id": player.id, "seed": "ab" * 32},
    )
    assert dealt.status_code == 201, dealt.get_json()


def test_tightening_while_a_loosening_waits_wins_at_once_and_drops_it(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=5_200).player
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start)
    assert _set(http, player.token, player, "loss-week", 1_040).status_code == 200
    assert _set(http, player.token, player, "loss-week", None).status_code == 200  # looser
    shown = _limits(http, player)["loss-week"]
    assert (shown["value"], shown["pending"]) == (1_040, None)
    _a_day_after(start, shown["pending_from"])
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(hours=1))
    assert _set(http, player.token, player, "loss-week", 520).status_code == 200
    shown = _limits(http, player)["loss-week"]
    assert (shown["value"], shown["pending"], shown["pending_from"]) == (520, None, None)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(hours=30))
    assert _limits(http, player)["loss-week"]["value"] == 520  # the loosening is gone


# --- time-outs and self-exclusion ---------------------------------------------------------------


def _exclude(http: Http, token: str, player: Player, length: str) -> Any:
    return http.post(f"/v1/players/{player.id}/exclusions", token, json={"length": length})


def _join(http: Http, player: Player, fee: int = 100) -> Any:
    return http.post("/v1/duels", player.token, json={"fee": fee, "seats": 2})


def test_a_time_out_stops_every_money_path_but_withdrawals_and_the_game_in_play(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=5_200).player
    dealt = _deal(http, player, 520)
    assert dealt.status_code == 201, dealt.get_json()
    game_id = dealt.get_json()["id"]
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start)
    taken = _exclude(http, player.token, player, "24-hours")
    assert taken.status_code == 201, taken.get_json()
    until = taken.get_json()["until"]
    ends = _a_day_after(start, until)
    assert taken.get_json() == {
        "player_id": player.id,
        "excluded": True,
        "kind": "time-out",
        "until": until,
    }
    shown = http.get(f"/v1/players/{player.id}/exclusion", http.auditor_key)
    assert shown.get_json() == taken.get_json()

    played(http, player.token, game_id, {"action": "draw"})  # the game in play plays on
    played(http, player.token, game_id, {"action": "collect"})
    for refused in (_deal(http, player, 520), _join(http, player), _deposit(http, player, 100)):
        assert_problem(refused, 403, "player-excluded")
        assert (refused.get_json()["kind"], refused.get_json()["until"]) == ("time-out", until)
    out = http.post(
        f"/v1/players/{player.id}/withdrawals",
        http.operator_key,
        json={"amount": 100, "transaction_id": f"out-{uuid.uuid4()}"},
    )
    assert out.status_code == 201, out.get_json()
    assert wallet(http, player)["balance"] == 5_200 - 520 - 100

    monkeypatch.setattr(container.safer, "clock", lambda: ends)
    assert http.get(f"/v1/players/{player.id}/exclusion", player.token).get_json()["excluded"] is (
        False
    )
    _lose(http, player, 520)


def test_a_self_exclusion_cannot_be_shortened_or_ended_early(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=5_200).player
    start = datetime(2027, 3, 31, 12, tzinfo=UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start)
    excluded = _exclude(http, http.operator_key, player, "six-months")
    assert excluded.status_code == 201, excluded.get_json()
    until = datetime(2027, 9, 30, 12, tzinfo=UTC).isoformat()  # six months on, at month's end
    assert (excluded.get_json()["kind"], excluded.get_json()["until"]) == ("self-exclusion", until)
    shorter = _exclude(http, player.token, player, "24-hours")
    assert shorter.status_code == 201
    assert (shorter.get_json()["kind"], shorter.get_json()["until"]) == ("self-exclusion", until)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(days=30))
    assert_problem(_deal(http, player, 520), 403, "player-excluded")
    later = datetime(2027, 9, 30, 12, tzinfo=UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: later)
    _lose(http, player, 520)


def test_an_exclusion_takes_only_the_lengths_offered(http: Http) -> None:
    player = WalletFactory.create(balance=0).player
    for length in ("1-hour", "forever", ""):
        assert_problem(_exclude(http, player.token, player, length), 422, "validation-error")
    assert http.get(f"/v1/players/{player.id}/exclusion", player.token).get_json()["excluded"] is (
        False
    )


# --- reality checks -----------------------------------------------------------------------------


def _reality_counts(http: Http) -> tuple[int, int]:
    """Finance's count today of reality-check refusals and of checks acknowledged."""
    today = datetime.now(UTC).date()
    report = http.get(
        f"/v1/reports/daily?from={today}&to={today}&currency=GBP", http.finance_key
    ).get_json()
    (line,) = report["safer_gambling"]
    return line["reality_check_refusals"], line["reality_checks"]


def test_a_reality_check_pauses_play_until_the_player_acknowledges_it(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch, admin_conn: DbConn
) -> None:
    counted = _reality_counts(http)
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "reality-check", 1).status_code == 200  # minutes
    too_long = _set(http, player.token, player, "reality-check", 1_441)
    assert_problem(too_long, 422, "validation-error")
    dealt = _deal(http, player, 520)
    assert dealt.status_code == 201, dealt.get_json()
    game_id = dealt.get_json()["id"]
    quiet = http.get(f"/v1/players/{player.id}/reality-check", player.token).get_json()
    assert quiet == {"due": False, "reality_check": None}
    assert http.get(f"/v1/games/{game_id}", player.token).get_json()["reality_check"] is None

    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=61))
    paused = http.post(f"/v1/games/{game_id}/draw", player.token)
    assert_problem(paused, 409, "reality-check-due")
    check = paused.get_json()["reality_check"]
    assert (check["stakes"], check["payouts"], check["net"]) == (520, 0, -520)
    assert check["session_seconds"] >= 61
    shown = http.get(f"/v1/players/{player.id}/reality-check", player.token).get_json()
    assert shown == {"due": True, "reality_check": check}
    view = http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert view["reality_check"] == check  # the view carries the prompt while it is due
    assert http.get(f"/v1/games/{game_id}", http.operator_key).get_json()["reality_check"] is None
    # Stopping stays open: the player may collect while the check waits.
    assert played(http, player.token, game_id, {"action": "collect"})["status"] == "collected"
    assert_problem(_deal(http, player, 520), 409, "reality-check-due")

    seen = http.post(f"/v1/players/{player.id}/reality-check", player.token)
    assert seen.status_code == 200, seen.get_json()
    assert seen.get_json() == {"due": False, "reality_check": check}
    (data,) = admin_conn.execute(
        "SELECT data FROM events WHERE stream_id = %s AND type = 'RealityCheckAcknowledged'",
        (f"player-{player.id}",),
    ).fetchone() or (None,)
    assert isinstance(data, dict)
    assert (data["stakes"], data["net"]) == (520, -520)
    _lose(http, player, 520)  # play goes on until the next check
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=122))
    assert_problem(_deal(http, player, 520), 409, "reality-check-due")
    again = http.post(f"/v1/players/{player.id}/reality-check", player.token).get_json()
    assert (again["reality_check"]["stakes"], again["reality_check"]["net"]) == (1_040, -1_040)
    refusals, acknowledged = _reality_counts(http)
    assert (refusals - counted[0], acknowledged - counted[1]) == (3, 2)


def test_no_reality_check_without_an_interval_or_for_staff(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=1_040).player
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(hours=5))
    _lose(http, player, 520)  # no interval set: never paused
    assert _set(http, http.operator_key, player, "reality-check", 1).status_code == 200
    assert_problem(_deal(http, player, 520), 409, "reality-check-due")
    dealt = http.post(
        "/v1/games",
        http.operator_key,
        json={"variant": "vegas-draw1", "stake": 520, "player_id": player.id, "seed": "cd" * 32},
    )
    assert dealt.status_code == 201, dealt.get_json()  # an operator's session has no check
    nothing = http.post(f"/v1/players/{player.id}/reality-check", player.token)
    assert nothing.status_code == 200


def test_a_duel_s_view_carries_the_due_reality_check_and_a_join_waits_for_it(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=1_000).player
    assert _set(http, player.token, player, "reality-check", 1).status_code == 200
    joined = _join(http, player)
    assert joined.status_code == 201, joined.get_json()
    duel_id = joined.get_json()["id"]
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=61))
    view = http.get(f"/v1/duels/{duel_id}", player.token).get_json()
    assert (view["reality_check"]["stakes"], view["reality_check"]["net"]) == (100, -100)
    assert_problem(_join(http, player, 200), 409, "reality-check-due")


def _another_session(http: Http, player: Player) -> str:
    """A second live session of the player, minted by an operator: its token."""
    minted = http.post(f"/v1/players/{player.id}/sessions", http.operator_key)
    assert minted.status_code == 201, minted.get_json()
    token: str = minted.get_json()["token"]
    return token


def _check(http: Http, player: Player, token: str) -> Any:
    """The reality check due in the session of ``token`` (None if none is)."""
    shown = http.get(f"/v1/players/{player.id}/reality-check", token)
    assert shown.status_code == 200, shown.get_json()
    return shown.get_json()["reality_check"]


def test_each_session_s_reality_check_is_acknowledged_in_that_session_only(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=1_040).player
    assert _set(http, player.token, player, "reality-check", 1).status_code == 200
    other = _another_session(http, player)
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=61))
    first, second = _check(http, player, player.token), _check(http, player, other)
    assert first is not None
    assert second is not None
    assert first["session_started"] < second["session_started"]  # two sessions, two checks

    # The first session's acknowledgement is its own: the second's check still waits.
    seen = http.post(f"/v1/players/{player.id}/reality-check", player.token)
    assert seen.get_json() == {"due": False, "reality_check": first}
    assert _check(http, player, player.token) is None
    assert _check(http, player, other) == second
    refused = http.post("/v1/games", other, json={"variant": "vegas-draw1", "stake": 520})
    assert_problem(refused, 409, "reality-check-due")
    # ... and the second's does not make the first's due again.
    seen = http.post(f"/v1/players/{player.id}/reality-check", other)
    assert seen.get_json() == {"due": False, "reality_check": second}
    assert (_check(http, player, player.token), _check(http, player, other)) == (None, None)
    assert _deal(http, player, 520).status_code == 201


def test_a_session_s_reality_check_counts_only_the_play_staked_in_it(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "reality-check", 1).status_code == 200
    staked_before = _deal(http, player, 520)  # in the first session, before the second began
    assert staked_before.status_code == 201, staked_before.get_json()
    other = _another_session(http, player)
    # Its refund is paid while the second session plays: still the first session's money.
    voided = http.post(
        f"/v1/games/{staked_before.get_json()['id']}/void",
        http.operator_key,
        json={"reason": "a table fault"},
    )
    assert voided.status_code == 200, voided.get_json()
    for token, stake in ((other, 1_040), (player.token, 1_560)):  # one game in each, in turn
        dealt = http.post("/v1/games", token, json={"variant": "vegas-draw1", "stake": stake})
        assert dealt.status_code == 201, dealt.get_json()
        assert played(http, token, dealt.get_json()["id"], {"action": "collect"})["winnings"] == 0
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=61))
    first, second = _check(http, player, player.token), _check(http, player, other)
    assert (first["stakes"], first["payouts"], first["net"]) == (520 + 1_560, 520, -1_560)
    assert (second["stakes"], second["payouts"], second["net"]) == (1_040, 0, -1_040)
    assert first["session_seconds"] >= second["session_seconds"] >= 61
    # The acknowledgement records the figures its session was shown.
    seen = http.post(f"/v1/players/{player.id}/reality-check", other)
    assert seen.get_json() == {"due": False, "reality_check": second}


def test_a_session_time_limit_stops_play_in_that_session_but_not_its_collect(
    http: Http, admin_conn: DbConn, container: Container
) -> None:
    player = WalletFactory.create(balance=5_200).player
    assert _set(http, player.token, player, "session-time", 30).status_code == 200  # minutes
    assert_problem(_set(http, player.token, player, "session-time", 1_441), 422, "validation-error")
    shown = _limits(http, player)["session-time"]
    assert (shown["value"], shown["used"], shown["resets_at"]) == (30, 0, None)
    dealt = _deal(http, player, 520)
    assert dealt.status_code == 201, dealt.get_json()
    game_id = dealt.get_json()["id"]
    assert played(http, player.token, game_id, {"action": "draw"})["status"] == "in_progress"
    # The session began 31 minutes ago (its last use stays recent: it has not lapsed).
    admin_conn.execute(
        "UPDATE player_sessions SET created_at = now() - interval '31 minutes' "
        "WHERE player_id = %s",
        (player.id,),
    )
    container.access.forget()  # this process's cache of verified sessions
    before = wallet(http, player)
    version = http.get(f"/v1/games/{game_id}", player.token).get_json()["version"]
    stopped = http.post(f"/v1/games/{game_id}/actions", player.token, json={"action": "draw"})
    assert_problem(stopped, 422, "limit-exceeded")
    body = stopped.get_json()
    assert (body["limit"], body["remaining"], body["resets_at"]) == ("session-time", 0, None)
    assert "session-time limit of 30 minutes" in body["detail"]
    assert http.get(f"/v1/games/{game_id}", player.token).get_json()["version"] == version
    # Stopping stays open; nothing else is dealt or joined in this session.
    collected = played(http, player.token, game_id, {"action": "collect"})
    assert collected["status"] == "collected"
    assert_problem(_deal(http, player, 520), 422, "limit-exceeded")
    assert_problem(_join(http, player), 422, "limit-exceeded")
    after = wallet(http, player)
    assert (after["balance"], after["held"]) == (before["balance"] + collected["winnings"], 0)
    # Staff are not the player's session; a new session counts afresh.
    fresh = http.post(f"/v1/players/{player.id}/sessions", http.operator_key).get_json()["token"]
    again = http.post("/v1/games", fresh, json={"variant": "vegas-draw1", "stake": 520})
    assert again.status_code == 201, again.get_json()
