"""Finance over HTTP: the daily report (JSON and CSV) and the reconciliation, computed now and
stored by a real worker.

The session's database is shared with the tests that ran before, so the report is compared
before and after this test's own play, never by its absolute figures."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from service.bootstrap import Container
from service.games import GAMES
from service.runtime.config import Settings
from tests.api.client import Http, assert_problem
from tests.api.factories import Game, GameFactory, WalletFactory
from tests.builders import easy_deck
from tests.workers import logs, wait_for

COUNTS = ("games_started", "games_finished", "stakes", "payouts", "refunds")
TOTALS = (*COUNTS, "ggr", "rtp")
CSV_HEADER = [
    "day",
    "variant",
    "currency",
    "games_started",
    "games_finished",
    "stakes",
    "payouts",
    "refunds",
    "ggr",
    "rtp",
    "held_at_end",
]


def _today() -> date:
    return datetime.now(UTC).date()


def _report(http: Http, start: date, end: date, currency: str = "GBP") -> dict[str, Any]:
    response = http.get(
        f"/v1/reports/daily?from={start}&to={end}&currency={currency}", http.finance_key
    )
    assert response.status_code == 200, response.get_json()
    assert response.mimetype == "application/json"
    body: dict[str, Any] = response.get_json()
    return body


def _rtp(totals: dict[str, Any]) -> str | None:
    wagered = totals["stakes"] - totals["refunds"]
    if wagered <= 0:
        return None
    ratio = Decimal(totals["payouts"]) / Decimal(wagered)
    return str(ratio.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN))


def _assert_consistent(totals: dict[str, Any]) -> None:
    """GGR and RTP follow from the counts."""
    assert totals["ggr"] == totals["stakes"] - totals["payouts"] - totals["refunds"]
    assert totals["rtp"] == _rtp(totals)


def _diff(before: dict[str, Any], after: dict[str, Any], keys: tuple[str, ...]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in keys}


def _row(report: dict[str, Any], day: date, variant: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = report["days"]
    (row,) = [r for r in rows if r["day"] == day.isoformat() and r["variant"] == variant]
    return row


def _command(http: Http, game: Game, name: str, **body: Any) -> None:
    response = http.post(f"/v1/games/{game.id}/{name}", game.player.token, json=body or None)
    assert response.status_code == 200, response.get_json()


def _play_a_day(http: Http) -> None:
    """Three games: draw-one won 2 cards and collected (stake 520, paid 100), a certification
    deal, so in the sandbox currency (XTS); for real money, draw-three voided (stake 1,040
    refunded) and draw-one still open (stake 520 held)."""
    won = GameFactory.create(deck=list(easy_deck()))
    for _ in range(2):
        _command(http, won, "draw")
        _command(http, won, "move", **{"from": "waste", "to": "foundation"})
    _command(http, won, "collect")
    voided = GameFactory.create(variant="vegas-draw3", stake=1_040)
    answer = http.post(f"/v1/games/{voided.id}/void", http.operator_key, json={"reason": "test"})
    assert answer.status_code == 200, answer.get_json()
    GameFactory.create()


def test_the_daily_report_counts_a_days_play_by_variant(http: Http) -> None:
    today = _today()
    start = today - timedelta(days=2)
    before = _report(http, start, today)
    sandbox_before = _report(http, start, today, "XTS")
    _play_a_day(http)
    after = _report(http, start, today)
    sandbox_after = _report(http, start, today, "XTS")
    assert (after["sandbox"], sandbox_after["sandbox"]) == (False, True)

    assert (after["currency"], after["from"], after["to"]) == ("GBP", str(start), str(today))
    # Every day and variant has a row, in order, whether or not anyone played.
    grid = [(str(start + timedelta(days=d)), v) for d in range(3) for v in sorted(GAMES)]
    assert [(r["day"], r["variant"]) for r in after["days"]] == grid
    for row in after["days"]:
        _assert_consistent(row)
    for key in ("period", "month_to_date", "lifetime"):
        _assert_consistent(after[key])

    draw1 = _diff(_row(before, today, "vegas-draw1"), _row(after, today, "vegas-draw1"), COUNTS)
    assert draw1 == {
        "games_started": 1,
        "games_finished": 0,
        "stakes": 520,
        "payouts": 0,
        "refunds": 0,
    }
    # The certification game is the sandbox's, on its own report, never in real GGR.
    sandbox_draw1 = _diff(
        _row(sandbox_before, today, "vegas-draw1"),
        _row(sandbox_after, today, "vegas-draw1"),
        COUNTS,
    )
    assert sandbox_draw1 == {
        "games_started": 1,
        "games_finished": 1,
        "stakes": 520,
        "payouts": 100,
        "refunds": 0,
    }
    draw3 = _diff(_row(before, today, "vegas-draw3"), _row(after, today, "vegas-draw3"), COUNTS)
    assert draw3 == {
        "games_started": 1,
        "games_finished": 1,
        "stakes": 1_040,
        "payouts": 0,
        "refunds": 1_040,
    }
    held = {
        v: _row(after, today, v)["held_at_end"] - _row(before, today, v)["held_at_end"]
        for v in GAMES
    }
    assert held == dict.fromkeys(GAMES, 0) | {"vegas-draw1": 520}
    # Earlier days are as they were.
    assert [r for r in after["days"] if r["day"] != str(today)] == [
        r for r in before["days"] if r["day"] != str(today)
    ]

    mine = {"games_started": 2, "games_finished": 1, "stakes": 1_560, "payouts": 0}
    for key in ("period", "month_to_date", "lifetime"):
        change = _diff(before[key], after[key], (*COUNTS, "ggr"))
        assert change == {**mine, "refunds": 1_040, "ggr": 1_560 - 0 - 1_040}, key
    for count in COUNTS:
        assert after["period"][count] == sum(r[count] for r in after["days"])
        assert after["lifetime"][count] >= after["month_to_date"][count]
        assert after["lifetime"][count] >= after["period"][count]


def test_days_without_play_are_rows_of_zeros(http: Http) -> None:
    start = date(2001, 1, 30)  # long before any test played, across a month's end
    report = _report(http, start, date(2001, 2, 1))
    assert [(r["day"], r["variant"]) for r in report["days"]] == [
        (str(start + timedelta(days=d)), v) for d in range(3) for v in sorted(GAMES)
    ]
    zero = dict.fromkeys((*COUNTS, "ggr"), 0) | {"rtp": None}
    for row in report["days"]:
        assert {k: row[k] for k in TOTALS} == zero
        assert row["held_at_end"] == 0
    for key in ("period", "month_to_date", "lifetime"):
        assert report[key] == zero


def test_the_daily_report_as_csv(http: Http) -> None:
    today = _today()
    start = today - timedelta(days=1)
    GameFactory.create()  # something to count today
    json_report = _report(http, start, today)
    response = http.get(
        f"/v1/reports/daily?from={start}&to={today}&currency=GBP",
        http.finance_key,
        headers={"Accept": "text/csv"},
    )
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="daily-GBP-{start}-{today}.csv"'
    )
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == CSV_HEADER
    days, totals = rows[1:-3], rows[-3:]
    assert len(days) == len(json_report["days"]) == 2 * len(GAMES)
    for line, row in zip(days, json_report["days"], strict=True):
        assert line == [
            row["day"],
            row["variant"],
            "GBP",
            *(str(row[k]) for k in (*COUNTS, "ggr")),
            row["rtp"] or "",
            str(row["held_at_end"]),
        ]
    assert [t[:3] for t in totals] == [
        ["period", "all", "GBP"],
        ["month-to-date", "all", "GBP"],
        ["lifetime", "all", "GBP"],
    ]
    for line, key in zip(totals, ("period", "month_to_date", "lifetime"), strict=True):
        figures = json_report[key]
        assert line[3:] == [
            *(str(figures[k]) for k in (*COUNTS, "ggr")),
            figures["rtp"] or "",
            "",
        ]


def test_a_daily_report_request_is_validated(http: Http) -> None:
    today = _today()
    year_ago = today - timedelta(days=365)  # 366 days: the most one request may ask for
    assert len(_report(http, year_ago, today)["days"]) == 366 * len(GAMES)
    bad = {
        f"from={today}&to={today - timedelta(days=1)}&currency=GBP": "to",
        f"from={year_ago - timedelta(days=1)}&to={today}&currency=GBP": "to",
        f"from={today}&to={today}&currency=JPY": "currency",  # no paytable for it
        f"from={today}&to={today}&currency=gbp": "currency",
        f"from={today}&to={today}&currency=GBP%0A": "currency",  # a trailing newline: not GBP
        f"from={today}&to={today}": "currency",
        f"to={today}&currency=GBP": "from",
        f"from={today}&currency=GBP": "to",
        f"from=2024-13-01&to={today}&currency=GBP": "from",
        f"from={today}&to=tomorrow&currency=GBP": "to",
        f"from={today}&to={today}&currency=GBP&variant=vegas-draw1": "variant",
    }
    for query, field in bad.items():
        problem = assert_problem(
            http.get(f"/v1/reports/daily?{query}", http.finance_key), 422, "validation-error"
        )
        assert field in problem["errors"], (query, problem)


def _reconciliation(http: Http, token: str, day: date) -> dict[str, Any]:
    response = http.get(f"/v1/reconciliation?date={day}", token)
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def test_a_day_reconciles_and_a_worker_stores_it(
    http: Http, container: Container, worker: Settings
) -> None:
    today = _today()
    _play_a_day(http)
    computed = _reconciliation(http, http.finance_key, today)
    assert computed["date"] == str(today)
    assert computed["reconciled"] is True
    assert computed["mismatches"] == []
    assert (computed["stored"], computed["computed_at"]) == (False, None)
    gbp, sandbox = computed["currencies"]["GBP"], computed["currencies"]["XTS"]
    assert (gbp["balanced"], gbp["sandbox"]) == (True, False)
    assert gbp["events"] == gbp["ledger"]
    assert gbp["events"]["stake"] >= 1_560
    assert gbp["events"]["refund"] >= 1_040
    # the certification game's money reconciles on the sandbox's own line
    assert (sandbox["balanced"], sandbox["sandbox"]) == (True, True)
    assert sandbox["events"]["stake"] >= 520
    assert sandbox["events"]["winnings"] >= 100
    # Three stakes, a collection and a void today, and their five ledger transactions.
    assert computed["events_checked"] >= 5
    assert computed["ledger_transactions_checked"] >= 5
    assert _reconciliation(http, http.auditor_key, today) == computed

    container.send_task("vegas.reconcile_day", today.isoformat())

    def stored() -> bool:
        return bool(_reconciliation(http, http.finance_key, today)["stored"])

    assert wait_for(stored, timeout=60, every=0.1), logs(worker)
    kept = _reconciliation(http, http.auditor_key, today)
    assert kept["stored"] is True
    assert kept["computed_at"] is not None
    assert datetime.fromisoformat(kept["computed_at"]) <= datetime.now(UTC)
    assert kept["date"] == str(today)
    assert kept["reconciled"] is True
    assert kept["mismatches"] == []
    assert kept["currencies"]["GBP"]["balanced"] is True
    assert kept["currencies"]["GBP"]["events"]["stake"] >= gbp["events"]["stake"]


def test_days_at_the_ends_of_the_calendar_are_reported_and_reconciled(http: Http) -> None:
    for first, last in (("0001-01-01", "0001-01-31"), ("9999-12-01", "9999-12-31")):
        response = http.get(
            f"/v1/reports/daily?from={first}&to={last}&currency=GBP", http.finance_key
        )
        assert response.status_code == 200, response.get_json()
        assert len(response.get_json()["days"]) == 31 * len(GAMES)  # every game
        for day in (first, last):
            found = http.get(f"/v1/reconciliation?date={day}", http.finance_key)
            assert found.status_code == 200, found.get_json()
            assert found.get_json()["events_checked"] == 0


def test_a_quiet_day_reconciles_with_nothing_to_check(http: Http) -> None:
    quiet = _reconciliation(http, http.finance_key, date(2001, 1, 30))
    assert quiet == {
        "date": "2001-01-30",
        "reconciled": True,
        "currencies": {},
        "events_checked": 0,
        "ledger_transactions_checked": 0,
        "mismatches": [],
        "stored": False,
        "computed_at": None,
    }


def test_a_reconciliation_request_is_validated(http: Http) -> None:
    for query in ("date=yesterday", "date=2024-02-30", "", f"date={_today()}&currency=GBP"):
        assert_problem(
            http.get(f"/v1/reconciliation?{query}", http.finance_key), 422, "validation-error"
        )


# --- safer gambling -------------------------------------------------------------------------------


SAFER_COUNTS = (
    "deposits",
    "withdrawals",
    "net_deposits",
    "depositing_players",
    "limit_refusals",
    "exclusion_refusals",
    "reality_check_refusals",
    "time_outs",
    "self_exclusions",
    "reality_checks",
)


def _safer_today(http: Http) -> dict[str, int]:
    (line,) = _report(http, _today(), _today())["safer_gambling"]
    assert line["day"] == _today().isoformat()
    return {name: line[name] for name in SAFER_COUNTS}


def test_the_daily_report_counts_the_cashier_refusals_and_exclusions_of_the_day(
    http: Http,
) -> None:
    before = _safer_today(http)
    player = WalletFactory.create(balance=1_000).player
    out = http.post(
        f"/v1/players/{player.id}/withdrawals",
        http.operator_key,
        json={"amount": 200, "transaction_id": f"out-{uuid.uuid4()}"},
    )
    assert out.status_code == 201
    limit = http.put(f"/v1/players/{player.id}/limits/max-stake", player.token, json={"value": 52})
    assert limit.status_code == 200
    refused = http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 520})
    assert refused.status_code == 422
    taken = http.post(
        f"/v1/players/{player.id}/exclusions", player.token, json={"length": "six-weeks"}
    )
    assert taken.status_code == 201
    paid = http.post(
        f"/v1/players/{player.id}/deposits",
        http.operator_key,
        json={"amount": 100, "transaction_id": f"in-{uuid.uuid4()}"},
    )
    assert paid.status_code == 403
    after = _safer_today(http)
    assert {name: after[name] - before[name] for name in SAFER_COUNTS} == {
        "deposits": 1_000,
        "withdrawals": 200,
        "net_deposits": 800,
        "depositing_players": 1,
        "limit_refusals": 1,
        "exclusion_refusals": 1,
        "reality_check_refusals": 0,
        "time_outs": 1,
        "self_exclusions": 0,
        "reality_checks": 0,
    }
