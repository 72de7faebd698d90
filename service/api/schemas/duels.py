"""Duels: joining, the duel view, lists, events and replay."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import PageQuerySchema, Strict, StrictBoolean, card
from service.api.schemas.games import PaytableRefSchema, RecordedEventSchema


class JoinDuelSchema(Strict):
    fee = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=1, max=10**12),
        metadata={"description": "the entry fee, in minor units: one of the duel paytable's"},
    )
    seats = fields.Integer(
        load_default=2, strict=True, validate=validate.Range(2, 100), metadata={"default": 2}
    )
    player_id = fields.UUID(metadata={"description": "operator, certification mode only"})
    certification = StrictBoolean(
        metadata={"description": "operator: join (or open) a certification duel"}
    )
    seed = fields.String(
        validate=validate.Regexp(r"^[0-9a-f]{64}\Z", error="64 lowercase hex digits"),
        metadata={"description": "certification mode only: open a duel dealt from this seed"},
    )
    deck = fields.List(
        card(required=True),
        validate=validate.Length(equal=52),
        metadata={"description": "certification mode only: open a duel dealt this deck"},
    )


class DuelPaytableSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    currency = fields.String(required=True)
    fees = fields.List(fields.Integer(), required=True)
    max_seats = fields.Integer(required=True)
    rake = fields.String(
        required=True, metadata={"description": "the house keeps floor(pot x rake)"}
    )
    fill_within_seconds = fields.Integer(required=True)
    variant = fields.String(required=True)
    rules = fields.List(fields.String(), required=True)


class DuelSeatSchema(Schema):
    seat = fields.Integer(required=True)
    taken = fields.Boolean(required=True)
    player_id = fields.String(metadata={"description": "own seat, staff, or once ended"})
    game_id = fields.String(allow_none=True)
    finished = fields.Boolean()
    points = fields.Integer(allow_none=True, metadata={"description": "own seat, or once ended"})
    units = fields.Integer(allow_none=True)
    end_reason = fields.String(allow_none=True)
    ended_at = fields.DateTime(allow_none=True)
    payout = fields.Integer()
    refund = fields.Integer()


class OwnSeatSchema(Schema):
    seat = fields.Integer(required=True)
    game_id = fields.String(required=True, allow_none=True)
    deadline = fields.DateTime(required=True, allow_none=True)
    seconds_left = fields.Integer(required=True, allow_none=True)
    points = fields.Integer(required=True, allow_none=True)
    game = fields.Dict(
        required=True, allow_none=True, metadata={"description": "the seat's game, as a game view"}
    )


class DuelPayoutSchema(Schema):
    seat = fields.Integer(required=True)
    player_id = fields.String(required=True)
    amount = fields.Integer(required=True)


class DuelResultSchema(Schema):
    pot = fields.Integer(required=True)
    rake = fields.Integer(required=True)
    payouts = fields.List(fields.Nested(DuelPayoutSchema), required=True)
    refunds = fields.List(fields.Nested(DuelPayoutSchema), required=True)
    cancelled_because = fields.String(required=True, allow_none=True)


class DuelViewSchema(Schema):
    id = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(("open", "full", "settled", "cancelled"))
    )
    variant = fields.String(required=True)
    rules_version = fields.String(required=True)
    currency = fields.String(required=True)
    fee = fields.Integer(required=True)
    seats = fields.Integer(required=True)
    taken = fields.Integer(required=True)
    pot = fields.Integer(required=True)
    rake = fields.String(required=True)
    paytable = fields.Nested(PaytableRefSchema, required=True)
    certification = fields.Boolean(required=True)
    opened_at = fields.DateTime(required=True)
    fill_by = fields.DateTime(required=True)
    deal_by = fields.DateTime(required=True, allow_none=True)
    ended_at = fields.DateTime(required=True, allow_none=True)
    seed_commitment = fields.String(required=True)
    server_seed = fields.String(required=True, allow_none=True)
    revealed_deck = fields.List(card(), required=True, allow_none=True)
    seat_list = fields.List(fields.Nested(DuelSeatSchema), required=True)
    you = fields.Nested(OwnSeatSchema, required=True, allow_none=True)
    result = fields.Nested(DuelResultSchema, required=True, allow_none=True)
    reality_check = fields.Dict(
        allow_none=True,
        metadata={
            "description": "GET by the player: the reality check due in their session "
            "(session_started, due_at, session_seconds, stakes, payouts, net), else null; "
            "absent from other answers"
        },
    )


class DuelListQuerySchema(PageQuerySchema):
    status = fields.String(validate=validate.OneOf(("open", "full", "settled", "cancelled")))
    player_id = fields.UUID()


class DuelRowSchema(Schema):
    duel_id = fields.UUID(required=True)
    status = fields.String(required=True)
    currency = fields.String(required=True)
    fee = fields.Integer(required=True)
    seats = fields.Integer(required=True)
    taken = fields.Integer(required=True)
    pot = fields.Integer(required=True)
    rake = fields.Integer(required=True)
    certification = fields.Boolean(required=True)
    opened_at = fields.DateTime(required=True)
    fill_by = fields.DateTime(required=True)
    deal_by = fields.DateTime(required=True, allow_none=True)
    ended_at = fields.DateTime(required=True, allow_none=True)


class DuelPageSchema(Schema):
    items = fields.List(fields.Nested(DuelRowSchema), required=True)
    next = fields.String(required=True, allow_none=True)


class DuelEventStreamSchema(Schema):
    duel_id = fields.UUID(required=True)
    chain_intact = fields.Boolean(required=True)
    events = fields.List(fields.Nested(RecordedEventSchema), required=True)


class DuelStepSchema(Schema):
    version = fields.Integer(required=True)
    type = fields.String(required=True)
    recorded_at = fields.DateTime(required=True)
    actor = fields.String(allow_none=True)
    role = fields.String(allow_none=True)
    data = fields.Dict(required=True)
    hash = fields.String(required=True)


class DuelVerificationSchema(Schema):
    verified = fields.Boolean(required=True)
    checks = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    findings = fields.List(fields.Dict(), required=True)


class DuelReplaySchema(Schema):
    label = fields.String(required=True, metadata={"description": "always 'replay'"})
    duel_id = fields.UUID(required=True)
    steps = fields.List(fields.Nested(DuelStepSchema), required=True)
    verification = fields.Nested(DuelVerificationSchema, required=True)


class RevokedSchema(Schema):
    revoked = fields.Integer(required=True, metadata={"description": "sessions revoked"})
