"""Disable on demand (operators): switch gaming off or on for everyone, one game, one game
version or one player, with a reason; deals and duel joins are refused while a switch covering
them is off, and games already dealt play on. Every switch is recorded (an event on the
gaming-controls stream and a significant event)."""

from __future__ import annotations

import uuid
from typing import Any

from service.api.auth import allow
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.requests import IDEMPOTENCY_KEY_HEADER, request_context
from service.api.schemas.controls import SwitchesSchema, SwitchSchema, SwitchViewSchema
from service.api.wiring import services
from service.core.controls import EVERYONE, Scope

blp = Blueprint("controls", __name__, url_prefix="/v1/controls", description="Disable on demand")

_DOC = {
    "security": BEARER,
    "parameters": [IDEMPOTENCY_KEY_HEADER],
    "description": "enabled false switches it off, true back on; reason is recorded either way "
    "(with who and when). Deals and duel joins it covers answer 403 gaming-disabled or "
    "game-disabled; games already dealt play on and are collected as ever.",
}


def _switch(scope: Scope, target: str, body: dict[str, Any]) -> Any:
    view = services().controls.switch(
        request_context(), scope, target, body["enabled"], body["reason"]
    )
    return view


@blp.route("", methods=["GET"])
@allow("operator", "auditor")
@blp.doc(security=BEARER, summary="Every switch ever thrown, as it stands, newest first")
@blp.response(200, SwitchesSchema)
@problems(blp, *AUTHENTICATED)
def switches() -> Any:
    return {"switches": services().controls.switches()}


@blp.route("/gaming", endpoint="gaming", methods=["PUT"])
@allow("operator")
@blp.doc(summary="Switch all gaming off or on", **_DOC)
@blp.arguments(SwitchSchema)
@blp.response(200, SwitchViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY)
def gaming(body: dict[str, Any]) -> Any:
    return _switch("all", EVERYONE, body)


@blp.route("/games/<game>", endpoint="game", methods=["PUT"])
@allow("operator")
@blp.doc(summary="Switch one game off or on", **_DOC)
@blp.arguments(SwitchSchema)
@blp.response(200, SwitchViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def game(body: dict[str, Any], game: str) -> Any:
    return _switch("game", game, body)


@blp.route("/versions/<path:rules_version>", endpoint="version", methods=["PUT"])
@allow("operator")
@blp.doc(summary="Switch one game version (a rules_version) off or on", **_DOC)
@blp.arguments(SwitchSchema)
@blp.response(200, SwitchViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def version(body: dict[str, Any], rules_version: str) -> Any:
    return _switch("version", rules_version, body)


@blp.route("/players/<uuid:player_id>", endpoint="player", methods=["PUT"])
@allow("operator")
@blp.doc(summary="Switch gaming off or on for one player", **_DOC)
@blp.arguments(SwitchSchema)
@blp.response(200, SwitchViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def player(body: dict[str, Any], player_id: uuid.UUID) -> Any:
    return _switch("player", str(player_id), body)
