"""The console's server side: its page and files served under /console/ with a strict content
policy and nothing from elsewhere, who a token is (GET /v1/whoami), and the finance charts
(GET /v1/reports/daily/chart). The console itself is driven in a browser by tests/browser."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from service.console import STATIC
from service.rtp.published import publication
from tests.api.client import Http, assert_problem
from tests.api.factories import PlayerFactory
from tests.api.real_money import Session
from tests.builders import easy_deck


def test_the_console_page_is_served_with_a_strict_policy(http: Http) -> None:
    page = http.get("/console/")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    assert "Vegas Solitaire console" in page.get_data(as_text=True)
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert http.get("/console").status_code == 308
    for name in ("console.js", "console.css"):
        served = http.get(f"/console/static/{name}")
        assert served.status_code == 200
        assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert http.get("/console/static/nothing.js").status_code == 404


def test_the_console_fetches_nothing_from_elsewhere() -> None:
    """No CDN, no remote font: every file refers only to the app's own paths."""
    for path in STATIC.iterdir():
        text = path.read_text()
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path.name
        assert "@import" not in text
        assert "url(http" not in text


def test_the_console_keeps_the_token_out_of_urls() -> None:
    script = (STATIC / "console.js").read_text()
    assert "sessionStorage" in script
    assert "localStorage" not in script
    assert not re.search(r"[?&](token|key)=", script)


def test_whoami_names_a_player_and_each_staff_role(http: Http) -> None:
    player = PlayerFactory.create()
    me = http.get("/v1/whoami", player.token)
    assert me.status_code == 200, me.get_json()
    assert me.get_json() == {"role": "player", "actor": player.id, "player_id": player.id}
    for role, key in (
        ("operator", http.operator_key),
        ("auditor", http.auditor_key),
        ("finance", http.finance_key),
    ):
        body = http.get("/v1/whoami", key).get_json()
        assert body["role"] == role
        assert body["player_id"] is None
        assert body["actor"].startswith("key:")
    assert_problem(http.get("/v1/whoami"), 401, "unauthorized")
    assert_problem(http.get("/v1/whoami", "not-a-token"), 401, "unauthorized-malformed")


def _chart(http: Http, query: str, key: str | None = None) -> str:
    response = http.get(f"/v1/reports/daily/chart?{query}", key or http.finance_key)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "image/svg+xml"
    return str(response.get_data(as_text=True))


def _values(svg: str) -> list[str]:
    return re.findall(r'<desc class="value">([^<]*)</desc>', svg)


def test_the_charts_draw_the_daily_reports_figures(session: Session) -> None:
    http = session.http
    today = datetime.now(UTC).date()
    span = f"from={today - timedelta(days=2)}&to={today}&currency=XTS"
    before = http.get(f"/v1/reports/daily?{span}", http.finance_key).get_json()
    game_id, _ = session.deal("vegas-draw1", 520, deck=list(easy_deck()))
    session.play(game_id, action="draw")
    session.play(game_id, action="move", **{"from": "waste", "to": "foundation"})
    session.collect(game_id, "vegas-draw1", 520, 1)
    report = http.get(f"/v1/reports/daily?{span}", http.finance_key).get_json()
    assert report["period"]["stakes"] == before["period"]["stakes"] + 520

    money = _chart(http, f"{span}&chart=money")
    assert "<svg" in money
    assert 'xlink:href="//' not in money  # no tooltips script from a CDN
    stakes_today = sum(d["stakes"] for d in report["days"] if d["day"] == str(today))
    assert f"{stakes_today / 100:g}" in _values(money)
    one = _chart(http, f"{span}&chart=money&variant=golf")
    golf_today = sum(
        d["stakes"] for d in report["days"] if d["day"] == str(today) and d["variant"] == "golf"
    )
    assert f"{golf_today / 100:g}" in _values(one)

    # The period's totals of each game: the days' sums, with the RTP the chart draws.
    vegas = next(v for v in report["variants"] if v["variant"] == "vegas-draw1")
    for name in ("games_started", "games_finished", "stakes", "payouts", "refunds", "ggr"):
        assert vegas[name] == sum(
            d[name] for d in report["days"] if d["variant"] == "vegas-draw1"
        ), name
    assert {v["variant"] for v in report["variants"]} == {d["variant"] for d in report["days"]}
    # Beside each game's actual RTP, the RTP it publishes (the strong player's once measured).
    shown = publication("vegas-draw1")
    assert shown is not None
    assert vegas["published"]["rtp"] == shown.displayed.rtp
    assert vegas["published"]["player"] == shown.displayed.player

    rtp = _chart(http, f"{span}&chart=rtp")
    assert f"{float(vegas['rtp']):g}" in _values(rtp)
    # Against the RTP each game displays: the strong player's (service/rtp/published.py).
    published = publication("vegas-draw1")
    assert published is not None
    assert f"{float(published.displayed.rtp):g}" in _values(rtp)
    daily = _chart(http, f"{span}&chart=rtp&variant=vegas-draw1")
    today_line = next(
        d for d in report["days"] if d["day"] == str(today) and d["variant"] == "vegas-draw1"
    )
    assert f"{float(today_line['rtp']):g}" in _values(daily)
    assert _values(daily).count(f"{float(published.displayed.rtp):g}") == len(
        [d for d in report["days"] if d["variant"] == "vegas-draw1"]
    )


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("chart=pie", "chart"),
        ("variant=snap", "variant"),
        ("colour=red", "colour"),
    ],
)
def test_a_chart_request_is_validated(http: Http, query: str, field: str) -> None:
    today = datetime.now(UTC).date()
    response = http.get(
        f"/v1/reports/daily/chart?from={today}&to={today}&currency=GBP&{query}", http.finance_key
    )
    body = assert_problem(response, 422, "validation-error")
    assert field in str(body.get("errors", body))


def test_only_finance_may_fetch_the_charts(http: Http) -> None:
    today = datetime.now(UTC).date()
    path = f"/v1/reports/daily/chart?from={today}&to={today}&currency=GBP"
    player = PlayerFactory.create()
    assert_problem(http.get(path, player.token), 403, "forbidden")
    assert_problem(http.get(path, http.auditor_key), 403, "forbidden")
    assert_problem(http.get(path), 401, "unauthorized")
