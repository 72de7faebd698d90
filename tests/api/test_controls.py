"""Disable on demand over HTTP and the real database (issue 24): an operator switches gaming off
and on for everyone, one game, one game version or one player, with a reason; deals and duel
joins it covers are refused, games already dealt play on and are collected, GET /v1/variants
shows what is off, and every switch is recorded (an event, a significant event). Every test
switches back on what it switched off: the switches are the whole casino's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from tests.api.client import Http, assert_problem
from tests.api.factories import Player, WalletFactory
from tests.api.play import played

DbConn = psycopg.Connection[tuple[object, ...]]


def _put(http: Http, path: str, enabled: bool, reason: str = "a table fault") -> Any:
    return http.put(
        f"/v1/controls/{path}", http.operator_key, json={"enabled": enabled, "reason": reason}
    )


@contextmanager
def switched_off(http: Http, path: str) -> Iterator[dict[str, Any]]:
    off = _put(http, path, False)
    assert off.status_code == 200, off.get_json()
    try:
        yield off.get_json()
    finally:
        on = _put(http, path, True, "fixed")
        assert on.status_code == 200, on.get_json()
        assert on.get_json()["enabled"] is True


def _deal(http: Http, player: Player, variant: str = "vegas-draw1") -> Any:
    return http.post("/v1/games", player.token, json={"variant": variant, "stake": 520})


def _enabled(http: Http) -> tuple[bool, dict[str, bool]]:
    body = http.get("/v1/variants").get_json()
    return body["gaming_enabled"], {v["name"]: v["enabled"] for v in body["variants"]}


def test_a_game_switched_off_is_not_dealt_but_a_game_in_play_plays_on(http: Http) -> None:
    playing = WalletFactory.create(balance=520).player
    dealt = _deal(http, playing, "klondike")
    assert dealt.status_code == 201, dealt.get_json()
    other = WalletFactory.create(balance=1_040).player
    with switched_off(http, "games/klondike") as switch:
        assert (switch["scope"], switch["target"], switch["enabled"]) == ("game", "klondike", False)
        assert switch["reason"] == "a table fault"
        gaming, games = _enabled(http)
        assert gaming is True
        assert games["klondike"] is False
        assert all(on for name, on in games.items() if name != "klondike")
        refused = _deal(http, other, "klondike")
        assert_problem(refused, 403, "game-disabled")
        assert (refused.get_json()["scope"], refused.get_json()["target"]) == ("game", "klondike")
        assert refused.get_json()["reason"] == "a table fault"
        game_id = dealt.get_json()["id"]
        played(http, playing.token, game_id, {"action": "draw"})
        assert played(http, playing.token, game_id, {"action": "collect"})["status"] == (
            "collected"
        )
        assert _deal(http, other, "vegas-draw1").status_code == 201  # other games deal on
    assert _enabled(http)[1]["klondike"] is True
    recorded = http.get("/v1/significant-events?kind=gaming-control", http.auditor_key)
    assert recorded.status_code == 200, recorded.get_json()
    details = [e["details"] for e in recorded.get_json()["items"][:2]]
    assert [(d["target"], d["enabled"], d["reason"]) for d in details] == [
        ("klondike", True, "fixed"),
        ("klondike", False, "a table fault"),
    ]


def test_a_game_version_switched_off_stops_every_game_of_that_version(http: Http) -> None:
    player = WalletFactory.create(balance=520).player
    with switched_off(http, "versions/vegas-klondike/1"):
        _, games = _enabled(http)
        assert (games["vegas-draw1"], games["vegas-draw3"], games["klondike"]) == (
            False,
            False,
            True,
        )
        for variant in ("vegas-draw1", "vegas-draw3"):
            assert_problem(_deal(http, player, variant), 403, "game-disabled")
    assert _deal(http, player, "vegas-draw3").status_code == 201


def test_all_gaming_switched_off_stops_deals_and_duels_but_not_the_cashier(http: Http) -> None:
    player = WalletFactory.create(balance=520).player
    with switched_off(http, "gaming"):
        gaming, games = _enabled(http)
        assert gaming is False
        assert not any(games.values())
        assert_problem(_deal(http, player), 403, "gaming-disabled")
        joined = http.post("/v1/duels", player.token, json={"fee": 100, "seats": 2})
        assert_problem(joined, 403, "gaming-disabled")
        paid = http.post(
            f"/v1/players/{player.id}/deposits",
            http.operator_key,
            json={"amount": 100, "transaction_id": f"in-{uuid.uuid4()}"},
        )
        assert paid.status_code == 201
    assert _deal(http, player).status_code == 201


def test_gaming_switched_off_for_one_player_stops_only_theirs(http: Http) -> None:
    player = WalletFactory.create(balance=520).player
    other = WalletFactory.create(balance=520).player
    with switched_off(http, f"players/{player.id}"):
        assert_problem(_deal(http, player), 403, "gaming-disabled")
        assert _deal(http, other).status_code == 201
        assert _enabled(http)[0] is True
    assert _deal(http, player).status_code == 201


def test_a_switch_needs_an_operator_a_reason_and_something_that_exists(http: Http) -> None:
    assert_problem(_put(http, "games/no-such-game", False), 404, "not-found")
    assert_problem(_put(http, "versions/no-such/9", False), 404, "not-found")
    assert_problem(_put(http, f"players/{uuid.uuid4()}", False), 404, "not-found")
    assert_problem(_put(http, "gaming", False, ""), 422, "validation-error")
    # A blank reason is a field's error for every scope (a no-break space alone was a 500).
    player = WalletFactory.create(balance=0).player
    for blank in (" ", "\u00a0", "\t\n"):
        refused = _put(http, f"players/{player.id}", False, blank)
        assert_problem(refused, 422, "validation-error")
        assert list(refused.get_json()["errors"]) == ["reason"]
    switches = http.get("/v1/controls", http.auditor_key).get_json()["switches"]
    assert str(player.id) not in {s["target"] for s in switches}
    refused = http.put(
        "/v1/controls/gaming", http.auditor_key, json={"enabled": False, "reason": "x"}
    )
    assert_problem(refused, 403, "forbidden")
    assert _enabled(http)[0] is True
    listed = http.get("/v1/controls", http.auditor_key)
    assert listed.status_code == 200
    assert all(s["enabled"] for s in listed.get_json()["switches"])


def test_the_service_login_cannot_throw_a_switch_itself(admin_conn: DbConn, http: Http) -> None:
    """Switches change only as GamingSwitched events are appended (migrations/0019)."""
    rows = admin_conn.execute(
        "SELECT has_table_privilege('vegas_app', 'gaming_controls', 'INSERT'), "
        "has_table_privilege('vegas_app', 'gaming_controls', 'UPDATE'), "
        "has_table_privilege('vegas_app', 'gaming_controls', 'DELETE'), "
        "has_table_privilege('vegas_app', 'gaming_controls', 'SELECT')"
    ).fetchone()
    assert rows == (False, False, False, True)
