"""Looking at the books, over HTTP and behind the service's back: a player's wallets and
statements (the real one, and the sandbox one certification games are played for), account
balances, the ledger's sums per currency, and an audit run to the end by a worker."""

from __future__ import annotations

import itertools
from typing import Any, Literal

import psycopg

from service.runtime.config import Settings
from tests.api.client import Http
from tests.api.factories import Player
from tests.workers import logs, wait_for

DbConn = psycopg.Connection[tuple[Any, ...]]
WalletKind = Literal["real", "sandbox"]

#: The house's real accounts in the players' currency: no certification game may move them.
REAL_HOUSE = ("house-stakes:GBP", "house-payouts:GBP", "cashier:GBP", "house-rake:GBP")
#: The sandbox's house accounts (ISO 4217's testing currency).
SANDBOX_HOUSE = ("house-stakes:XTS", "house-payouts:XTS", "house-rake:XTS")


def wallet(http: Http, player: Player) -> dict[str, Any]:
    response = http.get(f"/v1/players/{player.id}/wallet", player.token)
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def balance(http: Http, player: Player) -> int:
    """The player's real balance."""
    found: int = wallet(http, player)["balance"]
    return found


def sandbox_balance(http: Http, player: Player) -> int:
    """The player's sandbox balance: the net of their certification games."""
    found: int = wallet(http, player)["sandbox"]["balance"]
    return found


def statement(
    http: Http, player: Player, kind: WalletKind = "real"
) -> list[tuple[str, int, str | None]]:
    """A wallet's ledger lines, newest first, as (kind, amount, cause stream of a game's or a
    duel's line), after checking that every line's balances follow on from the one below."""
    path = f"/v1/players/{player.id}/ledger?limit=100&wallet={kind}"
    response = http.get(path, player.token)
    assert response.status_code == 200, response.get_json()
    lines: list[dict[str, Any]] = response.get_json()["items"]
    for line, below in itertools.pairwise(lines):
        assert line["balance_before"] == below["balance_after"]
    for line in lines:
        assert line["balance_after"] == line["balance_before"] + line["amount"]
    return [
        (
            line["kind"],
            line["amount"],
            None if line["kind"] in ("deposit", "withdrawal") else line["cause_stream"],
        )
        for line in lines
    ]


def account_balances(conn: DbConn, *accounts: str) -> dict[str, int | None]:
    """Each account's balance (None: not opened)."""
    rows = conn.execute(
        "SELECT account_id, balance FROM account_balances WHERE account_id = ANY(%s)",
        (list(accounts),),
    ).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    return {a: found.get(a) for a in accounts}


def sums_by_currency(conn: DbConn) -> dict[str, int]:
    """Every posting ever made, summed per transaction currency."""
    rows = conn.execute(
        "SELECT t.currency, sum(p.amount) FROM postings p JOIN ledger_transactions t"
        " USING (transaction_id) GROUP BY t.currency"
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def stream_transactions(conn: DbConn, stream: str) -> list[tuple[str, str, dict[str, int]]]:
    """The ledger transactions a game's or a duel's events caused, in order: (kind, currency,
    {account: amount}), each account checked to be in its transaction's currency."""
    rows = conn.execute(
        "SELECT t.kind, t.transaction_id, t.currency, a.currency, p.account_id, p.amount"
        "  FROM ledger_transactions t JOIN postings p USING (transaction_id)"
        "  JOIN accounts a USING (account_id)"
        " WHERE t.cause_stream = %s ORDER BY t.cause_version, p.posting_id",
        (stream,),
    ).fetchall()
    assert all(r[2] == r[3] for r in rows), rows
    return [
        (str(kind), str(currency), {str(r[4]): int(r[5]) for r in postings})
        for (kind, _, currency), postings in itertools.groupby(rows, key=lambda r: r[:3])
    ]


def audit_done(http: Http, location: str, worker: Settings) -> dict[str, Any]:
    """An audit started over HTTP, once its worker has checked every unit."""

    def done() -> bool:
        answer = http.get(location, http.auditor_key)
        assert answer.status_code == 200, answer.get_json()
        return bool(answer.get_json()["status"] == "done")

    assert wait_for(done, timeout=60, every=0.1), logs(worker)
    body: dict[str, Any] = http.get(location, http.auditor_key).get_json()
    return body
