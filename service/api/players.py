"""Players: accounts, sessions, the cashier (deposits, withdrawals), wallet, ledger, betting
history and preferences."""

from __future__ import annotations

import re
import uuid
from typing import Any

from flask import request, url_for
from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, WITH_BODY, problems
from service.api.problems import Problem
from service.api.requests import (
    IDEMPOTENCY_KEY_HEADER,
    page,
    parse_time_cursor,
    request_context,
    time_cursor,
)
from service.api.schemas.common import PageQuerySchema
from service.api.schemas.duels import RevokedSchema
from service.api.schemas.players import (
    CorrectionSchema,
    HistoryLineSchema,
    HistoryPageSchema,
    LedgerQuerySchema,
    LedgerTransactionSchema,
    NewCorrectionSchema,
    NewPlayerSchema,
    NewSessionSchema,
    PlayerSchema,
    PreferencesSchema,
    SessionSchema,
    StatementPageSchema,
    TransferSchema,
    WalletSchema,
)
from service.api.wiring import services
from service.services.players import Posted, Preferences

#: A ledger cursor is a posting id: ASCII digits that fit PostgreSQL's bigint.
LEDGER_CURSOR = re.compile(r"[0-9]{1,18}")

blp = Blueprint("players", __name__, url_prefix="/v1/players", description="Players and wallets")


@blp.route("", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Open a player account (the same external_ref again returns it, 200)",
)
@blp.arguments(NewPlayerSchema)
@blp.response(201, PlayerSchema)
@blp.alt_response(200, schema=PlayerSchema, description="The account already existed")
@problems(blp, *AUTHENTICATED, *WITH_BODY, 409)
def open_player(body: dict[str, Any]) -> Any:
    opened = services().players.open_account(
        request_context(), body["external_ref"], body["currency"]
    )
    headers = {"Location": url_for("players.player", player_id=opened.row.player_id)}
    if opened.replayed:
        headers["Idempotent-Replayed"] = "true"
    return opened.row, 201 if opened.created else 200, headers


@blp.route("/<uuid:player_id>", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(security=BEARER, summary="A player account")
@blp.response(200, PlayerSchema)
@problems(blp, *AUTHENTICATED, 404)
def player(player_id: uuid.UUID) -> Any:
    return services().players.player(player_id)


@blp.route("/<uuid:player_id>/sessions/revoke", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    summary="Revoke every live session of a player",
    description="Their bearer tokens stop working at once; recorded as a significant event.",
)
@blp.response(200, RevokedSchema)
@problems(blp, *AUTHENTICATED, 404)
def revoke_sessions(player_id: uuid.UUID) -> Any:
    return {"revoked": services().access.revoke_player_sessions(request_context(), player_id)}


@blp.route("/<uuid:player_id>/sessions/current", methods=["DELETE"])
@allow(player="self")
@blp.doc(
    security=BEARER,
    summary="Log out: the bearer token used for this call stops working",
)
@blp.response(200, RevokedSchema)
@problems(blp, *AUTHENTICATED, 404)
def log_out(player_id: uuid.UUID) -> Any:
    token = request.headers.get("Authorization", "").partition(" ")[2].strip()
    return {"revoked": int(services().access.revoke_session(request_context(), token))}


@blp.route("/<uuid:player_id>/sessions", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    summary="Mint a player's bearer token",
    description="Expires after 30 minutes without use, and at a hard maximum of 8 hours. No "
    "body (or {}) in transfer mode; in seamless mode the operator's wallet_token, which the "
    "operator's wallet must accept (a balance read): an invalid or expired token is 403 "
    "wallet-refused and no session is opened.",
)
@blp.arguments(NewSessionSchema, required=False)
@blp.response(201, SessionSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 403, 404, 503)
def open_session(body: dict[str, Any], player_id: uuid.UUID) -> Any:
    session = services().access.open_session(
        request_context(), player_id, (body or {}).get("wallet_token")
    )
    answer = {
        "token": session.token,
        "player_id": session.player_id,
        "created_at": session.created_at,
        "expires_at": session.expires_at,
        "idle_timeout_seconds": int(session.idle_timeout.total_seconds()),
    }
    if session.wallet_balance is not None:
        answer["wallet_balance"] = session.wallet_balance
    return answer, 201


def _transaction(posted: Posted, player_id: uuid.UUID) -> dict[str, Any]:
    wallet = next(p for p in posted.postings if p.account_id == f"player:{player_id}")
    return {
        "transaction_id": posted.transaction_id,
        "client_id": posted.client_transaction_id.removeprefix("cashier:"),
        "kind": posted.kind,
        "amount": posted.amount,
        "currency": posted.currency,
        "balance_after": wallet.balance_after,
        "cause": f"{posted.cause_stream}/{posted.cause_version}",
        "created_at": posted.created_at,
        "postings": posted.postings,
    }


def _transfer_route(kind: str) -> None:
    @blp.route(f"/<uuid:player_id>/{kind}", endpoint=kind, methods=["POST"])
    @allow("operator")
    @blp.doc(
        security=BEARER,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        summary=f"Cashier: {'pay money in' if kind == 'deposits' else 'pay money out'}",
        description="Applied exactly once per transaction_id: the same id and amount again "
        "returns the first result; the same id with anything else is refused (409)."
        + (
            ""
            if kind == "deposits"
            else " Paid only once the audit has verified the player's history since their last "
            "verified point (every game, duel and transaction behind their wallet): what it finds "
            "holds the withdrawal (409 withdrawal-held, naming the hold; nothing moves and "
            "nothing is kept under the Idempotency-Key, so a retry after correction pays); no "
            "answer from the audit's workers in time is 503 verification-unavailable."
        ),
    )
    @blp.arguments(TransferSchema)
    @blp.response(201, LedgerTransactionSchema)
    @problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409)
    def transfer(body: dict[str, Any], player_id: uuid.UUID) -> Any:
        players = services().players
        move = players.deposit if kind == "deposits" else players.withdraw
        posted = move(request_context(), player_id, body["amount"], body["transaction_id"])
        headers = {"Idempotent-Replayed": "true"} if posted.replayed else {}
        return _transaction(posted, player_id), 201, headers


