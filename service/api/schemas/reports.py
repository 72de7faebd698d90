"""Finance: the daily report (and its charts) and the reconciliation."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import CURRENCY, Strict
from service.api.schemas.public import RtpFigureSchema
from service.games import GAMES
from service.services import finance_charts


class DailyQuerySchema(Strict):
    start = fields.Date(required=True, data_key="from")
    end = fields.Date(required=True, data_key="to")
    currency = fields.String(required=True, validate=CURRENCY)


class DailyChartQuerySchema(DailyQuerySchema):
    chart = fields.String(
        load_default="money",
        validate=validate.OneOf(finance_charts.KINDS),
        metadata={"description": "money: stakes, payouts, GGR per day; rtp: actual vs published"},
    )
    variant = fields.String(
        load_default=None,
        validate=validate.OneOf(sorted(GAMES)),
        metadata={
            "description": "this game only: its money per day, or its actual RTP per day "
            "(default: all games)"
        },
    )


class TotalsSchema(Schema):
    games_started = fields.Integer(required=True)
    games_finished = fields.Integer(required=True)
    stakes = fields.Integer(required=True)
    payouts = fields.Integer(required=True)
    refunds = fields.Integer(required=True, metadata={"description": "voided stakes refunded"})
    ggr = fields.Integer(required=True, metadata={"description": "stakes - payouts - refunds"})
    rtp = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "payouts / (stakes - refunds), 4 decimals; null if nothing"},
    )


class DayLineSchema(TotalsSchema):
    day = fields.Date(required=True)
    variant = fields.String(required=True)
    held_at_end = fields.Integer(
        required=True, metadata={"description": "stakes in games unfinished at the day's end"}
    )


class VariantTotalsSchema(TotalsSchema):
    variant = fields.String(required=True)
    published = fields.Nested(
        RtpFigureSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "the game's published RTP at its M, beside the actual one: the "
            "strong player's once measured (its player, budget, deals and 95% interval), else "
            "the reference bot's; null for a game not yet measured"
        },
    )


class AdvantageLineSchema(Schema):
    at = fields.DateTime(required=True, metadata={"description": "when the watcher logged it"})
    on = fields.String(
        required=True, metadata={"description": "player: one player's return; game: everyone's"}
    )
    variant = fields.String(required=True)
    player_id = fields.UUID(required=True, allow_none=True)
    games = fields.Integer(required=True, metadata={"description": "collected games judged"})
    rtp = fields.String(required=True, metadata={"description": "payouts over stakes"})
    low = fields.String(required=True, metadata={"description": "95% interval, low end"})
    high = fields.String(required=True, metadata={"description": "95% interval, high end"})
    strong_rtp = fields.String(
        required=True, metadata={"description": "the strong player's published RTP"}
    )
    reason = fields.String(required=True)


class SaferGamblingDaySchema(Schema):
    day = fields.Date(required=True)
    deposits = fields.Integer(required=True, metadata={"description": "gross, minor units"})
    withdrawals = fields.Integer(required=True)
    net_deposits = fields.Integer(required=True, metadata={"description": "deposits - withdrawals"})
    depositing_players = fields.Integer(required=True)
    limit_refusals = fields.Integer(
        required=True, metadata={"description": "deals, joins and deposits refused by a limit"}
    )
    exclusion_refusals = fields.Integer(
        required=True, metadata={"description": "refused by a time-out or self-exclusion"}
    )
    reality_check_refusals = fields.Integer(
        required=True, metadata={"description": "paused by a reality check waiting"}
    )
    time_outs = fields.Integer(required=True, metadata={"description": "time-outs taken"})
    self_exclusions = fields.Integer(required=True)
    reality_checks = fields.Integer(
        required=True, metadata={"description": "reality checks acknowledged"}
    )


class CountAmountSchema(Schema):
    count = fields.Integer(required=True)
    amount = fields.Integer(required=True, metadata={"description": "minor units"})


class WalletLiabilitySchema(Schema):
    mode = fields.String(required=True, metadata={"description": "transfer or seamless"})
    unacknowledged_wins = fields.Nested(CountAmountSchema)
    unacknowledged_rollbacks = fields.Nested(CountAmountSchema)
    under_review = fields.Nested(CountAmountSchema)


class DailyReportSchema(Schema):
    currency = fields.String(required=True)
    sandbox = fields.Boolean(
        required=True,
        metadata={
            "description": "true for XTS, certification games' test money: never part of a "
            "real currency's figures"
        },
    )
    start = fields.Date(required=True, data_key="from")
    end = fields.Date(required=True, data_key="to")
    days = fields.List(fields.Nested(DayLineSchema), required=True)
    variants = fields.List(
        fields.Nested(VariantTotalsSchema),
        required=True,
        metadata={"description": "the period's totals of each game (RTP per game)"},
    )
    period = fields.Nested(TotalsSchema, required=True)
    month_to_date = fields.Nested(TotalsSchema, required=True)
    lifetime = fields.Nested(TotalsSchema, required=True)
    advantage_play = fields.List(
        fields.Nested(AdvantageLineSchema),
        required=True,
        metadata={
            "description": "returns the advantage-play watcher found significantly above a "
            "game's price in the period (a player's above the strong player's RTP, or a "
            "game's above its published band), oldest first"
        },
    )
    safer_gambling = fields.List(
        fields.Nested(SaferGamblingDaySchema),
        required=True,
        metadata={
            "description": "each day of the period (UTC), for this currency's players: the "
            "cashier's deposits, withdrawals and depositing players, refusals by limits, "
            "exclusions and reality checks, and time-outs, self-exclusions and reality checks "
            "taken"
        },
    )
    wallet = fields.Nested(
        WalletLiabilitySchema,
        required=True,
        metadata={
            "description": "the wallet mode; in seamless mode, as of now, what this server owes "
            "the operator's wallet: wins and rollbacks not yet acknowledged, and movements "
            "under review (a liability until settled)"
        },
    )


class ReconciliationQuerySchema(Strict):
    day = fields.Date(required=True, data_key="date")


class WalletTransactionLineSchema(Schema):
    round = fields.UUID(required=True)
    external_ref = fields.String(required=True)
    method = fields.String(required=True, metadata={"description": "bet, win or rollback"})
    transaction_uuid = fields.UUID(required=True)
    reference = fields.UUID(
        required=True, allow_none=True, metadata={"description": "a win's or rollback's bet"}
    )
    amount = fields.Integer(required=True, metadata={"description": "minor units"})
    wire_amount = fields.Integer(
        required=True, metadata={"description": "the same in the wire's 1/100,000 units"}
    )
    currency = fields.String(required=True)
    first_sent = fields.DateTime(required=True, allow_none=True)
    final_state = fields.String(
        required=True,
        metadata={"description": "confirmed, refused, rolled-back, pending or review"},
    )
    final_at = fields.DateTime(required=True, allow_none=True)
    attempts = fields.Integer(required=True)
    review_reason = fields.String(required=True, allow_none=True)


class WalletReconciliationSchema(Schema):
    date = fields.Date(required=True)
    transactions = fields.List(fields.Nested(WalletTransactionLineSchema), required=True)


class MoneySidesSchema(Schema):
    stake = fields.Integer(required=True)
    winnings = fields.Integer(required=True)
    refund = fields.Integer(required=True)
    duel_fee = fields.Integer(required=True, data_key="duel-fee", attribute="duel-fee")
    duel_prize = fields.Integer(required=True, data_key="duel-prize", attribute="duel-prize")
    duel_refund = fields.Integer(required=True, data_key="duel-refund", attribute="duel-refund")


class CurrencyReconciliationSchema(Schema):
    events = fields.Nested(MoneySidesSchema, required=True)
    ledger = fields.Nested(MoneySidesSchema, required=True)
    balanced = fields.Boolean(required=True)
    sandbox = fields.Boolean(
        required=True,
        metadata={"description": "XTS: certification games' test money, not real money"},
    )


class MismatchSchema(Schema):
    game_id = fields.String(required=True, metadata={"description": "the game's or duel's id"})
    event = fields.String(required=True, metadata={"description": 'e.g. "game-<id> v7"'})
    check = fields.String(required=True)
    expected = fields.String(required=True)
    found = fields.String(required=True)


class ReconciliationSchema(Schema):
    date = fields.Date(required=True)
    reconciled = fields.Boolean(required=True)
    currencies = fields.Dict(
        keys=fields.String(), values=fields.Nested(CurrencyReconciliationSchema), required=True
    )
    events_checked = fields.Integer(required=True)
    ledger_transactions_checked = fields.Integer(required=True)
    mismatches = fields.List(fields.Nested(MismatchSchema), required=True)
    stored = fields.Boolean(
        required=True, metadata={"description": "read from the nightly run, not computed now"}
    )
    computed_at = fields.DateTime(required=True, allow_none=True)
