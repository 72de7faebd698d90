"""Seamless mode over HTTP (issue 37): the deal is a bet, the collect a win, a void or an unknown
bet a rollback, all against the reference operator wallet in a process of its own, with faults
on the wire. Each test asserts the round's final state, both sides' balances and movements (the
wallet's own journal against the server's ledger), and that no card was shown without a
confirmed bet."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from events.catalog import FundsDeposited, StakePlaced, WalletCallSent
from events.postgres import append_params
from events.records import ConcurrencyConflict, NewEvent
from service.core.context import Actor, RequestContext
from service.core.seamless import to_wire, transaction_id
from service.gateways.operator_wallet import Exchange
from service.runtime.config import Settings
from service.services import history_audits as audit
from service.services import idle
from service.services.rebuild import rebuild
from service.services.seamless import LEASE_MARGIN_MS
from tests.api.client import assert_problem
from tests.api.duel_support import look, seat_call
from tests.api.play import cards_in
from tests.api.seamless_support import (
    STAKE,
    TIMEOUT_MS,
    UNDER_TIMEOUT_MS,
    SeamlessDeployment,
    SeamlessPlayer,
    open_player,
    seamless_deployment,
)
from tests.builders import easy_deck

VARIANT = "vegas-draw1"
FUNDS = 10_000
DUEL_FEE = 500


@pytest.fixture(scope="module")
def deployment(
    settings: Settings, admin_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SeamlessDeployment]:
    with seamless_deployment(settings, admin_server_url, tmp_path_factory.mktemp("seamless")) as d:
        yield d


@pytest.fixture(autouse=True)
def no_faults(deployment: SeamlessDeployment) -> None:
    deployment.wallet.admin("DELETE", "faults")


def deal(d: SeamlessDeployment, player: SeamlessPlayer, stake: int = STAKE) -> Any:
    return d.http.post("/v1/games", player.token, json={"variant": VARIANT, "stake": stake})


def journal(d: SeamlessDeployment, player: SeamlessPlayer) -> list[dict[str, Any]]:
    return d.wallet.journal(user=player.external_ref)


def kinds(d: SeamlessDeployment, player: SeamlessPlayer) -> list[str]:
    return [str(e["kind"]) for e in journal(d, player)]


def server_rows(d: SeamlessDeployment, player: SeamlessPlayer) -> list[tuple[str, str, int]]:
    with d.web.unit_of_work() as uow:
        rows = uow.conn.execute(
            "SELECT method, state, amount FROM wallet_transactions WHERE player_id = %s"
            " ORDER BY created_at, method",
            (uuid.UUID(player.id),),
        ).fetchall()
    return [(str(m), str(s), int(a)) for m, s, a in rows]


def mirror(d: SeamlessDeployment, player: SeamlessPlayer) -> tuple[int, int]:
    """The server's ledger: the player's wallet (what it owes back to the operator) and the
    operator-wallet mirror (net brought in)."""
    with d.web.unit_of_work() as uow:
        own = uow.ledger.balance(f"player:{player.id}") or 0
        operator = uow.ledger.balance(f"operator-wallet:{player.id}") or 0
    return own, operator


def assert_books_agree(d: SeamlessDeployment, player: SeamlessPlayer, funds: int = FUNDS) -> None:
    """The wallet's balance moved by exactly what the server's mirror says was confirmed, and
    each movement the wallet applied was applied once."""
    _, operator = mirror(d, player)
    assert player.wire_balance(d.wallet) == to_wire(funds + operator, "GBP")
    ids = [e["transaction_uuid"] for e in journal(d, player)]
    assert len(ids) == len(set(ids)), "a movement applied twice"


def game_events(d: SeamlessDeployment, game_id: str) -> list[tuple[str, int]]:
    with d.web.unit_of_work() as uow:
        rows = uow.conn.execute(
            "SELECT type, position FROM events WHERE stream_id IN (%s, %s) ORDER BY position",
            (f"game-{game_id}", f"wallet-{game_id}"),
        ).fetchall()
    return [(str(t), int(p)) for t, p in rows]


# --- sessions and the cashier ---------------------------------------------------------------------


def test_a_session_needs_the_operator_s_token_and_shows_its_balance(
    deployment: SeamlessDeployment,
) -> None:
    http = deployment.http
    player = open_player(deployment, FUNDS)
    missing = http.post(f"/v1/players/{player.id}/sessions", http.operator_key)
    assert_problem(missing, 422, "validation-error")
    wrong = http.post(
        f"/v1/players/{player.id}/sessions", http.operator_key, json={"wallet_token": "nope"}
    )
    assert_problem(wrong, 403, "wallet-refused")
    assert wrong.get_json()["wallet_status"] == "RS_ERROR_INVALID_TOKEN"
    expired = deployment.wallet.admin("POST", "tokens", {"user": player.external_ref})["token"]
    deployment.wallet.admin("POST", f"tokens/{expired}/expire")
    refused = http.post(
        f"/v1/players/{player.id}/sessions", http.operator_key, json={"wallet_token": expired}
    )
    assert_problem(refused, 403, "wallet-refused")
    good = http.post(
        f"/v1/players/{player.id}/sessions",
        http.operator_key,
        json={"wallet_token": player.wallet_token},
    )
    assert good.status_code == 201
    assert good.get_json()["wallet_balance"] == FUNDS
    assert player.wallet_token not in good.get_data(as_text=True)
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet["balance"], wallet["wallet_mode"], wallet["unsettled"]) == (
        FUNDS,
        "seamless",
        0,
    )


def test_the_cashier_and_deposit_limits_are_the_operator_s(deployment: SeamlessDeployment) -> None:
    http = deployment.http
    player = open_player(deployment, FUNDS)
    for kind in ("deposits", "withdrawals"):
        answer = http.post(
            f"/v1/players/{player.id}/{kind}",
            http.operator_key,
            json={"amount": 100, "transaction_id": f"t-{uuid.uuid4()}"},
        )
        assert_problem(answer, 409, "wallet-mode")
    limit = http.put(
        f"/v1/players/{player.id}/limits/deposit-day", player.token, json={"value": 1_000}
    )
    assert_problem(limit, 409, "wallet-mode")
    assert mirror(deployment, player) == (0, 0)


# --- a round: bet, play, win ----------------------------------------------------------------------


def test_a_round_is_a_bet_then_a_win_credited_once(deployment: SeamlessDeployment) -> None:
    d = deployment
    player = open_player(d, FUNDS)
    dealt = deal(d, player)
    assert dealt.status_code == 201, dealt.get_json()
    game_id = dealt.get_json()["id"]
    assert player.wire_balance(d.wallet) == to_wire(FUNDS - STAKE, "GBP")
    assert kinds(d, player) == ["bet"]
    # The bet's confirmation comes before the deal in the log: no card before RS_OK.
    order = [t for t, _ in game_events(d, game_id)]
    assert order[:3] == ["WalletCallSent", "WalletCallAnswered", "StakePlaced"]
    assert mirror(d, player) == (0, -STAKE)

    again = deal(d, player)  # one game at a time, as in transfer mode
    assert_problem(again, 409, "game-in-progress")
    collected = d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    assert collected.status_code == 200, collected.get_json()
    body = collected.get_json()
    assert body["payout_status"] == "pending"
    won = body["payout"]
    # Until the win is acknowledged, no new deal.
    assert_problem(deal(d, player), 409, "wallet-unsettled")
    assert d.settle() == {"confirmed": 1}
    seen = d.http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert seen["payout_status"] == "credited"
    assert kinds(d, player) == ["bet", "win"]
    win = journal(d, player)[1]
    assert win["transaction_uuid"] == transaction_id(game_id, "win")
    assert win["amount"] == to_wire(won, "GBP")
    assert mirror(d, player) == (0, won - STAKE)
    assert_books_agree(d, player)
    assert server_rows(d, player) == [("bet", "confirmed", STAKE), ("win", "confirmed", won)]
    # The next round deals.
    assert deal(d, player).status_code == 201


def test_every_guard_holds_before_any_bet_is_sent(deployment: SeamlessDeployment) -> None:
    """The operator's switches and the player's own exclusion refuse a deal before the wallet
    hears of it; certification play calls no wallet at all."""
    d = deployment
    http = d.http
    player = open_player(d, FUNDS)
    off = http.put(
        f"/v1/controls/games/{VARIANT}",
        http.operator_key,
        json={"enabled": False, "reason": "maintenance"},
    )
    assert off.status_code == 200, off.get_json()
    try:
        assert_problem(deal(d, player), 403, "game-disabled")
    finally:
        on = http.put(
            f"/v1/controls/games/{VARIANT}",
            http.operator_key,
            json={"enabled": True, "reason": "ok"},
        )
        assert on.status_code == 200
    certified = http.post(
        "/v1/games",
        http.operator_key,
        json={
            "variant": VARIANT,
            "stake": STAKE,
            "player_id": player.id,
            "deck": list(easy_deck()),
        },
    )
    assert certified.status_code == 201, certified.get_json()
    assert certified.get_json()["currency"] == "XTS"
    done = http.post(f"/v1/games/{certified.get_json()['id']}/collect", player.token, json={})
    assert done.get_json()["payout_status"] == "credited"
    out = http.post(
        f"/v1/players/{player.id}/exclusions", player.token, json={"length": "24-hours"}
    )
    assert out.status_code == 201, out.get_json()
    assert_problem(deal(d, player), 403, "player-excluded")
    assert kinds(d, player) == []
    assert server_rows(d, player) == []


def test_an_idle_game_collected_by_the_worker_sends_its_win(
    deployment: SeamlessDeployment,
) -> None:
    """Idle collection keeps working: the worker's collect is a win like the player's."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    owner = d.web.settings.migration_database_url or ""
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute("UPDATE collection_policy SET idle_after = interval '1 second'")
    try:
        time.sleep(1.2)
        collected = idle.collect_idle(d.worker.games, d.worker.unit_of_work, timedelta(seconds=1))
        assert uuid.UUID(game_id) in collected
    finally:
        with psycopg.connect(owner, autocommit=True) as conn:
            conn.execute("UPDATE collection_policy SET idle_after = interval '24 hours'")
    d.drain()
    assert kinds(d, player) == ["bet", "win"]
    assert_books_agree(d, player)


