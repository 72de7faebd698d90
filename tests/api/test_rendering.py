"""Game views are encoded straight from the view (service.api.rendering), not through
marshmallow's dump of GameViewSchema, which stays the documented contract: for every registered
game, at every step of random play and after the game ends, both give the same JSON. And the
app's orjson provider writes what Flask's own provider wrote."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import pytest
from flask import Flask, Response
from flask.json.provider import DefaultJSONProvider

from service.api.games import game_body
from service.api.rendering import FastJSON, game_view_response
from service.api.schemas.games import GameViewSchema
from service.games import GAMES
from service.services.games import LoadedGame
from tests import random_play


def _games(variant: str, seed: int) -> list[tuple[LoadedGame, bool]]:
    """A random game of ``variant`` as it stood after each step: (game, view in full)."""
    rng = random.Random(seed)
    seen = []
    for state, now in random_play.states(variant, seed):
        ended = now if state.is_over else None
        seen.append((LoadedGame(state, random_play.T0, now, ended), state.is_over))
        seen.append((LoadedGame(state, random_play.T0, now, ended), rng.random() < 0.3))
    return seen


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_a_game_view_encodes_as_its_schema_dumps_it(variant: str) -> None:
    app = Flask(__name__)
    app.json = FastJSON(app)
    schema = GameViewSchema()
    with app.test_request_context():
        for seed in range(3):
            for loaded, full in _games(variant, seed):
                body = game_body(loaded, full=full)
                documented = json.loads(DefaultJSONProvider(app).dumps(schema.dump(body)))
                fast = game_view_response(body, 200, {"ETag": '"1"'})
                assert json.loads(fast.get_data()) == documented
                assert fast.mimetype == "application/json"
                assert fast.headers["ETag"] == '"1"'


SAMPLES: list[Any] = [
    {"b": 1, "a": [True, None, 1.5, "x"], "c": {"z": "é", "y": -(2**63)}},
    {"when": datetime(2030, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "id": uuid.UUID(int=7)},
    {"money": Decimal("12.50"), "huge": 2**70, "day": datetime(2030, 1, 1).date()},
    [1, {"2": 3}],
    "plain",
]


@pytest.mark.parametrize("value", SAMPLES)
def test_the_app_writes_json_as_flask_did(value: Any) -> None:
    app = Flask(__name__)
    fast, standard = FastJSON(app), DefaultJSONProvider(app)
    assert json.loads(fast.dumps(value)) == json.loads(standard.dumps(value))
    assert list(json.loads(fast.dumps(value))) == list(json.loads(standard.dumps(value)))
    with app.app_context():
        written = cast(Response, standard.response(value))
        assert json.loads(fast.response(value).get_data()) == json.loads(written.get_data())
