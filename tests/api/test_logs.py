"""The service's log lines (issue 38): one JSON line a request, with its request id, who asked,
the route, the status, the time it took and the problem answered; and no line anywhere holds a
token, a key, a seed or a card (requests are logged by route template, never by path or body)."""

from __future__ import annotations

import logging

import pytest

from service.runtime import logs
from tests.api.client import Http
from tests.api.factories import WalletFactory
from tests.api.play import CARD_TOKEN, played

SEED = "5eed" * 16  # a certification deal's known seed


def test_a_run_s_lines_are_json_and_hold_no_secret(
    http: Http, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    player = WalletFactory.create(balance=5_200).player
    game = http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 520})
    game_id = game.get_json()["id"]
    for _ in range(3):
        played(http, player.token, game_id, {"action": "draw"})
    http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    certified = http.post(
        "/v1/games",
        http.operator_key,
        json={"variant": "vegas-draw3", "stake": 520, "player_id": player.id, "seed": SEED},
    )
    assert certified.status_code == 201, certified.get_json()
    http.post(f"/v1/games/{certified.get_json()['id']}/draw", player.token)
    http.get("/v1/players/nobody/wallet", player.token)  # a 404
    http.get(f"/v1/players/{player.id}/wallet", "vsp_" + "z" * 43)  # a 401
    http.get("/healthz", headers={"X-Request-Id": "trace.me-1"})
    http.get("/healthz", headers={"X-Request-Id": "x" * 65})

    formatter = logs.formatter()
    lines = [formatter.format(record) for record in caplog.records]
    served = [r for r in caplog.records if r.name == "service.access"]
    assert len(served) >= 10, "fewer request lines than requests"
    secrets = [player.token, http.operator_key, http.auditor_key, http.finance_key, SEED]
    for line in lines:
        assert not [s for s in secrets if s in line], line
        assert not CARD_TOKEN.search(line), line
    named = [r for r in served if getattr(r, "request_id", None) == "trace.me-1"]
    assert len(named) == 1
    assert (named[0].route, named[0].status) == ("/healthz", 200)  # type: ignore[attr-defined]
    assert not [r for r in served if getattr(r, "request_id", "") == "x" * 65]
    refused = [r for r in served if getattr(r, "status", 0) == 401]
    assert refused[0].problem == "unauthorized-unknown"  # type: ignore[attr-defined]
    mine = [r for r in served if getattr(r, "actor", None) == player.id]
    assert mine
    assert {r.role for r in mine} == {"player"}  # type: ignore[attr-defined]
    assert {r.route for r in mine} >= {  # type: ignore[attr-defined]
        "/v1/games",
        "/v1/games/<uuid:game_id>/actions",
        "/v1/games/<uuid:game_id>/collect",
    }