# --- bets refused, or of unknown outcome ----------------------------------------------------------


def test_a_bet_refused_for_money_ends_the_round_owing_nothing(
    deployment: SeamlessDeployment,
) -> None:
    d = deployment
    player = open_player(d, STAKE - 1)
    refused = deal(d, player)
    assert_problem(refused, 402, "wallet-insufficient-funds")
    assert cards_in(refused.get_json()) == set()
    assert kinds(d, player) == []
    assert server_rows(d, player) == [("bet", "refused", STAKE)]
    assert mirror(d, player) == (0, 0)
    assert player.wire_balance(d.wallet) == to_wire(STAKE - 1, "GBP")
    # Refused, not unsettled: the player may deal again (and is refused again).
    assert_problem(deal(d, player), 402, "wallet-insufficient-funds")


def test_a_deal_the_rules_refuse_sends_no_bet(deployment: SeamlessDeployment) -> None:
    """A stake off the paytable's grid is refused before any bet goes to the wallet."""
    d = deployment
    player = open_player(d, FUNDS)
    refused = deal(d, player, stake=STAKE + 1)
    assert refused.status_code == 422, refused.get_json()
    assert kinds(d, player) == []
    assert server_rows(d, player) == []
    assert deal(d, player).status_code == 201


@pytest.mark.parametrize(
    ("fault", "applied"),
    [
        ({"kind": "timeout", "delay_ms": TIMEOUT_MS * 2, "when": "before"}, False),
        ({"kind": "timeout", "delay_ms": TIMEOUT_MS * 2, "when": "after"}, True),
        ({"kind": "error", "status": 503, "when": "after"}, True),
        ({"kind": "not_json", "when": "before"}, False),
        ({"kind": "bad_signature", "when": "after"}, True),
        # applied after the hold: before or after its rollback arrives, as the race goes
        ({"kind": "slow", "delay_ms": int(TIMEOUT_MS * 1.5), "when": "before"}, None),
        ({"kind": "error", "status": 500, "when": "before"}, False),
    ],
    ids=[
        "timeout-before",
        "timeout-after",
        "5xx-after",
        "not-json",
        "bad-signature",
        "slow-just-over",
        "5xx-before",
    ],
)
def test_a_bet_of_unknown_outcome_is_rolled_back_never_re_sent(
    deployment: SeamlessDeployment, fault: dict[str, Any], applied: bool | None
) -> None:
    """``applied``: whether the wallet applied the bet (None: a late one, either way)."""
    d = deployment
    player = open_player(d, FUNDS)
    d.fault("bet", **fault)
    unknown = deal(d, player)
    assert_problem(unknown, 503, "wallet-unavailable")
    assert cards_in(unknown.get_json()) == set()
    if applied is not None:
        assert kinds(d, player) == (["bet"] if applied else [])
    # Until its rollback settles, no new deal.
    assert_problem(deal(d, player), 409, "wallet-unsettled")
    d.drain()
    bet = transaction_id(unknown_round(d, player), "bet")
    time.sleep(TIMEOUT_MS * 1.5 / 1000)  # a late bet has landed, or been refused, by now
    entries = journal(d, player)
    if applied is None:
        applied = bool(entries)
    assert [e["kind"] for e in entries] == (["bet", "rollback"] if applied else [])
    assert all(e["transaction_uuid"] != bet or e["kind"] == "bet" for e in entries)
    assert [(m, s) for m, s, _ in server_rows(d, player)] == [
        ("bet", "unknown"),
        ("rollback", "confirmed"),
    ]
    assert player.wire_balance(d.wallet) == to_wire(FUNDS, "GBP")
    assert mirror(d, player) == (0, 0)
    assert_books_agree(d, player)
    # A late bet after its own rollback is refused by the wallet (its marker).
    status = d.wallet.admin("GET", f"transactions/{bet}")
    assert status["applied"] == applied or status["rolled_back_before_arrival"]
    # and the player plays on
    assert deal(d, player).status_code == 201


