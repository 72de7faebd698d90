"""The seamless wallet's protocol, as far as it is arithmetic and meaning (issue 37): pure.

In seamless mode the operator's own wallet holds the players' money and the server calls it in
the shape of Hub88's wallet API (the supplier calling the operator): a bet when a round is
dealt, a win when it is collected (0 too), a rollback of a bet whose outcome is unknown or whose
round is voided. This module says what the wire's amounts are in the ledger's minor units and
back, which currencies can be spoken at all, and what each answer's status means for the
movement it answers; the HTTP client, the retries and the record live in the shell.

Amounts on the wire are integers in 1/100,000 of the currency unit (GBP 5.20 = 520000); the
ledger's are in the currency's minor unit (ISO 4217's exponent: GBP 2, JPY 0, KWD 3), so a
minor unit is 10^(5 - exponent) wire units. A currency whose minor unit is finer than the
wire's (an exponent above 5), or that ISO 4217 gives no minor unit (the test code XTS, gold),
cannot be converted without losing a unit and is refused before the mode starts.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Literal

from iso4217 import Currency

#: Wire units per currency unit.
WIRE_EXPONENT = 5
WIRE_UNITS = 10**WIRE_EXPONENT


class Status(StrEnum):
    """An answer's ``status``, as Hub88's wallet API names them."""

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


class UnconvertibleCurrency(ValueError):
    """A currency the wire cannot carry exactly (or ISO 4217 does not list)."""


Method = Literal["bet", "win", "rollback"]
#: What an answer means for the movement it answers:
#: - ``confirmed``: the wallet applied it (or, for a rollback, holds no such bet: nothing to undo);
#: - ``refused``: definitely not applied, and never will be (a bet only: the round ends owing
#:   nothing);
#: - ``unknown``: it may or may not have been applied (a timeout, a 5xx, an unreadable or
#:   unverified answer, RS_ERROR_UNKNOWN): a bet is then rolled back, a win or rollback re-sent
#:   under the same transaction_uuid;
#: - ``review``: the wallet contradicts what the server recorded (a duplicate of an id it sent
#:   once, a win for a bet the wallet does not hold or rolled back): a person settles it.
Outcome = Literal["confirmed", "refused", "unknown", "review"]

#: A bet's definite refusals: the player's account does not allow it now.
BET_REFUSALS = frozenset(
    {
        Status.NOT_ENOUGH_MONEY,
        Status.LIMIT_REACHED,
        Status.USER_DISABLED,
        Status.WRONG_CURRENCY,
        Status.INVALID_TOKEN,
        Status.TOKEN_EXPIRED,
    }
)


def exponent(currency: str) -> int:
    """The currency's minor-unit exponent (ISO 4217), or UnconvertibleCurrency."""
    try:
        found = Currency(currency.upper()).exponent
    except ValueError:
        raise UnconvertibleCurrency(f"{currency!r} is not an ISO 4217 currency") from None
    if found is None:
        raise UnconvertibleCurrency(f"{currency} has no minor unit in ISO 4217")
    if found > WIRE_EXPONENT:
        raise UnconvertibleCurrency(
            f"{currency}'s minor unit (10^-{found}) is finer than the wallet's (10^-5)"
        )
    return int(found)


def to_wire(minor: int, currency: str) -> int:
    """Minor units as the wallet's amount (exact: every minor unit is a whole wire amount)."""
    per_minor: int = 10 ** (WIRE_EXPONENT - exponent(currency))
    return minor * per_minor


def from_wire(amount: int, currency: str) -> int:
    """The wallet's amount in minor units; ValueError if it is not a whole number of them (a
    balance the ledger cannot hold is not rounded)."""
    per_minor: int = 10 ** (WIRE_EXPONENT - exponent(currency))
    minor, rest = divmod(amount, per_minor)
    if rest:
        raise ValueError(f"{amount} is not a whole number of {currency} minor units")
    return minor


def outcome(method: Method, status: str, *, bet_confirmed: bool = False) -> Outcome:
    """What the answer ``status`` to a ``method`` means for its movement (a status the
    protocol does not name is an unknown outcome: nothing is assumed applied or not).
    ``bet_confirmed``: a rollback's bet was confirmed (a void's), so the wallet must hold it."""
    try:
        known = Status(status)
    except ValueError:
        return "unknown"
    if known is Status.OK:
        return "confirmed"
    if known is Status.UNKNOWN:
        return "unknown"
    if known is Status.DUPLICATE_TRANSACTION:
        return "review"  # an id the server sent once, with one content, said to clash
    if method == "bet":
        # Every other error on a bet is a definite refusal (issue 37's clarifications).
        return "refused"
    if method == "rollback" and known is Status.TRANSACTION_DOES_NOT_EXIST:
        # A bet of unknown outcome was never applied: nothing is owed either way. A confirmed
        # bet the wallet no longer holds contradicts its own answer.
        return "review" if bet_confirmed else "confirmed"
    if method == "rollback" and known is Status.TRANSACTION_ROLLED_BACK:
        return "confirmed"  # already rolled back (a retry of one that was applied)
    if known is Status.INVALID_SIGNATURE:
        return "unknown"  # our key as the wallet knows it (a rotation): re-sent until it heals
    # A win for a bet the wallet does not hold or rolled back, a rollback of a bet it will
    # not undo (it has a win), an account refusal of money already owed: a person settles it.
    return "review"


#: The namespace of the movements' ids: a round's bet, win and rollback each have one id, made
#: from the round's (the same on every retry, and the same whoever sends it).
MOVEMENT_NAMESPACE = uuid.UUID("6f1d3c52-2a4e-4b8e-9a57-3d0c1b7e5a11")


def transaction_id(round_id: str, method: Method) -> str:
    """The ``transaction_uuid`` of a round's ``method`` (a round has one bet, at most one win
    and at most one rollback)."""
    return str(uuid.uuid5(MOVEMENT_NAMESPACE, f"{method}:{round_id}"))


def retry_delay(attempts: int, cap_seconds: float, base_seconds: float = 0.25) -> float:
    """How long after its ``attempts``-th call a win or rollback is sent again: doubling from
    ``base_seconds``, never more than ``cap_seconds``."""
    return float(min(cap_seconds, base_seconds * 2 ** max(0, attempts - 1)))


def payout_status(state: str | None) -> str:
    """A collected game's ``payout_status`` from its win's state: ``credited`` once the
    operator's wallet confirmed it (or with no win to send: transfer mode, certification),
    ``review`` when a person settles it, else ``pending``."""
    if state is None or state == "confirmed":
        return "credited"
    if state == "review":
        return "review"
    return "pending"
