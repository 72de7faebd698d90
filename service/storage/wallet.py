"""The seamless wallet's SQL (migrations/0044): a round's wallet transactions (the worker's queue
and finance's wallet CSV), every call and answer as on the wire, the mode and the operator's
session tokens. service/services/seamless.py holds what they mean; the events on the round's
wallet stream and the ledger are the record, these rows the work still to do."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

# The mode the deployment is in, switched to p_mode if it differs and nothing of the old mode is
# left (the function refuses otherwise, naming what is left).
SWITCH_MODE_SQL = "SELECT switch_wallet_mode(%(mode)s)"

# The operator's token a player session was opened with.
ADD_SESSION_SQL = """
INSERT INTO wallet_sessions (token_hash, player_id, wallet_token)
VALUES (%(token_hash)s, %(player_id)s, %(wallet_token)s)
"""
SESSION_TOKEN_SQL = "SELECT wallet_token FROM wallet_sessions WHERE token_hash = %(token_hash)s"
# The token of the player's latest session opened with one (a staff's read of their balance).
LATEST_TOKEN_SQL = """
SELECT wallet_token FROM wallet_sessions WHERE player_id = %(player_id)s
 ORDER BY created_at DESC LIMIT 1
"""

# A movement to make: a bet as it is sent (state 'sent', leased to its sender until its answer
# is due), a win or a rollback as it falls due (state 'due', for the worker).
ADD_SQL = """
INSERT INTO wallet_transactions (transaction_uuid, round_id, player_id, external_ref, method,
                                 reference, amount, wire_amount, currency, game_code, duel_id,
                                 token, state, leased_until)
VALUES (%(transaction_uuid)s, %(round_id)s, %(player_id)s, %(external_ref)s, %(method)s,
        %(reference)s, %(amount)s, %(wire_amount)s, %(currency)s, %(game_code)s, %(duel_id)s,
        %(token)s, %(state)s, statement_timestamp() + %(lease)s::interval)
"""

# A round's win or rollback falls due, for its bet's player, token and currency (a rollback of
# the bet's amount; a win of %(amount)s), in the transaction that collects or voids the game.
# Once only: a second falling due of the same movement changes nothing.
ADD_DUE_SQL = """
INSERT INTO wallet_transactions (transaction_uuid, round_id, player_id, external_ref, method,
                                 reference, amount, wire_amount, currency, game_code, duel_id,
                                 token, state)
SELECT %(transaction_uuid)s, b.round_id, b.player_id, b.external_ref, %(method)s,
       b.transaction_uuid, coalesce(%(amount)s::bigint, b.amount),
       coalesce(%(wire_amount)s::bigint, b.wire_amount), b.currency, b.game_code, b.duel_id,
       b.token, 'due'
  FROM wallet_transactions b
 WHERE b.transaction_uuid = %(bet)s
ON CONFLICT (transaction_uuid) DO NOTHING
"""

COLUMNS = """transaction_uuid, round_id, player_id, external_ref, method, reference, amount,
       wire_amount, currency, game_code, duel_id, token, state, attempts, created_at, first_sent_at,
       resumed_at,
       next_attempt_at, leased_until, lease_owner, final_at, last_status, review_reason,
       flagged_seconds"""

# Take up to %(limit)s movements due (or whose sender's lease ran out: a crash mid-call) for one
# sender each: the lease keeps any other off it until it has answered or the lease runs out, and
# no row lock is held while the call is on the wire.
CLAIM_SQL = f"""
UPDATE wallet_transactions t
   SET state = 'sent', leased_until = statement_timestamp() + %(lease)s::interval,
       lease_owner = gen_random_uuid()
 WHERE t.transaction_uuid IN (
       SELECT w.transaction_uuid FROM wallet_transactions w
        WHERE w.state IN ('due', 'sent') AND w.next_attempt_at <= statement_timestamp()
          AND (w.leased_until IS NULL OR w.leased_until < statement_timestamp())
          AND (%(transaction_uuid)s::uuid IS NULL
               OR w.transaction_uuid = %(transaction_uuid)s::uuid)
        ORDER BY w.next_attempt_at
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED)
RETURNING {COLUMNS.replace("transaction_uuid,", "t.transaction_uuid,", 1)}
"""

# The lease renewed by its holder just before the call goes on the wire (so it covers the call
# whatever the checks before it took); nothing if another sweep holds it now.
EXTEND_SQL = """
UPDATE wallet_transactions
   SET leased_until = statement_timestamp() + %(lease)s::interval
 WHERE transaction_uuid = %(transaction_uuid)s AND lease_owner = %(owner)s AND state = 'sent'
RETURNING transaction_uuid
"""

# The call about to go on the wire, exactly as it will (its answer is added by ANSWER_CALL_SQL).
ADD_CALL_SQL = """
INSERT INTO wallet_calls (request_uuid, transaction_uuid, request_body, request_signature)
VALUES (%(request_uuid)s, %(transaction_uuid)s, %(body)s, %(signature)s)
"""
ANSWER_CALL_SQL = """
UPDATE wallet_calls
   SET answered_at = statement_timestamp(), http_status = %(http_status)s,
       answer_body = %(answer_body)s, answer_signature = %(answer_signature)s,
       status = %(status)s, outcome = %(outcome)s, problem = %(problem)s
 WHERE request_uuid = %(request_uuid)s
