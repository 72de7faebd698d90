"""Schemas of the signed checkpoints of the event log (service/api/checkpoints.py)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.audits import FindingSchema
from service.api.schemas.common import Strict

HEX64 = validate.Regexp(r"^[0-9a-f]{64}$", error="64 lowercase hex digits")


class SignedCheckpointSchema(Strict):
    """Exactly the signed fields (events/anchor.py Checkpoint); service/services/ANCHORS.md says how
    the signature is made and checked."""

    seq = fields.Integer(required=True, strict=True, validate=validate.Range(1, 2**31 - 1))
    position = fields.Integer(required=True, strict=True, validate=validate.Range(0, 2**62))
    events = fields.Integer(required=True, strict=True, validate=validate.Range(0, 2**62))
    log_hash = fields.String(required=True, validate=HEX64)
    previous_position = fields.Integer(
        required=True, strict=True, validate=validate.Range(0, 2**62)
    )
    previous_log_hash = fields.String(required=True, validate=HEX64)
    streams = fields.Integer(required=True, strict=True, validate=validate.Range(0, 2**62))
    heads_digest = fields.String(required=True, validate=HEX64)
    created_at = fields.String(required=True, validate=validate.Length(max=40))
    key_id = fields.String(required=True, validate=validate.Length(max=64))
    format = fields.String(required=True, validate=validate.Length(max=64))


class ExportedCheckpointSchema(Strict):
    checkpoint = fields.Nested(SignedCheckpointSchema, required=True)
    signature = fields.String(
        required=True,
        validate=validate.Length(max=200),
        metadata={"description": "Ed25519 over the checkpoint as canonical JSON, base64"},
    )
    public_key = fields.String(
        validate=validate.Length(max=1000),
        metadata={
            "description": "the signer's public key (PEM), for convenience: verify against "
            "the published key (GET /v1/checkpoints/keys), not this one"
        },
    )


class CheckpointSchema(SignedCheckpointSchema):
    signature = fields.String(required=True)
    requested_by = fields.String(
        required=True, metadata={"description": '"beat", or key:<id> of the staff key'}
    )


class CheckpointPageSchema(Schema):
    items = fields.List(fields.Nested(CheckpointSchema), required=True)
    next = fields.Integer(required=True, allow_none=True)


class CheckpointQuerySchema(Strict):
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 200))
    before = fields.Integer(
        load_default=None,
        validate=validate.Range(1, 2**31 - 1),
        metadata={"description": "cursor: the last seq seen"},
    )


class AnchorKeySchema(Schema):
    key_id = fields.String(required=True)
    public_key = fields.String(required=True, metadata={"description": "PEM"})
    signing = fields.Boolean(
        required=True, metadata={"description": "signs new checkpoints (else retired)"}
    )


class AnchorKeysSchema(Schema):
    algorithm = fields.String(required=True)
    keys = fields.List(fields.Nested(AnchorKeySchema), required=True)


class DocumentCheckSchema(Schema):
    verified = fields.Boolean(required=True)
    checkpoint = fields.Nested(SignedCheckpointSchema, required=True, allow_none=True)
    findings = fields.List(fields.Nested(FindingSchema), required=True)
