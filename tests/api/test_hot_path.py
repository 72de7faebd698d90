"""The game commands' hot path (service/api/hot_path.py, issue 25) answers exactly as the Flask
routes do. A body-less command goes the hot path; the same command with a body of ``{}`` (which
the commands' empty schema accepts) goes through Flask's dispatch, flask-smorest and webargs.
Two players' games dealt from one deck are played side by side, one each way, and every
answer, success or problem, must be the same but for the ids and times of its own game."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from flask import Flask
from werkzeug.test import TestResponse

from service.api.hot_path import CommandHotPath
from service.api.metrics import Measured
from service.rules.cards import CANONICAL_DECK
from tests.api.client import Http
from tests.api.factories import Game, GameFactory, WalletFactory

DECK = random.Random(25).sample(list(CANONICAL_DECK), len(CANONICAL_DECK))
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")


@pytest.fixture
def flask_calls(app: Flask, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths that went on to Flask's dispatch (the rest the hot path answered)."""
    measured = app.wsgi_app  # every request counted and timed, then the hot path
    assert isinstance(measured, Measured)
    hot = measured.app
    assert isinstance(hot, CommandHotPath)
    calls: list[str] = []
    dispatch = hot.flask

    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        calls.append(environ["PATH_INFO"])
        return dispatch(environ, start_response)

    monkeypatch.setattr(hot, "flask", counted)
    return calls


def _twins(variant: str = "vegas-draw3") -> tuple[Game, Game]:
    return GameFactory.create(variant=variant, deck=DECK), GameFactory.create(
        variant=variant, deck=DECK
    )


def _send(
    http: Http, game: Game, command: str, *, hot: bool, token: str | None = "", **headers: str
) -> TestResponse:
    sent = {"X-Request-Id": f"twin-{command}", **headers}
    caller = game.player.token if token == "" else token
    path = f"/v1/games/{game.id}/{command}"
    if hot:
        return http.post(path, caller, headers=sent)
    return http.post(path, caller, json={}, headers=sent)


def _shape(response: TestResponse, game: Game) -> tuple[int, dict[str, str], str]:
    """The answer with its own game's ids and times written out of it."""
    headers = dict(response.headers)
    headers.pop("Content-Length", None)  # the times' digits may differ in number
    text = response.get_data(as_text=True)
    # A game dealt from a given deck is still salted: its commitment and the seed it reveals
    # when collected are its own.
    revealed = (response.get_json() or {}).get("server_seed")
    for own in (game.id, game.player.id, game.view["seed_commitment"], revealed):
        if own:
            text = text.replace(str(own), "<own>")
    return response.status_code, headers, TIME.sub("<time>", text)


def _same(
    http: Http, hot: Game, flask: Game, command: str, token: str | None = "", **headers: str
) -> TestResponse:
    a = _send(http, hot, command, hot=True, token=token, **headers)
    b = _send(http, flask, command, hot=False, token=token, **headers)
    assert _shape(a, hot) == _shape(b, flask)
    return a


def test_commands_answer_the_same_on_both_paths(http: Http, flask_calls: list[str]) -> None:
    hot, flask = _twins()
    sent = 0
    for _ in range(12):
        answer = _same(http, hot, flask, "draw")
        sent += 1
        if answer.get_json()["stock_count"] == 0:
            _same(http, hot, flask, "recycle")
            sent += 1
    _same(http, hot, flask, "undo")
    _same(http, hot, flask, "recycle")  # refused or not, alike
    _same(http, hot, flask, "collect")
    _same(http, hot, flask, "draw")  # the game is over: 409 game-finished
    assert len([path for path in flask_calls if f"/{flask.id}/" in path]) == sent + 4
    assert not any(f"/{hot.id}/" in path for path in flask_calls)


def test_refusals_are_the_same_problems(http: Http, flask_calls: list[str]) -> None:
    hot, flask = _twins()
    stranger = WalletFactory.create(balance=0).player.token
    for token in (None, "not-a-token", stranger, http.auditor_key, http.operator_key):
        _same(http, hot, flask, "draw", token=token)
    _same(http, hot, flask, "draw", **{"Idempotency-Key": "bad key with spaces"})
    _same(http, hot, flask, "draw", **{"If-Match": "seven"})
    _same(http, hot, flask, "draw", **{"If-Match": '"999"'})  # 412, with the ETag
    _same(http, hot, flask, "draw", **{"If-Match": hot.etag})
    assert not any(f"/{hot.id}/" in path for path in flask_calls)


def test_an_unknown_game_is_not_found_on_both_paths(http: Http) -> None:
    game = GameFactory.create()
    missing = Game(game.player, {**game.view, "id": str(uuid.uuid4())}, game.etag)
    a = _send(http, missing, "draw", hot=True)
    b = _send(http, missing, "draw", hot=False)
    assert a.status_code == 404
    assert (a.headers, a.get_data()) == (b.headers, b.get_data())


def test_requests_the_hot_path_leaves_to_flask(http: Http, flask_calls: list[str]) -> None:
    game = GameFactory.create()
    token = game.player.token
    flask_calls.clear()  # the setup's
    http.post(f"/v1/games/{game.id}/draw", token, json={})  # a body
    http.post(f"/v1/games/{game.id}/move", token, json={"from": "waste", "to": "tableau:1"})
    http.post(f"/v1/games/{game.id}/actions", token, json={"action": "draw"})
    http.get(f"/v1/games/{game.id}/draw", token)  # another method: 405
    http.post(f"/v1/games/{game.id}/draw/", token)  # another path
    assert len(flask_calls) == 5
