"""Compliance: the regulatory replay, whole-history audits and the significant-events log."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import STATUSES, Strict
from service.api.schemas.games import GameStateSchema


class ReplayQuerySchema(Strict):
    # Not strict: query values arrive as text ("3"); "2.5" and "x" are still refused.
    to_version = fields.Integer(
        load_default=None,
        validate=validate.Range(1, 1_000_000),
        metadata={"description": "show the game as it stood after this version"},
    )


class ReplayStepSchema(Schema):
    version = fields.Integer(required=True)
    type = fields.String(required=True)
    recorded_at = fields.DateTime(required=True)
    actor = fields.String(required=True, allow_none=True)
    role = fields.String(required=True, allow_none=True)
    request_id = fields.String(required=True, allow_none=True)
    data = fields.Dict(required=True, metadata={"description": "the event as recorded"})
    hash = fields.String(required=True)
    state = fields.Nested(
        GameStateSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the game after this event; null before the deal"},
    )


class OutcomeSchema(Schema):
    player_id = fields.UUID(required=True)
    status = fields.String(
        required=True,
        validate=validate.OneOf(("new", *STATUSES)),
        metadata={"description": "new: shown only up to the stake, before the deal"},
    )
    stake = fields.Integer(required=True)
    currency = fields.String(required=True)
    win_rate = fields.Integer(required=True)
    units = fields.Integer(required=True)
    max_units = fields.Integer(required=True)
    foundation_count = fields.Integer(required=True, metadata={"description": "units"})
    winnings = fields.Integer(required=True)
    payout = fields.Integer(required=True, allow_none=True)
    refund = fields.Integer(required=True, allow_none=True)
    net = fields.Integer(required=True, metadata={"description": "payout + refund - stake"})
    end_reason = fields.String(required=True, allow_none=True)


CHECK_STATUSES = ("pass", "fail", "pending", "not-applicable")


class FindingSchema(Schema):
    check = fields.String(required=True)
    location = fields.String(required=True, metadata={"description": 'e.g. "game-<id> v7"'})
    expected = fields.String(required=True)
    found = fields.String(required=True)


class VerificationSchema(Schema):
    verified = fields.Boolean(required=True, metadata={"description": "no check failed"})
    checks = fields.Dict(
        keys=fields.String(),
        values=fields.String(validate=validate.OneOf(CHECK_STATUSES)),
        required=True,
        metadata={
            "description": "hash-chain, seed-commitment, deck, rules, payout, ledger: pass, "
            "fail, pending (not decidable yet: the seed or deck is not revealed, or the record "
            "stops being readable before it) or not-applicable (a deal recorded in clear "
            "before sealing)"
        },
    )
    findings = fields.List(fields.Nested(FindingSchema), required=True)


class ReplaySchema(Schema):
    label = fields.String(required=True, metadata={"description": 'always "replay"'})
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True, metadata={"description": "the last version shown"})
    latest_version = fields.Integer(required=True)
    masked = fields.Boolean(
        required=True, metadata={"description": "face-down cards and the stock hidden"}
    )
    steps = fields.List(fields.Nested(ReplayStepSchema), required=True)
    final = fields.Nested(
        GameStateSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the layout at the last step shown; null before the deal"},
    )
    outcome = fields.Nested(OutcomeSchema, required=True)
    verification = fields.Nested(
        VerificationSchema,
        required=True,
        metadata={"description": "of the whole recorded game, whatever version is shown"},
    )


class NewAuditSchema(Strict):
    """Nothing: every game; from and to: games dealt in those days (UTC, inclusive);
    player_id: one player's games, stream and the ledger."""

    start = fields.Date(data_key="from")
    end = fields.Date(data_key="to")
    player_id = fields.UUID()


class AuditScopeSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(("all", "dates", "player")))
    start = fields.Date(required=True, allow_none=True, data_key="from")
    end = fields.Date(required=True, allow_none=True, data_key="to")
    player_id = fields.UUID(required=True, allow_none=True)


class AuditFindingSchema(FindingSchema):
    game_id = fields.UUID(required=True, allow_none=True)
    unit = fields.String(
        required=True, metadata={"description": 'a game stream, a player stream or "ledger"'}
    )


class AuditSchema(Schema):
    id = fields.UUID(required=True, attribute="audit_id")
    scope = fields.Nested(AuditScopeSchema, required=True)
    requested_by = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("running", "done", "failed")))
    total = fields.Integer(required=True, metadata={"description": "units to check"})
    checked = fields.Integer(required=True)
    failed_units = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)
    finished_at = fields.DateTime(required=True, allow_none=True)
    findings = fields.List(fields.Nested(AuditFindingSchema), required=True)
    failure = fields.String(
        allow_none=True, metadata={"description": "why a failed audit could not finish"}
    )


class SignificantQuerySchema(Strict):
    kind = fields.String(
        load_default=None,
        validate=validate.OneOf(
            (
                "void",
                "configuration",
                "big-win",
                "session",
                "collection-failed",
                "certification",
                "advantage-play",
                "gaming-control",
                "safer-gambling",
                "log-stalled",
                "withdrawal-held",
                "beats-the-house",
            )
        ),
    )
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 200))
    before = fields.Integer(
        load_default=None,
        validate=validate.Range(1, 2**62),
        metadata={"description": "cursor: the last id seen"},
    )


class SignificantEventSchema(Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True)
    occurred_at = fields.DateTime(required=True)
    actor = fields.String(required=True)
    game_id = fields.UUID(required=True, allow_none=True)
    player_id = fields.UUID(required=True, allow_none=True)
    amount = fields.Integer(required=True, allow_none=True)
    currency = fields.String(required=True, allow_none=True)
    details = fields.Dict(required=True)


class SignificantPageSchema(Schema):
    items = fields.List(fields.Nested(SignificantEventSchema), required=True)
    next = fields.Integer(required=True, allow_none=True)