"""

# A call sent: one more attempt (the first sets first_sent_at).
SENT_SQL = """
UPDATE wallet_transactions
   SET attempts = attempts + 1, first_sent_at = coalesce(first_sent_at, statement_timestamp())
 WHERE transaction_uuid = %(transaction_uuid)s
"""

# What the answer settled (confirmed, refused, review: final) or left open (due again at
# %(next_attempt_at)s, the lease released).
SETTLE_SQL = """
UPDATE wallet_transactions
   SET state = %(state)s, last_status = %(status)s, leased_until = NULL,
       next_attempt_at = coalesce(%(next_attempt_at)s, next_attempt_at),
       final_at = CASE WHEN %(state)s IN ('confirmed', 'refused', 'unknown', 'review')
                       THEN statement_timestamp() END,
       review_reason = coalesce(%(review_reason)s, review_reason)
 WHERE transaction_uuid = %(transaction_uuid)s
"""

# An operator sent a movement under review again: due now, its thresholds counted afresh.
RESUME_SQL = """
UPDATE wallet_transactions
   SET state = 'due', next_attempt_at = statement_timestamp(), leased_until = NULL,
       resumed_at = statement_timestamp(), flagged_seconds = 0, final_at = NULL
 WHERE transaction_uuid = %(transaction_uuid)s AND state = 'review'
"""

FLAGGED_SQL = """
UPDATE wallet_transactions SET flagged_seconds = %(seconds)s
 WHERE transaction_uuid = %(transaction_uuid)s
"""

# The player's movement still to settle, if any (at most one: the unique index).
UNSETTLED_SQL = f"""
SELECT {COLUMNS} FROM wallet_transactions
 WHERE player_id = %(player_id)s AND state IN ('due', 'sent')
"""

ONE_SQL = f"SELECT {COLUMNS} FROM wallet_transactions WHERE transaction_uuid = %(id)s"

# A round's movements, in the order they were made.
ROUND_SQL = f"""
SELECT {COLUMNS} FROM wallet_transactions WHERE round_id = %(round_id)s
 ORDER BY created_at, method
"""

# Every movement made on a day (UTC), for finance's wallet CSV: by when it was made.
DAY_SQL = f"""
SELECT {COLUMNS} FROM wallet_transactions
 WHERE created_at >= %(day)s::date AND created_at < %(day)s::date + 1
 ORDER BY created_at, transaction_uuid
"""

# Movements under review, oldest first.
UNDER_REVIEW_SQL = f"""
SELECT {COLUMNS} FROM wallet_transactions WHERE state = 'review'
 ORDER BY created_at LIMIT %(limit)s
"""

# What remains open or under review (the daily report's liability), in minor units a currency.
OUTSTANDING_SQL = """
SELECT currency, method, state, count(*), coalesce(sum(amount), 0)
  FROM wallet_transactions
 WHERE state IN ('due', 'sent', 'review')
 GROUP BY currency, method, state
 ORDER BY currency, method, state
"""

# A duel's seat rounds' bets the wallet confirmed (a settlement's wins, a cancellation's
# rollbacks fall due for them).
SEAT_BETS_SQL = f"""
SELECT {COLUMNS} FROM wallet_transactions
 WHERE duel_id = %(duel_id)s AND method = 'bet' AND state = 'confirmed'
 ORDER BY created_at
"""

# A call's kept answer, for the audit's signature check.
CALLS_SQL = """
SELECT request_uuid, transaction_uuid, sent_at, request_body, request_signature, answered_at,
       http_status, answer_body, answer_signature, status, outcome, problem
  FROM wallet_calls
 WHERE transaction_uuid = ANY(%(ids)s::uuid[])
 ORDER BY sent_at
