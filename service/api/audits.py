"""Compliance: the regulatory replay of a game, whole-history audits, and the
significant-events log."""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Any

from flask import url_for
from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.problems import Problem
from service.api.requests import page
from service.api.schemas.audits import (
    AuditSchema,
    NewAuditSchema,
    ReplayQuerySchema,
    ReplaySchema,
    SignificantPageSchema,
    SignificantQuerySchema,
)
from service.api.wiring import services
from service.core.replay import Replay
from service.services.history_audits import Scope

blp = Blueprint("audits", __name__, description="Replays, audits and significant events")


@blp.route("/v1/games/<uuid:game_id>/replay", methods=["GET"])
@allow("auditor", player="owner")
@blp.doc(
    security=BEARER,
    summary="Replay a game event by event, with every check re-made",
    description="Every recorded event with who and when and the state after it, the final "
    "layout and outcome, and the verification of the whole game: the revealed seed against "
    "its commitment, the deck re-derived from it, every command re-decided by the rules, the "
    "hash chain, the payout and the ledger postings. Auditors may replay any game, in "
    "progress too (its seed or deck still secret, so shown as its player sees it), except a "
    "duel seat's game before its duel has ended (409 duel-in-progress: every seat plays the "
    "same deck); a player their own finished games, masked as in play. ?to_version=N shows "
    "the game as it stood after event N.",
)
@blp.arguments(ReplayQuerySchema, location="query", unknown=RAISE)
@blp.response(200, ReplaySchema)
@problems(blp, *AUTHENTICATED, 404, 409, 422)
def replay(query: dict[str, Any], game_id: uuid.UUID) -> Any:
    principal = require_principal()
    found = services().audits.replay(game_id, principal.actor, to_version=query["to_version"])
    return _replay_body(found)


def _replay_body(replay: Replay) -> dict[str, Any]:
    verification = replay.verification
    return {
        "label": "replay",
        "game_id": replay.game_id,
        "version": replay.version,
        "latest_version": replay.latest_version,
        "masked": replay.masked,
        "steps": replay.steps,
        "final": replay.final,
        "outcome": replay.outcome,
        "verification": {
            "verified": verification.ok,
            "checks": verification.checks,
            "findings": [asdict(f) for f in verification.findings],
        },
    }


@blp.route("/v1/audits", methods=["POST"])
@allow("auditor")
@blp.doc(
    security=BEARER,
    summary="Audit the whole history, a date range or one player",
    description="Checks every game in scope as the replay does, and (for the whole history "
    "or a player) the player streams and the ledger, in chunks on the background workers, "
    "which plan it first under the audit's own database login (total is 0 until then). "
    "Follow its progress and findings at the Location. No body (or {}) audits everything.",
)
@blp.arguments(NewAuditSchema, required=False)
@blp.response(202, AuditSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY)
def start_audit(body: dict[str, Any]) -> Any:
    scope = _scope(body)
    credential = require_principal().credential
    assert credential is not None  # a staff key: @allow("auditor")
    status = services().audits.start_audit(scope, credential)
    return status, 202, {"Location": url_for("audits.audit", audit_id=status.audit_id)}


def _scope(body: dict[str, Any]) -> Scope:
    dates = "start" in body or "end" in body
    if dates and "player_id" in body:
        raise Problem(
            "validation-error",
            "audit either a date range or one player, not both",
            errors={"player_id": ["not with from and to"]},
        )
    if "player_id" in body:
        return Scope("player", player_id=body["player_id"])
    if not dates:
        return Scope("all")
    if "start" not in body or "end" not in body:
        missing = "to" if "start" in body else "from"
        raise Problem(
            "validation-error", f"{missing}: give both ends", errors={missing: ["required"]}
        )
    if body["end"] < body["start"]:
        raise Problem(
            "validation-error", "to: the range ends before it starts", errors={"to": ["too early"]}
        )
    return Scope("dates", start=body["start"], end=body["end"])


@blp.route("/v1/audits/<uuid:audit_id>", methods=["GET"])
@allow("auditor")
@blp.doc(security=BEARER, summary="An audit's progress and findings")
@blp.response(200, AuditSchema)
@problems(blp, *AUTHENTICATED, 404)
def audit(audit_id: uuid.UUID) -> Any:
    return services().audits.audit(audit_id)


@blp.route("/v1/significant-events", methods=["GET"])
@allow("auditor")
@blp.doc(
    security=BEARER,
    summary="Voids, configuration changes and big wins, newest first",
)
@blp.arguments(SignificantQuerySchema, location="query", unknown=RAISE)
@blp.response(200, SignificantPageSchema)
@problems(blp, *AUTHENTICATED, 422)
def significant_events(query: dict[str, Any]) -> Any:
    limit = query["limit"]
    rows = services().audits.significant_events(
        kind=query["kind"], before=query["before"], limit=limit + 1
    )
    return page(rows, limit, lambda r: r.id)