_transfer_route("deposits")
_transfer_route("withdrawals")


@blp.route("/<uuid:player_id>/corrections", methods=["POST"])
@allow("operator")
@blp.doc(
    security=BEARER,
    parameters=[IDEMPOTENCY_KEY_HEADER],
    summary="Answer a withdrawal's hold: an operator's correction of what the audit found",
    description="Names the hold (the withdrawal-held significant event a 409 withdrawal-held "
    "named) and the findings it answers (all of the hold's unless listed), says why, and moves "
    "amount between the wallet and a house account (debit: forged money taken back out of the "
    "wallet; credit: money restored into it; 0: nothing moves). Recorded as a BalanceCorrected "
    "event on the player's stream and, if money moves, a ledger transaction of kind correction "
    "caused by it. The player's history is then verified without holding on what it names, so "
    "the held withdrawal, asked again, pays. 404 for a hold that is not this player's; 422 for "
    "a finding the hold does not list; 409 insufficient-funds for a debit above the balance.",
)
@blp.arguments(NewCorrectionSchema)
@blp.response(201, CorrectionSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404, 409, 422)
def correct(body: dict[str, Any], player_id: uuid.UUID) -> Any:
    done = services().corrections.correct(
        request_context(),
        player_id,
        body["hold"],
        body["reason"],
        amount=body["amount"],
        direction=body["direction"],
        account=body["account"],
        findings=body.get("findings"),
    )
    event = done.event
    answer = {
        "correction_id": done.correction_id,
        "player_id": player_id,
        "hold": event.hold,
        "reason": event.reason,
        "findings": event.findings,
        "amount": event.amount,
        "currency": event.currency,
        "direction": event.direction,
        "account": event.account,
        "cause": done.cause,
        "transaction": _transaction(done.transaction, player_id) if done.transaction else None,
    }
    headers = {"Idempotent-Replayed": "true"} if done.replayed else {}
    return answer, 201, headers


@blp.route("/<uuid:player_id>/wallet", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(
    security=BEARER,
    summary="Balance, and what an unfinished game holds",
    description="Certification games are played for the sandbox (XTS), never for real money: "
    "their stakes and winnings show in sandbox, and balance and held are untouched by them.",
)
@blp.response(200, WalletSchema)
@problems(blp, *AUTHENTICATED, 404)
def wallet(player_id: uuid.UUID) -> Any:
    return services().players.wallet(player_id, require_principal().credential)


@blp.route("/<uuid:player_id>/ledger", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(
    security=BEARER,
    summary="The wallet's postings, newest first, with balances",
    description="wallet=sandbox: the sandbox wallet's, the money of certification games.",
)
@blp.arguments(LedgerQuerySchema, location="query", unknown=RAISE)
@blp.response(200, StatementPageSchema)
@problems(blp, *AUTHENTICATED, 404, 422)
def ledger(query: dict[str, Any], player_id: uuid.UUID) -> Any:
    before = query["before"]
    if before is not None and not LEDGER_CURSOR.fullmatch(before):
        raise Problem("validation-error", "bad cursor", errors={"before": ["not a cursor"]})
    limit = query["limit"]
    lines = services().players.statement(
        player_id,
        before=int(before) if before else None,
        limit=limit + 1,
        sandbox=query["wallet"] == "sandbox",
    )
    return page(lines, limit, lambda r: str(r.posting_id))


@blp.route("/<uuid:player_id>/history", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(security=BEARER, summary="Betting history, newest first")
@blp.arguments(PageQuerySchema, location="query", unknown=RAISE)
@blp.response(200, HistoryPageSchema)
@problems(blp, *AUTHENTICATED, 404, 422)
def history(query: dict[str, Any], player_id: uuid.UUID) -> Any:
    before = parse_time_cursor(query["before"]) if query["before"] else None
    limit = query["limit"]
    rows = services().games.history(player_id, before=before, limit=limit + 1)
    return page(
        rows,
        limit,
        lambda r: time_cursor(r.started_at, r.game_id),
        lambda r: {**_row(r), "net": r.net},
    )


def _row(row: Any) -> dict[str, Any]:
    return {field: getattr(row, field) for field in HistoryLineSchema().fields if field != "net"}


@blp.route("/<uuid:player_id>/preferences", methods=["GET"])
@allow("operator", "auditor", player="self")
@blp.doc(security=BEARER, summary="Sound, table colour and card back")
@blp.response(200, PreferencesSchema)
@problems(blp, *AUTHENTICATED, 404)
def get_preferences(player_id: uuid.UUID) -> Any:
    return services().players.preferences(player_id)


@blp.route("/<uuid:player_id>/preferences", endpoint="put_preferences", methods=["PUT"])
@allow(player="self")
@blp.doc(security=BEARER, parameters=[IDEMPOTENCY_KEY_HEADER], summary="Change the preferences")
@blp.arguments(PreferencesSchema)
@blp.response(200, PreferencesSchema)
@problems(blp, *AUTHENTICATED, *WITH_BODY, 404)
def put_preferences(body: dict[str, Any], player_id: uuid.UUID) -> Any:
    chosen = Preferences(body["sound"], body["colour"], body["card_back"])
    saved = services().players.set_preferences(request_context(), player_id, chosen)
    return saved.preferences, 200, {"Idempotent-Replayed": "true"} if saved.replayed else {}
