"""Duels (seed 003): join, deal the seat's game, play it against the clock, read, void, list."""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Any

from flask import url_for
from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.requests import (
    IDEMPOTENCY_KEY_HEADER,
    page,
    parse_time_cursor,
    request_context,
    time_cursor,
)
from service.api.schemas.common import PageQuerySchema
from service.api.schemas.duels import (
    DuelEventStreamSchema,
    DuelListQuerySchema,
    DuelPageSchema,
    DuelPaytableSchema,
    DuelReplaySchema,
    DuelViewSchema,
    JoinDuelSchema,
)
from service.api.schemas.games import ActionSchema, EmptySchema, VoidSchema
from service.api.wiring import services
from service.core import game_decider as g
from service.core.dealing import dealing
from service.core.duel_views import duel_view
from service.games.klondike import KLONDIKE_DUEL
from service.rules.actions import parse as parse_action
from service.services.duels import LoadedDuel

blp = Blueprint(
    "duels", __name__, url_prefix="/v1/duels", description="Classic duels: one deal, five minutes"
)


def _answer(loaded: LoadedDuel, status: int = 200) -> tuple[dict[str, Any], int, dict[str, str]]:
    principal = require_principal()
    view = duel_view(loaded, principal.actor, services().duels.clock())
    # No ETag: the duel's version moves when another seat deals or finishes, which would tell a
    # seat how the others are getting on.
    headers: dict[str, str] = {}
    if loaded.replayed:
        headers["Idempotent-Replayed"] = "true"
    return view, status, headers


