"""A client generated from the served OpenAPI document (openapi-python-client, at test time)
plays through the API as an integrator's would (issue 38): an operator opens and funds a
player, the player plays a game and a duel, the operator pays out a withdrawal and finance
draws the chart, every answer parsed into the client's typed models."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import make_server

from tests.api.client import Http

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def generated(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The client package, generated from the document the app serves."""
    folder = tmp_path_factory.mktemp("client")
    document = folder / "openapi.json"
    document.write_text(json.dumps(app.test_client().get("/v1/openapi.json").get_json()))
    config = folder / "config.yaml"
    config.write_text("post_hooks: []\n")  # the generated code as generated
    made = subprocess.run(
        [
            str(BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(document),
            "--meta",
            "none",
            "--config",
            str(config),
            "--output-path",
            str(folder / "vegas_client"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"},
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert "WARNING" not in made.stdout, made.stdout  # nothing of the document left out
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("vegas_client")
    finally:
        sys.path.remove(str(folder))
        for name in [
            m for m in sys.modules if m == "vegas_client" or m.startswith("vegas_client.")
        ]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def base_url(app: Flask) -> Iterator[str]:
    """The app over real HTTP, on a free loopback port, for the generated client's httpx."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def _api(name: str) -> Any:
    return importlib.import_module(f"vegas_client.api.{name}")


def _model(name: str) -> Any:
    return getattr(importlib.import_module("vegas_client.models"), name)


def test_a_generated_client_plays_a_game_and_a_duel_and_pays_out(
    generated: ModuleType, base_url: str, http: Http
) -> None:
    client_class = generated.AuthenticatedClient
    operator = client_class(base_url=base_url, token=http.operator_key)
    finance = client_class(base_url=base_url, token=http.finance_key)
    open_player = _api("players.players_open_player")
    deposit = _api("players.players_deposits")
    open_session = _api("players.players_open_session")
    player_model, session_model = _model("Player"), _model("Session")
    game_view, duel_view, transaction = (
        _model("GameView"),
        _model("DuelView"),
        _model("LedgerTransaction"),
    )

    players = []
    for _ in range(2):
        opened = open_player.sync(
            client=operator,
            body=_model("NewPlayer")(external_ref=f"gen-{uuid.uuid4()}", currency="GBP"),
        )
        assert isinstance(opened, player_model), opened
        paid = deposit.sync(
            opened.id,
            client=operator,
            body=_model("Transfer")(amount=10_400, transaction_id=str(uuid.uuid4())),
            idempotency_key=str(uuid.uuid4()),
        )
        assert isinstance(paid, transaction), paid
        session = open_session.sync(opened.id, client=operator)
        assert isinstance(session, session_model), session
        players.append((opened, client_class(base_url=base_url, token=session.token)))

    (first, me), (_, them) = players
    # A game: dealt, drawn from (the hot path's body-less command), collected.
    dealt = _api("games.games_deal").sync(
        client=me,
        body=_model("NewGame")(variant=_model("NewGameVariant")("vegas-draw1"), stake=520),
    )
    assert isinstance(dealt, game_view), dealt
    drawn = _api("games.games_draw").sync(dealt.id, client=me)
    assert isinstance(drawn, game_view), drawn
    done = _api("games.games_collect").sync(dealt.id, client=me)
    assert isinstance(done, game_view), done
    assert done.status.value == "collected"
    assert done.payout_status == "credited"

    # A duel of two: joined, dealt and stopped by each seat, settled.
    join = _api("duels.duels_join")
    seated = [
        join.sync(client=c, body=_model("JoinDuel")(fee=500), idempotency_key=str(uuid.uuid4()))
        for c in (me, them)
    ]
    assert all(isinstance(s, duel_view) for s in seated), seated
    duel_id = seated[0].id
    assert seated[1].id == duel_id
    for c in (me, them):
        assert isinstance(_api("duels.duels_deal").sync(duel_id, client=c), duel_view)
        stop = _model("Action")(action=_model("ActionAction")("collect"))
        assert isinstance(_api("duels.duels_action").sync(duel_id, client=c, body=stop), duel_view)
    settled = _api("duels.duels_duel").sync(duel_id, client=me)
    assert isinstance(settled, duel_view)
    assert settled.status.value == "settled"

    # A withdrawal, paid once the audit has verified the player's history.
    withdrawn = _api("players.players_withdrawals").sync(
        first.id,
        client=operator,
        body=_model("Transfer")(amount=1_000, transaction_id=str(uuid.uuid4())),
        idempotency_key=str(uuid.uuid4()),
    )
    assert isinstance(withdrawn, transaction), withdrawn
    assert withdrawn.amount == 1_000

    # Finance's chart, as bytes.
    today = datetime.now(UTC).date()
    chart = _api("reports.reports_daily_chart").sync(
        client=finance, from_=today, to=today, currency="GBP"
    )
    assert chart.payload.read().lstrip().startswith((b"<?xml", b"<svg"))
