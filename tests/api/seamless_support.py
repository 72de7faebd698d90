"""A deployment in seamless mode for tests (issue 37): a database of its own, the services as
the web process and as the worker build them, pointed at a reference operator wallet running in
a process of its own over TCP (tests/wallet), and helpers to open its players on both sides.

Faults happen on the wire: the wallet injects them (POST /_admin/faults); nothing replaces the
server's wallet client. "Applied twice" and balances are judged from the wallet's own journal
against the server's records."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Container, build
from service.core.seamless import to_wire
from service.runtime.config import Settings
from tests.api.client import Http
from tests.dbtools import split_database
from tests.wallet.harness import RunningWallet, running_wallet

#: Short enough for quick faults (the issue's "about 300"), long enough that a loaded 2-core
#: machine's honest answer (a few ms, under load a few hundred) is never taken for a timeout.
TIMEOUT_MS = 500
#: "Just under the timeout" is at most 60% of it.
UNDER_TIMEOUT_MS = int(TIMEOUT_MS * 0.5)
CURRENCY = "GBP"
STAKE = 520  # £5.20


@dataclass
class SeamlessDeployment:
    wallet: RunningWallet
    web: Container
    worker: Container
    http: Http

    def settle(self) -> dict[str, int]:
        """One sweep of background work (what the worker's vegas.settle_wallet runs)."""
        done: dict[str, int] = {}
        for settled in self.worker.settle_wallet():
            done[settled.outcome] = done.get(settled.outcome, 0) + 1
        return done

    def drain(self, rounds: int = 40) -> None:
        """Sweep until nothing is due (retries waiting out their backoff included)."""
        import time

        for _ in range(rounds):
            with self.web.unit_of_work() as uow:
                left = uow.conn.execute(
                    "SELECT count(*) FROM wallet_transactions WHERE state IN ('due', 'sent')"
                ).fetchone()
            if left is not None and left[0] == 0:
                return
            self.settle()
            time.sleep(0.2)
        raise AssertionError("wallet transactions still unsettled after the drain")

    def fault(self, method: str, kind: str, **more: Any) -> None:
        self.wallet.admin("POST", "faults", {"method": method, "kind": kind, **more})


@dataclass
class SeamlessPlayer:
    id: str
    external_ref: str
    token: str  # the player's bearer session
    wallet_token: str  # the operator's game-session token

    def wire_balance(self, wallet: RunningWallet) -> int:
        balance: int = wallet.admin("GET", f"users/{self.external_ref}")["balance"]
        return balance


@contextmanager
def seamless_deployment(
    base: Settings, admin_server_url: str, folder: Path
) -> Iterator[SeamlessDeployment]:
    with running_wallet(folder / "wallet") as wallet, split_database(admin_server_url) as db:
        files = wallet.keys.write(folder / "keys")
        settings = replace(
            base,
            database_url=db.service_url,
            migration_database_url=db.owner_url,
            audit_database_url=db.audit_url,
            background_database_url=db.background_url,
            wallet_mode="seamless",
            wallet_url=wallet.url,
            wallet_signing_key_file=files.supplier_private,
            wallet_operator_key_files=(files.operator_public,),
            wallet_timeout_ms=TIMEOUT_MS,
            wallet_retry_max_seconds=0.5,
        )
        web = build(settings, migrate=False)
        worker = build(settings, migrate=False, background=True)
        try:
            keys = {
                role: web.access.create_key(f"seamless-{role}", role)
                for role in ("operator", "auditor", "finance")
            }
            app = create_app(web)
            app.config["TESTING"] = True
            client: FlaskClient = app.test_client()
            http = Http(client, keys["operator"], keys["auditor"], keys["finance"])
            yield SeamlessDeployment(wallet, web, worker, http)
        finally:
            worker.close()
            web.close()


def open_player(
    deployment: SeamlessDeployment, balance: int, currency: str = CURRENCY
) -> SeamlessPlayer:
    """A player known to both: the operator's wallet holds ``balance`` (minor units) for them
    and gave a game-session token, with which the server's session is opened."""
    http = deployment.http
    ref = f"casino-{uuid.uuid4()}"
    deployment.wallet.admin(
        "POST", "users", {"user": ref, "currency": currency, "balance": to_wire(balance, currency)}
    )
    wallet_token = deployment.wallet.admin("POST", "tokens", {"user": ref})["token"]
    opened = http.post(
        "/v1/players", http.operator_key, json={"external_ref": ref, "currency": currency}
    )
    assert opened.status_code == 201, opened.get_json()
    player_id = opened.get_json()["id"]
    session = http.post(
        f"/v1/players/{player_id}/sessions",
        http.operator_key,
        json={"wallet_token": wallet_token},
    )
    assert session.status_code == 201, session.get_json()
    return SeamlessPlayer(player_id, ref, session.get_json()["token"], wallet_token)