@blp.route("", methods=["POST"])
@allow("operator", player="owner")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Join a duel: the oldest open one of this fee and seat count, or a new one",
    description="The entry fee is debited into the duel's pot in the same transaction. Every "
    "seat plays the same committed deal; the best score takes the pot less the rake. In "
    "certification mode an operator may join for a player (player_id), and open a duel dealt "
    "from a given seed or deck; certification duels are played for the sandbox currency XTS "
    "(each player's sandbox wallet), never for real money. A seed whose commitment another "
    "real game or duel has (a real game's revealed seed given again) is refused with 409 "
    "commitment-taken, nothing applied.",
)
@blp.arguments(JoinDuelSchema)
@blp.response(201, DuelViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
def join(body: dict[str, Any]) -> Any:
    principal = require_principal()
    asked = dealing("duel", body, principal.player_id, services().settings.certification_mode)
    loaded = services().duels.join(
        request_context(),
        asked.player_id,
        body["fee"],
        body["seats"],
        certification=asked.deal,
        certify=asked.certify,
    )
    view, _, headers = _answer(loaded)
    headers["Location"] = url_for("duels.duel", duel_id=loaded.state.duel_id)
    return view, 201, headers


@blp.route("", methods=["GET"], endpoint="listed")
@allow("operator", "auditor")
@blp.doc(security=BEARER, summary="Every duel, newest first, by status and player")
@blp.arguments(DuelListQuerySchema, location="query", unknown=RAISE)
@blp.response(200, DuelPageSchema)
@problems(blp, *AUTHENTICATED, 422)
def listed(query: dict[str, Any]) -> Any:
    before = parse_time_cursor(query["before"]) if query["before"] else None
    limit = query["limit"]
    rows = services().duels.listed(
        status=query.get("status"), player_id=query.get("player_id"), before=before, limit=limit + 1
    )
    return page(rows, limit, lambda r: time_cursor(r.opened_at, r.duel_id))


@blp.route("/paytables", methods=["GET"])
@blp.doc(summary="The published duel paytables: fees, seats, rake, time to fill")
@blp.response(200, DuelPaytableSchema(many=True))
@problems(blp)  # before its first request the app builds its services, which can fail (503)
def paytables() -> Any:
    rules = {"variant": KLONDIKE_DUEL.id, "rules": list(KLONDIKE_DUEL.summary)}
    return [{**t.as_config(), **rules} for t in services().duels.paytables()]


@blp.route("/<uuid:duel_id>", methods=["GET"])
@allow("operator", "auditor", player="seated")
@blp.doc(
    security=BEARER,
    summary="A duel: your seat, game and time left while playing; every result once settled",
)
@blp.response(200, DuelViewSchema)
@problems(blp, *AUTHENTICATED, 404)
def duel(duel_id: uuid.UUID) -> Any:
    principal = require_principal()
    view, status, headers = _answer(services().duels.duel(duel_id, principal.actor))
    if principal.player_id is not None:  # a player's view carries a due reality check
        due = services().safer.reality_check(request_context(), principal.player_id)
        view = {**view, "reality_check": due.shown() if due else None}
    return view, status, headers


@blp.route("/<uuid:duel_id>/deal", methods=["POST"])
@allow(player="seated")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Deal your seat's game: the duel's deck, five minutes from now",
    description="Refused as a join is (nothing dealt): while a switch covers the game, its "
    "version, the player or all gaming, while the player is timed out or self-excluded, past "
    "the session's time limit, or while a reality check of the session waits. A seat not "
    "dealt by the duel's deal_by forfeits: it scores nothing and its fee stays in the pot.",
)
@blp.arguments(EmptySchema, required=False)
@blp.response(200, DuelViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
def deal(body: dict[str, Any], duel_id: uuid.UUID) -> Any:
    principal = require_principal()
    assert principal.player_id is not None
    return _answer(services().duels.deal(request_context(), duel_id, principal.player_id))


@blp.route("/<uuid:duel_id>/actions", methods=["POST"])
@allow(player="seated")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Play your seat's game: any of its legal moves, or collect to stop",
    description="The body is one of the seat game's legal_moves (as for /v1/games/{id}/"
    "actions). After the deadline every command is refused as time-up, and the game ends.",
)
@blp.arguments(ActionSchema)
@blp.response(200, DuelViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
def action(body: dict[str, Any], duel_id: uuid.UUID) -> Any:
    principal = require_principal()
    assert principal.player_id is not None
    name = body["action"]
    command: g.PlayAction | g.Collect = (
        g.Collect("player") if name == "collect" else parse_action(name, body)
    )
    return _answer(services().duels.play(request_context(), duel_id, principal.player_id, command))


@blp.route("/<uuid:duel_id>/void", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Void a duel: every fee refunded, seats still playing voided",
)
@blp.arguments(VoidSchema)
@blp.response(200, DuelViewSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
def void(body: dict[str, Any], duel_id: uuid.UUID) -> Any:
    return _answer(services().duels.void(request_context(), duel_id, body["reason"]))


@blp.route("/<uuid:duel_id>/events", methods=["GET"])
@allow("auditor")
@blp.doc(security=BEARER, summary="The duel's raw event stream with its hash chain")
@blp.response(200, DuelEventStreamSchema)
@problems(blp, *AUTHENTICATED, 404)
def events(duel_id: uuid.UUID) -> Any:
    intact, shown = services().duels.event_stream(duel_id)
    return {"duel_id": duel_id, "chain_intact": intact, "events": shown}


@blp.route("/<uuid:duel_id>/replay", methods=["GET"])
@allow("auditor", player="seated")
@blp.doc(
    security=BEARER,
    summary="Replay a duel: its events with who and when, and every check",
    description="Auditors any duel; a seat's player their own once it has ended. The checks: "
    "the hash chain, the revealed seed against the commitment, each seat's game (its own "
    "replay's checks with the duel's seed), each seat's points worked out again from its "
    "game's events, the settlement decided again from the seats, and the ledger.",
)
@blp.response(200, DuelReplaySchema)
@problems(blp, *AUTHENTICATED, 404, 409)
def replay(duel_id: uuid.UUID) -> Any:
    principal = require_principal()
    records, verification = services().duels.verify(duel_id, principal.actor)
    return {
        "label": "replay",
        "duel_id": duel_id,
        "steps": [
            {
                "version": r.version,
                "type": r.type,
                "recorded_at": r.recorded_at,
                "actor": r.metadata.get("actor"),
                "role": r.metadata.get("role"),
                "data": r.data,
                "hash": r.hash,
            }
            for r in records
        ],
        "verification": {
            "verified": verification.ok,
            "checks": verification.checks,
            "findings": [asdict(f) for f in verification.findings],
        },
    }


player_duels = Blueprint(
    "player_duels", __name__, url_prefix="/v1/players", description="A player's duels"
)


@player_duels.route("/<uuid:player_id>/duels", methods=["GET"])
@allow("operator", "auditor", player="self")
@player_duels.doc(security=BEARER, summary="The duels a player sat in, newest first")
@player_duels.arguments(PageQuerySchema, location="query", unknown=RAISE)
@player_duels.response(200, DuelPageSchema)
@problems(player_duels, *AUTHENTICATED, 404, 422)
def history(query: dict[str, Any], player_id: uuid.UUID) -> Any:
    before = parse_time_cursor(query["before"]) if query["before"] else None
    limit = query["limit"]
    rows = services().duels.of_player(player_id, before=before, limit=limit + 1)
    return page(rows, limit, lambda r: time_cursor(r.opened_at, r.duel_id))
