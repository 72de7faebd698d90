"""Safer gambling: a player's limits, as shown and as set."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import Strict
from service.core.safer_gambling import LENGTHS, LIMITS, MOST


class LimitSchema(Schema):
    limit = fields.String(
        required=True,
        validate=validate.OneOf(LIMITS),
        metadata={
            "description": "deposit-day/week/month: gross deposits; loss-day/week/month: net "
            "loss (stakes and fees less winnings, refunds and prizes); max-stake: one game's "
            "stake or one duel's fee; session-time: minutes a player session may play (then no "
            "deal, play action or duel join in it); reality-check: minutes between reality "
            "checks (neither is money). Periods are UTC calendar days, weeks (from Monday) and "
            "months."
        },
    )
    value = fields.Integer(
        required=True, allow_none=True, metadata={"description": "in force now; null: no limit"}
    )
    used = fields.Integer(
        required=True, metadata={"description": "this period's deposits or net loss"}
    )
    remaining = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null: no limit"}
    )
    resets_at = fields.DateTime(required=True, allow_none=True)
    pending = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "a looser value waiting for its day (null: none, or no limit)"},
    )
    pending_from = fields.DateTime(
        required=True, allow_none=True, metadata={"description": "null: nothing pending"}
    )


class LimitsSchema(Schema):
    player_id = fields.UUID(required=True)
    currency = fields.String(required=True)
    limits = fields.List(fields.Nested(LimitSchema), required=True)


class SetLimitSchema(Strict):
    value = fields.Integer(
        required=True,
        strict=True,
        allow_none=True,
        validate=validate.Range(1, MOST),
        metadata={
            "description": "minor units (session-time, reality-check: minutes, at most "
            "1440; null: no limit). Stricter (lower) takes effect at once; looser after 24 "
            "hours, the old value holding until then."
        },
    )


class NewExclusionSchema(Strict):
    length = fields.String(
        required=True,
        validate=validate.OneOf(LENGTHS),
        metadata={
            "description": "a time-out: 24-hours, one-week, one-month, six-weeks; "
            "self-exclusion: six-months, one-year, five-years. At once, and never shortened."
        },
    )


class ExclusionSchema(Schema):
    player_id = fields.UUID(required=True)
    excluded = fields.Boolean(required=True)
    kind = fields.String(
        required=True, allow_none=True, metadata={"description": "time-out or self-exclusion"}
    )
    until = fields.DateTime(required=True, allow_none=True)


class RealityCheckSchema(Schema):
    session_started = fields.DateTime(required=True)
    due_at = fields.DateTime(required=True)
    session_seconds = fields.Integer(required=True)
    stakes = fields.Integer(required=True, metadata={"description": "stakes and fees, minor units"})
    payouts = fields.Integer(
        required=True, metadata={"description": "winnings, refunds and prizes, minor units"}
    )
    net = fields.Integer(required=True, metadata={"description": "payouts - stakes"})


class RealityCheckStateSchema(Schema):
    due = fields.Boolean(required=True)
    reality_check = fields.Nested(
        RealityCheckSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the prompt while due (for the acknowledgement: the one seen)"},
    )
