"""Games: deal, read, play each command, collect, void, and the raw event stream."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from flask import Response, url_for
from flask.views import MethodView
from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.problems import Problem
from service.api.rendering import game_view_response
from service.api.requests import (
    IDEMPOTENCY_KEY_HEADER,
    IF_MATCH_HEADER,
    expected_version,
    request_context,
)
from service.api.schemas.common import Strict
from service.api.schemas.games import (
    ActionSchema,
    EmptySchema,
    EventStreamSchema,
    GameQuerySchema,
    GameViewSchema,
    MoveSchema,
    NewGameSchema,
    TurnSchema,
    VoidSchema,
)
from service.api.wiring import services
from service.bootstrap import Container
from service.core.context import RequestContext
from service.core.dealing import dealing
from service.core.game_views import full_view, player_view
from service.rules.actions import parse as parse_action
from service.services.access import Principal
from service.services.games import LoadedGame

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Deal and play games")

ETAG = {"ETag": {"$ref": "#/components/headers/ETAG"}}


def game_body(loaded: LoadedGame, *, full: bool = False) -> dict[str, Any]:
    view = full_view(loaded.state) if full else player_view(loaded.state)
    view["started_at"] = loaded.started_at
    view["last_event_at"] = loaded.last_event_at
    view["ended_at"] = loaded.ended_at
    view["payout_status"] = loaded.payout_status
    return view


def game_headers(loaded: LoadedGame) -> dict[str, str]:
    headers = {"ETag": f'"{loaded.state.version}"'}
    if loaded.replayed:
        headers["Idempotent-Replayed"] = "true"
    return headers


def answer(
    loaded: LoadedGame,
    status: int = 200,
    *,
    full: bool = False,
    reality_check: dict[str, Any] | None = None,
) -> Response:
    body = game_body(loaded, full=full)
    body["reality_check"] = reality_check
    return game_view_response(body, status, game_headers(loaded))


def player_prompt(*, checked: bool) -> dict[str, Any] | None:
    """What a player's answer says of the reality check due in their session: nothing due
    right after a deal or play action the check let through (``checked``), else read now.
    Staff sessions have none."""
    return prompt_for(services(), require_principal(), request_context, checked=checked)


def prompt_for(
    container: Container,
    principal: Principal,
    context: Callable[[], RequestContext],
    *,
    checked: bool,
) -> dict[str, Any] | None:
    """``player_prompt`` for the caller ``principal`` (``context`` builds its request's
    context, only if the check must be read)."""
    if principal.player_id is None or checked:
        return None
    due = container.safer.reality_check(context(), principal.player_id)
    return due.shown() if due else None


@blp.route("")
class Games(MethodView):
    @allow("operator", player="owner")
    @blp.doc(
        security=BEARER,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        summary="Pay the stake and deal a game",
        description="A player deals for themselves; the stake is debited and the deal made in "
        "one transaction. In certification mode an operator may deal for a player (player_id) "
        "from a given seed or deck; such games are flagged as certification games and are "
        "played for the sandbox currency XTS (the player's sandbox wallet), never for real "
        "money. A seed whose commitment another real game or duel has (a real game's revealed "
        "seed given again) is refused with 409 commitment-taken, nothing applied.",
    )
    @blp.arguments(NewGameSchema)
    @blp.response(201, GameViewSchema, headers=ETAG)
    @problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
    def post(self, body: dict[str, Any]) -> Any:
        principal = require_principal()
        mode = services().settings.certification_mode
        asked = dealing("game", body, principal.player_id, mode)
        loaded = services().games.start(
            request_context(),
            asked.player_id,
            body["variant"],
            body["stake"],
            client_seed=body.get("client_seed"),
            certification=asked.deal,
        )
        answered = answer(loaded, 201, reality_check=player_prompt(checked=True))
        answered.headers["Location"] = url_for("games.Game", game_id=loaded.state.game_id)
        return answered


@blp.route("/<uuid:game_id>")
class Game(MethodView):
    @allow("operator", "auditor", player="owner")
    @blp.doc(
        security=BEARER,
        summary="A game as its player sees it (auditors may ask for the full view)",
    )
    @blp.arguments(GameQuerySchema, location="query", unknown=RAISE)
    @blp.response(200, GameViewSchema, headers=ETAG)
    @problems(blp, *AUTHENTICATED, 404, 409, 422)
    def get(self, query: dict[str, Any], game_id: uuid.UUID) -> Any:
        principal = require_principal()
        full = query["view"] == "full"
        if full and principal.role != "auditor":
            raise Problem("forbidden", "the full view is for auditors")
        loaded = services().games.game(game_id, actor=principal.actor)
        return answer(loaded, full=full, reality_check=player_prompt(checked=False))


def _run(name: str, body: dict[str, Any], game_id: uuid.UUID) -> Any:
    context, version = request_context(), expected_version()
    return command_answer(services(), require_principal(), context, name, body, game_id, version)


def command_answer(
    container: Container,
    principal: Principal,
    context: RequestContext,
    name: str,
    body: dict[str, Any],
    game_id: uuid.UUID,
    version: int | None,
) -> Response:
    """One command (``name``, with its validated ``body``) on a game, answered with the new
    view: the command routes' work once the request is parsed (also service.api.hot_path's)."""
    games = container.games
    # No automatic retry on a conflict: of two commands racing on one game, one applies and
    # the other is told (409), never both.
    if name == "collect":
        loaded = games.collect(context, game_id, expected_version=version, retry_on_conflict=False)
    else:
        loaded = games.play(
            context,
            game_id,
            parse_action(name, body),
            expected_version=version,
            retry_on_conflict=False,
        )
    prompt = prompt_for(container, principal, lambda: context, checked=name != "collect")
    return answer(loaded, reality_check=prompt)


def _command_route(name: str, schema: type[Strict], summary: str) -> None:
    """POST /v1/games/<id>/<name>: one command, answered with the new game view."""
    needs_body = schema is not EmptySchema

    @blp.route(f"/<uuid:game_id>/{name}", endpoint=f"command_{name}", methods=["POST"])
    @allow(player="owner")
    @blp.doc(security=BEARER, parameters=[IDEMPOTENCY_KEY_HEADER, IF_MATCH_HEADER], summary=summary)
    # An instance, not the class: webargs would make a new schema for every request.
    @blp.arguments(schema(), required=needs_body)
    @blp.response(200, GameViewSchema, headers=ETAG)
    @problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409, 412)
    def command(body: dict[str, Any], game_id: uuid.UUID) -> Any:
        return _run(name, body, game_id)


#: The command routes: each one's name, body schema and summary.
COMMAND_ROUTES: tuple[tuple[str, type[Strict], str], ...] = (
    ("draw", EmptySchema, "Draw from the stock (1 or 3 cards)"),
    ("recycle", EmptySchema, "Turn the waste back into the stock"),
    ("move", MoveSchema, "Move cards between piles"),
    ("turn", TurnSchema, "Turn a face-down top card (a column, or any pile)"),
    ("undo", EmptySchema, "Undo the last action, where the rules allow"),
    ("collect", EmptySchema, "End the game and collect the winnings"),
)
for _name, _schema, _summary in COMMAND_ROUTES:
    _command_route(_name, _schema, _summary)
#: The commands whose body is empty (service/api/hot_path.py answers them sent without one).
BODYLESS_COMMANDS = tuple(name for name, schema, _ in COMMAND_ROUTES if schema is EmptySchema)


@blp.route("/<uuid:game_id>/actions", methods=["POST"])
@allow(player="owner")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER, IF_MATCH_HEADER],
    summary="Play any action of any game",
    description="One route for every game: the body is one of the view's legal_moves, e.g. "
    '{"action": "move", "from": "tableau:3", "to": "waste"}, {"action": "draw"}, '
    '{"action": "remove", "piles": ["pyramid:27", "waste"]}, {"action": "turn", "pile": '
    '"tableau:2"}, {"action": "redeal"}, {"action": "pick", "from": "fan:3", "card": "7H", '
    '"to": "foundation:1"}, {"action": "undo"} or {"action": "collect"}.',
)
@blp.arguments(ActionSchema())
@blp.response(200, GameViewSchema, headers=ETAG)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409, 412)
def action(body: dict[str, Any], game_id: uuid.UUID) -> Any:
    return _run(body["action"], body, game_id)


@blp.route("/<uuid:game_id>/void", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Void a game: no payout, the stake refunded",
)
@blp.arguments(VoidSchema)
@blp.response(200, GameViewSchema, headers=ETAG)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
def void(body: dict[str, Any], game_id: uuid.UUID) -> Any:
    return answer(services().games.void(request_context(), game_id, body["reason"]))


@blp.route("/<uuid:game_id>/events", methods=["GET"])
@allow("auditor")
@blp.doc(security=BEARER, summary="The game's raw event stream with its hash chain")
@blp.response(200, EventStreamSchema)
@problems(blp, *AUTHENTICATED, 404, 409)
def events(game_id: uuid.UUID) -> Any:
    intact, shown = services().games.event_stream(game_id)
    return {"game_id": game_id, "chain_intact": intact, "events": shown}
