"""The reference wallet does what it says: each rule and each fault, through real HTTP to the
wallet in a process of its own. Each test has a player of its own, so tests never share money;
faults are cleared after each."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.wallet.harness import (
    PROJECT_ROOT,
    RunningWallet,
    listening_url,
    running_wallet,
    stop,
)
from tests.wallet.keys import generate_private_key, sign, verify
from tests.wallet.reference import ROLLBACK_OF_A_WON_BET

UNIT = 100_000  # amounts are in 1/100,000 of the currency unit
START = 100 * UNIT
CLIENT_TIMEOUT = 0.3  # seconds: the supplier's timeout the timing faults are measured against


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWallet]:
    with running_wallet(tmp_path_factory.mktemp("wallet")) as running:
        yield running


@pytest.fixture(autouse=True)
def _faults_cleared(wallet: RunningWallet) -> Iterator[None]:
    yield
    wallet.admin("DELETE", "faults")


@dataclass
class Player:
    user: str
    token: str
    currency: str = "GBP"


def new_player(wallet: RunningWallet, **settings: Any) -> Player:
    ref = f"player-{uuid.uuid4().hex[:12]}"
    wallet.admin("POST", "users", {"user": ref, "currency": "GBP", "balance": START} | settings)
    return Player(ref, wallet.admin("POST", "tokens", {"user": ref})["token"])


@pytest.fixture
def player(wallet: RunningWallet) -> Player:
    return new_player(wallet)


def _ids() -> str:
    return str(uuid.uuid4())


def balance_request(player: Player) -> dict[str, Any]:
    return {
        "user": player.user,
        "token": player.token,
        "request_uuid": _ids(),
        "currency": player.currency,
        "game_code": "vegas-klondike",
    }


def movement(
    player: Player, amount: int | None, reference: str | None = None, **fields: Any
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "user": player.user,
        "token": player.token,
        "request_uuid": _ids(),
        "transaction_uuid": _ids(),
        "round": "round-1",
        "round_closed": False,
        "game_code": "vegas-klondike",
        "currency": player.currency,
    }
    if amount is not None:
        found["amount"] = amount
    if reference is not None:
        found["reference_transaction_uuid"] = reference
    return found | fields


def bet(player: Player, amount: int = 5 * UNIT, **fields: Any) -> dict[str, Any]:
    return movement(player, amount, **fields)


def win(player: Player, bet_id: str, amount: int = 8 * UNIT, **fields: Any) -> dict[str, Any]:
    return movement(player, amount, bet_id, round_closed=True, **fields)


def rollback(player: Player, bet_id: str, **fields: Any) -> dict[str, Any]:
    return movement(player, None, bet_id, **fields)


def retried(payload: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The same request sent again: a new request_uuid, the same transaction_uuid."""
    return payload | {"request_uuid": _ids()} | changes


def balance_of(wallet: RunningWallet, player: Player) -> int:
    found: int = wallet.admin("GET", f"users/{player.user}")["balance"]
    return found


def applied(wallet: RunningWallet, payload: dict[str, Any]) -> bool:
    return bool(wallet.journal(transaction_uuid=payload["transaction_uuid"]))


