"""Disable on demand: the operator's switches of gaming."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.api.schemas.common import Strict, StrictBoolean, text


class SwitchSchema(Strict):
    enabled = StrictBoolean(required=True, metadata={"description": "false: switch it off"})
    reason = fields.String(required=True, validate=text(500))


class SwitchViewSchema(Schema):
    scope = fields.String(required=True, metadata={"description": "all, game, version, player"})
    target = fields.String(
        required=True, metadata={"description": "*, a game's id, a rules_version, a player id"}
    )
    enabled = fields.Boolean(required=True)
    reason = fields.String(required=True)
    changed_at = fields.DateTime(required=True)


class SwitchesSchema(Schema):
    switches = fields.List(fields.Nested(SwitchViewSchema), required=True)
