"""Marshmallow schemas that turn catalog events into JSON-ready dicts and back.

Loading validates everything a stored event may hold (card codes, pile ids, non-negative money),
so a malformed event is refused on the way into the store rather than discovered in an audit.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from events import catalog

CARD_CODES = tuple(r + s for s in "SHDC" for r in "A23456789TJQK")
PILE = validate.Regexp(r"^(stock|waste|tableau:[0-6]|foundation:[0-3])\Z")
HEX_256 = validate.Regexp(r"^[0-9a-f]{64}\Z")
CURRENCY = validate.Regexp(r"^[A-Z]{3}\Z")
NON_NEGATIVE = validate.Range(min=0)


def _card() -> fields.String:
    return fields.String(required=True, validate=validate.OneOf(CARD_CODES))


def _cards(**kwargs: Any) -> fields.List[str]:
    return fields.List(_card(), required=True, **kwargs)


class EventSchema(Schema):
    """Loads into the catalog class named by ``event_class``."""

    event_class: type[Any]

    @post_load
    def make_event(self, data: dict[str, Any], **_: Any) -> Any:
        # JSON arrays become tuples: catalog events are immutable and compare by value.
        return self.event_class(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        )


class StakePlacedSchema(EventSchema):
    event_class = catalog.StakePlaced
    game_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    player_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(required=True, validate=validate.Length(min=1, max=32))
    draw_count = fields.Integer(required=True, strict=True, validate=validate.Range(1, 3))
    passes = fields.Integer(required=True, strict=True, validate=validate.Range(1, 3))
    stake = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    currency = fields.String(required=True, validate=CURRENCY)
    win_rate = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    paytable_id = fields.String(required=True)
    paytable_version = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    rules_version = fields.String(required=True)
    certification = fields.Boolean(required=True)


class DealtSchema(EventSchema):
    event_class = catalog.Dealt
    deck = _cards(validate=validate.Length(equal=52))
    shuffle_algorithm = fields.String(required=True)
    seed_commitment = fields.String(required=True, allow_none=True, validate=HEX_256)
    client_seed = fields.String(required=True, allow_none=True)


class CardDrawnSchema(EventSchema):
    event_class = catalog.CardDrawn
    cards = _cards(validate=validate.Length(min=1, max=3))


class StockRecycledSchema(EventSchema):
    event_class = catalog.StockRecycled
    cards = fields.Integer(required=True, strict=True, validate=validate.Range(1, 24))
    passes_left = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)


class CardMovedSchema(EventSchema):
    event_class = catalog.CardMoved
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=13))


class CardTurnedSchema(EventSchema):
    event_class = catalog.CardTurned
    column = fields.Integer(required=True, strict=True, validate=validate.Range(0, 6))
    card = _card()


class UndoneSchema(EventSchema):
    event_class = catalog.Undone
    action = fields.String(required=True, validate=validate.OneOf(("draw", "move")))
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=3))
    waste_fan = fields.Integer(required=True, strict=True, validate=validate.Range(0, 3))


class AutoMoveSchema(EventSchema):
    event_class = catalog.AutoMove
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    card = _card()


class AutoCompletedSchema(EventSchema):
    event_class = catalog.AutoCompleted
    moves = fields.List(
        fields.Nested(AutoMoveSchema), required=True, validate=validate.Length(min=1)
    )


class CollectedSchema(EventSchema):
    event_class = catalog.Collected
    reason = fields.String(required=True, validate=validate.OneOf(("player", "timeout")))
    winnings = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    foundation_count = fields.Integer(required=True, strict=True, validate=validate.Range(0, 52))
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)


class VoidedSchema(EventSchema):
    event_class = catalog.Voided
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))
    refund = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)


class PlayerRegisteredSchema(EventSchema):
    event_class = catalog.PlayerRegistered
    player_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    external_ref = fields.String(required=True, validate=validate.Length(min=1, max=200))
    currency = fields.String(required=True, validate=CURRENCY)


class FundsDepositedSchema(EventSchema):
    event_class: type[Any] = catalog.FundsDeposited
    amount = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    currency = fields.String(required=True, validate=CURRENCY)
    transaction_id = fields.String(required=True, validate=validate.Length(min=1, max=200))


class FundsWithdrawnSchema(FundsDepositedSchema):
    event_class = catalog.FundsWithdrawn


class PreferencesChangedSchema(EventSchema):
    event_class = catalog.PreferencesChanged
    sound = fields.Boolean(required=True)
    colour = fields.String(required=True, validate=validate.OneOf(("green", "red", "blue")))
    card_back = fields.Integer(required=True, strict=True, validate=validate.Range(1, 12))


SCHEMAS: dict[type[Any], Schema] = {
    schema.event_class: schema()
    for schema in (
        StakePlacedSchema,
        DealtSchema,
        CardDrawnSchema,
        StockRecycledSchema,
        CardMovedSchema,
        CardTurnedSchema,
        UndoneSchema,
        AutoCompletedSchema,
        CollectedSchema,
        VoidedSchema,
        PlayerRegisteredSchema,
        FundsDepositedSchema,
        FundsWithdrawnSchema,
        PreferencesChangedSchema,
    )
}
