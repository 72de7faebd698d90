"""Games: a deal, every play action (one schema for the generic route, read from each action's
codec), the game view and its recorded events."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from service.api.schemas.common import CARD, STATUSES, Strict, card, text
from service.games import GAMES, STANDALONE
from service.rules.actions import ACTIONS


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
#: "Whichever foundation fits", as a move's target.
ANY_FOUNDATION = "foundation"
PILE_TO = validate.OneOf((*PILE_IDS, ANY_FOUNDATION))
PILE = validate.OneOf(PILE_IDS)
#: POST /move keeps the piles it has always taken (Vegas Klondike's), so a request it refused
#: as invalid before is still a validation error; every game's piles go through /actions.
_VEGAS = GAMES["vegas-draw1"].layout


def _vegas(kind: str) -> tuple[str, ...]:
    return tuple(_VEGAS.ids[i] for i in _VEGAS.of_kind(kind))


KLONDIKE_FROM = validate.OneOf((*_vegas("waste"), *_vegas("tableau"), *_vegas("foundation")))
KLONDIKE_TO = validate.OneOf((*_vegas("tableau"), *_vegas("foundation"), ANY_FOUNDATION))


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
    payout_status = fields.String(
        allow_none=True,
        validate=validate.OneOf(("pending", "credited", "review")),
        metadata={
            "description": "once the game has ended, its payout (or a void's refund): credited; "
            "in seamless mode pending while it is being sent to the operator's wallet, review "
            "when the wallet refused it and a person settles it; null while in play"
        },
    )
    reality_check = fields.Dict(
        allow_none=True,
        metadata={
            "description": "the reality check due in the player's session (session_started, "
            "due_at, session_seconds, stakes, payouts, net), else null (always null for "
            "staff)"
        },
    )


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
