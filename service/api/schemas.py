"""Marshmallow schemas for every request and response of API v1. The OpenAPI document is
generated from them, so they are the contract. Money is always integer minor units."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from events.schemas import CURRENCY_PATTERN
from service.games import GAMES, STANDALONE
from service.games.klondike import ANY_FOUNDATION, FOUNDATION_PILES, TABLEAU_PILES, WASTE
from service.rules.actions import ACTIONS
from service.rules.cards import CANONICAL_DECK
from service.services import finance_charts

CARD = validate.OneOf(CANONICAL_DECK)
CURRENCY = validate.Regexp(CURRENCY_PATTERN, error="a three-letter ISO 4217 code, e.g. GBP")
MINOR_UNITS = validate.Range(min=1, max=10**12)
STATUSES = ("in_progress", "complete", "collected", "voided")


def storable(value: str) -> None:
    """Free text the database keeps: PostgreSQL text and jsonb hold no NUL character, and an
    unpaired surrogate (which JSON's \\u escapes can spell) is not UTF-8."""
    if any(ch == "\x00" or "\ud800" <= ch <= "\udfff" for ch in value):
        raise ValidationError("must not contain NUL or unpaired surrogate characters")


def text(max_length: int) -> list[Callable[[str], object]]:
    """1 to ``max_length`` characters of storable text."""
    return [validate.Length(min=1, max=max_length), storable]


def card(*, required: bool = False, allow_none: bool = False) -> fields.String:
    return fields.String(
        required=required,
        allow_none=allow_none,
        validate=CARD,
        metadata={"description": "rank A23456789TJQK + suit SHDC"},
    )


class StrictBoolean(fields.Boolean):
    """JSON true or false only: marshmallow's Boolean also takes "yes", "on", 1 and "false",
    which a client sending them has surely got wrong."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise ValidationError("Not a boolean: send true or false.")
        return value


class Strict(Schema):
    """Requests: unknown fields are refused (marshmallow's default, named for readers). webargs
    excludes unknown query parameters unless told, so query routes pass ``unknown=RAISE``."""


# --- problems -------------------------------------------------------------------------------


class ProblemSchema(Schema):
    type = fields.String(required=True, metadata={"description": "stable problem type URI"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    instance = fields.String()
    request_id = fields.String()
    rule = fields.String(metadata={"description": "the broken rule's stable code"})
    errors = fields.Dict(metadata={"description": "field -> messages, for validation errors"})
    game_id = fields.String()
    current_version = fields.Integer()


class WhoAmISchema(Schema):
    role = fields.String(
        required=True, metadata={"description": "player, operator, auditor or finance"}
    )
    actor = fields.String(
        required=True,
        metadata={"description": "as events name the caller: the player's id, or key:<uuid>"},
    )
    player_id = fields.UUID(allow_none=True, metadata={"description": "a player session's"})


class ProblemTypeSchema(Schema):
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    description = fields.String(required=True)


# --- public -----------------------------------------------------------------------------------


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


class IdlePolicySchema(Schema):
    collect_after_seconds = fields.Integer(required=True)
    policy = fields.String(required=True)


class VariantsSchema(Schema):
    rules_version = fields.String(
        required=True, metadata={"description": "the Vegas variants'; every game lists its own"}
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


# --- players ----------------------------------------------------------------------------------


class NewPlayerSchema(Strict):
    external_ref = fields.String(required=True, validate=text(200))
    currency = fields.String(required=True, validate=CURRENCY)


class PlayerSchema(Schema):
    id = fields.UUID(required=True, attribute="player_id")
    external_ref = fields.String(required=True)
    currency = fields.String(required=True)
    created_at = fields.DateTime(required=True)


class SessionSchema(Schema):
    token = fields.String(required=True, metadata={"description": "bearer token, shown once"})
    player_id = fields.UUID(required=True)
    created_at = fields.DateTime(required=True)
    expires_at = fields.DateTime(required=True, metadata={"description": "hard maximum"})
    idle_timeout_seconds = fields.Integer(required=True)


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


class PageQuerySchema(Strict):
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))
    before = fields.String(
        load_default=None, validate=validate.Length(max=200), metadata={"description": "cursor"}
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


# --- games ------------------------------------------------------------------------------------


class NewGameSchema(Strict):
    variant = fields.String(required=True, validate=validate.OneOf(tuple(STANDALONE)))
    stake = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=10**12))
    client_seed = fields.String(
        validate=validate.Regexp(r"^[ -~]{1,64}\Z", error="1 to 64 printable ASCII characters")
    )
    player_id = fields.UUID(metadata={"description": "operator, certification mode only"})
    seed = fields.String(
        validate=validate.Regexp(r"^[0-9a-f]{64}\Z", error="64 lowercase hex digits"),
        metadata={"description": "certification mode only: the server seed to deal from"},
    )
    deck = fields.List(
        card(required=True),
        validate=validate.Length(min=52, max=104),
        metadata={
            "description": "certification mode only: the game's 52 (or 104) cards in deal order"
        },
    )


#: Every pile any game has (the stock is drawn from, never moved from by name).
PILE_IDS = tuple(sorted({p for game in GAMES.values() for p in game.layout.ids}))
PILE_FROM = validate.OneOf(PILE_IDS)
PILE_TO = validate.OneOf((*PILE_IDS, "foundation"))
PILE = validate.OneOf(PILE_IDS)
#: POST /move keeps the piles it has always taken (Vegas Klondike's), so a request it refused
#: as invalid before is still a validation error; every game's piles go through /actions.
KLONDIKE_FROM = validate.OneOf((WASTE, *TABLEAU_PILES, *FOUNDATION_PILES))
KLONDIKE_TO = validate.OneOf((*TABLEAU_PILES, *FOUNDATION_PILES, ANY_FOUNDATION))


#: The most cards one move can take: Scorpion moves a card with every card on top of it, so a
#: run may hold most of two decks (GAMES.md); the rules refuse what the table does not allow.
MOST_CARDS_MOVED = 104


class MoveSchema(Strict):
    source = fields.String(required=True, data_key="from", validate=KLONDIKE_FROM)
    target = fields.String(required=True, data_key="to", validate=KLONDIKE_TO)
    count = fields.Integer(strict=True, validate=validate.Range(1, MOST_CARDS_MOVED))


class TurnSchema(Strict):
    column = fields.Integer(
        strict=True, validate=validate.Range(0, 6), metadata={"description": "Klondike's column"}
    )
    pile = fields.String(validate=PILE, metadata={"description": "or the pile, any game"})

    @validates_schema
    def one_pile(self, data: dict[str, Any], **_: Any) -> None:
        if ("column" in data) == ("pile" in data):
            raise ValidationError("name exactly one of column or pile", "column")


class ActionSchema(Strict):
    """One play action of any game: what GET /v1/games/{id} lists in legal_moves."""

    action = fields.String(required=True, validate=validate.OneOf((*ACTIONS, "collect")))
    source = fields.String(data_key="from", validate=PILE_FROM, metadata={"description": "move"})
    target = fields.String(data_key="to", validate=PILE_TO, metadata={"description": "move"})
    count = fields.Integer(
        strict=True, validate=validate.Range(1, MOST_CARDS_MOVED), metadata={"description": "move"}
    )
    pile = fields.String(validate=PILE, metadata={"description": "turn"})
    column = fields.Integer(
        strict=True, validate=validate.Range(0, 6), metadata={"description": "turn (Klondike)"}
    )
    piles = fields.List(
        fields.String(validate=PILE),
        validate=validate.Length(1, 2),
        metadata={"description": "remove: two cards totalling 13, or a King alone"},
    )
    card = fields.String(
        validate=CARD, metadata={"description": "pick: the buried card drawn from the pile 'from'"}
    )

    @validates_schema
    def arguments_fit(self, data: dict[str, Any], **_: Any) -> None:
        action = data.get("action")
        codec = ACTIONS.get(str(action))  # collect takes nothing
        required, allowed = (codec.REQUIRED, codec.ALLOWED) if codec else (frozenset(), frozenset())
        given = set(data) - {"action"}
        if extra := given - allowed:
            names = ", ".join(sorted(self.fields[n].data_key or n for n in extra))
            raise ValidationError(f"{action} takes no {names}", "action")
        if missing := required - given:
            names = ", ".join(sorted(self.fields[n].data_key or n for n in missing))
            raise ValidationError(f"{action} needs {names}", "action")
        if action == "turn":
            # A view lists a column's turn with both names (Vegas front-ends read the column),
            # and a legal move is sent back as listed: both are fine when they agree.
            if not given:
                raise ValidationError("turn names its pile (or a Klondike column)", "action")
            if given == {"pile", "column"} and data["pile"] != f"tableau:{data['column']}":
                raise ValidationError("turn's pile and column name different piles", "action")


class EmptySchema(Strict):
    """Commands without arguments take an empty object (or no body)."""


class VoidSchema(Strict):
    reason = fields.String(required=True, validate=text(500))


class GameQuerySchema(Strict):
    view = fields.String(
        load_default="player",
        validate=validate.OneOf(("player", "full")),
        metadata={
            "description": "full (auditors only): once the game has ended, every card where it "
            "lies; while it is in play, exactly what its player sees"
        },
    )


class LegalMoveSchema(Schema):
    action = fields.String(required=True, validate=validate.OneOf((*ACTIONS, "collect")))
    # The views name these "from" and "to" already; attribute= reads them as they are.
    source = fields.String(data_key="from", attribute="from")
    target = fields.String(data_key="to", attribute="to")
    count = fields.Integer()
    column = fields.Integer()
    pile = fields.String()
    piles = fields.List(fields.String())
    card = fields.String()


class PileViewSchema(Schema):
    id = fields.String(required=True)
    kind = fields.String(required=True)
    count = fields.Integer(required=True)
    face_down = fields.Integer(required=True, metadata={"description": "how many, not which"})
    cards = fields.List(
        card(), required=True, metadata={"description": "the visible cards, bottom first"}
    )
    face_down_cards = fields.List(card(), metadata={"description": "full view, ended games"})


class CountersSchema(Schema):
    stock = fields.Integer(required=True)
    passes_left = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "passes through the stock (or deals) still allowed, this one "
            "included; null: unlimited"
        },
    )
    picks_left = fields.Integer(
        metadata={
            "description": "draws of a buried card still allowed; only in games that have "
            "one (Three Shuffles and a Draw)"
        },
    )


class ColumnSchema(Schema):
    face_down = fields.Integer(required=True, metadata={"description": "how many, not which"})
    face_up = fields.List(card(), required=True)
    face_down_cards = fields.List(card(), metadata={"description": "full view only"})


class PaytableRefSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)


class GameStateSchema(Schema):
    """A game's state as a view shows it (GET /v1/games/{id} adds its timestamps)."""

    id = fields.UUID(required=True)
    player_id = fields.UUID(required=True)
    variant = fields.String(required=True, metadata={"description": "the game's id"})
    title = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    version = fields.Integer(required=True, metadata={"description": "also the ETag"})
    stake = fields.Integer(required=True)
    currency = fields.String(required=True)
    win_rate = fields.Integer(
        required=True, metadata={"description": "one unit's worth, rounded down"}
    )
    multiplier = fields.String(required=True, metadata={"description": 'M, e.g. "5"'})
    units = fields.Integer(required=True, metadata={"description": "what the game pays for"})
    max_units = fields.Integer(required=True)
    winnings = fields.Integer(
        required=True, metadata={"description": "floor(units x stake x M / max_units)"}
    )
    foundation_count = fields.Integer(
        required=True, metadata={"description": "units (Vegas: cards on the foundations)"}
    )
    payout = fields.Integer(required=True, allow_none=True)
    refund = fields.Integer(required=True, allow_none=True)
    end_reason = fields.String(required=True, allow_none=True)
    certification = fields.Boolean(required=True)
    paytable = fields.Nested(PaytableRefSchema, required=True)
    rules_version = fields.String(required=True)
    seed_commitment = fields.String(required=True, allow_none=True)
    client_seed = fields.String(required=True, allow_none=True)
    server_seed = fields.String(
        required=True, allow_none=True, metadata={"description": "revealed when the game ends"}
    )
    revealed_deck = fields.List(
        card(),
        required=True,
        allow_none=True,
        metadata={"description": "a certification game's given deck, revealed when it ends"},
    )
    stock_count = fields.Integer(required=True)
    passes_left = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null: unlimited"}
    )
    waste = fields.List(
        card(), required=True, metadata={"description": "the visible fan, top last"}
    )
    waste_count = fields.Integer(required=True)
    waste_playable = fields.Boolean(required=True)
    foundations = fields.List(
        card(allow_none=True), required=True, metadata={"description": "top cards"}
    )
    tableau = fields.List(fields.Nested(ColumnSchema), required=True)
    piles = fields.List(
        fields.Nested(PileViewSchema),
        required=True,
        metadata={"description": "every pile of the game, in its layout order"},
    )
    counters = fields.Nested(CountersSchema, required=True)
    legal_moves = fields.List(fields.Nested(LegalMoveSchema), required=True)
    can_undo = fields.Boolean(required=True)
    # full view (auditors) only
    deck = fields.List(card())
    shuffle_algorithm = fields.String()
    stock = fields.List(card())
    waste_all = fields.List(card())
    foundation_piles = fields.List(fields.List(card()))


class GameViewSchema(GameStateSchema):
    started_at = fields.DateTime(required=True)
    last_event_at = fields.DateTime(required=True)
    ended_at = fields.DateTime(required=True, allow_none=True)


class RecordedEventSchema(Schema):
    position = fields.Integer(required=True)
    stream_id = fields.String(required=True)
    version = fields.Integer(required=True)
    event_id = fields.UUID(required=True)
    type = fields.String(required=True)
    schema_version = fields.Integer(required=True)
    data = fields.Dict(required=True)
    metadata = fields.Dict(required=True)
    recorded_at = fields.DateTime(required=True)
    prev_hash = fields.String(required=True)
    hash = fields.String(required=True)


class EventStreamSchema(Schema):
    game_id = fields.UUID(required=True)
    chain_intact = fields.Boolean(required=True)
    events = fields.List(fields.Nested(RecordedEventSchema), required=True)


# --- replay and audits ----------------------------------------------------------------------


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


# --- finance --------------------------------------------------------------------------------


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


class ReconciliationQuerySchema(Strict):
    day = fields.Date(required=True, data_key="date")


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


# --- duels ----------------------------------------------------------------------------------


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
