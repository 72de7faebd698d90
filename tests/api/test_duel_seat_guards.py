"""Every path runs the guards (issue 36, item 11): a duel seat's deal runs the checks its join
ran. A seat joined earlier is refused its deal over HTTP while its player is timed out or
self-excluded, while a reality check of the session waits, past the session's time limit, and
while a switch covers the duel's game, its version, the player or all gaming: the problem the
join answers, recorded as the join's refusals are, and nothing dealt or moved. Once the guard is
lifted the same seat deals; a seat refused until its time to deal runs out forfeits its fee."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from service.bootstrap import Container
from tests.api.books import DbConn, wallet
from tests.api.client import Http
from tests.api.duel_support import (
    FakeClock,
    assert_books_balance,
    at,
    clock,
    look,
    pot_balance,
    seat_call,
    seat_refused,
)
from tests.api.factories import Player, WalletFactory
from tests.api.test_controls import switched_off
from tests.api.test_duels import footprint

__all__ = ["clock"]

#: A fee and seat count of real-money duel no other test joins, so each test's first join opens
#: its own duel (a join takes the oldest open duel of its fee, seats and currency).
FEE, SEATS = 200, 3


def _join(http: Http, player: Player) -> dict[str, Any]:
    joined = http.post("/v1/duels", player.token, json={"fee": FEE, "seats": SEATS})
    assert joined.status_code == 201, joined.get_json()
    view: dict[str, Any] = joined.get_json()
    return view


def _seated(http: Http, player: Player | None = None) -> tuple[Player, str, list[Player]]:
    """A player (a new one unless given) seated in a full real-money duel, its id, and the
    others seated in it."""
    player = player or WalletFactory.create(balance=1_000).player
    duel_id = _join(http, player)["id"]
    others: list[Player] = []
    for _ in range(2 * SEATS):  # should another test have left one open, it fills first
        if look(http, player.token, duel_id)["status"] != "open":
            return player, duel_id, others
        other = WalletFactory.create(balance=1_000).player
        if _join(http, other)["id"] == duel_id:
            others.append(other)
    raise AssertionError("the duel did not fill")


def _refused(
    http: Http, admin_conn: DbConn, player: Player, duel_id: str, status: int, slug: str
) -> dict[str, Any]:
    """The seat's deal is refused with this problem, and nothing is dealt or moved."""
    before, money = footprint(admin_conn), wallet(http, player)
    problem = seat_refused(http, player.token, duel_id, "deal", {}, status, slug)
    assert footprint(admin_conn) == before  # no event, posting or duel row written
    assert wallet(http, player) == money
    you = look(http, player.token, duel_id)["you"]
    assert (you["game_id"], you["deadline"]) == (None, None)
    return problem


def _deals(http: Http, token: str, duel_id: str) -> dict[str, Any]:
    """The seat's deal goes through: its game dealt, its five minutes started."""
    dealt = seat_call(http, token, duel_id, "deal")
    assert dealt["you"]["game_id"] is not None
    assert dealt["you"]["game"]["status"] == "in_progress"
    return dealt


def _refusals(admin_conn: DbConn, player: Player) -> list[Any]:
    """The safer-gambling refusals recorded for the player, oldest first."""
    rows = admin_conn.execute(
        "SELECT details FROM significant_events WHERE kind = 'safer-gambling' AND player_id = %s"
        " ORDER BY id",
        (player.id,),
    ).fetchall()
    return [row[0] for row in rows]


def _exclude(http: Http, player: Player, length: str) -> dict[str, Any]:
    taken = http.post(f"/v1/players/{player.id}/exclusions", player.token, json={"length": length})
    assert taken.status_code == 201, taken.get_json()
    body: dict[str, Any] = taken.get_json()
    return body


# --- the player's own guards ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "kind"), [("24-hours", "time-out"), ("six-months", "self-exclusion")]
)
def test_an_excluded_player_s_seat_is_not_dealt_until_the_exclusion_ends(
    http: Http,
    container: Container,
    monkeypatch: pytest.MonkeyPatch,
    admin_conn: DbConn,
    length: str,
    kind: str,
) -> None:
    player, duel_id, _ = _seated(http)
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start)
    until = _exclude(http, player, length)["until"]
    problem = _refused(http, admin_conn, player, duel_id, 403, "player-excluded")
    assert (problem["kind"], problem["until"]) == (kind, until)
    assert _refusals(admin_conn, player) == [
        {"action": "deal", "refused": "excluded", "exclusion": kind}
    ]
    ended = datetime.fromisoformat(until)
    monkeypatch.setattr(container.safer, "clock", lambda: ended)
    _deals(http, player.token, duel_id)


