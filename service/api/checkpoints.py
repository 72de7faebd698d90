"""Anchored history: signed checkpoints of the whole event log, exported for auditors to keep
elsewhere, and checked against the live log."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask import url_for
from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.requests import page as paged
from service.api.schemas.checkpoints import (
    AnchorKeysSchema,
    CheckpointPageSchema,
    CheckpointQuerySchema,
    CheckpointSchema,
    DocumentCheckSchema,
    ExportedCheckpointSchema,
)
from service.api.wiring import services

blp = Blueprint("checkpoints", __name__, description="Signed checkpoints of the event log")


@blp.route("/v1/checkpoints", methods=["POST"])
@allow("auditor", "operator")
@blp.doc(
    security=BEARER,
    summary="Sign a checkpoint of the event log now",
    description="Beat signs one every minute; this signs one on demand: the last position, "
    "the count of events and the running hash of the whole log, with the heads of the streams "
    "changed since the last checkpoint, signed with the service's Ed25519 key. 201 with the "
    "new checkpoint; 200 with the latest if nothing was appended since it; 409 log-empty "
    "before the log's first event.",
)
@blp.response(201, CheckpointSchema)
@blp.alt_response(200, schema=CheckpointSchema, description="nothing new to sign")
@problems(blp, *AUTHENTICATED, 409)
def create() -> Any:
    principal = require_principal()
    stored, created = services().anchors.checkpoint(principal.actor.id, principal.credential)
    body = services().anchors.summary(stored)
    if not created:
        return body, 200
    return body, 201, {"Location": url_for("checkpoints.one", seq=stored.seq)}


@blp.route("/v1/checkpoints", methods=["GET"])
@allow("auditor", "operator")
@blp.doc(security=BEARER, summary="The signed checkpoints, newest first")
@blp.arguments(CheckpointQuerySchema, location="query", unknown=RAISE)
@blp.response(200, CheckpointPageSchema)
@problems(blp, *AUTHENTICATED, 422)
def page(query: dict[str, Any]) -> Any:
    limit = query["limit"]
    anchors = services().anchors
    rows = anchors.page(before=query["before"], limit=limit + 1)
    return paged(rows, limit, lambda r: r.seq, anchors.summary)


@blp.route("/v1/checkpoints/<int:seq>", methods=["GET"])
@allow("auditor", "operator")
@blp.doc(
    security=BEARER,
    summary="One checkpoint as the file an auditor keeps",
    description="The signed fields, the signature and the signer's public key: store it "
    "outside this service, check it later with POST /v1/checkpoints/verify or offline "
    "(service/services/ANCHORS.md).",
)
@blp.response(200, ExportedCheckpointSchema)
@problems(blp, *AUTHENTICATED, 404)
def one(seq: int) -> Any:
    return (
        services().anchors.exported(seq),
        200,
        {"Content-Disposition": f'attachment; filename="checkpoint-{seq}.json"'},
    )


@blp.route("/v1/checkpoints/keys", methods=["GET"])
@blp.doc(
    summary="The public keys checkpoints are signed with",
    description="Published for anyone to check an exported checkpoint's signature.",
)
@blp.response(200, AnchorKeysSchema)
@problems(blp)
def keys() -> Any:
    return {
        "algorithm": "Ed25519",
        "keys": [
            {"key_id": kid, "public_key": pem, "signing": signing}
            for kid, pem, signing in services().anchors.public_keys()
        ],
    }


@blp.route("/v1/checkpoints/verify", methods=["POST"])
@allow("auditor", "operator")
@blp.doc(
    security=BEARER,
    summary="Check an exported checkpoint against the live log",
    description="The signature under a published key, then the log as it is now: its count "
    "and running hash up to the checkpoint's position, the heads of the streams changed in "
    "its stretch, and that the database still holds the same checkpoint. A deleted stream, a "
    "cut tail or a rewritten and re-hashed stream shows here, as findings.",
)
@blp.arguments(ExportedCheckpointSchema)
@blp.response(200, DocumentCheckSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY)
def verify(body: dict[str, Any]) -> Any:
    checked = services().anchors.check_document(body)
    return {
        "verified": checked.verified,
        "checkpoint": asdict(checked.checkpoint) if checked.checkpoint else None,
        "findings": [asdict(f) for f in checked.findings],
    }
