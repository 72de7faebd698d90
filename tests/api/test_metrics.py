"""GET /metrics (issue 38): the processes' figures and the database's, in Prometheus' text
format, changing as games are played; no id, token or card in any label; open on this host's
loopback interface, a staff key's anywhere else."""

from __future__ import annotations

import re
import uuid

from prometheus_client.parser import text_string_to_metric_families

from tests.api.client import Http, assert_problem
from tests.api.factories import WalletFactory
from tests.api.play import CARD_TOKEN

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def scrape(http: Http, **kwargs: object) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = http.get("/metrics", **kwargs)  # type: ignore[arg-type]
    assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
    assert answer.content_type.startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(answer.get_data(as_text=True)):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_the_figures_change_as_games_are_played(http: Http) -> None:
    before = scrape(http)
    player = WalletFactory.create(balance=5_200).player
    dealt = http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 520})
    assert dealt.status_code == 201
    game_id = dealt.get_json()["id"]
    assert http.post(f"/v1/games/{game_id}/draw", player.token).status_code == 200  # hot path
    assert http.post(f"/v1/games/{game_id}/collect", player.token, json={}).status_code == 200
    assert_problem(
        http.post(f"/v1/games/{game_id}/collect", player.token, json={}), 409, "game-finished"
    )
    after = scrape(http)

    def grew(name: str, by: float, **labels: str) -> None:
        assert value(after, name, **labels) - value(before, name, **labels) == by, (name, labels)

    grew("vegas_games_total", 1, variant="vegas-draw1", event="dealt")
    grew("vegas_games_total", 1, variant="vegas-draw1", event="collected")
    grew("vegas_stakes_minor_units_total", 520, variant="vegas-draw1", currency="GBP")
    grew("vegas_http_requests_total", 1, method="POST", route="/v1/games", status="201")
    grew(
        "vegas_http_requests_total",
        1,
        method="POST",
        route="/v1/games/<uuid:game_id>/draw",
        status="200",
    )
    grew("vegas_problems_total", 1, type="game-finished")
    assert (
        value(after, "vegas_http_request_duration_seconds_count", method="POST", route="/v1/games")
        >= 1
    )
    assert value(after, "vegas_database_figures_up") == 1
    assert ("vegas_duels", (("state", "open"),)) in after
    assert (
        value(
            after,
            "vegas_build_info",
            version="0.1.0",
            commit=next(
                dict(labels)["commit"] for name, labels in after if name == "vegas_build_info"
            ),
        )
        == 1
    )


def test_no_label_holds_an_id_a_token_or_a_card(http: Http) -> None:
    player = WalletFactory.create(balance=5_200).player
    game_id = http.post(
        "/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 520}
    ).get_json()["id"]
    http.get(f"/v1/games/{game_id}", player.token)
    http.get(f"/v1/games/{uuid.uuid4()}", player.token)  # a 404 of a route with an id
    http.get(f"/nowhere/{uuid.uuid4()}")  # no route at all
    text = http.get("/metrics").get_data(as_text=True)
    labels = [
        value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        for name, value in sample.labels.items()
        if name != "commit"
    ]
    assert labels
    assert [v for v in labels if UUID.search(v)] == []
    assert [v for v in labels if "vsp_" in v or "vsk_" in v or player.token in v] == []
    assert [v for v in labels if CARD_TOKEN.search(v) and not v.startswith("/")] == []


def test_metrics_beyond_the_loopback_need_a_staff_key(http: Http) -> None:
    player = WalletFactory.create(balance=0).player
    away = {"REMOTE_ADDR": "203.0.113.9"}
    assert_problem(http.get("/metrics", environ_base=away), 401, "unauthorized")
    assert_problem(http.get("/metrics", player.token, environ_base=away), 403, "forbidden")
    scrape(http, token=http.finance_key, environ_base=away)
    proxied = http.get("/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
    assert_problem(proxied, 401, "unauthorized")
    scrape(http)  # this host's own Prometheus
