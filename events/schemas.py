"""Marshmallow schemas that turn catalog events into JSON-ready dicts and back.

Loading validates everything a stored event may hold (card codes, pile ids, non-negative money),
so a malformed event is refused on the way into the store rather than discovered in an audit.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from events import catalog

CARD_CODES = tuple(r + s for s in "SHDC" for r in "A23456789TJQK")
#: Pile ids as games name them: a kind, and a number when the game has several of that kind.
PILE = validate.Regexp(r"^[a-z][a-z-]{0,19}(:[0-9]{1,3})?\Z")
HEX_256 = validate.Regexp(r"^[0-9a-f]{64}\Z")
#: A currency: three capital letters (ISO 4217), and nothing after them (``\Z``: ``$`` would let
#: a trailing newline through). The one pattern for events and requests alike.
CURRENCY_PATTERN = r"^[A-Z]{3}\Z"
CURRENCY = validate.Regexp(CURRENCY_PATTERN)
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


def _deck_length(cards: list[str]) -> None:
    if len(cards) not in (52, 104):
        raise ValidationError("a deck is 52 or 104 cards")


def _pile() -> fields.String:
    return fields.String(required=True, validate=PILE)


class StakePlacedSchema(EventSchema):
    event_class = catalog.StakePlaced
    game_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    player_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(required=True, validate=validate.Length(min=1, max=32))
    stake = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    currency = fields.String(required=True, validate=CURRENCY)
    multiplier = fields.String(
        required=True, validate=validate.Regexp(r"^[1-9][0-9]{0,3}(\.[0-9]{1,2})?\Z")
    )
    max_units = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    paytable_id = fields.String(required=True)
    paytable_version = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    rules_version = fields.String(required=True)
    certification = fields.Boolean(required=True)
    duel_id = fields.String(required=True, allow_none=True, validate=validate.Length(1, 64))


class DealtPileSchema(EventSchema):
    event_class = catalog.DealtPile
    pile = _pile()
    down = fields.Integer(required=True, strict=True, validate=validate.Range(0, 104))
    up = _cards()


class DealtSchema(EventSchema):
    event_class = catalog.Dealt
    shuffle_algorithm = fields.String(required=True)
    seed_commitment = fields.String(required=True, allow_none=True, validate=HEX_256)
    client_seed = fields.String(required=True, allow_none=True)
    piles = fields.List(fields.Nested(DealtPileSchema), required=True, allow_none=True)
    deck = fields.List(_card(), required=True, allow_none=True, validate=_deck_length)

    @validates_schema
    def one_record_of_the_deal(self, data: dict[str, Any], **_: Any) -> None:
        """A sealed deal records its piles and a commitment; only a deal made before sealing
        (upcast from v1) records its deck instead."""
        if (data.get("piles") is None) == (data.get("deck") is None):
            raise ValidationError("a deal records its piles, or (before sealing) its deck")
        if data.get("piles") is not None and data.get("seed_commitment") is None:
            raise ValidationError("a sealed deal commits to its seed or deck", "seed_commitment")


#: Server-clock times as recorded: ISO 8601 in UTC, to the microsecond ("...T20:10:00.000000Z").
_POSITIVE = validate.Range(min=1)
INSTANT = validate.Regexp(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z\Z")


def _instant(**kwargs: Any) -> fields.String:
    return fields.String(required=True, validate=INSTANT, **kwargs)


class ClockStartedSchema(EventSchema):
    event_class = catalog.ClockStarted
    started_at = _instant()
    deadline = _instant()


class CardDrawnSchema(EventSchema):
    event_class = catalog.CardDrawn
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=104))


class StockRecycledSchema(EventSchema):
    event_class = catalog.StockRecycled
    cards = fields.Integer(required=True, strict=True, validate=validate.Range(1, 104))
    passes_left = fields.Integer(required=True, strict=True, allow_none=True, validate=NON_NEGATIVE)


class PilesGatheredSchema(EventSchema):
    event_class = catalog.PilesGathered
    sources = fields.List(
        fields.String(validate=PILE), required=True, validate=validate.Length(min=1, max=32)
    )
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=104))
    passes_left = fields.Integer(required=True, strict=True, allow_none=True, validate=NON_NEGATIVE)


class ReshuffledSchema(EventSchema):
    event_class = catalog.Reshuffled
    label = fields.String(required=True, validate=validate.Regexp(r"^[a-z0-9-]{1,32}\Z"))
    sources = fields.List(
        fields.String(validate=PILE), required=True, validate=validate.Length(min=1, max=32)
    )
    piles = fields.List(fields.Nested(DealtPileSchema), required=True)
    passes_left = fields.Integer(required=True, strict=True, allow_none=True, validate=NON_NEGATIVE)


class CardPickedSchema(EventSchema):
    event_class = catalog.CardPicked
    source = fields.String(required=True, data_key="from", validate=PILE)
    index = fields.Integer(required=True, strict=True, validate=validate.Range(0, 103))
    card = _card()
    target = fields.String(required=True, data_key="to", validate=PILE)
    picks_left = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)


class CardMovedSchema(EventSchema):
    event_class = catalog.CardMoved
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=104))


class CardTurnedSchema(EventSchema):
    event_class = catalog.CardTurned
    pile = _pile()
    card = _card()


class RemovedCardSchema(EventSchema):
    event_class = catalog.RemovedCard
    source = fields.String(required=True, data_key="from", validate=PILE)
    card = _card()


class PairRemovedSchema(EventSchema):
    event_class = catalog.PairRemoved
    cards = fields.List(
        fields.Nested(RemovedCardSchema), required=True, validate=validate.Length(min=1, max=2)
    )
    target = fields.String(required=True, data_key="to", validate=PILE)


class UndoneMoveSchema(EventSchema):
    event_class = catalog.UndoneMove
    source = fields.String(required=True, data_key="from", validate=PILE)
    target = fields.String(required=True, data_key="to", validate=PILE)
    cards = _cards(validate=validate.Length(min=1, max=104))


class UndoneSchema(EventSchema):
    event_class = catalog.Undone
    action = fields.String(required=True, validate=validate.OneOf(("draw", "move", "remove")))
    moves = fields.List(
        fields.Nested(UndoneMoveSchema), required=True, validate=validate.Length(min=1)
    )


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
    reason = fields.String(
        required=True, validate=validate.OneOf(("player", "timeout", "finished"))
    )
    winnings = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    units = fields.Integer(required=True, strict=True, validate=validate.Range(0, 104))
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)
    deck = fields.List(_card(), required=True, allow_none=True, validate=_deck_length)
    ended_at = fields.String(required=True, allow_none=True, validate=INSTANT)


class VoidedSchema(EventSchema):
    event_class = catalog.Voided
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))
    refund = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)
    deck = fields.List(_card(), required=True, allow_none=True, validate=_deck_length)


class DuelOpenedSchema(EventSchema):
    event_class = catalog.DuelOpened
    duel_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(required=True, validate=validate.Length(min=1, max=32))
    rules_version = fields.String(required=True)
    currency = fields.String(required=True, validate=CURRENCY)
    fee = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    seats = fields.Integer(required=True, strict=True, validate=validate.Range(2, 100))
    rake = fields.String(required=True, validate=validate.Regexp(r"^0(\.[0-9]{1,4})?\Z"))
    paytable_id = fields.String(required=True)
    paytable_version = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    shuffle_algorithm = fields.String(required=True)
    seed_commitment = fields.String(required=True, validate=HEX_256)
    opened_at = _instant()
    fill_by = _instant()
    certification = fields.Boolean(required=True)


class SeatTakenSchema(EventSchema):
    event_class = catalog.SeatTaken
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(0, 99))
    player_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    fee = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    taken_at = _instant()


class SeatDealtSchema(EventSchema):
    event_class = catalog.SeatDealt
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(0, 99))
    game_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    deadline = _instant()


class SeatFinishedSchema(EventSchema):
    event_class = catalog.SeatFinished
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(0, 99))
    game_id = fields.String(required=True, allow_none=True, validate=validate.Length(min=1, max=64))
    points = fields.Integer(required=True, strict=True)
    units = fields.Integer(required=True, strict=True, validate=validate.Range(0, 104))
    reason = fields.String(
        required=True,
        validate=validate.OneOf(("finished", "player", "timeout", "not-dealt")),
    )
    ended_at = _instant()


class PayoutSchema(EventSchema):
    event_class = catalog.Payout
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(0, 99))
    player_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    amount = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))


class DuelSettledSchema(EventSchema):
    event_class = catalog.DuelSettled
    pot = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    rake = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    payouts = fields.List(fields.Nested(PayoutSchema), required=True)
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)
    deck = fields.List(_card(), required=True, allow_none=True, validate=_deck_length)


class DuelCancelledSchema(EventSchema):
    event_class = catalog.DuelCancelled
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))
    refunds = fields.List(fields.Nested(PayoutSchema), required=True)
    voided = fields.Boolean(required=True)
    server_seed = fields.String(required=True, allow_none=True, validate=HEX_256)
    deck = fields.List(_card(), required=True, allow_none=True, validate=_deck_length)


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


class LimitChangedSchema(EventSchema):
    event_class = catalog.LimitChanged
    limit = fields.String(required=True, validate=validate.Length(min=1, max=40))
    previous = fields.Integer(required=True, strict=True, allow_none=True, validate=_POSITIVE)
    value = fields.Integer(required=True, strict=True, allow_none=True, validate=_POSITIVE)
    effective_from = _instant()


class PlayerExcludedSchema(EventSchema):
    event_class = catalog.PlayerExcluded
    length = fields.String(required=True, validate=validate.Length(min=1, max=40))
    kind = fields.String(required=True, validate=validate.OneOf(("time-out", "self-exclusion")))
    until = _instant()


class RealityCheckAcknowledgedSchema(EventSchema):
    event_class = catalog.RealityCheckAcknowledged
    session_started = _instant()
    acknowledged_at = _instant()
    session_seconds = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))
    stakes = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))
    payouts = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))
    net = fields.Integer(required=True, strict=True)


class GamingSwitchedSchema(EventSchema):
    event_class = catalog.GamingSwitched
    scope = fields.String(
        required=True, validate=validate.OneOf(("all", "game", "version", "player"))
    )
    target = fields.String(required=True, validate=validate.Length(min=1, max=100))
    enabled = fields.Boolean(required=True)
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class FindingNamedSchema(EventSchema):
    event_class = catalog.FindingNamed
    check = fields.String(required=True, validate=validate.Length(min=1, max=100))
    location = fields.String(required=True, validate=validate.Length(min=1, max=500))
    expected = fields.String(required=True, validate=validate.Length(max=2000))
    found = fields.String(required=True, validate=validate.Length(max=2000))


class BalanceCorrectedSchema(EventSchema):
    event_class = catalog.BalanceCorrected
    correction_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    hold = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    findings = fields.List(
        fields.Nested(FindingNamedSchema), required=True, validate=validate.Length(min=1, max=50)
    )
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))
    amount = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    direction = fields.String(required=True, validate=validate.OneOf(("debit", "credit")))
    account = fields.String(
        required=True, validate=validate.OneOf(("house-payouts", "house-stakes", "cashier"))
    )


_UUID = validate.Regexp(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_METHOD = validate.OneOf(("bet", "win", "rollback"))


class WalletCallSentSchema(EventSchema):
    event_class = catalog.WalletCallSent
    round_id = fields.String(required=True, validate=_UUID)
    player_id = fields.String(required=True, validate=_UUID)
    method = fields.String(required=True, validate=_METHOD)
    transaction_uuid = fields.String(required=True, validate=_UUID)
    reference = fields.String(required=True, allow_none=True, validate=_UUID)
    amount = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    wire_amount = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    game_code = fields.String(required=True, validate=validate.Length(min=1, max=100))
    round_closed = fields.Boolean(required=True)
    request_uuid = fields.String(required=True, validate=_UUID)
    request_sha256 = fields.String(required=True, validate=HEX_256)
    attempt = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    commitment = fields.String(load_default=None, allow_none=True, validate=HEX_256)
    duel_id = fields.String(load_default=None, allow_none=True, validate=_UUID)


class WalletCallAnsweredSchema(EventSchema):
    event_class = catalog.WalletCallAnswered
    transaction_uuid = fields.String(required=True, validate=_UUID)
    method = fields.String(required=True, validate=_METHOD)
    request_uuid = fields.String(required=True, validate=_UUID)
    amount = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    outcome = fields.String(
        required=True, validate=validate.OneOf(("confirmed", "refused", "unknown", "review"))
    )
    status = fields.String(required=True, allow_none=True, validate=validate.Length(max=100))
    balance = fields.Integer(required=True, strict=True, allow_none=True)
    http_status = fields.Integer(required=True, strict=True, allow_none=True)
    problem = fields.String(required=True, allow_none=True, validate=validate.Length(max=500))
    answer = fields.String(required=True, allow_none=True, validate=validate.Length(max=20_000))
    answer_signature = fields.String(
        required=True, allow_none=True, validate=validate.Length(max=2_000)
    )


class WalletReviewMarkedSchema(EventSchema):
    event_class = catalog.WalletReviewMarked
    transaction_uuid = fields.String(required=True, validate=_UUID)
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class WalletReviewResolvedSchema(EventSchema):
    event_class = catalog.WalletReviewResolved
    transaction_uuid = fields.String(required=True, validate=_UUID)
    method = fields.String(required=True, validate=_METHOD)
    action = fields.String(
        required=True, validate=validate.OneOf(("retry", "settled", "not-applied"))
    )
    amount = fields.Integer(required=True, strict=True, validate=NON_NEGATIVE)
    currency = fields.String(required=True, validate=CURRENCY)
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class WalletPendingFlaggedSchema(EventSchema):
    event_class = catalog.WalletPendingFlagged
    transaction_uuid = fields.String(required=True, validate=_UUID)
    after_seconds = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))


SCHEMAS: dict[type[Any], Schema] = {
    schema.event_class: schema()
    for schema in (
        StakePlacedSchema,
        DealtSchema,
        CardDrawnSchema,
        StockRecycledSchema,
        PilesGatheredSchema,
        ReshuffledSchema,
        CardPickedSchema,
        CardMovedSchema,
        CardTurnedSchema,
        PairRemovedSchema,
        UndoneSchema,
        AutoCompletedSchema,
        CollectedSchema,
        VoidedSchema,
        ClockStartedSchema,
        DuelOpenedSchema,
        SeatTakenSchema,
        SeatDealtSchema,
        SeatFinishedSchema,
        DuelSettledSchema,
        DuelCancelledSchema,
        PlayerRegisteredSchema,
        FundsDepositedSchema,
        FundsWithdrawnSchema,
        PreferencesChangedSchema,
        LimitChangedSchema,
        PlayerExcludedSchema,
        RealityCheckAcknowledgedSchema,
        BalanceCorrectedSchema,
        GamingSwitchedSchema,
        WalletCallSentSchema,
        WalletCallAnsweredSchema,
        WalletReviewMarkedSchema,
        WalletPendingFlaggedSchema,
        WalletReviewResolvedSchema,
    )
}
