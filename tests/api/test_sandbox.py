"""Certification games move no real money (issue 12): an operator's known deal, or a seat in a
certification duel, is played for the sandbox currency XTS, in the player's sandbox wallet,
against the sandbox's own house accounts. The player's real balance, the real house accounts
and the real currency's finance figures never move; every book still sums to zero per
currency, and the replay, the audit and the reconciliation find nothing wrong."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from psycopg import errors

from service.bootstrap import Container
from service.core import ledger
from service.runtime.config import Settings
from service.services import finance_books as finance
from tests.api.books import (
    REAL_HOUSE,
    SANDBOX_HOUSE,
    DbConn,
    account_balances,
    audit_done,
    balance,
    sandbox_balance,
    statement,
    stream_transactions,
    sums_by_currency,
    wallet,
)
from tests.api.client import Http, assert_problem
from tests.api.duel_support import FakeClock, clock, join, play_up, seat_call
from tests.api.factories import Player, PlayerFactory, WalletFactory, deal_certification
from tests.api.play import played, win_and_collect, winnings
from tests.builders import easy_deck

__all__ = ["clock"]

DECK = list(easy_deck())
COUNTS = ("games_started", "games_finished", "stakes", "payouts", "refunds", "ggr")


def _today() -> date:
    return datetime.now(UTC).date()


def _day_line(http: Http, currency: str, variant: str) -> dict[str, Any]:
    """Today's line of one variant in one currency's daily report."""
    day = _today()
    response = http.get(
        f"/v1/reports/daily?from={day}&to={day}&currency={currency}", http.finance_key
    )
    assert response.status_code == 200, response.get_json()
    report = response.get_json()
    assert report["sandbox"] is (currency == ledger.SANDBOX)
    (line,) = [r for r in report["days"] if r["variant"] == variant]
    return {k: line[k] for k in COUNTS}


def _change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in COUNTS}


def _real_books(conn: DbConn, *players: Player) -> dict[str, int | None]:
    """Every real balance a certification game could reach: its players' and the house's."""
    return account_balances(conn, *REAL_HOUSE, *(f"player:{p.id}" for p in players))


def _assert_replayed(http: Http, game_id: str) -> None:
    replay = http.get(f"/v1/games/{game_id}/replay", http.auditor_key).get_json()
    assert replay["verification"]["verified"] is True, replay["verification"]["findings"]
    assert set(replay["verification"]["checks"].values()) == {"pass"}


def _assert_reconciled(container: Container, currency: str = ledger.SANDBOX) -> None:
    """Today reconciles, computed now (a worker may have stored an earlier result), and
    ``currency`` is on a line of its own, labelled sandbox or not."""
    with container.unit_of_work() as uow:
        result = finance.reconcile(uow, _today())
    assert result["mismatches"] == []
    line = result["currencies"][currency]
    assert (line["sandbox"], line["balanced"]) == (ledger.is_sandbox(currency), True)


def test_a_certification_game_won_moves_sandbox_money_only(
    http: Http, container: Container, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=5_200).player
    real_before = _real_books(admin_conn, player)
    sandbox_house_before = account_balances(admin_conn, *SANDBOX_HOUSE)
    gbp_before = _day_line(http, "GBP", "vegas-draw1")
    xts_before = _day_line(http, ledger.SANDBOX, "vegas-draw1")

    game_id = deal_certification(http, player, DECK, variant="vegas-draw1", stake=1_040)
    seen = http.get(f"/v1/games/{game_id}", player.token).get_json()
    assert (seen["certification"], seen["currency"], seen["stake"]) == (True, "XTS", 1_040)
    # The stake is held in the sandbox; the real wallet holds nothing and has lost nothing.
    assert wallet(http, player) == {
        "player_id": player.id,
        "currency": "GBP",
        "balance": 5_200,
        "held": 0,
        "open_game_id": game_id,
        "sandbox": {"currency": "XTS", "balance": -1_040, "held": 1_040},
        "wallet_mode": "transfer",
        "unsettled": 0,
    }

    done = win_and_collect(http, player.token, game_id)
    assert (done["status"], done["units"], done["currency"]) == ("collected", 52, "XTS")
    assert done["payout"] == 5 * 1_040
    assert wallet(http, player)["sandbox"] == {"currency": "XTS", "balance": 4_160, "held": 0}
    assert balance(http, player) == 5_200
    assert statement(http, player) == [("deposit", 5_200, None)]
    assert statement(http, player, "sandbox") == [
        ("winnings", 5_200, f"game-{game_id}"),
        ("stake", -1_040, f"game-{game_id}"),
    ]
    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()["items"]
    assert [(h["game_id"], h["currency"], h["certification"]) for h in history] == [
        (game_id, "XTS", True)
    ]

    # The books: only sandbox accounts moved, and each currency still sums to zero.
    assert stream_transactions(admin_conn, f"game-{game_id}") == [
        ("stake", "XTS", {f"sandbox:{player.id}": -1_040, "house-stakes:XTS": 1_040}),
        ("winnings", "XTS", {"house-payouts:XTS": -5_200, f"sandbox:{player.id}": 5_200}),
    ]
    assert _real_books(admin_conn, player) == real_before
    sandbox_house = account_balances(admin_conn, *SANDBOX_HOUSE)
    moved = {a: (sandbox_house[a] or 0) - (sandbox_house_before[a] or 0) for a in SANDBOX_HOUSE}
    assert moved == {"house-stakes:XTS": 1_040, "house-payouts:XTS": -5_200, "house-rake:XTS": 0}
    assert set(sums_by_currency(admin_conn).values()) == {0}

    # Finance: the real GGR never sees it; the sandbox reports it on its own line.
    assert _change(gbp_before, _day_line(http, "GBP", "vegas-draw1")) == dict.fromkeys(COUNTS, 0)
    assert _change(xts_before, _day_line(http, ledger.SANDBOX, "vegas-draw1")) == {
        "games_started": 1,
        "games_finished": 1,
        "stakes": 1_040,
        "payouts": 5_200,
        "refunds": 0,
        "ggr": -4_160,
    }
    _assert_replayed(http, game_id)
    _assert_reconciled(container)
    # Over HTTP, stored (by a worker, perhaps before the sandbox existed) or not, every
    # currency's line says whether it is the sandbox's.
    body = http.get(f"/v1/reconciliation?date={_today()}", http.finance_key).get_json()
    assert body["currencies"], body
    for currency, line in body["currencies"].items():
        assert line["sandbox"] is ledger.is_sandbox(currency)


@pytest.mark.parametrize("ending", ["collected", "voided"])
def test_a_certification_game_lost_or_voided_moves_sandbox_money_only(
    http: Http, container: Container, admin_conn: DbConn, ending: str
) -> None:
    """Collected with a card or two (a loss at this stake), or voided with the stake refunded;
    the player has no real money at all, and needs none."""
    player = PlayerFactory.create()
    real_before = _real_books(admin_conn, player)
    game_id = deal_certification(http, player, DECK, variant="vegas-draw1", stake=520)
    if ending == "collected":
        played(http, player.token, game_id, {"action": "draw"})
        played(http, player.token, game_id, {"action": "move", "from": "waste", "to": "foundation"})
        done = played(http, player.token, game_id, {"action": "collect"})
        owed = winnings("vegas-draw1", 1, 520)
        assert (done["payout"], done["refund"]) == (owed, 0)
        money = [("winnings", owed), ("stake", -520)]
    else:
        answer = http.post(f"/v1/games/{game_id}/void", http.operator_key, json={"reason": "lab"})
        assert answer.status_code == 200, answer.get_json()
        done = answer.get_json()
        assert (done["status"], done["refund"]) == ("voided", 520)
        money = [("refund", 520), ("stake", -520)]
    assert done["currency"] == "XTS"
    assert statement(http, player, "sandbox") == [(k, a, f"game-{game_id}") for k, a in money]
    assert sandbox_balance(http, player) == sum(a for _, a in money)
    assert (balance(http, player), statement(http, player)) == (0, [])
    assert _real_books(admin_conn, player) == real_before
    assert {currency for _, currency, _ in stream_transactions(admin_conn, f"game-{game_id}")} == {
        "XTS"
    }
    assert set(sums_by_currency(admin_conn).values()) == {0}
    _assert_replayed(http, game_id)
    _assert_reconciled(container)


def test_a_certification_duel_pays_fees_prize_and_rake_in_the_sandbox(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn
) -> None:
    fee = 1_000
    a, b = (WalletFactory.create(balance=3_000).player for _ in range(2))
    real_before = _real_books(admin_conn, a, b)
    gbp_before = _day_line(http, "GBP", "klondike-duel")
    xts_before = _day_line(http, ledger.SANDBOX, "klondike-duel")

    opened = join(http, a.id, fee, deck=DECK)
    duel_id = opened["id"]
    assert (opened["certification"], opened["currency"]) == (True, "XTS")
    assert join(http, b.id, fee)["id"] == duel_id
    assert [sandbox_balance(http, p) for p in (a, b)] == [-1_000, -1_000]
    dealt = seat_call(http, a.token, duel_id, "deal")
    assert dealt["you"]["game"]["currency"] == "XTS"
    play_up(http, a.token, duel_id, dealt)  # A wins the deal
    seat_call(http, b.token, duel_id, "deal")
    settled = seat_call(http, b.token, duel_id, "actions", action="collect")
    assert settled["status"] == "settled"
    assert (settled["result"]["pot"], settled["result"]["rake"]) == (2_000, 200)

    stream = f"duel-{duel_id}"
    assert statement(http, a, "sandbox") == [
        ("duel-prize", 1_800, stream),
        ("duel-fee", -1_000, stream),
    ]
    assert statement(http, b, "sandbox") == [("duel-fee", -1_000, stream)]
    assert [sandbox_balance(http, p) for p in (a, b)] == [800, -1_000]
    assert [balance(http, p) for p in (a, b)] == [3_000, 3_000]
    pot = f"duel-pot:{duel_id}"
    assert stream_transactions(admin_conn, stream) == [
        ("duel-fee", "XTS", {f"sandbox:{a.id}": -1_000, pot: 1_000}),
        ("duel-fee", "XTS", {f"sandbox:{b.id}": -1_000, pot: 1_000}),
        ("duel-prize", "XTS", {pot: -2_000, f"sandbox:{a.id}": 1_800, "house-rake:XTS": 200}),
    ]
    assert _real_books(admin_conn, a, b) == real_before
    assert set(sums_by_currency(admin_conn).values()) == {0}

    replay = http.get(f"/v1/duels/{duel_id}/replay", http.auditor_key).get_json()
    assert replay["verification"]["findings"] == []
    assert set(replay["verification"]["checks"].values()) == {"pass"}
    assert _change(gbp_before, _day_line(http, "GBP", "klondike-duel")) == dict.fromkeys(COUNTS, 0)
    assert _change(xts_before, _day_line(http, ledger.SANDBOX, "klondike-duel")) == {
        "games_started": 2,
        "games_finished": 2,
        "stakes": 2_000,
        "payouts": 1_800,
        "refunds": 0,
        "ggr": 200,
    }
    _assert_reconciled(container)


def test_an_audit_of_a_player_with_sandbox_money_finds_nothing(
    http: Http, worker: Settings
) -> None:
    player = WalletFactory.create(balance=520).player
    won = deal_certification(http, player, DECK, variant="vegas-draw1", stake=520)
    win_and_collect(http, player.token, won)
    played(http, player.token, deal_certification(http, player, DECK), {"action": "draw"})
    started = http.post("/v1/audits", http.auditor_key, json={"player_id": player.id})
    assert started.status_code == 202, started.get_json()
    done = audit_done(http, started.headers["Location"], worker)
    assert done["checked"] == done["total"] == 2 + 1 + 1  # two games, the player, the ledger
    assert (done["failed_units"], done["findings"]) == (0, [])


def test_a_certification_game_dealt_before_the_sandbox_keeps_its_real_money(
    http: Http, container: Container, admin_conn: DbConn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game recorded by an earlier version, when certification games staked real money, is
    played out, paid and verified in the money it was staked in: the currency its stream
    recorded, never rewritten."""
    player = WalletFactory.create(balance=1_040).player
    with monkeypatch.context() as before_the_sandbox:
        before_the_sandbox.setattr(ledger, "game_currency", lambda currency, _: currency)
        game_id = deal_certification(http, player, DECK, variant="vegas-draw1", stake=1_040)
    assert balance(http, player) == 0
    done = win_and_collect(http, player.token, game_id)
    assert (done["currency"], done["certification"], done["payout"]) == ("GBP", True, 5_200)
    assert balance(http, player) == 5_200
    assert sandbox_balance(http, player) == 0
    assert {currency for _, currency, _ in stream_transactions(admin_conn, f"game-{game_id}")} == {
        "GBP"
    }
    _assert_replayed(http, game_id)
    _assert_reconciled(container, "GBP")


def test_no_player_is_opened_in_the_sandbox_currency(http: Http) -> None:
    opened = http.post(
        "/v1/players", http.operator_key, json={"external_ref": "lab-xts", "currency": "XTS"}
    )
    problem = assert_problem(opened, 422, "rule-violation", "unknown-currency")
    assert "sandbox" in problem["detail"]


def test_a_real_wallet_is_never_in_the_sandbox_currency(admin_conn: DbConn) -> None:
    """The database holds the line too: a real wallet in XTS, or a sandbox one in real money,
    cannot be opened."""
    for account_id, kind, currency in (
        ("player:x", "player", "XTS"),
        ("sandbox:x", "sandbox", "GBP"),
    ):
        with pytest.raises(errors.CheckViolation):
            admin_conn.execute(
                "INSERT INTO accounts (account_id, kind, currency, player_id)"
                " VALUES (%s, %s, %s, gen_random_uuid())",
                (account_id, kind, currency),
            )
