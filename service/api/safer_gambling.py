"""Safer gambling: a player's limits (stricter at once, looser after 24 hours), time-outs and
self-exclusion (at once, never shortened); read by the player and staff, set by the player or
an operator."""

from __future__ import annotations

import uuid
from typing import Any

from service.api.auth import allow
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.problems import Problem
from service.api.requests import IDEMPOTENCY_KEY_HEADER, request_context
from service.api.schemas.safer_gambling import (
    ExclusionSchema,
    LimitsSchema,
    NewExclusionSchema,
    RealityCheckStateSchema,
    SetLimitSchema,
)
from service.api.wiring import services
from service.core.safer_gambling import LIMITS, Exclusion, left
from service.services.safer_gambling import Limits

blp = Blueprint(
    "safer_gambling",
    __name__,
    url_prefix="/v1/players",
    description="Safer gambling: limits, time-outs and self-exclusion",
)


def _rendered(limits: Limits) -> tuple[dict[str, Any], int, dict[str, str]]:
    shown = [
        {
            "limit": v.limit,
            "value": v.value,
            "used": v.used,
            "remaining": None if v.value is None else left(v.value, v.used),
            "resets_at": v.resets_at,
            "pending": v.pending,
            "pending_from": v.pending_from,
        }
        for v in limits.limits
    ]
    body = {"player_id": limits.player_id, "currency": limits.currency, "limits": shown}
    return body, 200, {"Idempotent-Replayed": "true"} if limits.replayed else {}


@blp.route("/<uuid:player_id>/limits", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(security=BEARER, summary="The player's limits, what each has used and when it resets")
@blp.response(200, LimitsSchema)
@problems(blp, *AUTHENTICATED, 404)
def limits(player_id: uuid.UUID) -> Any:
    return _rendered(services().safer.limits(player_id))


@blp.route("/<uuid:player_id>/limits/<limit>", endpoint="set_limit", methods=["PUT"])
@allow("operator", player="self")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Set one limit (stricter at once, looser after 24 hours)",
    description="limit: " + ", ".join(LIMITS) + ". Every change is recorded on the player's "
    "stream (who, when, the old and the new value, from when it holds).",
)
@blp.arguments(SetLimitSchema)
@blp.response(200, LimitsSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def set_limit(body: dict[str, Any], player_id: uuid.UUID, limit: str) -> Any:
    if limit not in LIMITS:
        raise Problem("not-found", f"no limit {limit}; the limits are {', '.join(LIMITS)}")
    saved = services().safer.set_limit(request_context(), player_id, limit, body["value"])
    return _rendered(saved)


def _exclusion(player_id: uuid.UUID, found: Exclusion | None) -> dict[str, Any]:
    return {
        "player_id": player_id,
        "excluded": found is not None,
        "kind": found.kind if found else None,
        "until": found.until if found else None,
    }


@blp.route("/<uuid:player_id>/exclusion", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(security=BEARER, summary="The player's time-out or self-exclusion in force, if any")
@blp.response(200, ExclusionSchema)
@problems(blp, *AUTHENTICATED, 404)
def exclusion(player_id: uuid.UUID) -> Any:
    return _exclusion(player_id, services().safer.exclusion(player_id))


@blp.route("/<uuid:player_id>/exclusions", endpoint="exclude", methods=["POST"])
@allow("operator", player="self")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Take a time-out or self-exclude, at once",
    description="No deal, duel join or deposit until it ends; withdrawals, and playing out and "
    "collecting a game already dealt, stay open. It cannot be ended early: a shorter one while "
    "a longer one is in force changes nothing. Recorded on the player's stream.",
)
@blp.arguments(NewExclusionSchema)
@blp.response(201, ExclusionSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def exclude(body: dict[str, Any], player_id: uuid.UUID) -> Any:
    found = services().safer.exclude(request_context(), player_id, body["length"])
    return _exclusion(player_id, found), 201


@blp.route("/<uuid:player_id>/reality-check", methods=["GET"])
@allow(player="self")
@blp.doc(
    security=BEARER,
    summary="The reality check due in this session, if any",
    description="Due once the player's reality-check interval (a limit, in minutes) has passed "
    "since the session began or since the last acknowledgement: then no deal, play action or "
    "duel join is accepted (409 reality-check-due) until it is acknowledged.",
)
@blp.response(200, RealityCheckStateSchema)
@problems(blp, *AUTHENTICATED, 404)
def reality_check(player_id: uuid.UUID) -> Any:
    due = services().safer.reality_check(request_context(), player_id)
    return {"due": due is not None, "reality_check": due}


@blp.route("/<uuid:player_id>/reality-check", endpoint="acknowledge", methods=["POST"])
@allow(player="self")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Acknowledge the reality check: play goes on until the next one",
    description="Recorded on the player's stream with the figures shown. Nothing is recorded "
    "when no check is due (due false).",
)
@blp.response(200, RealityCheckStateSchema)
@problems(blp, *AUTHENTICATED, 404)
def acknowledge(player_id: uuid.UUID) -> Any:
    seen = services().safer.acknowledge(request_context(), player_id)
    return {"due": False, "reality_check": seen}
