"""JSON on the way out with orjson. (Request bodies stay with the standard library: orjson reads
an integer past 64 bits as a float, which validation would then see as something else.)

``FastJSON`` is the app's JSON provider: every ``jsonify`` (flask-smorest's dumped responses
included) is encoded by orjson, keys sorted as Flask's own provider sorts them, and the types
orjson leaves to us handled exactly as Flask's provider handles them. ``view_response`` answers
a game view without marshmallow's dump: the view functions already build exactly the fields of
GameViewSchema, which stays the documented contract (tests/api/test_rendering.py proves the two
agree for every game).
"""

from __future__ import annotations

import dataclasses
import decimal
import json
import uuid
from datetime import date, datetime
from typing import Any

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider
from werkzeug.http import http_date

#: Sorted keys as Flask's provider writes them; dates and dataclasses handed to ``_default``.
OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _default(value: Any) -> Any:
    """What Flask's provider does with the types JSON has no word for."""
    if isinstance(value, date):
        return http_date(value)
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_default, option=OPTIONS)
    except TypeError:
        # Beyond orjson: integers past 64 bits, keys that are not strings. Rare; the standard
        # library writes them as Flask always has.
        return json.dumps(value, default=_default, sort_keys=True).encode()


class FastJSON(DefaultJSONProvider):
    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return encode(obj).decode()

    def response(self, *args: Any, **kwargs: Any) -> Response:
        value = self._prepare_response_obj(args, kwargs)
        return Response(encode(value) + b"\n", mimetype=self.mimetype)


def game_view_response(view: dict[str, Any], status: int, headers: dict[str, str]) -> Response:
    """A game view (service.core.game_views, with its times as datetimes) as the response
    GameViewSchema documents, encoded straight from the view."""
    body = dict(view)
    for name in ("started_at", "last_event_at", "ended_at"):
        moment = body.get(name)
        if isinstance(moment, datetime):
            body[name] = moment.isoformat()
    response = Response(encode(body) + b"\n", mimetype="application/json")
    response.status_code = status
    response.headers.update(headers)
    return response


def stamped(response: Response, request_id: str | None) -> Response:
    """Every API answer's own headers: the request's id, and no caching (wallets and game
    states are private and change with every command)."""
    if request_id:
        response.headers["X-Request-Id"] = request_id
    response.headers.setdefault("Cache-Control", "no-store")
    return response
