"""Players: accounts, sessions, the cashier, the wallet, its ledger and statement, betting
history, preferences."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import (
    CURRENCY,
    MINOR_UNITS,
    STATUSES,
    PageQuerySchema,
    Strict,
    StrictBoolean,
    storable,
    text,
)


class NewPlayerSchema(Strict):
    external_ref = fields.String(required=True, validate=text(200))
    currency = fields.String(required=True, validate=CURRENCY)


class PlayerSchema(Schema):
    id = fields.UUID(required=True, attribute="player_id")
    external_ref = fields.String(required=True)
    currency = fields.String(required=True)
    created_at = fields.DateTime(required=True)


class NewSessionSchema(Strict):
    wallet_token = fields.String(
        validate=text(500),
        metadata={
            "description": "seamless mode (required there): the operator's game-session token "
            "for this player, sent with the player's bets to the operator's wallet and checked "
            "first by a balance read; never shown again"
        },
    )


class SessionSchema(Schema):
    token = fields.String(required=True, metadata={"description": "bearer token, shown once"})
    player_id = fields.UUID(required=True)
    created_at = fields.DateTime(required=True)
    expires_at = fields.DateTime(required=True, metadata={"description": "hard maximum"})
    idle_timeout_seconds = fields.Integer(required=True)
    wallet_balance = fields.Integer(
        allow_none=True,
        metadata={
            "description": "seamless mode: the player's balance in the operator's wallet when "
            "the session opened (minor units); absent in transfer mode"
        },
    )


class TransferSchema(Strict):
    amount = fields.Integer(required=True, strict=True, validate=MINOR_UNITS)
    transaction_id = fields.String(required=True, validate=text(200))


class PostingSchema(Schema):
    account_id = fields.String(required=True)
    amount = fields.Integer(required=True)
    balance_before = fields.Integer(required=True)
    balance_after = fields.Integer(required=True)


class LedgerTransactionSchema(Schema):
    id = fields.UUID(required=True, attribute="transaction_id")
    transaction_id = fields.String(required=True, attribute="client_id")
    kind = fields.String(required=True)
    amount = fields.Integer(required=True)
    currency = fields.String(required=True)
    balance_after = fields.Integer(required=True)
    cause = fields.String(required=True, metadata={"description": "stream/version of its event"})
    created_at = fields.DateTime(required=True)
    postings = fields.List(fields.Nested(PostingSchema), required=True)


class HoldFindingSchema(Strict):
    """One finding of a hold, exactly as the hold (its significant event) lists it."""

    check = fields.String(required=True, validate=text(100))
    location = fields.String(required=True, validate=text(200))
    expected = fields.String(required=True, validate=[validate.Length(max=500), storable])
    found = fields.String(required=True, validate=[validate.Length(max=500), storable])


class NewCorrectionSchema(Strict):
    hold = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=1),
        metadata={"description": "the withdrawal-held significant event it answers"},
    )
    reason = fields.String(required=True, validate=text(500))
    findings = fields.List(
        fields.Nested(HoldFindingSchema),
        # Few enough that a body naming them stays under the request size cap (16 KiB).
        validate=validate.Length(min=1, max=10),
        metadata={
            "description": "the hold's findings it answers (at most 10 named; left out: all "
            "of them)"
        },
    )
    amount = fields.Integer(
        load_default=0,
        strict=True,
        validate=validate.Range(min=0, max=10**12),
        metadata={"description": "minor units to move; 0 moves nothing"},
    )
    direction = fields.String(
        load_default="debit",
        validate=validate.OneOf(("debit", "credit")),
        metadata={"description": "debit: out of the wallet (forged money taken back); credit: in"},
    )
    account = fields.String(
        load_default="house-payouts",
        validate=validate.OneOf(("house-payouts", "house-stakes", "cashier")),
        metadata={"description": "the house account, in the wallet's currency, on the other side"},
    )


class CorrectionSchema(Schema):
    id = fields.String(required=True, attribute="correction_id")
    player_id = fields.UUID(required=True)
    hold = fields.Integer(required=True)
    reason = fields.String(required=True)
    findings = fields.List(fields.Nested(HoldFindingSchema), required=True)
    amount = fields.Integer(required=True)
    currency = fields.String(required=True)
    direction = fields.String(required=True)
    account = fields.String(required=True)
    cause = fields.String(required=True, metadata={"description": "stream/version of its event"})
    transaction = fields.Nested(
        LedgerTransactionSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the money it moved; null when it moved none"},
    )


class SandboxWalletSchema(Schema):
    currency = fields.String(
        required=True, metadata={"description": "XTS, ISO 4217's code for testing"}
    )
    balance = fields.Integer(
        required=True,
        metadata={
            "description": "the net of the player's certification games: never funded, so it "
            "may be below zero"
        },
    )
    held = fields.Integer(
        required=True, metadata={"description": "staked in an unfinished certification game"}
    )


class WalletSchema(Schema):
    player_id = fields.UUID(required=True)
    currency = fields.String(required=True)
    balance = fields.Integer(required=True)
    held = fields.Integer(
        required=True, metadata={"description": "real money staked in an unfinished game"}
    )
    open_game_id = fields.UUID(
        required=True, allow_none=True, metadata={"description": "a real or a certification game"}
    )
    sandbox = fields.Nested(
        SandboxWalletSchema,
        required=True,
        metadata={
            "description": "the money certification games are played for, kept apart from the "
            "real balance: they never touch it"
        },
    )
    wallet_mode = fields.String(
        required=True,
        validate=validate.OneOf(("transfer", "seamless")),
        metadata={
            "description": "transfer: the server's own wallet (balance is its); seamless: the "
            "operator's wallet holds the money and balance is read from it"
        },
    )
    unsettled = fields.Integer(
        required=True,
        metadata={
            "description": "seamless mode: winnings this server still owes the operator's "
            "wallet, being credited (not yet acknowledged); 0 in transfer mode"
        },
    )


class LedgerQuerySchema(PageQuerySchema):
    wallet = fields.String(
        load_default="real",
        validate=validate.OneOf(("real", "sandbox")),
        metadata={"description": "the real wallet, or the sandbox one of certification games"},
    )


class StatementLineSchema(Schema):
    posting_id = fields.Integer(required=True)
    transaction_id = fields.UUID(required=True)
    kind = fields.String(required=True)
    amount = fields.Integer(required=True)
    balance_before = fields.Integer(required=True)
    balance_after = fields.Integer(required=True)
    cause_stream = fields.String(required=True)
    cause_version = fields.Integer(required=True)
    client_transaction_id = fields.String(required=True)
    created_at = fields.DateTime(required=True)


class StatementPageSchema(Schema):
    items = fields.List(fields.Nested(StatementLineSchema), required=True)
    next = fields.String(required=True, allow_none=True, metadata={"description": "cursor"})


class HistoryLineSchema(Schema):
    game_id = fields.UUID(required=True)
    variant = fields.String(required=True, metadata={"description": "the game's id"})
    title = fields.String(required=True, metadata={"description": "the game's name"})
    stake = fields.Integer(required=True)
    currency = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    units = fields.Integer(required=True, metadata={"description": "what the game paid for"})
    max_units = fields.Integer(required=True, allow_none=True)
    foundation_count = fields.Integer(required=True, metadata={"description": "units"})
    payout = fields.Integer(required=True)
    refund = fields.Integer(required=True)
    net = fields.Integer(required=True, metadata={"description": "payout + refund - stake"})
    certification = fields.Boolean(required=True)
    end_reason = fields.String(required=True, allow_none=True)
    started_at = fields.DateTime(required=True)
    last_event_at = fields.DateTime(required=True)
    ended_at = fields.DateTime(required=True, allow_none=True)


class HistoryPageSchema(Schema):
    items = fields.List(fields.Nested(HistoryLineSchema), required=True)
    next = fields.String(required=True, allow_none=True)


class PreferencesSchema(Strict):
    sound = StrictBoolean(required=True)
    colour = fields.String(required=True, validate=validate.OneOf(("green", "red", "blue")))
    card_back = fields.Integer(required=True, strict=True, validate=validate.Range(1, 12))
