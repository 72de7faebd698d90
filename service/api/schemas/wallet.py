"""Seamless mode's movements with the operator's wallet, as operators see and resolve them."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import Strict, text


class WalletMovementSchema(Schema):
    transaction_uuid = fields.UUID(required=True)
    round = fields.UUID(required=True, attribute="round_id")
    player_id = fields.UUID(required=True)
    external_ref = fields.String(required=True)
    method = fields.String(required=True, metadata={"description": "bet, win or rollback"})
    reference = fields.UUID(
        required=True, allow_none=True, metadata={"description": "a win's or rollback's bet"}
    )
    amount = fields.Integer(required=True, metadata={"description": "minor units"})
    currency = fields.String(required=True)
    state = fields.String(
        required=True,
        metadata={
            "description": "due, sent, confirmed, refused, unknown (a bet rolled back), review"
        },
    )
    attempts = fields.Integer(required=True)
    first_sent_at = fields.DateTime(required=True, allow_none=True)
    final_at = fields.DateTime(required=True, allow_none=True)
    last_status = fields.String(required=True, allow_none=True)
    review_reason = fields.String(required=True, allow_none=True)


class WalletReviewsSchema(Schema):
    movements = fields.List(fields.Nested(WalletMovementSchema), required=True)


class ResolutionSchema(Strict):
    action = fields.String(
        required=True,
        validate=validate.OneOf(("retry", "settled", "not-applied")),
        metadata={
            "description": "retry: send a win or rollback again (its cause fixed at the "
            "operator); settled: the operator's wallet applied it by other means (mirrored as "
            "confirmed; a bet so settled has no game, and is rolled back); not-applied: a bet "
            "the operator's wallet never applied (nothing owed)"
        },
    )
    reason = fields.String(required=True, validate=text(500))
