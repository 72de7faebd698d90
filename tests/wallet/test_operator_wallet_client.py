"""The server's wallet client (service/gateways/operator_wallet.py) against the reference wallet
in a process of its own, over TCP: what each answer and each fault on the wire means for the
movement. No test replaces the client: faults happen on the wire, and whether a movement was
applied is read from the wallet's own journal."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service.gateways.operator_wallet import Exchange, OperatorWallet, verified
from tests.wallet.harness import RunningWallet, running_wallet
from tests.wallet.keys import generate_private_key

UNIT = 100_000
TIMEOUT_MS = 300


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWallet]:
    with running_wallet(tmp_path_factory.mktemp("client-wallet")) as running:
        yield running


@pytest.fixture(autouse=True)
def _faults_cleared(wallet: RunningWallet) -> Iterator[None]:
    yield
    wallet.admin("DELETE", "faults")


@pytest.fixture
def client(wallet: RunningWallet) -> Iterator[OperatorWallet]:
    found = OperatorWallet(
        wallet.url, wallet.keys.supplier, [wallet.keys.operator.public_key()], TIMEOUT_MS
    )
    yield found
    found.close()


@pytest.fixture
def player(wallet: RunningWallet) -> dict[str, str]:
    user = f"player-{uuid.uuid4().hex[:12]}"
    wallet.admin("POST", "users", {"user": user, "currency": "GBP", "balance": 100 * UNIT})
    token = wallet.admin("POST", "tokens", {"user": user})["token"]
    return {"user": user, "token": token, "currency": "GBP"}


def _bet(player: dict[str, str], amount: int = 5 * UNIT) -> dict[str, Any]:
    return {
        **player,
        "transaction_uuid": str(uuid.uuid4()),
        "round": str(uuid.uuid4()),
        "round_closed": False,
        "game_code": "vegas-draw3",
        "amount": amount,
    }


def _applied(wallet: RunningWallet, fields: dict[str, Any]) -> bool:
    return bool(wallet.journal(transaction_uuid=fields["transaction_uuid"]))


def test_a_confirmed_bet_is_kept_exactly_as_sent_and_answered(
    wallet: RunningWallet, client: OperatorWallet, player: dict[str, str]
) -> None:
    fields = _bet(player)
    sent = client.call("bet", fields)
    assert (sent.outcome, sent.status, sent.balance) == ("confirmed", "RS_OK", 95 * UNIT)
    assert _applied(wallet, fields)
    # The record: the exact bytes signed, a request_uuid of its own, the operator's signature.
    assert verified([wallet.keys.supplier.public_key()], sent.request_body, sent.request_signature)
    assert sent.answer_body is not None
    assert verified([wallet.keys.operator.public_key()], sent.answer_body, sent.answer_signature)
    again = client.call("bet", fields)  # a retry: the same transaction, a new HTTP call
    assert again.request_uuid != sent.request_uuid
    assert again.outcome == "confirmed"
    assert len(wallet.journal(transaction_uuid=fields["transaction_uuid"])) == 1


def test_a_refused_bet_is_definite_and_applies_nothing(
    wallet: RunningWallet, client: OperatorWallet, player: dict[str, str]
) -> None:
    fields = _bet(player, amount=500 * UNIT)
    sent = client.call("bet", fields)
    assert (sent.outcome, sent.status) == ("refused", "RS_ERROR_NOT_ENOUGH_MONEY")
    assert not _applied(wallet, fields)


@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        ({"kind": "timeout", "delay_ms": 600}, "no answer within the timeout"),
        ({"kind": "error", "status": 502}, "HTTP 502"),
        ({"kind": "not_json"}, "the answer's signature does not verify"),
        ({"kind": "bad_signature"}, "the answer's signature does not verify"),
        ({"kind": "slow", "delay_ms": 450}, "no answer within the timeout"),
    ],
)
@pytest.mark.parametrize("when", ["before", "after"])
def test_every_fault_on_the_wire_is_an_unknown_outcome_whether_applied_or_not(
    wallet: RunningWallet,
    client: OperatorWallet,
    player: dict[str, str],
    fault: dict[str, Any],
    problem: str,
    when: str,
) -> None:
    """Whether the wallet applied the bet before the fault or not, the client cannot know:
    an unknown outcome (to be rolled back), never a refusal or a confirmation."""
    wallet.admin("POST", "faults", {"method": "bet", "when": when, **fault})
    fields = _bet(player)
    sent = client.call("bet", fields)
    assert (sent.outcome, sent.status, sent.problem) == ("unknown", None, problem)
    if when == "after":
        assert _applied(wallet, fields)  # applied: only a rollback settles it


def test_a_slow_answer_well_within_the_timeout_is_an_answer(
    wallet: RunningWallet, client: OperatorWallet, player: dict[str, str]
) -> None:
    wallet.admin("POST", "faults", {"method": "bet", "kind": "slow", "delay_ms": TIMEOUT_MS // 2})
    assert client.call("bet", _bet(player)).outcome == "confirmed"


def test_a_wallet_that_refuses_connections_is_an_unknown_outcome_until_it_recovers(
    wallet: RunningWallet, client: OperatorWallet, player: dict[str, str]
) -> None:
    wallet.admin("POST", "outage", {"duration_ms": 800, "mode": "refuse"})
    fields = _bet(player)
    down = client.call("bet", fields)
    assert down.outcome == "unknown"
    assert down.http_status is None
    rollback = {**player, "transaction_uuid": str(uuid.uuid4())}
    rollback["reference_transaction_uuid"] = fields["transaction_uuid"]
    settled: Exchange | None = None
    for _ in range(40):  # the rollback is re-sent until the wallet gives a definite answer
        settled = client.call("rollback", {**rollback, "round": fields["round"]})
        if settled.outcome != "unknown":
            break
        time.sleep(0.05)
    assert settled is not None
    assert (settled.outcome, settled.status) == ("confirmed", "RS_ERROR_TRANSACTION_DOES_NOT_EXIST")
    assert client.call("bet", fields).status == "RS_ERROR_TRANSACTION_ROLLED_BACK"
    assert not _applied(wallet, fields)


def test_answers_are_trusted_under_either_operator_key_during_a_rotation(
    wallet: RunningWallet, player: dict[str, str]
) -> None:
    old = generate_private_key().public_key()
    current = wallet.keys.operator.public_key()
    rotating = OperatorWallet(wallet.url, wallet.keys.supplier, [old, current], TIMEOUT_MS)
    stale = OperatorWallet(wallet.url, wallet.keys.supplier, [old], TIMEOUT_MS)
    try:
        assert rotating.call("balance", player).outcome == "confirmed"
        found = stale.call("balance", player)
        assert (found.outcome, found.balance) == ("unknown", None)
    finally:
        rotating.close()
        stale.close()


def test_a_request_the_wallet_cannot_verify_is_refused_for_a_bet(
    wallet: RunningWallet, player: dict[str, str]
) -> None:
    stranger = OperatorWallet(
        wallet.url, generate_private_key(), [wallet.keys.operator.public_key()], TIMEOUT_MS
    )
    try:
        fields = _bet(player)
        sent = stranger.call("bet", fields)
        assert (sent.outcome, sent.status) == ("refused", "RS_ERROR_INVALID_SIGNATURE")
        assert not _applied(wallet, fields)
    finally:
        stranger.close()


def test_a_win_for_a_rolled_back_bet_is_for_review_and_a_void_s_rollback_of_a_lost_bet_too(
    wallet: RunningWallet, client: OperatorWallet, player: dict[str, str]
) -> None:
    fields = _bet(player)
    assert client.call("bet", fields).outcome == "confirmed"
    undo = {**player, "transaction_uuid": str(uuid.uuid4()), "round": fields["round"]}
    undo["reference_transaction_uuid"] = fields["transaction_uuid"]
    assert client.call("rollback", undo, bet_confirmed=True).outcome == "confirmed"
    win = {**_bet(player, amount=8 * UNIT), "round": fields["round"], "round_closed": True}
    win["reference_transaction_uuid"] = fields["transaction_uuid"]
    assert client.call("win", win).outcome == "review"
    # A confirmed bet the wallet says it never held: a void's rollback cannot settle it.
    missing = {**undo, "transaction_uuid": str(uuid.uuid4())}
    missing["reference_transaction_uuid"] = str(uuid.uuid4())
    assert client.call("rollback", missing, bet_confirmed=True).outcome == "review"
    assert client.call("rollback", missing).outcome == "confirmed"
