"""The reference operator wallet: an operator's seamless wallet as our game server (the
supplier) will call it, in the shape of Hub88's wallet API, with faults injected on demand.

Three parts: `Wallet` (users, tokens, balances, transactions and the journal, in memory behind
one lock, so concurrent identical requests apply once), `Faults` (what goes wrong with the next
calls, and outages), and the HTTP shell (`create_app`: the four signed endpoints and the unsigned
`/_admin` API; `WalletServer`: werkzeug's threaded server, which can also stop listening for a
while). Amounts are integers in 1/100,000 of the currency unit throughout.

Rules beyond the protocol's: an unknown token (or another user's) is INVALID_TOKEN everywhere;
an expired one refuses bets and balance but not wins and rollbacks, nor the exact repeat of a
bet applied before it expired. A disabled user's bets are refused, their wins and rollbacks
paid. A repeat of a rolled-back bet answers TRANSACTION_ROLLED_BACK; a second rollback of a bet
(another id) answers RS_OK and re-credits nothing; a rollback of a bet that has a win answers
ROLLBACK_OF_A_WON_BET (RS_ERROR_UNKNOWN). An answer carries the balance only once the token is
shown to be the user's.

The admin API (JSON, unsigned):
    GET    /_admin/health
    POST   /_admin/reset                     everything forgotten, faults cleared
    POST   /_admin/users                     {user, currency, balance?, disabled?, bet_limit?}
    GET    /_admin/users/<user>
    PATCH  /_admin/users/<user>              {balance?, disabled?, bet_limit? (null: none)}
    POST   /_admin/tokens                    {user, token?}  (a token is made up if not given)
    POST   /_admin/tokens/<token>/expire
    GET    /_admin/journal?user=&transaction_uuid=    {entries: [applied movements, in order]}
    GET    /_admin/transactions/<uuid>       applied? rolled back? won? refused in advance?
    POST   /_admin/faults                    a Fault (below)
    GET    /_admin/faults                    {faults: [pending], outage: {mode, remaining_ms}}
    DELETE /_admin/faults                    faults cleared and a 503 outage ended
    POST   /_admin/outage                    {duration_ms, mode: "503" | "refuse"}

A fault: {method: balance|bet|win|rollback, kind, when: before|after (default before),
count: N (default 1; null: until cleared), probability?: 0..1, seed?, delay_ms, status?: 5xx
(default 500), then?: drop|late (a timeout's end, default drop)}. Kinds: timeout (hold delay_ms,
then drop the connection or answer late), slow (answer after delay_ms), error (HTTP `status`),
not_json (an HTML 200), bad_signature (a signature that does not verify), not_enough_money
(RS_ERROR_NOT_ENOUGH_MONEY, signed). "before": the movement is not applied (a slow or late
answer applies it after the hold; a wrongly signed answer claims RS_OK with the balance as it
stands); "after": applied, then the answer is held or spoilt. A delay_ms on the other kinds
holds their answer as long.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final, Protocol

from flask import Flask, Response, request
from werkzeug.serving import BaseWSGIServer, make_server

from tests.wallet.keys import SIGNATURE_HEADER, PrivateKey, PublicKey, sign, verify


class Status(StrEnum):
    OK = "RS_OK"
    NOT_ENOUGH_MONEY = "RS_ERROR_NOT_ENOUGH_MONEY"
    LIMIT_REACHED = "RS_ERROR_LIMIT_REACHED"
    USER_DISABLED = "RS_ERROR_USER_DISABLED"
    WRONG_CURRENCY = "RS_ERROR_WRONG_CURRENCY"
    INVALID_TOKEN = "RS_ERROR_INVALID_TOKEN"
    TOKEN_EXPIRED = "RS_ERROR_TOKEN_EXPIRED"
    INVALID_SIGNATURE = "RS_ERROR_INVALID_SIGNATURE"
    DUPLICATE_TRANSACTION = "RS_ERROR_DUPLICATE_TRANSACTION"
    TRANSACTION_DOES_NOT_EXIST = "RS_ERROR_TRANSACTION_DOES_NOT_EXIST"
    TRANSACTION_ROLLED_BACK = "RS_ERROR_TRANSACTION_ROLLED_BACK"
    UNKNOWN = "RS_ERROR_UNKNOWN"


#: A rollback of a bet that already has a win. Hub88's list has no status for "the round is
#: settled": nothing is undone, and the same request gets the same answer however often it is
#: retried, so the supplier must settle that round by hand rather than retry.
ROLLBACK_OF_A_WON_BET: Final = Status.UNKNOWN

METHODS: Final = ("balance", "bet", "win", "rollback")
FAULT_KINDS: Final = ("timeout", "slow", "error", "not_json", "bad_signature", "not_enough_money")
OUTAGE_MODES: Final = ("503", "refuse")
STATE_KEY: Final = "reference_wallet"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --- requests -------------------------------------------------------------------------------


class Malformed(ValueError):
    """A body the wallet cannot read: answered RS_ERROR_UNKNOWN (Hub88's list has no other)."""


def _text(payload: dict[str, Any], name: str, default: str | None = None) -> str:
    value = payload.get(name, default)
    if not isinstance(value, str) or (not value and default is None):
        raise Malformed(f"{name}: a non-empty string is required")
    return value


def _amount(payload: dict[str, Any], required: bool) -> int | None:
    value = payload.get("amount")
    if value is None and not required:
        return None
    # bool is an int in Python; a JSON true is no amount.
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Malformed("amount: a non-negative integer is required")
    return value


@dataclass(frozen=True)
class BalanceRequest:
    user: str
    token: str
    request_uuid: str
    currency: str

    @classmethod
    def parse(cls, payload: dict[str, Any]) -> BalanceRequest:
        return cls(
            user=_text(payload, "user"),
            token=_text(payload, "token"),
            request_uuid=_text(payload, "request_uuid"),
            currency=_text(payload, "currency"),
        )


@dataclass(frozen=True)
class Movement:
    """A bet, win or rollback as asked for."""

    kind: str
    user: str
    token: str
    request_uuid: str
    transaction_uuid: str
    reference_transaction_uuid: str | None
    round: str
    round_closed: bool
    game_code: str
    currency: str
    amount: int | None  # a rollback may leave it out: it re-credits the bet's amount

    @classmethod
    def parse(cls, kind: str, payload: dict[str, Any]) -> Movement:
        closed = payload.get("round_closed", False)
        if not isinstance(closed, bool):
            raise Malformed("round_closed: a boolean is required")
        return cls(
            kind=kind,
            user=_text(payload, "user"),
            token=_text(payload, "token"),
            request_uuid=_text(payload, "request_uuid"),
            transaction_uuid=_text(payload, "transaction_uuid"),
            reference_transaction_uuid=(
                None if kind == "bet" else _text(payload, "reference_transaction_uuid")
            ),
            round=_text(payload, "round", ""),
            round_closed=closed,
            game_code=_text(payload, "game_code", ""),
            currency=_text(payload, "currency"),
            amount=_amount(payload, required=kind != "rollback"),
        )

    def content(self) -> Movement:
        """What makes two requests the same movement: all but the per-call request_uuid and
        the token (a retry may carry a refreshed session)."""
        return replace(self, request_uuid="", token="")


# --- the store ------------------------------------------------------------------------------


@dataclass
class User:
    ref: str
    currency: str
    balance: int = 0
    disabled: bool = False
    bet_limit: int | None = None

    def view(self) -> dict[str, object]:
        return {
            "user": self.ref,
            "currency": self.currency,
            "balance": self.balance,
            "disabled": self.disabled,
            "bet_limit": self.bet_limit,
        }


@dataclass
class Token:
    token: str
    user: str
    expired: bool = False

    def view(self) -> dict[str, object]:
        return {"token": self.token, "user": self.user, "expired": self.expired}


@dataclass
class Transaction:
    """An applied movement, kept for repeats and for the wins and rollbacks that name it."""

    movement: Movement
    amount: int
    rolled_back: bool = False  # a bet a rollback re-credited
    won: bool = False  # a bet a win named


@dataclass(frozen=True)
class Answer:
    status: Status
    user: str
    request_uuid: str
    currency: str
    balance: int | None  # left out unless the caller proved the session is the user's
    transaction_uuid: str | None = None

    def body(self) -> dict[str, object]:
        found: dict[str, object] = {
            "user": self.user,
            "request_uuid": self.request_uuid,
            "currency": self.currency,
        }
        if self.balance is not None:
            found["balance"] = self.balance
        if self.transaction_uuid is not None:
            found["transaction_uuid"] = self.transaction_uuid
        found["status"] = str(self.status)
        return found

    @classmethod
    def unread(cls, payload: dict[str, Any], status: Status) -> Answer:
        """For a request the wallet did not (or could not) read: its own fields echoed back."""

        def echo(name: str) -> str:
            value = payload.get(name)
            return value if isinstance(value, str) else ""

        transaction = payload.get("transaction_uuid")
        return cls(
            status=status,
            user=echo("user"),
            request_uuid=echo("request_uuid"),
            currency=echo("currency"),
            balance=None,
            transaction_uuid=transaction if isinstance(transaction, str) else None,
        )


class AdminError(Exception):
    def __init__(self, message: str, http_status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status


class Wallet:
    """Users, tokens, balances and transactions; every method holds the one lock from its
    checks to its change, so two identical requests at once apply once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.transactions: dict[str, Transaction] = {}
        #: Bets a rollback named before they arrived: refused if they ever do.
        self.rolled_back_unseen: set[str] = set()
        self.journal: list[dict[str, object]] = []

    # --- the wallet API ---------------------------------------------------------------------

    def balance(self, asked: BalanceRequest) -> Answer:
        with self._lock:
            refused = self._session(asked.user, asked.token, live=True)
            user = self.users.get(asked.user)
            if refused is not None or user is None:
                return self._answer(asked, refused or Status.INVALID_TOKEN, None)
            if asked.currency != user.currency:
                return self._answer(asked, Status.WRONG_CURRENCY, user)
            if user.disabled:
                return self._answer(asked, Status.USER_DISABLED, user)
            return self._answer(asked, Status.OK, user)

    def bet(self, bet: Movement) -> Answer:
        assert bet.amount is not None
        with self._lock:
            # An unknown token first; then repeats, before the token's expiry, so that a
            # retry of a bet already applied answers RS_OK even if the session ended since.
            if self._session(bet.user, bet.token, live=False) is not None:
                return self._answer(bet, Status.INVALID_TOKEN, None)
            user = self.users[bet.user]
            if (repeat := self._repeat(bet)) is not None:
                return self._answer(bet, repeat, user)
            if bet.transaction_uuid in self.rolled_back_unseen:
                return self._answer(bet, Status.TRANSACTION_ROLLED_BACK, user)
            if self.tokens[bet.token].expired:
                return self._answer(bet, Status.TOKEN_EXPIRED, user)
            if bet.currency != user.currency:
                return self._answer(bet, Status.WRONG_CURRENCY, user)
            if user.disabled:
                return self._answer(bet, Status.USER_DISABLED, user)
            if user.bet_limit is not None and bet.amount > user.bet_limit:
                return self._answer(bet, Status.LIMIT_REACHED, user)
            if bet.amount > user.balance:
                return self._answer(bet, Status.NOT_ENOUGH_MONEY, user)
            self._apply(bet, user, -bet.amount)
            return self._answer(bet, Status.OK, user)

    def win(self, win: Movement) -> Answer:
        assert win.amount is not None
        assert win.reference_transaction_uuid is not None
        with self._lock:
            # An expired token is accepted: a round can outlive the session. A disabled user's
            # win is paid too: the bet was taken, so the round is owed its settlement.
            if self._session(win.user, win.token, live=False) is not None:
                return self._answer(win, Status.INVALID_TOKEN, None)
            user = self.users[win.user]
            if (repeat := self._repeat(win)) is not None:
                return self._answer(win, repeat, user)
            if win.currency != user.currency:
                return self._answer(win, Status.WRONG_CURRENCY, user)
            bet = self._bet_of(win)
            reference = win.reference_transaction_uuid
            if reference in self.rolled_back_unseen or (bet is not None and bet.rolled_back):
                return self._answer(win, Status.TRANSACTION_ROLLED_BACK, user)
            if bet is None:
                return self._answer(win, Status.TRANSACTION_DOES_NOT_EXIST, user)
            bet.won = True
            self._apply(win, user, win.amount)
            return self._answer(win, Status.OK, user)

    def rollback(self, rollback: Movement) -> Answer:
        assert rollback.reference_transaction_uuid is not None
        with self._lock:
            if self._session(rollback.user, rollback.token, live=False) is not None:
                return self._answer(rollback, Status.INVALID_TOKEN, None)
            user = self.users[rollback.user]
            if (repeat := self._repeat(rollback)) is not None:
                return self._answer(rollback, repeat, user)
            if rollback.currency != user.currency:
                return self._answer(rollback, Status.WRONG_CURRENCY, user)
            reference = rollback.reference_transaction_uuid
            if reference not in self.transactions:
                # The bet may still be on its way: remember to refuse it when it comes.
                self.rolled_back_unseen.add(reference)
                return self._answer(rollback, Status.TRANSACTION_DOES_NOT_EXIST, user)
            bet = self._bet_of(rollback)
            if bet is None:
                return self._answer(rollback, Status.TRANSACTION_DOES_NOT_EXIST, user)
            if bet.rolled_back:
                # Already undone (by another rollback id): nothing more to re-credit.
                return self._answer(rollback, Status.OK, user)
            if bet.won:
                return self._answer(rollback, ROLLBACK_OF_A_WON_BET, user)
            bet.rolled_back = True
            self._apply(rollback, user, bet.amount)
            return self._answer(rollback, Status.OK, user)

    def unapplied(self, payload: dict[str, Any], status: Status) -> Answer:
        """An answer of ``status`` with the user's balance as it stands, changing nothing
        (what an injected fault answers instead of the wallet's own answer)."""
        with self._lock:
            found = Answer.unread(payload, status)
            user = self.users.get(found.user)
            if user is None:
                return found
            return replace(found, currency=user.currency, balance=user.balance)

    # --- the rules' helpers (under the lock) ------------------------------------------------

    def _session(self, user: str, token: str, *, live: bool) -> Status | None:
        found = self.tokens.get(token)
        if found is None or found.user != user or user not in self.users:
            return Status.INVALID_TOKEN
        if live and found.expired:
            return Status.TOKEN_EXPIRED
        return None

    def _repeat(self, movement: Movement) -> Status | None:
        """None for a new transaction id; else the answer to a request that reuses one."""
        previous = self.transactions.get(movement.transaction_uuid)
        if previous is None:
            return None
        if previous.movement.content() != movement.content():
            return Status.DUPLICATE_TRANSACTION
        if previous.rolled_back:
            return Status.TRANSACTION_ROLLED_BACK  # a bet retried after its rollback
        return Status.OK

    def _bet_of(self, movement: Movement) -> Transaction | None:
        """The bet a win or rollback names, if it is this user's bet."""
        assert movement.reference_transaction_uuid is not None
        found = self.transactions.get(movement.reference_transaction_uuid)
        if found is None or found.movement.kind != "bet" or found.movement.user != movement.user:
            return None
        return found

    def _apply(self, movement: Movement, user: User, change: int) -> None:
        user.balance += change
        self.transactions[movement.transaction_uuid] = Transaction(movement, abs(change))
        self.journal.append(
            {
                "transaction_uuid": movement.transaction_uuid,
                "kind": movement.kind,
                "user": user.ref,
                "amount": abs(change),
                "currency": user.currency,
                "round": movement.round,
                "reference_transaction_uuid": movement.reference_transaction_uuid,
                "balance_after": user.balance,
                "applied_at": _now(),
            }
        )

    @staticmethod
    def _answer(asked: BalanceRequest | Movement, status: Status, user: User | None) -> Answer:
        return Answer(
            status=status,
            user=asked.user,
            request_uuid=asked.request_uuid,
            currency=user.currency if user else asked.currency,
            balance=user.balance if user else None,
            transaction_uuid=asked.transaction_uuid if isinstance(asked, Movement) else None,
        )

    # --- administration ---------------------------------------------------------------------

    def add_user(
        self,
        ref: str,
        currency: str,
        balance: int = 0,
        disabled: bool = False,
        bet_limit: int | None = None,
    ) -> User:
        with self._lock:
            if ref in self.users:
                raise AdminError(f"user {ref!r} exists", 409)
            user = User(ref, currency, balance, disabled, bet_limit)
            self.users[ref] = user
            return replace(user)

    def update_user(self, ref: str, changes: dict[str, Any]) -> User:
        with self._lock:
            user = self._user(ref)
            if "balance" in changes:
                user.balance = changes["balance"]
            if "disabled" in changes:
                user.disabled = changes["disabled"]
            if "bet_limit" in changes:
                user.bet_limit = changes["bet_limit"]
            return replace(user)

    def user(self, ref: str) -> User:
        with self._lock:
            return replace(self._user(ref))

    def add_token(self, user: str, token: str | None = None) -> Token:
        with self._lock:
            self._user(user)
            chosen = token or f"tok-{uuid.uuid4()}"
            if chosen in self.tokens:
                raise AdminError(f"token {chosen!r} exists", 409)
            self.tokens[chosen] = Token(chosen, user)
            return replace(self.tokens[chosen])

    def expire_token(self, token: str) -> Token:
        with self._lock:
            found = self.tokens.get(token)
            if found is None:
                raise AdminError(f"no token {token!r}", 404)
            found.expired = True
            return replace(found)

    def entries(self, user: str | None, transaction_uuid: str | None) -> list[dict[str, object]]:
        with self._lock:
            return [
                dict(entry)
                for entry in self.journal
                if (user is None or entry["user"] == user)
                and (transaction_uuid is None or entry["transaction_uuid"] == transaction_uuid)
            ]

    def transaction(self, transaction_uuid: str) -> dict[str, object]:
        with self._lock:
            found = self.transactions.get(transaction_uuid)
            marked = transaction_uuid in self.rolled_back_unseen
            if found is None and not marked:
                raise AdminError(f"no transaction {transaction_uuid!r}", 404)
            view: dict[str, object] = {
                "transaction_uuid": transaction_uuid,
                "applied": found is not None,
                # Named by a rollback before it arrived (so refused when it does).
                "rolled_back_before_arrival": marked,
            }
            if found is not None:
                view |= {
                    "kind": found.movement.kind,
                    "user": found.movement.user,
                    "amount": found.amount,
                    "rolled_back": found.rolled_back,
                    "won": found.won,
                }
            return view

    def reset(self) -> None:
        with self._lock:
            self.users.clear()
            self.tokens.clear()
            self.transactions.clear()
            self.rolled_back_unseen.clear()
            self.journal.clear()

    def _user(self, ref: str) -> User:
        found = self.users.get(ref)
        if found is None:
            raise AdminError(f"no user {ref!r}", 404)
        return found


# --- faults ---------------------------------------------------------------------------------


@dataclass
class Fault:
    """What goes wrong with the next calls of one method.

    ``when`` is "before" (the movement is not applied; a slow or late answer applies it after
    the hold) or "after" (applied, then the answer goes wrong). ``remaining`` counts the calls
    left to hit (None: until cleared); ``probability`` makes each call a throw of the dice.
    """

    id: int
    method: str
    kind: str
    when: str = "before"
    remaining: int | None = 1
    probability: float | None = None
    delay_ms: int = 0
    http_status: int = 500
    then: str = "drop"  # a timeout's end: "drop" the connection, or answer "late"
    seed: int | None = None
    dice: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def view(self) -> dict[str, object]:
        return {
            "id": self.id,
            "method": self.method,
            "kind": self.kind,
            "when": self.when,
            "remaining": self.remaining,
            "probability": self.probability,
            "delay_ms": self.delay_ms,
            "status": self.http_status,
            "then": self.then,
            "seed": self.seed,
        }


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Fault] = []
        self._next_id = 1
        self._outage_mode: str | None = None
        self._outage_until = 0.0

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            fault.id = self._next_id
            self._next_id += 1
            if fault.seed is not None:
                fault.dice = random.Random(fault.seed)
            self._pending.append(fault)
            return replace(fault)

    def take(self, method: str) -> Fault | None:
        """The fault this call of ``method`` suffers, if any: the first pending one that hits."""
        with self._lock:
            for fault in self._pending:
                if fault.method != method:
                    continue
                if fault.probability is not None and fault.dice.random() >= fault.probability:
                    continue
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._pending.remove(fault)
                return replace(fault)
            return None

    def pending(self) -> list[Fault]:
        with self._lock:
            return [replace(fault) for fault in self._pending]

    def start_outage(self, mode: str, seconds: float) -> None:
        with self._lock:
            self._outage_mode = mode
            self._outage_until = time.monotonic() + seconds

    def outage(self) -> tuple[str, float] | None:
        """The outage under way: its mode and the seconds it has left."""
        with self._lock:
            left = self._outage_until - time.monotonic()
            if self._outage_mode is None or left <= 0:
                return None
            return self._outage_mode, left

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
            self._outage_mode = None


# --- HTTP -----------------------------------------------------------------------------------


class Listener(Protocol):
    def close_for(self, seconds: float) -> None:
        """Stop listening (new connections refused) for ``seconds``; return once closed."""


@dataclass
class AppState:
    wallet: Wallet
    faults: Faults
    supplier_public_key: PublicKey
    operator_private_key: PrivateKey
    listener: Listener | None = None


def state_of(app: Flask) -> AppState:
    found = app.extensions[STATE_KEY]
    assert isinstance(found, AppState)
    return found


def _json(data: object, status: int = 200) -> Response:
    return Response(json.dumps(data), status, mimetype="application/json")


def _payload(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _drop_connection() -> Response:
    """Close the connection with no answer (werkzeug then finds the socket gone and moves on)."""
    connection = request.environ.get("werkzeug.socket")
    if isinstance(connection, socket.socket):
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_RDWR)
    return Response(status=503)  # never sent: the connection is closed


def create_app(
    supplier_public_key: PublicKey,
    operator_private_key: PrivateKey,
    *,
    wallet: Wallet | None = None,
    faults: Faults | None = None,
) -> Flask:
    """The wallet's HTTP face: requests verified with the supplier's public key, answers signed
    with the operator's private key."""
    app = Flask(__name__)
    state = AppState(
        wallet=wallet or Wallet(),
        faults=faults or Faults(),
        supplier_public_key=supplier_public_key,
        operator_private_key=operator_private_key,
    )
    app.extensions[STATE_KEY] = state

    def signed(answer: Answer, *, forged: bool = False) -> Response:
        raw = json.dumps(answer.body(), separators=(",", ":")).encode()
        # A forged signature is a real one over other bytes: well formed, and it does not verify.
        signature = sign(state.operator_private_key, raw + b" " if forged else raw)
        return Response(raw, 200, {SIGNATURE_HEADER: signature}, mimetype="application/json")

    def process(method: str, body: bytes) -> Answer:
        payload = _payload(body)
        if not verify(state.supplier_public_key, body, request.headers.get(SIGNATURE_HEADER)):
            return Answer.unread(payload, Status.INVALID_SIGNATURE)
        try:
            if method == "balance":
                return state.wallet.balance(BalanceRequest.parse(payload))
            movement = Movement.parse(method, payload)
        except Malformed:
            return Answer.unread(payload, Status.UNKNOWN)
        if method == "bet":
            return state.wallet.bet(movement)
        if method == "win":
            return state.wallet.win(movement)
        return state.wallet.rollback(movement)

    def faulty(fault: Fault, answer: Answer) -> Response:
        """``answer`` as ``fault`` spoils it."""
        if fault.kind == "error":
            return Response("wallet error (injected)", fault.http_status, mimetype="text/plain")
        if fault.kind == "not_json":
            return Response("<html><body>Bad gateway</body></html>", 200, mimetype="text/html")
        if fault.kind == "bad_signature":
            return signed(answer, forged=True)
        if fault.kind == "not_enough_money":
            return signed(replace(answer, status=Status.NOT_ENOUGH_MONEY))
        return signed(answer)

    def call(method: str) -> Response:
        outage = state.faults.outage()
        if outage is not None:
            if outage[0] == "503":
                return Response("wallet outage (injected)", 503, mimetype="text/plain")
            # A connection opened before the listener closed is cut like the new ones refused.
            return _drop_connection()
        body = request.get_data()
        fault = state.faults.take(method)
        if fault is None:
            return signed(process(method, body))
        answers_late = fault.kind == "slow" or (fault.kind == "timeout" and fault.then == "late")
        if fault.when == "before":
            time.sleep(fault.delay_ms / 1000)
            if answers_late:
                return signed(process(method, body))
            if fault.kind == "timeout":
                return _drop_connection()
            # Not applied: the answer claims success (or no money) with the balance unchanged.
            return faulty(fault, state.wallet.unapplied(_payload(body), Status.OK))
        answer = process(method, body)
        time.sleep(fault.delay_ms / 1000)
        if fault.kind == "timeout" and not answers_late:
            return _drop_connection()
        return faulty(fault, answer)

    @app.post("/user/balance")
    def balance() -> Response:
        return call("balance")

    @app.post("/transaction/bet")
    def bet() -> Response:
        return call("bet")

    @app.post("/transaction/win")
    def win() -> Response:
        return call("win")

    @app.post("/transaction/rollback")
    def rollback() -> Response:
        return call("rollback")

    _admin_routes(app, state)
    return app


# --- the admin API --------------------------------------------------------------------------


def _admin_body() -> dict[str, Any]:
    found = request.get_json(silent=True)
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise AdminError("a JSON object is required")
    return found


def _get(
    body: dict[str, Any], name: str, kind: type, default: Any = ..., nullable: bool = False
) -> Any:
    if name not in body:
        if default is ...:
            raise AdminError(f"{name} is required")
        return default
    value = body[name]
    if value is None and nullable:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise AdminError(f"{name}: a {kind.__name__} is required")
    return value


def _probability(body: dict[str, Any]) -> float | None:
    value = body.get("probability")
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
        raise AdminError("probability: a number between 0 and 1")
    return float(value)


def _user_changes(body: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if "balance" in body:
        changes["balance"] = _get(body, "balance", int)
    if "disabled" in body:
        changes["disabled"] = _get(body, "disabled", bool)
    if "bet_limit" in body:
        changes["bet_limit"] = _get(body, "bet_limit", int, nullable=True)
    return changes


def _fault(body: dict[str, Any]) -> Fault:
    fault = Fault(
        id=0,
        method=_get(body, "method", str),
        kind=_get(body, "kind", str),
        when=_get(body, "when", str, "before"),
        remaining=_get(body, "count", int, 1, nullable=True),
        probability=_probability(body),
        delay_ms=_get(body, "delay_ms", int, 0),
        http_status=_get(body, "status", int, 500),
        then=_get(body, "then", str, "drop"),
        seed=_get(body, "seed", int, None, nullable=True),
    )
    problems = [
        (fault.method not in METHODS, f"method: one of {METHODS}"),
        (fault.kind not in FAULT_KINDS, f"kind: one of {FAULT_KINDS}"),
        (fault.when not in ("before", "after"), "when: before or after"),
        (fault.remaining is not None and fault.remaining < 1, "count: at least 1, or null"),
        (fault.delay_ms < 0, "delay_ms: not negative"),
        (fault.kind in ("timeout", "slow") and fault.delay_ms == 0, "delay_ms: needed"),
        (not 500 <= fault.http_status <= 599, "status: a 5xx"),
        (fault.then not in ("drop", "late"), "then: drop or late"),
    ]
    for wrong, message in problems:
        if wrong:
            raise AdminError(message)
    return fault


def _admin_routes(app: Flask, state: AppState) -> None:
    wallet, faults = state.wallet, state.faults

    @app.errorhandler(AdminError)
    def refused(error: AdminError) -> Response:
        return _json({"error": error.message}, error.http_status)

    @app.get("/_admin/health")
    def health() -> Response:
        return _json({"status": "ok"})

    @app.post("/_admin/reset")
    def reset() -> Response:
        wallet.reset()
        faults.clear()
        return _json({"status": "ok"})

    @app.post("/_admin/users")
    def add_user() -> Response:
        body = _admin_body()
        user = wallet.add_user(
            _get(body, "user", str), _get(body, "currency", str), **_user_changes(body)
        )
        return _json(user.view(), 201)

    @app.get("/_admin/users/<ref>")
    def user(ref: str) -> Response:
        return _json(wallet.user(ref).view())

    @app.patch("/_admin/users/<ref>")
    def update_user(ref: str) -> Response:
        return _json(wallet.update_user(ref, _user_changes(_admin_body())).view())

    @app.post("/_admin/tokens")
    def add_token() -> Response:
        body = _admin_body()
        token = wallet.add_token(_get(body, "user", str), _get(body, "token", str, None))
        return _json(token.view(), 201)

    @app.post("/_admin/tokens/<token>/expire")
    def expire_token(token: str) -> Response:
        return _json(wallet.expire_token(token).view())

    @app.get("/_admin/journal")
    def journal() -> Response:
        entries = wallet.entries(request.args.get("user"), request.args.get("transaction_uuid"))
        return _json({"entries": entries})

    @app.get("/_admin/transactions/<transaction_uuid>")
    def transaction(transaction_uuid: str) -> Response:
        return _json(wallet.transaction(transaction_uuid))

    @app.post("/_admin/faults")
    def add_fault() -> Response:
        return _json(faults.add(_fault(_admin_body())).view(), 201)

    @app.get("/_admin/faults")
    def list_faults() -> Response:
        outage = faults.outage()
        return _json(
            {
                "faults": [fault.view() for fault in faults.pending()],
                "outage": None
                if outage is None
                else {"mode": outage[0], "remaining_ms": int(outage[1] * 1000)},
            }
        )

    @app.delete("/_admin/faults")
    def clear_faults() -> Response:
        faults.clear()
        return _json({"status": "ok"})

    @app.post("/_admin/outage")
    def outage() -> Response:
        body = _admin_body()
        mode = _get(body, "mode", str, "503")
        duration_ms = _get(body, "duration_ms", int)
        if mode not in OUTAGE_MODES or duration_ms <= 0:
            raise AdminError(f"mode: one of {OUTAGE_MODES}; duration_ms: positive")
        if mode == "refuse" and state.listener is None:
            raise AdminError("a refusing outage needs the wallet served by WalletServer", 409)
        faults.start_outage(mode, duration_ms / 1000)
        if mode == "refuse":
            assert state.listener is not None
            state.listener.close_for(duration_ms / 1000)  # this answer still goes out after
        return _json({"mode": mode, "duration_ms": duration_ms})


# --- serving --------------------------------------------------------------------------------


class WalletServer:
    """The app on a TCP port, served by werkzeug's threaded server. For a refusing outage it
    closes its listening socket (connections are refused, as by a host that is down) and
    listens again on the same port when the outage ends."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self._server: BaseWSGIServer = make_server(host, port, app, threaded=True)
        self.port = self._server.server_port  # the one chosen, when asked for port 0
        self._stopped = threading.Event()
        self._closed = threading.Event()
        self._reopen_at = 0.0
        self._closing = threading.Lock()
        state_of(app).listener = self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        while True:
            # A short poll so that closing for an outage (and stopping) takes effect at once.
            self._server.serve_forever(poll_interval=0.05)
            self._server.server_close()
            if self._stopped.is_set():
                return
            self._closed.set()
            while not self._stopped.is_set() and time.monotonic() < self._reopen_at:
                time.sleep(0.01)
            if self._stopped.is_set():
                return
            self._server = make_server(self.host, self.port, self.app, threaded=True)

    def close_for(self, seconds: float) -> None:
        with self._closing:
            self._reopen_at = time.monotonic() + seconds
            self._closed.clear()
            self._server.shutdown()
            self._closed.wait()

    def stop(self) -> None:
        self._stopped.set()
        self._server.shutdown()


def serve(
    supplier_public_key: PublicKey,
    operator_private_key: PrivateKey,
    host: str = "127.0.0.1",
    port: int = 0,
) -> WalletServer:
    """A wallet bound to ``host``:``port`` (0: any free port), listening already; call its
    serve_forever to answer."""
    return WalletServer(create_app(supplier_public_key, operator_private_key), host, port)
