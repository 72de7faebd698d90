"""What every blueprint's schemas share: validators (cards, currencies, storable text), strict
requests, pages, and the problem document."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from events.schemas import CURRENCY_PATTERN
from service.rules.cards import CANONICAL_DECK

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
    limit = fields.String(metadata={"description": "limit-exceeded: which limit"})
    remaining = fields.Integer(
        metadata={
            "description": "limit-exceeded: what it still allows (max-stake: the maximum; "
            "session-time: 0)"
        }
    )
    resets_at = fields.DateTime(
        allow_none=True,
        metadata={
            "description": "limit-exceeded: when its period ends (null: max-stake never, "
            "session-time with a new session)"
        },
    )
    kind = fields.String(metadata={"description": "player-excluded: time-out or self-exclusion"})
    until = fields.DateTime(metadata={"description": "player-excluded: when it ends"})
    scope = fields.String(
        metadata={"description": "gaming-disabled, game-disabled: all, player, game or version"}
    )
    target = fields.String(metadata={"description": "game-disabled: the game or version"})
    reason = fields.String(metadata={"description": "gaming-disabled, game-disabled: why"})
    reality_check = fields.Dict(
        metadata={
            "description": "reality-check-due: session_started, due_at, session_seconds, "
            "stakes, payouts, net (minor units; net negative is a loss)"
        }
    )


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


class PageQuerySchema(Strict):
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))
    before = fields.String(
        load_default=None, validate=validate.Length(max=200), metadata={"description": "cursor"}
    )