"""


@dataclass(frozen=True, slots=True)
class WalletTransaction:
    transaction_uuid: uuid.UUID
    round_id: uuid.UUID
    player_id: uuid.UUID
    external_ref: str
    method: str
    reference: uuid.UUID | None
    amount: int
    wire_amount: int
    currency: str
    game_code: str
    duel_id: uuid.UUID | None
    token: str
    state: str
    attempts: int
    created_at: datetime
    first_sent_at: datetime | None
    resumed_at: datetime | None
    next_attempt_at: datetime
    leased_until: datetime | None
    lease_owner: uuid.UUID | None
    final_at: datetime | None
    last_status: str | None
    review_reason: str | None
    flagged_seconds: int


@dataclass(frozen=True, slots=True)
class WalletCall:
    request_uuid: uuid.UUID
    transaction_uuid: uuid.UUID
    sent_at: datetime
    request_body: bytes
    request_signature: str
    answered_at: datetime | None
    http_status: int | None
    answer_body: bytes | None
    answer_signature: str | None
    status: str | None
    outcome: str | None
    problem: str | None


class WalletStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def switch_mode(self, mode: str) -> str:
        row = self._conn.execute(SWITCH_MODE_SQL, {"mode": mode}).fetchone()
        assert row is not None
        return str(row[0])

    def add_session(self, token_hash: str, player_id: uuid.UUID, wallet_token: str) -> None:
        self._conn.execute(
            ADD_SESSION_SQL,
            {"token_hash": token_hash, "player_id": player_id, "wallet_token": wallet_token},
        )

    def session_token(self, token_hash: str) -> str | None:
        row = self._conn.execute(SESSION_TOKEN_SQL, {"token_hash": token_hash}).fetchone()
        return None if row is None else str(row[0])

    def latest_token(self, player_id: uuid.UUID) -> str | None:
        row = self._conn.execute(LATEST_TOKEN_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else str(row[0])

    def add(self, **row: Any) -> None:
        self._conn.execute(ADD_SQL, row)

    def add_due(self, **row: Any) -> None:
        """(No fetch: it may run in a pipeline.)"""
        self._conn.execute(ADD_DUE_SQL, row)

    def claim(
        self, lease_ms: int, limit: int, transaction_uuid: uuid.UUID | None = None
    ) -> list[WalletTransaction]:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(
                CLAIM_SQL,
                {
                    "lease": f"{lease_ms} milliseconds",
                    "limit": limit,
                    "transaction_uuid": transaction_uuid,
                },
            )
            return cur.fetchall()

    def extend(self, transaction_uuid: uuid.UUID, owner: uuid.UUID | None, lease_ms: int) -> bool:
        """Whether the lease was still ``owner``'s (then renewed for ``lease_ms``)."""
        row = self._conn.execute(
            EXTEND_SQL,
            {
                "transaction_uuid": transaction_uuid,
                "owner": owner,
                "lease": f"{lease_ms} milliseconds",
            },
        ).fetchone()
        return row is not None

    def add_call(
        self, request_uuid: str, transaction_uuid: uuid.UUID, body: bytes, signature: str
    ) -> None:
        self._conn.execute(
            ADD_CALL_SQL,
            {
                "request_uuid": request_uuid,
                "transaction_uuid": transaction_uuid,
                "body": body,
                "signature": signature,
            },
        )
        self._conn.execute(SENT_SQL, {"transaction_uuid": transaction_uuid})

    def answer_call(self, **answer: Any) -> None:
        self._conn.execute(ANSWER_CALL_SQL, answer)

    def settle(
        self,
        transaction_uuid: uuid.UUID,
        state: str,
        status: str | None,
        next_attempt_at: datetime | None = None,
        review_reason: str | None = None,
    ) -> None:
        self._conn.execute(
            SETTLE_SQL,
            {
                "transaction_uuid": transaction_uuid,
                "state": state,
                "status": status,
                "next_attempt_at": next_attempt_at,
                "review_reason": review_reason,
            },
        )

    def resume(self, transaction_uuid: uuid.UUID) -> None:
        self._conn.execute(RESUME_SQL, {"transaction_uuid": transaction_uuid})

    def flagged(self, transaction_uuid: uuid.UUID, seconds: int) -> None:
        self._conn.execute(FLAGGED_SQL, {"transaction_uuid": transaction_uuid, "seconds": seconds})

    def unsettled(self, player_id: uuid.UUID) -> WalletTransaction | None:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(UNSETTLED_SQL, {"player_id": player_id})
            return cur.fetchone()

    def one(self, transaction_uuid: uuid.UUID) -> WalletTransaction | None:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(ONE_SQL, {"id": transaction_uuid})
            return cur.fetchone()

    def of_round(self, round_id: uuid.UUID) -> list[WalletTransaction]:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(ROUND_SQL, {"round_id": round_id})
            return cur.fetchall()

    def of_day(self, day: date) -> list[WalletTransaction]:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(DAY_SQL, {"day": day})
            return cur.fetchall()

    def under_review(self, limit: int) -> list[WalletTransaction]:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(UNDER_REVIEW_SQL, {"limit": limit})
            return cur.fetchall()

    def outstanding(self) -> list[tuple[str, str, str, int, int]]:
        return [
            (str(c), str(m), str(s), int(n), int(a))
            for c, m, s, n, a in self._conn.execute(OUTSTANDING_SQL).fetchall()
        ]

    def seat_bets(self, duel_id: uuid.UUID) -> list[WalletTransaction]:
        with self._conn.cursor(row_factory=class_row(WalletTransaction)) as cur:
            cur.execute(SEAT_BETS_SQL, {"duel_id": duel_id})
            return cur.fetchall()

    def calls(self, transaction_uuids: list[uuid.UUID]) -> list[WalletCall]:
        with self._conn.cursor(row_factory=class_row(WalletCall)) as cur:
            cur.execute(CALLS_SQL, {"ids": transaction_uuids})
            return cur.fetchall()
