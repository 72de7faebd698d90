"""RFC 9457 problem details: every error the API returns, with a stable type per kind.

``type`` is a relative URI, ``/problems/<slug>``, that the API itself answers with a description
of the problem type. A broken game rule also carries ``rule``, the rule's stable code.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import Response, g, request
from werkzeug.exceptions import HTTPException

from events.records import ConcurrencyConflict
from service import errors
from service.api.rendering import encode
from service.api.request_marks import PROBLEM
from service.core.ledger import InsufficientFunds, TransactionIdReused
from service.errors import (
    CertificationDisabled,
    CommitmentTaken,
    Disabled,
    DuelNotOver,
    Excluded,
    GameInProgress,
    GameNotFinished,
    IntegrityBreach,
    InvalidArgument,
    KeyReused,
    LimitExceeded,
    LogEmpty,
    NotFound,
    PlayerConflict,
    ProjectionUnavailable,
    RealityCheckDue,
    RuleViolation,
    TimeUp,
    VerificationUnavailable,
    VersionMismatch,
    WalletModeOnly,
    WalletNotUnderReview,
    WalletRefused,
    WalletUnavailable,
    WalletUnsettled,
    WithdrawalHeld,
)
from service.runtime import database as db
from service.runtime import metrics

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"


@dataclass(frozen=True, slots=True)
class ProblemType:
    slug: str
    status: int
    title: str
    description: str

    @property
    def uri(self) -> str:
        return f"/problems/{self.slug}"


_TYPES = (
    ProblemType(
        "malformed-request",
        400,
        "Malformed request",
        "The body is not valid JSON, or a header is malformed.",
    ),
    ProblemType(
        "unauthorized",
        401,
        "Unauthorized",
        "No bearer token, or one that is unknown, revoked or expired.",
    ),
    ProblemType(
        "unauthorized-malformed",
        401,
        "Credential malformed",
        "The Authorization header is not Bearer <key or token> as this service issues them.",
    ),
    ProblemType(
        "unauthorized-unknown",
        401,
        "Credential unknown",
        "The key or token presented is not one this service issued.",
    ),
    ProblemType(
        "unauthorized-expired",
        401,
        "Session expired",
        "The player session presented has expired (idle past its timeout, or past its hard "
        "maximum): the operator opens a new one.",
    ),
    ProblemType(
        "unauthorized-revoked",
        401,
        "Credential revoked",
        "The key or session presented was revoked.",
    ),
    ProblemType("forbidden", 403, "Forbidden", "This role may not do this."),
    ProblemType(
        "certification-disabled",
        403,
        "Certification mode is off",
        "Given seeds and decks are refused unless CERTIFICATION_MODE=1 (never in production); "
        "only operators may give them.",
    ),
    ProblemType("not-found", 404, "Not found", "No such resource, or not one this caller may see."),
    ProblemType(
        "method-not-allowed",
        405,
        "Method not allowed",
        "The resource does not answer this HTTP method.",
    ),
    ProblemType(
        "not-acceptable",
        406,
        "Not acceptable",
        "The resource cannot answer in a media type the Accept header allows.",
    ),
    ProblemType(
        "game-in-progress",
        409,
        "Game in progress",
        "The player has an unfinished game; collect it before dealing another.",
    ),
    ProblemType(
        "commitment-taken",
        409,
        "Commitment taken",
        "The deal's seed commitment is another game's or duel's already: a seed deals one real "
        "game or duel (a certification deal given a real game's seed, or two deals on one "
        "seed). Nothing was applied; deal another seed.",
    ),
    ProblemType(
        "game-finished",
        409,
        "Game finished",
        "The game was collected or voided; it accepts no more commands.",
    ),
    ProblemType(
        "game-not-finished",
        409,
        "Game not finished",
        "A player's replay of a game opens when the game is collected or voided.",
    ),
    ProblemType(
        "duel-in-progress",
        409,
        "Duel in progress",
        "A duel seat's game (its view, events and replay) and a duel's replay are sealed from "
        "staff until the duel settles or is cancelled: every seat plays the same deck.",
    ),
    ProblemType(
        "log-empty",
        409,
        "Nothing to sign",
        "A checkpoint covers the event log up to its last event; a log without events has none.",
    ),
    ProblemType(
        "time-up",
        409,
        "Time is up",
        "The timed game's clock ran out (deadline names when): it accepts no more commands.",
    ),
    ProblemType(
        "concurrent-update",
        409,
        "Concurrent update",
        "Another command changed the game first; reload it and decide again.",
    ),
    ProblemType(
        "withdrawal-held",
        409,
        "Withdrawal held",
        "The audit's verification of the player's history since their last verified point "
        "found a fault: the withdrawal waits for an operator (hold names the significant "
        "event, checks what failed). Nothing moved; retrying with the same key after the "
        "fault is corrected pays.",
    ),
    ProblemType(
        "transaction-id-reused",
        409,
        "Transaction id reused",
        "The transaction id was already used for a different movement of money.",
    ),
    ProblemType(
        "player-conflict",
        409,
        "Player conflict",
        "The external reference already names a player with other details.",
    ),
    ProblemType(
        "version-mismatch",
        412,
        "Precondition failed",
        "If-Match does not name the game's current version (its ETag).",
    ),
    ProblemType(
        "payload-too-large",
        413,
        "Payload too large",
        "The request body is larger than the API accepts.",
    ),
    ProblemType(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "Send request bodies as application/json.",
    ),
    ProblemType(
        "validation-error",
        422,
        "Invalid request",
        "A field is missing, unknown, of the wrong type or out of range; see errors.",
    ),
    ProblemType(
        "rule-violation",
        422,
        "Rule violation",
        "The command breaks a rule of the game or the paytable; rule names which.",
    ),
    ProblemType(
        "insufficient-funds",
        422,
        "Insufficient funds",
        "The wallet balance does not cover the amount.",
    ),
    ProblemType(
        "limit-exceeded",
        422,
        "Limit exceeded",
        "The wager or deposit would break one of the player's safer-gambling limits, or the "
        "player session has reached its session-time limit (no deal, play action or duel join "
        "in it; collecting stays open): limit names it, remaining is what it still allows (for "
        "max-stake: the maximum) and resets_at when its period ends (null: max-stake, "
        "session-time). Nothing was applied.",
    ),
    ProblemType(
        "player-excluded",
        403,
        "Player excluded",
        "The player is in a time-out or a self-exclusion (kind, until): no deal, duel or "
        "deposit until it ends. Withdrawals, and playing out a game already dealt, stay open.",
    ),
    ProblemType(
        "reality-check-due",
        409,
        "Reality check due",
        "A reality check of the player's session is due (reality_check: the session's time, "
        "stakes, payouts and net): no deal, play action or duel join until the player "
        "acknowledges it (POST /v1/players/{id}/reality-check). Collecting stays open.",
    ),
    ProblemType(
        "gaming-disabled",
        403,
        "Gaming disabled",
        "An operator switched off gaming for everyone or for this player (scope, reason): no "
        "deal or duel join until it is switched on. Games already dealt play on.",
    ),
    ProblemType(
        "game-disabled",
        403,
        "Game disabled",
        "An operator switched off this game or this game version (scope, target, reason): no "
        "deal or duel join of it until it is switched on. Games already dealt play on.",
    ),
    ProblemType(
        "idempotency-key-reused",
        422,
        "Idempotency key reused",
        "The Idempotency-Key was used before with a different request.",
    ),
    ProblemType(
        "internal-error",
        500,
        "Internal error",
        "A bug: the request was not applied. It has been logged.",
    ),
    ProblemType(
        "integrity-breach",
        500,
        "Integrity check failed",
        "Stored data failed a check no write through the service can fail (a game's sealed "
        "secret that its commitment does not name, a balance its postings do not explain): "
        "nothing was applied, and the operator is alerted.",
    ),
    ProblemType(
        "verification-unavailable",
        503,
        "Verification unavailable",
        "A withdrawal is paid only once the audit has verified the player's history, and the "
        "audit's workers did not answer in time; nothing moved. Retry later.",
    ),
    ProblemType(
        "projection-unavailable",
        503,
        "Finance projections behind",
        "A finance report is answered only from projections folded up to the log as it stood "
        "when asked, and background work did not fold them in time; nothing is answered from "
        "figures behind the log. Retry later.",
    ),
    ProblemType(
        "wallet-mode",
        409,
        "Not in this wallet mode",
        "In seamless mode the operator's own wallet holds the players' money: deposits, "
        "withdrawals and deposit limits are the operator's, not this server's.",
    ),
    ProblemType(
        "wallet-unsettled",
        409,
        "Last round still settling",
        "The player's last round has a win or a rollback not yet acknowledged by the operator's "
        "wallet (round, method): no new deal until it is. Retry shortly.",
    ),
    ProblemType(
        "wallet-not-under-review",
        409,
        "Not under review",
        "Only a movement with the operator's wallet under review is resolved (state: what it "
        "is instead).",
    ),
    ProblemType(
        "wallet-insufficient-funds",
        402,
        "Not enough money at the operator",
        "The operator's wallet refused the bet (RS_ERROR_NOT_ENOUGH_MONEY): nothing was dealt "
        "and nothing is owed.",
    ),
    ProblemType(
        "wallet-refused",
        403,
        "Refused by the operator's wallet",
        "The operator's wallet refused (wallet_status: a limit reached, the user disabled, the "
        "session's token invalid or expired): nothing was dealt and nothing is owed.",
    ),
    ProblemType(
        "wallet-currency",
        422,
        "Currency refused by the operator's wallet",
        "The operator's wallet holds the player's money in another currency "
        "(RS_ERROR_WRONG_CURRENCY): nothing was dealt and nothing is owed.",
    ),
    ProblemType(
        "wallet-unavailable",
        503,
        "Operator's wallet unavailable",
        "The operator's wallet gave no definite answer (a timeout, an error, an answer that "
        "did not verify): nothing was dealt, and a bet sent is being rolled back. Retry later.",
    ),
    ProblemType(
        "service-unavailable",
        503,
        "Service unavailable",
        "The database is busy or unreachable; nothing was applied. Retry later.",
    ),
)
TYPES: dict[str, ProblemType] = {t.slug: t for t in _TYPES}

_HTTP_SLUGS = {
    400: "malformed-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    413: "payload-too-large",
    415: "unsupported-media-type",
    422: "validation-error",
}


class Problem(Exception):
    """Raise to answer with a problem document."""

    def __init__(
        self,
        slug: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.type = TYPES[slug]
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def problem_response(problem: Problem) -> Response:
    request.environ[PROBLEM] = problem.type.slug  # for the request's log line
    return problem_answer(problem, request.path, g.get("request_id"))


def problem_answer(problem: Problem, path: str, request_id: str | None) -> Response:
    """The problem document (RFC 9457) a request to ``path`` is answered with."""
    metrics.PROBLEMS.labels(problem.type.slug).inc()
    body = {
        "type": problem.type.uri,
        "title": problem.type.title,
        "status": problem.type.status,
        "detail": problem.detail,
        "instance": path,
        **problem.extra,
    }
    if request_id:
        body["request_id"] = request_id
    response = Response(encode(body), status=problem.type.status, mimetype=MEDIA_TYPE)
    response.headers.update(problem.headers)
    return response


def from_http_exception(error: HTTPException) -> Problem:
    """Werkzeug's and webargs's errors (bad JSON, validation, 404 routes, 405, 413...)."""
    code = error.code or 500
    slug = _HTTP_SLUGS.get(code)
    data = getattr(error, "data", None) or {}
    if slug is None:
        return Problem("internal-error", "the request could not be handled")
    if slug == "validation-error":
        messages = data.get("messages") or {}
        # webargs nests messages by location (json, query, headers); flatten one level.
        flat = {k: v for location in messages.values() for k, v in location.items()}
        return Problem("validation-error", _summarise(flat), errors=flat)
    if slug == "malformed-request" and data.get("messages"):
        return Problem("malformed-request", "the request body is not valid JSON")
    detail = error.description or TYPES[slug].title
    allowed = getattr(error, "valid_methods", None)
    headers = {"Allow": ", ".join(allowed)} if allowed else {}
    return Problem(slug, detail, headers=headers)


def _summarise(messages: dict[str, Any]) -> str:
    parts = []
    for field, problems in sorted(messages.items()):
        text = problems[0] if isinstance(problems, list) and problems else problems
        parts.append(f"{field}: {text}")
    return "; ".join(parts) or "the request is not valid"


def from_exception(error: Exception) -> Problem:
    """The problem a domain or infrastructure exception stands for."""
    if isinstance(error, Problem):
        return error
    if isinstance(error, TimeUp):
        return Problem("time-up", error.detail, rule=error.code, deadline=error.deadline)
    if isinstance(error, RuleViolation):
        if error.code == errors.GAME_OVER:
            return Problem("game-finished", error.detail, rule=error.code)
        return Problem("rule-violation", error.detail, rule=error.code)
    if isinstance(error, WithdrawalHeld):
        return Problem(
            "withdrawal-held", str(error), hold=error.hold, checks=sorted(set(error.checks))
        )
    if isinstance(error, ProjectionUnavailable):
        return Problem("projection-unavailable", str(error), headers={"Retry-After": "5"})
    if isinstance(error, VerificationUnavailable):
        return Problem("verification-unavailable", str(error), headers={"Retry-After": "5"})
    if isinstance(error, InsufficientFunds):
        return Problem(
            "insufficient-funds", f"the balance does not cover {error.amount} minor units"
        )
    if isinstance(error, RealityCheckDue):
        return Problem("reality-check-due", str(error), reality_check=error.check.shown())
    if isinstance(error, Disabled):
        slug = "gaming-disabled" if error.scope in ("all", "player") else "game-disabled"
        return Problem(
            slug, str(error), scope=error.scope, target=error.target, reason=error.reason
        )
    if isinstance(error, Excluded):
        return Problem(
            "player-excluded", str(error), kind=error.kind, until=error.until.isoformat()
        )
    if isinstance(error, LimitExceeded):
        resets = error.resets_at.isoformat() if error.resets_at is not None else None
        return Problem(
            "limit-exceeded",
            str(error),
            limit=error.limit,
            remaining=error.remaining,
            resets_at=resets,
        )
    if isinstance(error, WalletModeOnly):
        return Problem("wallet-mode", str(error))
    if isinstance(error, WalletUnsettled):
        return Problem(
            "wallet-unsettled",
            str(error),
            headers={"Retry-After": "2"},
            round_id=str(error.round_id),
            method=error.method,
        )
    if isinstance(error, WalletRefused):
        slug = {
            "RS_ERROR_NOT_ENOUGH_MONEY": "wallet-insufficient-funds",
            "RS_ERROR_WRONG_CURRENCY": "wallet-currency",
        }.get(error.status, "wallet-refused")
        return Problem(slug, str(error), wallet_status=error.status)
    if isinstance(error, WalletNotUnderReview):
        return Problem("wallet-not-under-review", str(error), state=error.state)
    if isinstance(error, WalletUnavailable):
        return Problem("wallet-unavailable", str(error), headers={"Retry-After": "5"})
    if isinstance(error, GameInProgress):
        return Problem("game-in-progress", str(error), game_id=str(error.game_id))
    if isinstance(error, CommitmentTaken):
        return Problem("commitment-taken", str(error))
    if isinstance(error, LogEmpty):
        return Problem("log-empty", str(error))
    if isinstance(error, DuelNotOver):
        return Problem("duel-in-progress", str(error), duel_id=str(error.duel_id))
    if isinstance(error, GameNotFinished):
        return Problem("game-not-finished", str(error), game_id=str(error.game_id))
    if isinstance(error, InvalidArgument):
        return Problem("validation-error", str(error), errors={error.field: [error.message]})
    if isinstance(error, NotFound):
        return Problem("not-found", f"no {error.what} {error.ident}")
    if isinstance(error, VersionMismatch):
        return Problem(
            "version-mismatch",
            str(error),
            headers={"ETag": f'"{error.actual}"'},
            current_version=error.actual,
        )
    if isinstance(error, ConcurrencyConflict):
        return Problem("concurrent-update", "another command changed the game first; reload it")
    if isinstance(error, KeyReused):
        return Problem("idempotency-key-reused", str(error))
    if isinstance(error, TransactionIdReused):
        return Problem("transaction-id-reused", str(error))
    if isinstance(error, PlayerConflict):
        return Problem("player-conflict", str(error))
    if isinstance(error, CertificationDisabled):
        return Problem("certification-disabled", str(error))
    if isinstance(error, IntegrityBreach):
        log.critical("integrity breach: %s", error)
        return Problem(
            "integrity-breach", "stored data failed an integrity check; nothing was applied"
        )
    down = db.outage(error)
    if down == "busy":
        return Problem(
            "service-unavailable", "the database is busy; retry", headers={"Retry-After": "1"}
        )
    if down == "unreachable":
        return Problem("service-unavailable", "the database is unreachable; retry later")
    log.exception("unhandled error", exc_info=error)
    return Problem("internal-error", "an unexpected error occurred; nothing was applied")
