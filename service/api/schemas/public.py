"""GET /v1/variants, quotes and health: what anyone may read."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.common import CURRENCY, Strict
from service.games import STANDALONE


class PileSpecSchema(Schema):
    id = fields.String(required=True)
    kind = fields.String(required=True)


class GamePaytableSchema(Schema):
    multiplier = fields.String(
        required=True, metadata={"description": "M: a full win pays M x the stake"}
    )
    max_units = fields.Integer(required=True, metadata={"description": "units of a full win"})
    units = fields.String(required=True, metadata={"description": "what the game pays for"})
    winnings = fields.String(
        required=True, metadata={"description": "the formula; the house keeps any fraction"}
    )
    per_unit = fields.String(required=True, metadata={"description": "one unit's worth"})
    max_payout = fields.String(required=True)


class RtpFigureSchema(Schema):
    player = fields.String(required=True, metadata={"description": "the player and its version"})
    rtp = fields.String(required=True, metadata={"description": "RTP at this M, 4 decimals"})
    low = fields.String(required=True, metadata={"description": "95% interval, low end"})
    high = fields.String(required=True, metadata={"description": "95% interval, high end"})
    games = fields.Integer(required=True, metadata={"description": "simulated deals"})
    mean_units = fields.String(required=True, metadata={"description": "units per deal"})
    full_wins = fields.Integer(required=True, metadata={"description": "deals won outright"})
    measured = fields.String(required=True, metadata={"description": "the command that ran"})
    measured_on = fields.String(required=True, metadata={"description": "the day it ran"})
    exact = fields.Boolean(
        required=True,
        metadata={
            "description": "the clairvoyant bound: true if every search was exhaustive (the "
            "true maximum), false if it is the best line a bounded search found (a lower "
            "bound on that maximum); always true for the other players"
        },
    )
    budget = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "a searching player's budget per decision (e.g. worlds sampled and "
            "positions searched per candidate), as measured: how far from the limit of its "
            "method the figure may be; null for a player that does not search, or one "
            "published before budgets were"
        },
    )


class PublishedRtpSchema(Schema):
    rtp = fields.String(required=True, metadata={"description": "the bot's RTP, 4 decimals"})
    low = fields.String(required=True, metadata={"description": "95% interval, low end"})
    high = fields.String(required=True, metadata={"description": "95% interval, high end"})
    games = fields.Integer(required=True, metadata={"description": "simulated deals"})
    bot = fields.String(required=True, metadata={"description": "reference bot and version"})
    measured = fields.String(required=True, metadata={"description": "the command that ran"})
    multiplier = fields.String(required=True, metadata={"description": "the M measured at"})
    reference = fields.Nested(
        RtpFigureSchema,
        required=True,
        metadata={"description": "the reference bot (a careful ordinary player): as above"},
    )
    strong = fields.Nested(
        RtpFigureSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "the strong player, which sees only what a player sees and "
            "searches: the RTP to display (the game is priced against it); null while not "
            "yet measured"
        },
    )
    clairvoyant = fields.Nested(
        RtpFigureSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "the bound: a player who knew every card; null while not yet measured"
        },
    )
    displayed = fields.Nested(
        RtpFigureSchema,
        required=True,
        metadata={"description": "the RTP to show a player: the strong player's once measured"},
    )
    basis = fields.String(required=True, metadata={"description": "the RTP's basis, in words"})
    beats_the_house = fields.Boolean(
        required=True,
        metadata={"description": "the strong player's 95% interval reaches 100% of the stake"},
    )


class VariantSchema(Schema):
    name = fields.String(required=True, metadata={"description": "the game's id"})
    title = fields.String(required=True)
    draw_count = fields.Integer(required=True)
    passes = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null: unlimited"}
    )
    family = fields.String(required=True)
    rules_version = fields.String(required=True)
    enabled = fields.Boolean(
        required=True,
        metadata={
            "description": "false: an operator switched it (or its version, or all gaming) "
            "off, and it is not dealt until switched on"
        },
    )
    decks = fields.Integer(required=True)
    summary = fields.List(fields.String(), required=True)
    undo = fields.String(required=True)
    actions = fields.List(fields.String(), required=True)
    piles = fields.List(fields.Nested(PileSpecSchema), required=True)
    paytable = fields.Nested(GamePaytableSchema, required=True)
    rtp = fields.Nested(
        PublishedRtpSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "the simulated RTP at this M of the reference bot (top-level fields, "
            "as first published), the strong player and the clairvoyant bound; null until all "
            "three are measured"
        },
    )


class PriceSchema(Schema):
    variant = fields.String(required=True)
    multiplier = fields.String(
        required=True, metadata={"description": "the M this paytable pays the game at"}
    )
    own_rate = fields.Boolean(
        required=True,
        metadata={"description": "true: the operator's own rate, not the M the rules publish"},
    )
    rtp = fields.Nested(
        RtpFigureSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "the RTP at this M, worked out from the game's published units: the "
            "strong player's once measured, else the reference bot's; null if not measured"
        },
    )
    beats_the_house = fields.Boolean(
        required=True,
        metadata={
            "description": "the strong player's 95% interval at this M reaches 100% of the "
            "stake: strong play may take more than it stakes"
        },
    )


class PaytableSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    currency = fields.String(required=True)
    min_stake = fields.Integer(required=True)
    default_stake = fields.Integer(required=True)
    max_stake = fields.Integer(required=True)
    stake_multiple_of = fields.Integer(required=True)
    win_rate = fields.String(required=True, metadata={"description": "per card on foundations"})
    ladder = fields.List(fields.Integer(), required=True)
    rates = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={"description": "the operator's own M per game, where it sets one"},
    )
    prices = fields.List(
        fields.Nested(PriceSchema),
        required=True,
        metadata={"description": "every game's M at this paytable and its RTP there"},
    )


class IdlePolicySchema(Schema):
    collect_after_seconds = fields.Integer(required=True)
    policy = fields.String(required=True)


class VariantsSchema(Schema):
    rules_version = fields.String(
        required=True, metadata={"description": "the Vegas variants'; every game lists its own"}
    )
    gaming_enabled = fields.Boolean(
        required=True, metadata={"description": "false: an operator switched all gaming off"}
    )
    variants = fields.List(fields.Nested(VariantSchema), required=True)
    paytables = fields.List(fields.Nested(PaytableSchema), required=True)
    idle_collection = fields.Nested(IdlePolicySchema, required=True)


class QuoteQuerySchema(Strict):
    variant = fields.String(required=True, validate=validate.OneOf(tuple(STANDALONE)))
    stake = fields.Integer(required=True, validate=validate.Range(min=0, max=10**12))
    currency = fields.String(load_default="GBP", validate=CURRENCY)


class QuoteSchema(Schema):
    variant = fields.String(required=True)
    stake = fields.Integer(required=True)
    currency = fields.String(required=True)
    win_rate = fields.Integer(
        required=True, metadata={"description": "one unit's worth, rounded down"}
    )
    multiplier = fields.String(required=True, metadata={"description": 'M, e.g. "5"'})
    max_units = fields.Integer(required=True)
    max_payout = fields.Integer(required=True)
    max_net_win = fields.Integer(required=True)
    previous_stake = fields.Integer(required=True, allow_none=True)
    next_stake = fields.Integer(required=True, allow_none=True)


class HealthSchema(Schema):
    status = fields.String(required=True)
