"""Seamless mode (issue 37): the movements with the operator's wallet left for a person, and an
operator's resolution of each, recorded on the round's stream with the operator's key and as a
significant event."""

from __future__ import annotations

import uuid
from typing import Any

from service.api.auth import allow
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.requests import IDEMPOTENCY_KEY_HEADER, request_context
from service.api.schemas.wallet import ResolutionSchema, WalletMovementSchema, WalletReviewsSchema
from service.api.wiring import services

blp = Blueprint(
    "wallet",
    __name__,
    url_prefix="/v1/wallet",
    description="Seamless mode: movements with the operator's wallet under review",
)


@blp.route("/reviews", methods=["GET"])
@allow("operator", "auditor", "finance")
@blp.doc(
    security=BEARER,
    summary="Movements with the operator's wallet under review, oldest first",
    description="A win refused or unacknowledged past the last threshold, a round whose "
    "history failed the audit's verification before its win, an answer contradicting the "
    "server's record: each with why. 409 wallet-mode in transfer mode.",
)
@blp.response(200, WalletReviewsSchema)
@problems(blp, *AUTHENTICATED, 409)
def reviews() -> Any:
    return {"movements": services().wallet_reviews.under_review()}


@blp.route("/transactions/<uuid:transaction_uuid>/resolution", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Resolve a movement under review",
    description="retry (a win or rollback sent again, the same transaction_uuid), settled (the "
    "operator's wallet applied it by other means: the server's ledger mirrors it as confirmed) "
    "or not-applied (a bet the operator's wallet never applied), with a reason. 409 "
    "wallet-not-under-review for a movement not under review; 422 for an action its method "
    "does not allow.",
)
@blp.arguments(ResolutionSchema)
@blp.response(200, WalletMovementSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409, 422)
def resolve(body: dict[str, Any], transaction_uuid: uuid.UUID) -> Any:
    return services().wallet_reviews.resolve(
        request_context(), transaction_uuid, body["action"], body["reason"]
    )