def test_a_seat_is_not_dealt_while_a_reality_check_of_the_session_waits(
    http: Http, container: Container, monkeypatch: pytest.MonkeyPatch, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=1_000).player
    limit = f"/v1/players/{player.id}/limits/reality-check"
    assert http.put(limit, player.token, json={"value": 1}).status_code == 200  # minutes
    player, duel_id, _ = _seated(http, player)
    start = datetime.now(UTC)
    monkeypatch.setattr(container.safer, "clock", lambda: start + timedelta(seconds=61))
    problem = _refused(http, admin_conn, player, duel_id, 409, "reality-check-due")
    shown = problem["reality_check"]
    assert (shown["stakes"], shown["payouts"], shown["net"]) == (FEE, 0, -FEE)
    assert _refusals(admin_conn, player) == [{"action": "deal", "refused": "reality-check"}]
    seen = http.post(f"/v1/players/{player.id}/reality-check", player.token)
    assert seen.status_code == 200, seen.get_json()
    _deals(http, player.token, duel_id)


def test_a_seat_is_not_dealt_in_a_session_past_its_time_limit(
    http: Http, container: Container, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=1_000).player
    limit = f"/v1/players/{player.id}/limits/session-time"
    assert http.put(limit, player.token, json={"value": 30}).status_code == 200  # minutes
    player, duel_id, _ = _seated(http, player)
    # The session began 31 minutes ago (its last use stays recent: it has not lapsed).
    admin_conn.execute(
        "UPDATE player_sessions SET created_at = now() - interval '31 minutes'"
        " WHERE player_id = %s",
        (player.id,),
    )
    container.access.forget()  # this process's cache of verified sessions
    problem = _refused(http, admin_conn, player, duel_id, 422, "limit-exceeded")
    assert (problem["limit"], problem["remaining"], problem["resets_at"]) == (
        "session-time",
        0,
        None,
    )
    assert _refusals(admin_conn, player) == [
        {"action": "deal", "refused": "limit", "limit": "session-time"}
    ]
    fresh = http.post(f"/v1/players/{player.id}/sessions", http.operator_key).get_json()["token"]
    _deals(http, fresh, duel_id)  # a new session counts afresh


# --- the operator's switches ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status", "slug", "scope"),
    [
        ("games/klondike-duel", 403, "game-disabled", "game"),
        ("versions/klondike-duel/1", 403, "game-disabled", "version"),
        ("players/{player}", 403, "gaming-disabled", "player"),
        ("gaming", 403, "gaming-disabled", "all"),
    ],
)
def test_a_seat_is_not_dealt_while_a_switch_covers_it(
    http: Http, admin_conn: DbConn, path: str, status: int, slug: str, scope: str
) -> None:
    player, duel_id, _ = _seated(http)
    with switched_off(http, path.format(player=player.id)):
        problem = _refused(http, admin_conn, player, duel_id, status, slug)
        assert (problem["scope"], problem["reason"]) == (scope, "a table fault")
    _deals(http, player.token, duel_id)


# --- a seat that cannot be dealt in time --------------------------------------------------------


def test_a_seat_refused_until_its_time_to_deal_runs_out_forfeits_its_fee(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn
) -> None:
    player, duel_id, others = _seated(http)
    assert len(others) == SEATS - 1
    deal_by = at(look(http, player.token, duel_id)["deal_by"])
    assert deal_by is not None
    _exclude(http, player, "24-hours")
    _refused(http, admin_conn, player, duel_id, 403, "player-excluded")
    for other in others:  # the others play their seats (and stop at once: a tie)
        _deals(http, other.token, duel_id)
        seat_call(http, other.token, duel_id, "actions", action="collect")
    clock.now = deal_by - timedelta(seconds=1)
    _refused(http, admin_conn, player, duel_id, 403, "player-excluded")
    clock.now = deal_by + timedelta(seconds=1)
    settled = look(http, player.token, duel_id)  # the read forfeits the seat, and settles
    assert settled["status"] == "settled"
    mine = settled["seat_list"][0]
    assert (mine["end_reason"], mine["points"], mine["game_id"], mine["payout"]) == (
        "not-dealt",
        0,
        None,
        0,
    )
    assert at(mine["ended_at"]) == deal_by
    pot = FEE * SEATS
    prize = pot - pot // 10  # the default rake: 10%
    assert [s["payout"] for s in settled["seat_list"][1:]] == [prize // 2, prize // 2]
    assert wallet(http, player)["balance"] == 1_000 - FEE  # the fee stays in the pot it bought
    assert pot_balance(admin_conn, duel_id) == 0
    assert_books_balance(admin_conn, duel_id)