def unknown_round(d: SeamlessDeployment, player: SeamlessPlayer) -> str:
    with d.web.unit_of_work() as uow:
        row = uow.conn.execute(
            "SELECT round_id FROM wallet_transactions WHERE player_id = %s AND method = 'bet'"
            " ORDER BY created_at LIMIT 1",
            (uuid.UUID(player.id),),
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_a_slow_answer_just_under_the_timeout_deals(deployment: SeamlessDeployment) -> None:
    d = deployment
    player = open_player(d, FUNDS)
    d.fault("bet", "slow", delay_ms=UNDER_TIMEOUT_MS)
    dealt = deal(d, player)
    assert dealt.status_code == 201, dealt.get_json()
    assert kinds(d, player) == ["bet"]


# --- wins retried ---------------------------------------------------------------------------------


def test_a_win_is_retried_until_acknowledged_and_applied_once(
    deployment: SeamlessDeployment,
) -> None:
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.fault("win", "timeout", delay_ms=TIMEOUT_MS * 2, when="after")
    d.fault("win", "error", status=500, when="before", count=2)
    collected = d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    assert collected.get_json()["payout_status"] == "pending"
    d.drain()
    assert kinds(d, player) == ["bet", "win"]
    assert server_rows(d, player)[1][:2] == ("win", "confirmed")
    with d.web.unit_of_work() as uow:
        attempts = uow.conn.execute(
            "SELECT attempts FROM wallet_transactions WHERE transaction_uuid = %s",
            (uuid.UUID(transaction_id(game_id, "win")),),
        ).fetchone()
    assert attempts is not None
    assert attempts[0] == 4  # the same transaction_uuid each time
    seen = d.http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert seen["payout_status"] == "credited"
    assert_books_agree(d, player)


def test_two_sweeps_at_once_send_a_win_once(deployment: SeamlessDeployment) -> None:
    """One sender a movement at a time: a second sweep finds the win leased and leaves it."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.fault("win", "slow", delay_ms=UNDER_TIMEOUT_MS)
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    sweeps = [threading.Thread(target=d.settle) for _ in range(3)]
    for sweep in sweeps:
        sweep.start()
    for sweep in sweeps:
        sweep.join(30)
    with d.web.unit_of_work() as uow:
        calls = uow.conn.execute(
            "SELECT count(*) FROM wallet_calls WHERE transaction_uuid = %s",
            (uuid.UUID(transaction_id(game_id, "win")),),
        ).fetchone()
    assert calls == (1,)
    assert kinds(d, player) == ["bet", "win"]


def test_a_long_outage_then_recovery_credits_the_win(deployment: SeamlessDeployment) -> None:
    """The wallet down (connections refused) while a win is due: retried until it is back."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.wallet.admin("POST", "outage", {"duration_ms": 2_500, "mode": "refuse"})
    collected = d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    assert collected.get_json()["payout_status"] == "pending"
    assert d.settle() == {"unknown": 1}
    assert_problem(deal(d, player), 409, "wallet-unsettled")
    d.drain(rounds=60)
    assert kinds(d, player) == ["bet", "win"]
    assert server_rows(d, player)[1][:2] == ("win", "confirmed")
    assert_books_agree(d, player)


def test_a_void_rolls_the_bet_back(deployment: SeamlessDeployment) -> None:
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    voided = d.http.post(
        f"/v1/games/{game_id}/void", d.http.operator_key, json={"reason": "malfunction"}
    )
    assert voided.status_code == 200, voided.get_json()
    d.drain()
    assert kinds(d, player) == ["bet", "rollback"]
    assert player.wire_balance(d.wallet) == to_wire(FUNDS, "GBP")
    assert mirror(d, player) == (0, 0)
    assert_books_agree(d, player)


# --- the insider: the database's rules, and the audit --------------------------------------------

RECORD = "SELECT FROM record_events(%s, %s, %s, %s)"


def _record(
    d: SeamlessDeployment, credential: str | None, stream: str, expected: int, *events: Any
) -> None:
    """Append as an insider holding the service's login, presenting ``credential``."""
    holder = d.web.access.authenticate(credential) if credential else None
    meta = (
        {"actor": holder.actor.id, "role": holder.actor.role, "request_id": "forged"}
        if holder is not None
        else {"actor": "system", "role": "system", "request_id": "forged"}
    )
    items = append_params(stream, [NewEvent.of(e, meta) for e in events], expected)["events"]
    with psycopg.connect(d.web.settings.database_url or "") as conn:
        conn.execute("SET ROLE vegas_app")
        conn.execute(RECORD, (credential, stream, expected, items))
        conn.commit()


def test_a_game_is_dealt_only_on_its_bet_confirmed(deployment: SeamlessDeployment) -> None:
    """The service's login with a player's live session cannot write a real game's stake
    without the round's bet confirmed by the wallet (migrations/0044)."""
    d = deployment
    player = open_player(d, FUNDS)
    game = str(uuid.uuid4())
    placed = StakePlaced(game, player.id, VARIANT, STAKE, "GBP", "5", 52, "gbp", 1, "r")
    with pytest.raises(psycopg.errors.CheckViolation, match="once its bet is confirmed"):
        _record(d, player.token, f"game-{game}", 0, placed)


def test_wins_and_rollbacks_are_background_work_s(deployment: SeamlessDeployment) -> None:
    """Not the web process's login, whoever it says it is: a win sent by the service's login
    is refused, and so is a bet recorded without the player's session or a cashier's deposit."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    sent = WalletCallSent(
        game_id,
        player.id,
        "win",
        transaction_id(game_id, "win"),
        transaction_id(game_id, "bet"),
        0,
        0,
        "GBP",
        VARIANT,
        True,
        str(uuid.uuid4()),
        "0" * 64,
        1,
    )
    with d.web.unit_of_work() as uow:
        head = uow.events.stream_version(f"wallet-{game_id}")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="background work"):
        _record(d, None, f"wallet-{game_id}", head, sent)
    other = str(uuid.uuid4())
    bet = replace(
        sent,
        round_id=other,
        method="bet",
        transaction_uuid=transaction_id(other, "bet"),
        reference=None,
        round_closed=False,
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="its own player"):
        _record(d, None, f"wallet-{other}", 0, bet)
    with pytest.raises(psycopg.errors.CheckViolation, match="operator's own wallet"):
        _record(
            d,
            d.http.operator_key,
            f"player-{player.id}",
            1,
            FundsDeposited(1_000, "GBP", f"forged-{uuid.uuid4()}"),
        )
    d.drain()


def test_a_forged_confirmation_is_found_and_no_win_is_sent(
    deployment: SeamlessDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web process's code altered to take a bet as confirmed without the operator's word:
    the round deals, but before its win is sent the audit's verification checks every kept
    answer against the operator's key, finds the forgery, holds the player and leaves the round
    for review; the wallet never hears of it."""
    d = deployment
    player = open_player(d, FUNDS)
    seamless = d.web.seamless
    assert seamless is not None

    def forged(pending: Any) -> Exchange:
        answer = json.dumps(
            {
                "user": player.external_ref,
                "request_uuid": pending.prepared.request_uuid,
                "currency": "GBP",
                "balance": 10**9,
                "status": "RS_OK",
            }
        ).encode()
        return Exchange(
            "bet",
            pending.prepared.request_uuid,
            pending.prepared.body,
            pending.prepared.signature,
            200,
            answer,
            "Zm9yZ2Vk",
            "RS_OK",
            10**9,
            None,
            "confirmed",
        )

    monkeypatch.setattr(seamless, "call", forged)
    game_id = deal(d, player).get_json()["id"]
    monkeypatch.undo()
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    assert d.settle() == {"review": 1}
    assert kinds(d, player) == []
    seen = d.http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert seen["payout_status"] == "review"
    with d.web.unit_of_work() as uow:
        kinds_recorded = [
            k
            for (k,) in uow.conn.execute(
                "SELECT kind FROM significant_events WHERE player_id = %s ORDER BY id",
                (uuid.UUID(player.id),),
            ).fetchall()
        ]
    assert "withdrawal-held" in kinds_recorded
    assert "wallet" in kinds_recorded
    # Never sent, it cannot have been paid: only sent again once the forgery is answered.
    settled = d.http.post(
        f"/v1/wallet/transactions/{transaction_id(game_id, 'win')}/resolution",
        d.http.operator_key,
        json={"action": "settled", "reason": "paid by hand"},
    )
    assert_problem(settled, 422, "validation-error")


def test_the_audit_verifies_every_round_s_wallet_stream(deployment: SeamlessDeployment) -> None:
    """A player's honest rounds (dealt, won, refused, rolled back) verify: their wallet streams'
    answers are the operator's and the ledger holds exactly the mirror they call for."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    d.drain()
    d.fault("bet", "error", status=500)
    assert_problem(deal(d, player), 503, "wallet-unavailable")
    d.drain()
    with d.web.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(
            uow, audit.Scope("player", player_id=uuid.UUID(player.id)), "t"
        )
    for units in chunks:
        audit.check_chunk(
            d.web.audit_unit_of_work,
            audit_id,
            units,
            d.web.settings.paytables,
            d.web.anchors.findings,
            d.web.answer_check,
        )
    with d.web.audit_unit_of_work() as uow:
        status = audit.status(uow, audit_id)
    assert status is not None
    assert sum(1 for u in chunks for s in u if s.startswith("wallet-")) == 2
    assert status.findings == ()


# --- a sender that died mid-call; thresholds ------------------------------------------------------


def test_a_bet_whose_sender_died_mid_call_is_rolled_back(deployment: SeamlessDeployment) -> None:
    """The deal's process records the bet as sent and dies before the answer (here: the call is
    made by hand and its answer never recorded). Once the sender's lease has run out the worker
    takes the bet as of unknown outcome and rolls it back; the late answer can no longer deal."""
    d = deployment
    player = open_player(d, FUNDS)
    seamless = d.web.seamless
    assert seamless is not None
    request = RequestContext(
        Actor(player.id, "player"),
        credential=player.token,
        session_started=d.web.access.authenticate(player.token).session_started,  # type: ignore[union-attr]
    )
    round_id = str(uuid.uuid4())
    with d.web.unit_of_work() as uow:
        pending = seamless.send_bet(
            uow,
            request,
            uuid.UUID(player.id),
            player.external_ref,
            round_id,
            STAKE,
            "GBP",
            VARIANT,
            "0" * 64,
        )
        uow.commit()
    exchange = seamless.call(pending)  # applied at the wallet; the sender then dies
    assert exchange.outcome == "confirmed"
    assert_problem(deal(d, player), 409, "wallet-unsettled")
    assert d.settle() == {}  # its sender's lease still runs
    time.sleep((TIMEOUT_MS + LEASE_MARGIN_MS) / 1000 + 0.2)
    d.drain()
    assert kinds(d, player) == ["bet", "rollback"]
    assert [(m, s) for m, s, _ in server_rows(d, player)] == [
        ("bet", "unknown"),
        ("rollback", "confirmed"),
    ]
    late = (psycopg.errors.CheckViolation, ConcurrencyConflict)
    with d.web.unit_of_work() as uow, pytest.raises(late):
        seamless.answer_bet(uow, request, pending, exchange)  # too late: rolled back
    assert player.wire_balance(d.wallet) == to_wire(FUNDS, "GBP")
    assert mirror(d, player) == (0, 0)


def test_an_unacknowledged_win_is_flagged_then_left_for_review(
    deployment: SeamlessDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A win the wallet never acknowledges: a significant event at each threshold (an hour and
    a day by default; here seconds), then, past the last, the round is left for
    review and retries stop."""
    d = deployment
    worker = d.worker.seamless
    assert worker is not None
    monkeypatch.setattr(
        worker,
        "_policy",
        replace(
            worker.policy,
            flag_after=(timedelta(seconds=1), timedelta(seconds=2)),
            give_up_after=timedelta(seconds=3),
            retry_max_seconds=0.1,
        ),
    )
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.fault("win", "error", status=502, count=None)
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    d.drain(rounds=60)
    assert kinds(d, player) == ["bet"]
    with d.web.unit_of_work() as uow:
        types = [
            t
            for (t,) in uow.conn.execute(
                "SELECT type FROM events WHERE stream_id = %s ORDER BY version",
                (f"wallet-{game_id}",),
            ).fetchall()
        ]
        flagged = uow.conn.execute(
            "SELECT details->>'reason' FROM significant_events WHERE kind = 'wallet'"
            " AND game_id = %s ORDER BY id",
            (uuid.UUID(game_id),),
        ).fetchall()
    assert types.count("WalletPendingFlagged") == 2, str(types)
    assert types[-1] == "WalletReviewMarked"
    assert len(flagged) == 3
    assert server_rows(d, player)[1][:2] == ("win", "review")
    seen = d.http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert seen["payout_status"] == "review"
    listed = d.http.get("/v1/wallet/reviews", d.http.finance_key).get_json()["movements"]
    win = transaction_id(game_id, "win")
    reason = next(m["review_reason"] for m in listed if m["transaction_uuid"] == win)
    assert reason.startswith("unacknowledged")

    # An operator resolves it once the operator's wallet is fixed: the win is sent again.
    d.wallet.admin("DELETE", "faults")
    path = f"/v1/wallet/transactions/{win}/resolution"
    wrong = d.http.post(path, d.http.operator_key, json={"action": "not-applied", "reason": "x"})
    assert_problem(wrong, 422, "validation-error")
    as_player = d.http.post(path, player.token, json={"action": "retry", "reason": "x"})
    assert as_player.status_code == 403
    retried = d.http.post(
        path, d.http.operator_key, json={"action": "retry", "reason": "wallet fixed"}
    )
    assert retried.status_code == 200, retried.get_json()
    assert retried.get_json()["state"] == "due"
    d.drain()
    assert kinds(d, player) == ["bet", "win"]
    assert d.http.get(f"/v1/games/{game_id}", player.token).get_json()["payout_status"] == (
        "credited"
    )
    again = d.http.post(path, d.http.operator_key, json={"action": "retry", "reason": "x"})
    assert_problem(again, 409, "wallet-not-under-review")
    assert_books_agree(d, player)
    with d.web.unit_of_work() as uow:
        resolved = uow.conn.execute(
            "SELECT details->>'state', actor FROM significant_events WHERE kind = 'wallet'"
            " AND game_id = %s AND details->>'state' = 'retry'",
            (uuid.UUID(game_id),),
        ).fetchall()
    assert len(resolved) == 1