def eventually(check: Callable[[], bool], within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


# --- signatures -----------------------------------------------------------------------------


def test_a_signed_balance_request_answers_the_balance_signed_by_the_operator(
    wallet: RunningWallet, player: Player
) -> None:
    asked = balance_request(player)
    response = wallet.post("balance", asked)

    assert response.status_code == 200
    assert wallet.operator_signed(response)
    # The signature covers exactly the bytes sent: one byte more and it no longer verifies.
    signature = response.headers["X-Hub88-Signature"]
    assert not verify(wallet.keys.operator.public_key(), response.content + b" ", signature)
    assert response.json() == {
        "user": player.user,
        "request_uuid": asked["request_uuid"],
        "currency": "GBP",
        "balance": START,
        "status": "RS_OK",
    }


@pytest.mark.parametrize("how", ["missing", "by another key", "over other bytes", "not base64"])
def test_a_request_without_the_suppliers_signature_is_refused_and_not_applied(
    wallet: RunningWallet, player: Player, how: str
) -> None:
    payload = bet(player)
    signature = {
        "missing": "",
        "by another key": sign(generate_private_key(), b"{}"),
        "over other bytes": sign(wallet.keys.supplier, b'{"amount": 1}'),
        "not base64": "not a signature!",
    }[how]

    response = wallet.post("bet", payload, signature=signature)

    assert response.status_code == 200
    assert wallet.operator_signed(response)
    answer = response.json()
    assert answer["status"] == "RS_ERROR_INVALID_SIGNATURE"
    assert "balance" not in answer  # nothing told to a caller who proved nothing
    assert not applied(wallet, payload)
    assert balance_of(wallet, player) == START


def test_a_body_the_wallet_cannot_read_is_answered_unknown(
    wallet: RunningWallet, player: Player
) -> None:
    payload = bet(player)
    del payload["transaction_uuid"]

    assert wallet.call("bet", payload)["status"] == "RS_ERROR_UNKNOWN"
    assert wallet.call("bet", bet(player, amount=-1))["status"] == "RS_ERROR_UNKNOWN"
    assert balance_of(wallet, player) == START


# --- bets, wins, repeats --------------------------------------------------------------------


def test_a_bet_debits_and_a_win_credits_each_journaled_once(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player, 520_000)  # GBP 5.20
    won = win(player, placed["transaction_uuid"], 1_040_000)

    bet_answer = wallet.call("bet", placed)
    win_answer = wallet.call("win", won)

    assert bet_answer["status"] == win_answer["status"] == "RS_OK"
    assert bet_answer["transaction_uuid"] == placed["transaction_uuid"]
    assert bet_answer["balance"] == START - 520_000
    assert win_answer["balance"] == START - 520_000 + 1_040_000
    journal = wallet.journal(user=player.user)
    assert [(e["kind"], e["amount"], e["round"]) for e in journal] == [
        ("bet", 520_000, "round-1"),
        ("win", 1_040_000, "round-1"),
    ]
    assert journal[1]["reference_transaction_uuid"] == placed["transaction_uuid"]
    assert journal[0]["applied_at"] <= journal[1]["applied_at"]


@pytest.mark.parametrize("kind", ["bet", "win", "rollback"])
def test_an_exact_repeat_applies_once_and_answers_the_balance(
    wallet: RunningWallet, player: Player, kind: str
) -> None:
    placed = bet(player)
    first = {
        "bet": placed,
        "win": win(player, placed["transaction_uuid"]),
        "rollback": rollback(player, placed["transaction_uuid"]),
    }[kind]
    if kind != "bet":
        wallet.call("bet", placed)
    answer = wallet.call(kind, first)
    again = retried(first)

    repeat = wallet.call(kind, again)

    assert repeat["status"] == "RS_OK"
    assert repeat["request_uuid"] == again["request_uuid"]
    assert repeat["balance"] == answer["balance"] == balance_of(wallet, player)
    assert len(wallet.journal(transaction_uuid=first["transaction_uuid"])) == 1


def test_the_same_transaction_id_with_another_amount_is_a_duplicate_and_not_applied(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player, 5 * UNIT)
    wallet.call("bet", placed)

    answer = wallet.call("bet", retried(placed, amount=6 * UNIT))

    assert answer["status"] == "RS_ERROR_DUPLICATE_TRANSACTION"
    assert balance_of(wallet, player) == START - 5 * UNIT
    assert [e["amount"] for e in wallet.journal(user=player.user)] == [5 * UNIT]


def test_a_transaction_id_already_used_by_another_kind_is_a_duplicate(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player)
    wallet.call("bet", placed)

    answer = wallet.call("win", win(player, placed["transaction_uuid"], **_same_id(placed)))

    assert answer["status"] == "RS_ERROR_DUPLICATE_TRANSACTION"
    assert len(wallet.journal(user=player.user)) == 1


def _same_id(payload: dict[str, Any]) -> dict[str, Any]:
    return {"transaction_uuid": payload["transaction_uuid"]}


# --- sessions and refusals ------------------------------------------------------------------


def test_a_bet_needs_a_known_unexpired_token_of_its_own_user(
    wallet: RunningWallet, player: Player
) -> None:
    someone_else = new_player(wallet)

    unknown = wallet.call("bet", bet(player, token="no-such-token"))
    not_theirs = wallet.call("bet", bet(player, token=someone_else.token))
    wallet.admin("POST", f"tokens/{player.token}/expire")
    expired = wallet.call("bet", bet(player))

    assert unknown["status"] == not_theirs["status"] == "RS_ERROR_INVALID_TOKEN"
    assert "balance" not in unknown
    assert expired["status"] == "RS_ERROR_TOKEN_EXPIRED"
    assert wallet.journal(user=player.user) == []
    assert balance_of(wallet, player) == START


def test_a_win_and_a_rollback_are_accepted_with_an_expired_token_but_not_an_unknown_one(
    wallet: RunningWallet, player: Player
) -> None:
    first, second = bet(player), bet(player)
    wallet.call("bet", first)
    wallet.call("bet", second)
    wallet.admin("POST", f"tokens/{player.token}/expire")

    bad_win = wallet.call("win", win(player, first["transaction_uuid"], token="nope"))
    bad_rollback = wallet.call("rollback", rollback(player, second["transaction_uuid"], token="x"))
    won = wallet.call("win", win(player, first["transaction_uuid"]))
    rolled_back = wallet.call("rollback", rollback(player, second["transaction_uuid"]))

    assert bad_win["status"] == bad_rollback["status"] == "RS_ERROR_INVALID_TOKEN"
    assert won["status"] == rolled_back["status"] == "RS_OK"
    assert [e["kind"] for e in wallet.journal(user=player.user)] == [
        "bet",
        "bet",
        "win",
        "rollback",
    ]


def test_a_bet_applied_before_its_token_expired_is_still_an_exact_repeat(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player)
    wallet.call("bet", placed)
    wallet.admin("POST", f"tokens/{player.token}/expire")

    assert wallet.call("bet", retried(placed))["status"] == "RS_OK"
    assert len(wallet.journal(user=player.user)) == 1


@pytest.mark.parametrize(
    ("settings", "fields", "status"),
    [
        ({}, {"currency": "EUR"}, "RS_ERROR_WRONG_CURRENCY"),
        ({"disabled": True}, {}, "RS_ERROR_USER_DISABLED"),
        ({"bet_limit": 2 * UNIT}, {}, "RS_ERROR_LIMIT_REACHED"),
        ({"balance": 4 * UNIT}, {}, "RS_ERROR_NOT_ENOUGH_MONEY"),
    ],
)
def test_a_bet_the_players_account_does_not_allow_is_refused_and_not_applied(
    wallet: RunningWallet, settings: dict[str, Any], fields: dict[str, Any], status: str
) -> None:
    player = new_player(wallet)
    wallet.admin("PATCH", f"users/{player.user}", settings)
    before = balance_of(wallet, player)

    answer = wallet.call("bet", bet(player, 5 * UNIT, **fields))

    assert answer["status"] == status
    assert answer["balance"] == before == balance_of(wallet, player)
    assert wallet.journal(user=player.user) == []


def test_the_balance_of_a_disabled_or_expired_session_is_refused(
    wallet: RunningWallet, player: Player
) -> None:
    wallet.admin("PATCH", f"users/{player.user}", {"disabled": True})
    disabled = wallet.call("balance", balance_request(player))
    wallet.admin("POST", f"tokens/{player.token}/expire")
    expired = wallet.call("balance", balance_request(player))

    assert disabled["status"] == "RS_ERROR_USER_DISABLED"
    assert expired["status"] == "RS_ERROR_TOKEN_EXPIRED"


# --- rollbacks ------------------------------------------------------------------------------


def test_a_rollback_recredits_a_bet_once(wallet: RunningWallet, player: Player) -> None:
    placed = bet(player)
    wallet.call("bet", placed)

    undone = wallet.call("rollback", rollback(player, placed["transaction_uuid"]))
    # Another rollback id for the same bet: already undone, nothing more to re-credit.
    again = wallet.call("rollback", rollback(player, placed["transaction_uuid"]))

    assert undone["status"] == again["status"] == "RS_OK"
    assert undone["balance"] == again["balance"] == START
    assert [(e["kind"], e["amount"]) for e in wallet.journal(user=player.user)] == [
        ("bet", 5 * UNIT),
        ("rollback", 5 * UNIT),
    ]


def test_a_rollback_of_an_unknown_bet_marks_it_and_the_bet_arriving_later_is_refused(
    wallet: RunningWallet, player: Player
) -> None:
    late = bet(player)

    undone = wallet.call("rollback", rollback(player, late["transaction_uuid"]))
    placed = wallet.call("bet", late)

    assert undone["status"] == "RS_ERROR_TRANSACTION_DOES_NOT_EXIST"
    assert placed["status"] == "RS_ERROR_TRANSACTION_ROLLED_BACK"
    assert placed["balance"] == START
    assert wallet.journal(user=player.user) == []
    assert wallet.admin("GET", f"transactions/{late['transaction_uuid']}") == {
        "transaction_uuid": late["transaction_uuid"],
        "applied": False,
        "rolled_back_before_arrival": True,
    }


def test_a_win_for_a_rolled_back_bet_is_refused(wallet: RunningWallet, player: Player) -> None:
    placed = bet(player)
    wallet.call("bet", placed)
    wallet.call("rollback", rollback(player, placed["transaction_uuid"]))

    answer = wallet.call("win", win(player, placed["transaction_uuid"]))

    assert answer["status"] == "RS_ERROR_TRANSACTION_ROLLED_BACK"
    assert answer["balance"] == START
    assert [e["kind"] for e in wallet.journal(user=player.user)] == ["bet", "rollback"]


def test_a_win_for_a_bet_that_was_never_placed_is_refused(
    wallet: RunningWallet, player: Player
) -> None:
    someone_else = new_player(wallet)
    theirs = bet(someone_else)
    wallet.call("bet", theirs)

    never = wallet.call("win", win(player, _ids()))
    not_mine = wallet.call("win", win(player, theirs["transaction_uuid"]))

    assert never["status"] == not_mine["status"] == "RS_ERROR_TRANSACTION_DOES_NOT_EXIST"
    assert wallet.journal(user=player.user) == []


def test_a_rollback_of_a_bet_that_already_won_is_refused_and_changes_nothing(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player)
    wallet.call("bet", placed)
    wallet.call("win", win(player, placed["transaction_uuid"]))
    settled = balance_of(wallet, player)

    answer = wallet.call("rollback", rollback(player, placed["transaction_uuid"]))

    assert answer["status"] == str(ROLLBACK_OF_A_WON_BET) == "RS_ERROR_UNKNOWN"
    assert balance_of(wallet, player) == settled
    assert [e["kind"] for e in wallet.journal(user=player.user)] == ["bet", "win"]


def test_a_bet_retried_after_its_rollback_is_refused_as_rolled_back(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player)
    wallet.call("bet", placed)
    wallet.call("rollback", rollback(player, placed["transaction_uuid"]))

    answer = wallet.call("bet", retried(placed))

    assert answer["status"] == "RS_ERROR_TRANSACTION_ROLLED_BACK"
    assert answer["balance"] == START


# --- concurrency ----------------------------------------------------------------------------


def _at_once(wallet: RunningWallet, method: str, payloads: list[dict[str, Any]]) -> list[str]:
    """The statuses of ``payloads`` sent together, one thread each, released at once."""
    start = threading.Barrier(len(payloads))
    statuses: list[str] = []

    def send(payload: dict[str, Any]) -> None:
        start.wait()
        statuses.append(wallet.call(method, payload)["status"])

    threads = [threading.Thread(target=send, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_concurrent_identical_bets_apply_once(wallet: RunningWallet, player: Player) -> None:
    placed = bet(player)

    statuses = _at_once(wallet, "bet", [retried(placed) for _ in range(8)])

    assert statuses == ["RS_OK"] * 8
    assert len(wallet.journal(transaction_uuid=placed["transaction_uuid"])) == 1
    assert balance_of(wallet, player) == START - 5 * UNIT


def test_concurrent_bets_with_one_id_and_different_amounts_apply_exactly_one(
    wallet: RunningWallet, player: Player
) -> None:
    placed = bet(player)

    statuses = _at_once(wallet, "bet", [retried(placed, amount=n * UNIT) for n in range(1, 7)])

    assert sorted(statuses) == ["RS_ERROR_DUPLICATE_TRANSACTION"] * 5 + ["RS_OK"]
    [entry] = wallet.journal(transaction_uuid=placed["transaction_uuid"])
    assert balance_of(wallet, player) == START - entry["amount"]


# --- faults ---------------------------------------------------------------------------------


def add_fault(wallet: RunningWallet, method: str, kind: str, **settings: Any) -> None:
    wallet.admin("POST", "faults", {"method": method, "kind": kind} | settings)


def _spoilt(kind: str, wallet: RunningWallet, response: requests.Response) -> bool:
    """Whether ``response`` is what a fault of ``kind`` makes of an answer."""
    if kind == "error":
        return response.status_code == 502
    if kind == "not_json":
        try:
            response.json()
        except ValueError:
            return response.status_code == 200
        return False
    if kind == "bad_signature":
        return response.status_code == 200 and not wallet.operator_signed(response)
    assert kind == "not_enough_money"
    return (
        wallet.operator_signed(response)
        and response.json()["status"] == "RS_ERROR_NOT_ENOUGH_MONEY"
    )


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("kind", ["error", "not_json", "bad_signature", "not_enough_money"])
def test_an_answer_spoilt_before_applying_leaves_the_bet_unapplied_and_after_applies_it(
    wallet: RunningWallet, player: Player, kind: str, when: str
) -> None:
    add_fault(wallet, "bet", kind, when=when, status=502)
    placed = bet(player)

    response = wallet.post("bet", placed)

    assert _spoilt(kind, wallet, response)
    assert applied(wallet, placed) is (when == "after")
    assert balance_of(wallet, player) == START - (5 * UNIT if when == "after" else 0)
    # The fault was for one call: the retry is answered properly (and applies at most once).
    assert wallet.call("bet", retried(placed))["status"] == "RS_OK"
    assert len(wallet.journal(user=player.user)) == 1


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_timeout_holds_past_the_clients_timeout_then_drops_the_connection(
    wallet: RunningWallet, player: Player, when: str
) -> None:
    add_fault(wallet, "bet", "timeout", when=when, delay_ms=450)
    placed = bet(player)
    sent = time.monotonic()

    with pytest.raises(requests.ReadTimeout):
        wallet.post("bet", placed, timeout=CLIENT_TIMEOUT)
    time.sleep(max(0.0, sent + 0.6 - time.monotonic()))  # the hold is over, the drop done

    assert applied(wallet, placed) is (when == "after")


def test_a_dropped_connection_gives_even_a_patient_client_no_answer(
    wallet: RunningWallet, player: Player
) -> None:
    add_fault(wallet, "balance", "timeout", delay_ms=100)

    with pytest.raises(requests.ConnectionError):
        wallet.post("balance", balance_request(player), timeout=2)


def test_a_timeout_that_answers_late_applies_and_answers_after_the_hold(
    wallet: RunningWallet, player: Player
) -> None:
    add_fault(wallet, "bet", "timeout", delay_ms=400, then="late")
    placed = bet(player)
    sent = time.monotonic()

    answer = wallet.call("bet", placed, timeout=2)

    assert time.monotonic() - sent >= 0.4
    assert answer["status"] == "RS_OK"
    assert applied(wallet, placed)


def test_a_slow_answer_just_under_the_clients_timeout_arrives(
    wallet: RunningWallet, player: Player
) -> None:
    add_fault(wallet, "bet", "slow", delay_ms=200)
    placed = bet(player)
    sent = time.monotonic()

    answer = wallet.call("bet", placed, timeout=CLIENT_TIMEOUT)

    assert 0.2 <= time.monotonic() - sent < CLIENT_TIMEOUT
    assert answer["status"] == "RS_OK"


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_slow_answer_just_over_the_clients_timeout_times_out_yet_the_bet_is_applied(
    wallet: RunningWallet, player: Player, when: str
) -> None:
    add_fault(wallet, "bet", "slow", when=when, delay_ms=450)
    placed = bet(player)

    with pytest.raises(requests.ReadTimeout):
        wallet.post("bet", placed, timeout=CLIENT_TIMEOUT)
    # Applied at once ("after"), or once the hold is over ("before"): the client cannot tell.
    if when == "before":
        assert not applied(wallet, placed)

    assert eventually(lambda: applied(wallet, placed))


def test_a_fault_hits_only_the_next_count_calls_of_its_method(
    wallet: RunningWallet, player: Player
) -> None:
    add_fault(wallet, "bet", "error", count=2)

    balance = wallet.post("balance", balance_request(player))
    bets = [wallet.post("bet", bet(player)).status_code for _ in range(3)]

    assert balance.status_code == 200
    assert bets == [500, 500, 200]
    assert wallet.admin("GET", "faults")["faults"] == []


def test_a_fault_with_a_probability_hits_calls_at_random_until_cleared(
    wallet: RunningWallet, player: Player
) -> None:
    add_fault(wallet, "balance", "error", probability=0.5, seed=7, count=None)
    dice = random.Random(7)  # the same throws as the wallet's
    expected = [500 if dice.random() < 0.5 else 200 for _ in range(20)]

    hit = [wallet.post("balance", balance_request(player)).status_code for _ in range(20)]
    wallet.admin("DELETE", "faults")
    after = wallet.post("balance", balance_request(player)).status_code

    assert hit == expected
    assert 0 < hit.count(500) < 20
    assert after == 200


def test_an_outage_answers_503_until_it_ends_then_the_wallet_recovers(
    wallet: RunningWallet, player: Player
) -> None:
    wallet.admin("POST", "outage", {"mode": "503", "duration_ms": 500})
    started = time.monotonic()
    placed = bet(player)

    during = [wallet.post("bet", placed).status_code, wallet.post("win", placed).status_code]
    assert wallet.admin("GET", "faults")["outage"]["mode"] == "503"  # the admin API still answers
    assert not applied(wallet, placed)
    time.sleep(max(0.0, started + 0.55 - time.monotonic()))

    assert during == [503, 503]
    assert wallet.call("bet", retried(placed))["status"] == "RS_OK"


def test_a_refusing_outage_refuses_connections_until_it_ends_then_the_wallet_recovers(
    wallet: RunningWallet, player: Player
) -> None:
    wallet.admin("POST", "outage", {"mode": "refuse", "duration_ms": 500})
    started = time.monotonic()

    with pytest.raises(requests.ConnectionError):
        wallet.post("balance", balance_request(player), timeout=1)

    assert eventually(lambda: _answers(wallet, player), within=3)
    assert time.monotonic() - started >= 0.45
    assert wallet.call("balance", balance_request(player))["balance"] == START


def _answers(wallet: RunningWallet, player: Player) -> bool:
    try:
        return wallet.post("balance", balance_request(player), timeout=1).status_code == 200
    except requests.ConnectionError:
        return False


# --- the admin API --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        {"method": "deposit", "kind": "error"},
        {"method": "bet", "kind": "meteor"},
        {"method": "bet", "kind": "error", "when": "during"},
        {"method": "bet", "kind": "error", "status": 404},
        {"method": "bet", "kind": "slow"},  # a slow answer needs its delay
        {"method": "bet", "kind": "error", "probability": 2},
    ],
)
def test_the_admin_api_refuses_a_fault_it_cannot_inject(
    wallet: RunningWallet, fault: dict[str, Any]
) -> None:
    response = requests.post(f"{wallet.url}/_admin/faults", json=fault, timeout=5)

    assert response.status_code == 400
    assert "error" in response.json()


def test_the_admin_api_answers_404_for_an_unknown_user_and_409_for_a_known_one(
    wallet: RunningWallet, player: Player
) -> None:
    unknown = requests.get(f"{wallet.url}/_admin/users/nobody-{_ids()}", timeout=5)
    again = requests.post(
        f"{wallet.url}/_admin/users", json={"user": player.user, "currency": "GBP"}, timeout=5
    )

    assert unknown.status_code == 404
    assert again.status_code == 409


def test_the_command_line_generates_test_keys_and_says_where_it_listens(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tests.wallet", "--keys", str(tmp_path), "--port", "0"]
    log_path = tmp_path / "wallet.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=log, text=False
        )
        try:
            url = listening_url(process, log_path, timeout=20)
            health = requests.get(f"{url}/_admin/health", timeout=5)
        finally:
            stop(process)

    assert url.startswith("http://127.0.0.1:")
    assert health.json() == {"status": "ok"}
    assert sorted(p.name for p in tmp_path.glob("*.pem")) == [
        "operator.pem",
        "operator.pub.pem",
        "supplier.pem",
        "supplier.pub.pem",
    ]
