"""The alert rules (ops/prometheus/alerts.yml, issue 38): valid for Prometheus' own promtool,
each firing on series named as GET /metrics names them (alerts_test.yml), every metric they use
present in a live scrape, and a runbook paragraph for each in docs/runbook.md."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from service.bootstrap import Container
from tests.api.client import Http
from tests.api.factories import WalletFactory
from tests.credentials import sign_checkpoint
from tests.debian import missing_after_install

PROJECT = Path(__file__).resolve().parents[2]
RULES = PROJECT / "ops" / "prometheus" / "alerts.yml"
RULE_TESTS = PROJECT / "ops" / "prometheus" / "alerts_test.yml"
RUNBOOK = PROJECT / "docs" / "runbook.md"
METRIC = re.compile(r"\bvegas_[a-z_]+\b")


@pytest.fixture(scope="module")
def promtool() -> str:
    """Debian's promtool, installed (without its recommends) if missing: never skipped."""
    missing = missing_after_install({"promtool": "prometheus"}, recommends=False)
    assert missing == [], f"Debian's {missing} could not be installed (apt-get, as root)"
    return "promtool"


def _alerts() -> list[dict[str, object]]:
    document = yaml.safe_load(RULES.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def test_promtool_checks_the_rules_and_fires_each_alert(promtool: str) -> None:
    checked = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    fired = subprocess.run(
        [promtool, "test", "rules", str(RULE_TESTS)], capture_output=True, text=True
    )
    assert fired.returncode == 0, fired.stdout + fired.stderr
    tested = set(re.findall(r"alertname: (\w+)", RULE_TESTS.read_text()))
    assert tested == {str(rule["alert"]) for rule in _alerts()}


def test_every_metric_the_rules_use_is_in_a_live_scrape(http: Http, container: Container) -> None:
    player = WalletFactory.create(balance=5_200).player
    game = http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 520})
    http.post(f"/v1/games/{game.get_json()['id']}/draw", player.token)
    sign_checkpoint(container, "beat")
    scraped = http.get("/metrics").get_data(as_text=True)
    names = {line.split("{")[0].split(" ")[0] for line in scraped.splitlines() if line[:1] != "#"}
    used = {name for rule in _alerts() for name in METRIC.findall(str(rule["expr"]))}
    assert used
    assert sorted(used - names) == []


def test_each_alert_has_a_runbook_paragraph() -> None:
    text = RUNBOOK.read_text()
    headings = {line[3:].strip().lower() for line in text.splitlines() if line.startswith("## ")}
    for rule in _alerts():
        name = str(rule["alert"])
        assert name.lower() in headings, name
        annotations = rule["annotations"]
        assert isinstance(annotations, dict)
        assert annotations["runbook"] == f"docs/runbook.md#{name.lower()}"