def test_a_rollback_settled_by_hand_is_mirrored_as_confirmed(
    deployment: SeamlessDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A void's rollback the wallet never acknowledged, left for review; the operator refunds
    the stake by hand and says so: the server's ledger mirrors it as a confirmed rollback."""
    d = deployment
    worker = d.worker.seamless
    assert worker is not None
    monkeypatch.setattr(
        worker,
        "_policy",
        replace(worker.policy, give_up_after=timedelta(seconds=1), retry_max_seconds=0.1),
    )
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.fault("rollback", "error", status=500, count=None)
    d.http.post(f"/v1/games/{game_id}/void", d.http.operator_key, json={"reason": "fault"})
    d.drain(rounds=60)
    rollback = transaction_id(game_id, "rollback")
    assert server_rows(d, player)[1][:2] == ("rollback", "review")
    assert mirror(d, player) == (STAKE, -STAKE)  # the refund owed back, held by the server
    d.wallet.admin("DELETE", "faults")
    funds = d.wallet.admin("GET", f"users/{player.external_ref}")["balance"]
    d.wallet.admin(
        "PATCH", f"users/{player.external_ref}", {"balance": funds + to_wire(STAKE, "GBP")}
    )
    settled = d.http.post(
        f"/v1/wallet/transactions/{rollback}/resolution",
        d.http.operator_key,
        json={"action": "settled", "reason": "refunded by hand at the operator"},
    )
    assert settled.status_code == 200, settled.get_json()
    assert settled.get_json()["state"] == "confirmed"
    assert mirror(d, player) == (0, 0)
    assert player.wire_balance(d.wallet) == to_wire(FUNDS, "GBP")
    assert kinds(d, player) == ["bet"]  # the wallet's own journal: the refund was by hand
    with d.web.unit_of_work() as uow:
        report = rebuild(uow, apply=False)
    assert report.differences == ()


# --- finance --------------------------------------------------------------------------------------


def test_finance_reconciles_every_wallet_movement_of_the_day(
    deployment: SeamlessDeployment,
) -> None:
    """The wallet CSV lists each movement of the day with its final state in fixed columns; the
    daily report shows what is owed to the operator's wallet as a liability."""
    d = deployment
    http = d.http
    player = open_player(d, FUNDS)
    won = deal(d, player).get_json()["id"]
    http.post(f"/v1/games/{won}/collect", player.token, json={})
    owed = http.get(
        "/v1/reports/daily",
        http.finance_key,
        query_string={
            "from": datetime.now(UTC).date().isoformat(),
            "to": datetime.now(UTC).date().isoformat(),
            "currency": "GBP",
        },
    )
    assert owed.status_code == 200, owed.get_json()
    liability = owed.get_json()["wallet"]
    assert liability["mode"] == "seamless"
    assert liability["unacknowledged_wins"]["count"] >= 1
    d.drain()
    d.fault("bet", "error", status=500)
    assert_problem(deal(d, player), 503, "wallet-unavailable")
    d.drain()
    day = datetime.now(UTC).date().isoformat()
    rows = http.get("/v1/reconciliation/wallet", http.finance_key, query_string={"date": day})
    assert rows.status_code == 200, rows.get_json()
    mine = [r for r in rows.get_json()["transactions"] if r["external_ref"] == player.external_ref]
    assert [(r["method"], r["final_state"], r["attempts"]) for r in mine] == [
        ("bet", "confirmed", 1),
        ("win", "confirmed", 1),
        ("bet", "rolled-back", 1),
        ("rollback", "confirmed", 1),
    ]
    assert mine[0]["wire_amount"] == to_wire(STAKE, "GBP")
    assert mine[1]["reference"] == mine[0]["transaction_uuid"]
    as_csv = http.get(
        "/v1/reconciliation/wallet",
        http.finance_key,
        query_string={"date": day},
        headers={"Accept": "text/csv"},
    )
    lines = as_csv.get_data(as_text=True).splitlines()
    assert lines[0] == (
        "round,external_ref,method,transaction_uuid,reference,amount,wire_amount,currency,"
        "first_sent,final_state,final_at,attempts"
    )
    assert sum(player.external_ref in line for line in lines) == 4
    # no operator token in anything finance sees
    assert player.wallet_token not in as_csv.get_data(as_text=True)
    assert player.wallet_token not in rows.get_data(as_text=True)


def test_a_duel_s_fees_are_bets_and_its_prizes_wins(deployment: SeamlessDeployment) -> None:
    """Each seat's fee is a bet on its own round, taken only once confirmed; the settlement's
    prizes are wins (0 for a loser); the rake stays the house's and is not sent."""
    d = deployment
    a, b = open_player(d, FUNDS), open_player(d, FUNDS)
    first = d.http.post("/v1/duels", a.token, json={"fee": DUEL_FEE})
    assert first.status_code == 201, first.get_json()
    duel_id = first.get_json()["id"]
    second = d.http.post("/v1/duels", b.token, json={"fee": DUEL_FEE})
    assert second.status_code == 201, second.get_json()
    assert second.get_json()["id"] == duel_id
    assert second.get_json()["status"] == "full"
    for p in (a, b):
        assert kinds(d, p) == ["bet"]
        seat_call(d.http, p.token, duel_id, "deal")
        seat_call(d.http, p.token, duel_id, "actions", action="collect")
    settled = look(d.http, a.token, duel_id)
    assert settled["status"] == "settled"
    d.drain()
    wins = [next(e for e in journal(d, p) if e["kind"] == "win") for p in (a, b)]
    assert [kinds(d, p) for p in (a, b)] == [["bet", "win"], ["bet", "win"]]
    result = settled["result"]
    assert result["rake"] > 0
    assert sum(int(w["amount"]) for w in wins) == to_wire(2 * DUEL_FEE - result["rake"], "GBP")
    for p, win in zip((a, b), wins, strict=True):
        prize = sum(x["amount"] for x in result["payouts"] if x["player_id"] == p.id)
        assert win["amount"] == to_wire(prize, "GBP")
    for p in (a, b):
        assert_books_agree(d, p)
        assert mirror(d, p)[0] == 0  # nothing left owed in the server's wallet


def test_a_voided_duel_rolls_every_fee_back(deployment: SeamlessDeployment) -> None:
    d = deployment
    a = open_player(d, FUNDS)
    joined = d.http.post("/v1/duels", a.token, json={"fee": DUEL_FEE, "seats": 3})
    assert joined.status_code == 201, joined.get_json()
    duel_id = joined.get_json()["id"]
    voided = d.http.post(
        f"/v1/duels/{duel_id}/void", d.http.operator_key, json={"reason": "malfunction"}
    )
    assert voided.status_code == 200, voided.get_json()
    d.drain()
    assert kinds(d, a) == ["bet", "rollback"]
    assert player_funds(d, a) == FUNDS
    assert mirror(d, a) == (0, 0)


def test_a_refused_fee_takes_no_seat(deployment: SeamlessDeployment) -> None:
    d = deployment
    poor = open_player(d, DUEL_FEE - 1)
    refused = d.http.post("/v1/duels", poor.token, json={"fee": DUEL_FEE, "seats": 4})
    assert_problem(refused, 402, "wallet-insufficient-funds")
    assert kinds(d, poor) == []
    assert server_rows(d, poor) == [("bet", "refused", DUEL_FEE)]
    d.fault("bet", "timeout", delay_ms=TIMEOUT_MS * 2, when="after")
    rich = open_player(d, FUNDS)
    unknown = d.http.post("/v1/duels", rich.token, json={"fee": DUEL_FEE, "seats": 4})
    assert_problem(unknown, 503, "wallet-unavailable")
    d.drain()
    assert kinds(d, rich) == ["bet", "rollback"]
    assert player_funds(d, rich) == FUNDS


def player_funds(d: SeamlessDeployment, player: SeamlessPlayer) -> int:
    return player.wire_balance(d.wallet) // 1_000  # GBP: 1,000 wire units a penny


def test_the_projections_rebuild_from_the_log_with_the_wallet_s_mirror(
    deployment: SeamlessDeployment,
) -> None:
    """Every balance, the operator-wallet mirrors included, follows from the log alone."""
    d = deployment
    player = open_player(d, FUNDS)
    game_id = deal(d, player).get_json()["id"]
    d.http.post(f"/v1/games/{game_id}/collect", player.token, json={})
    d.drain()
    d.fault("bet", "timeout", delay_ms=TIMEOUT_MS * 2, when="after")
    assert_problem(deal(d, player), 503, "wallet-unavailable")
    d.drain()
    with d.web.unit_of_work() as uow:
        report = rebuild(uow, apply=False)
    assert report.differences == ()
    with d.web.unit_of_work() as uow:
        mirrors = uow.conn.execute(
            "SELECT count(*) FROM account_balances WHERE kind = 'operator-wallet'"
        ).fetchone()
    assert mirrors is not None
    assert mirrors[0] >= 1
