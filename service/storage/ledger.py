"""The ledger's SQL: accounts, posting a transaction exactly once, balances and statements."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from service.core.ledger import (
    Account,
    Entry,
    InsufficientFunds,
    TransactionIdReused,
    opened_on_use,
)
from service.errors import IntegrityBreach, WithdrawalUnverified

# Open accounts (and their zero balances) that do not exist yet (migrations/0016: the service
# writes the ledger only through these functions).
ENSURE_ACCOUNTS_SQL = """
SELECT open_accounts(%(ids)s::text[], %(kinds)s::text[], %(currencies)s::text[],
                     %(players)s::uuid[])
"""

# A transaction already posted under this client transaction id, if any.
FIND_SQL = """
SELECT transaction_id, fingerprint, kind, currency, amount, cause_stream, cause_version,
       created_at
  FROM ledger_transactions
 WHERE client_transaction_id = %(client_transaction_id)s
"""

# Post one transaction in one statement (migrations/0016, post_transaction): move each balance
# (a player's only if it stays at or above zero), record the transaction, and record each
# posting with the balance before and after. A player posting that would overdraw is left out
# of what it returns; the caller sees fewer postings than asked for and rolls the whole
# transaction back. A balance its postings do not explain is refused (an integrity breach).
POST_SQL = """
SELECT posting_id, account_id, amount, balance_before, balance_after, created_at
  FROM post_transaction(%(transaction_id)s, %(client_transaction_id)s, %(kind)s,
                        %(fingerprint)s, %(currency)s, %(amount)s, %(cause_stream)s,
                        %(cause_version)s, %(request_id)s, %(accounts)s::text[],
                        %(amounts)s::bigint[])
"""

#: What post_transaction raises for a balance its postings do not explain (the bare class of
#: integrity_constraint_violation; a CHECK or a unique key raise a subclass).
DRIFTED = "23000"
#: The hint of the withdrawal gate's refusal (migrations/0037 refuse_unverified_withdrawal).
UNVERIFIED = "unverified"

# One account's balance.
BALANCE_SQL = "SELECT balance FROM account_balances WHERE account_id = %(account_id)s"

# An account's postings, newest first, one page after a cursor (a posting id).
STATEMENT_SQL = """
SELECT p.posting_id, p.transaction_id, t.kind, p.amount, p.balance_before, p.balance_after,
       p.cause_stream, p.cause_version, t.client_transaction_id, p.created_at
  FROM postings p
  JOIN ledger_transactions t USING (transaction_id)
 WHERE p.account_id = %(account_id)s
   AND (%(before)s::bigint IS NULL OR p.posting_id < %(before)s::bigint)
 ORDER BY p.posting_id DESC
 LIMIT %(limit)s
"""

# The postings of one transaction.
TRANSACTION_POSTINGS_SQL = """
SELECT posting_id, account_id, amount, balance_before, balance_after, created_at
  FROM postings
 WHERE transaction_id = %(transaction_id)s
 ORDER BY posting_id
"""


@dataclass(frozen=True, slots=True)
class Posting:
    posting_id: int
    account_id: str
    amount: int
    balance_before: int
    balance_after: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Posted:
    """A posted ledger transaction; ``replayed`` when an earlier post under the same id is
    being returned instead of posting again."""

    transaction_id: uuid.UUID
    client_transaction_id: str
    kind: str
    currency: str
    amount: int
    cause_stream: str
    cause_version: int
    created_at: datetime
    postings: tuple[Posting, ...]
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class StatementLine:
    posting_id: int
    transaction_id: uuid.UUID
    kind: str
    amount: int
    balance_before: int
    balance_after: int
    cause_stream: str
    cause_version: int
    client_transaction_id: str
    created_at: datetime


class LedgerStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def ensure_accounts(self, accounts: Iterable[Account]) -> None:
        accounts = list(accounts)
        with self._conn.cursor() as cur:
            cur.execute(
                ENSURE_ACCOUNTS_SQL,
                {
                    "ids": [a.account_id for a in accounts],
                    "kinds": [a.kind for a in accounts],
                    "currencies": [a.currency for a in accounts],
                    "players": [a.player_id for a in accounts],
                },
            )

    def find(self, entry: Entry) -> Posted | None:
        """The transaction already posted under this entry's id; refuses one that differs."""
        found = self.posted(entry.client_transaction_id)
        if found is None:
            return None
        posted, fingerprint = found
        if fingerprint != entry.fingerprint:
            raise TransactionIdReused(entry.client_transaction_id)
        return posted

    def posted(self, client_transaction_id: str) -> tuple[Posted, str] | None:
        """A posted transaction by its client transaction id, with its fingerprint."""
        with self._conn.cursor() as cur:
            cur.execute(FIND_SQL, {"client_transaction_id": client_transaction_id})
            row = cur.fetchone()
            if row is None:
                return None
            tx_id, fingerprint, kind, currency, amount, stream, version, created_at = row
            cur.execute(TRANSACTION_POSTINGS_SQL, {"transaction_id": tx_id})
            postings = tuple(Posting(*r) for r in cur.fetchall())
        posted = Posted(
            tx_id,
            client_transaction_id,
            kind,
            currency,
            amount,
            stream,
            version,
            created_at,
            postings,
            replayed=True,
        )
        return posted, fingerprint

    def post(self, entry: Entry, request_id: str | None = None) -> Posted:
        """Post ``entry`` once. The same id again with the same content returns the first post;
        with other content it is refused (TransactionIdReused)."""
        earlier = self.find(entry)
        if earlier is not None:
            return earlier
        fresh = [account for account, _ in entry.postings if opened_on_use(account)]
        if fresh:
            self.ensure_accounts(fresh)
        transaction_id = uuid.uuid4()
        params = {
            "accounts": [a.account_id for a, _ in entry.postings],
            "amounts": [amount for _, amount in entry.postings],
            "transaction_id": transaction_id,
            "client_transaction_id": entry.client_transaction_id,
            "kind": entry.kind,
            "fingerprint": entry.fingerprint,
            "currency": entry.currency,
            "amount": entry.amount,
            "cause_stream": entry.cause_stream,
            "cause_version": entry.cause_version,
            "request_id": request_id,
        }
        with self._conn.cursor() as cur:
            try:
                cur.execute(POST_SQL, params)
            except psycopg.errors.IntegrityConstraintViolation as exc:
                if exc.sqlstate == DRIFTED:
                    raise IntegrityBreach(str(exc.diag.message_primary)) from exc
                raise
            except psycopg.errors.CheckViolation as exc:
                if exc.diag.message_hint == UNVERIFIED:
                    raise WithdrawalUnverified(str(exc.diag.message_primary)) from exc
                raise
            postings = tuple(Posting(*r) for r in cur.fetchall())
        if len(postings) != len(entry.postings):
            short = next(a for a, amount in entry.postings if amount < 0)
            raise InsufficientFunds(short.account_id, entry.amount)
        return Posted(
            transaction_id,
            entry.client_transaction_id,
            entry.kind,
            entry.currency,
            entry.amount,
            entry.cause_stream,
            entry.cause_version,
            postings[0].created_at,
            postings,
        )

    def balance(self, account_id: str) -> int | None:
        with self._conn.cursor() as cur:
            cur.execute(BALANCE_SQL, {"account_id": account_id})
            row = cur.fetchone()
            return int(row[0]) if row else None

    def statement(
        self, account_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[StatementLine]:
        with self._conn.cursor() as cur:
            cur.execute(STATEMENT_SQL, {"account_id": account_id, "before": before, "limit": limit})
            return [StatementLine(*r) for r in cur.fetchall()]
