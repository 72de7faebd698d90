"""A real Prometheus (Debian's, installed if missing) scrapes the service as `make run` starts
it (issue 38): every process's figures through the web's one /metrics, the series there and
changing as a game is played, and the alert rules loaded."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import requests
import yaml

from service.bootstrap import Container
from service.runtime.config import PROJECT_ROOT, Settings
from tests.debian import missing_after_install
from tests.integration.test_supervision import _environment, _free_port, _wait, supervised

RULES = PROJECT_ROOT / "ops" / "prometheus" / "alerts.yml"


def _query(base: str, expr: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{base}/api/v1/query", params={"query": expr}, timeout=5).json()
    assert answer["status"] == "success", answer
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def _total(base: str, expr: str) -> float:
    return sum(float(r["value"][1]) for r in _query(base, expr))


def test_a_real_prometheus_scrapes_the_service_as_make_run_starts_it(
    settings: Settings, container: Container, tmp_path: Path
) -> None:
    missing = missing_after_install({"prometheus": "prometheus"}, recommends=False)
    assert missing == [], f"Debian's {missing} could not be installed (apt-get, as root)"
    operator = container.access.create_key(f"prometheus-{uuid.uuid4().hex[:8]}", "operator")
    with supervised(_environment(settings, tmp_path, embedded=False), tmp_path) as service:
        api = f"http://127.0.0.1:{service.port}"
        port = _free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(RULES)],
                    "scrape_configs": [
                        {
                            "job_name": "vegas",
                            "static_configs": [{"targets": [f"127.0.0.1:{service.port}"]}],
                        }
                    ],
                }
            )
        )
        log = (tmp_path / "prometheus.log").open("wb")
        prometheus = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:

            def scraped() -> bool:
                try:
                    return _total(base, 'up{job="vegas"}') == 1
                except (requests.RequestException, ValueError, KeyError):
                    return False

            assert _wait(scraped, 60), (tmp_path / "prometheus.log").read_text()[-2000:]
            staff = {"Authorization": f"Bearer {operator}"}
            opened = requests.post(
                f"{api}/v1/players",
                json={"external_ref": f"prom-{uuid.uuid4()}", "currency": "GBP"},
                headers=staff,
                timeout=10,
            )
            player = opened.json()["id"]
            paid = requests.post(
                f"{api}/v1/players/{player}/deposits",
                json={"amount": 5_200, "transaction_id": str(uuid.uuid4())},
                headers=staff,
                timeout=30,
            )
            assert paid.status_code == 201, paid.text
            token = requests.post(
                f"{api}/v1/players/{player}/sessions", headers=staff, timeout=10
            ).json()["token"]
            me = {"Authorization": f"Bearer {token}"}

            def dealt() -> float:
                return _total(base, 'vegas_games_total{event="dealt"}')

            before = dealt()
            game = requests.post(
                f"{api}/v1/games",
                json={"variant": "vegas-draw1", "stake": 520},
                headers=me,
                timeout=10,
            ).json()["id"]
            requests.post(f"{api}/v1/games/{game}/collect", json={}, headers=me, timeout=10)
            assert _wait(lambda: dealt() == before + 1, 30)
            assert _total(base, 'vegas_http_requests_total{route="/v1/games",status="201"}') >= 1
            # The worker's and beat's figures reach the web's /metrics too (one folder).
            assert _wait(lambda: _total(base, "vegas_tasks_total") > 0, 60)
            assert _total(base, "vegas_database_figures_up") == 1
            assert _total(base, "vegas_build_info") >= 1
            names = {r["metric"]["__name__"] for r in _query(base, '{__name__=~"vegas_.+"}')}
            assert len(names) >= 20, sorted(names)
            rules = requests.get(f"{base}/api/v1/rules", timeout=5).json()["data"]["groups"]
            assert sum(len(g["rules"]) for g in rules) == len(
                [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]
            )
        finally:
            prometheus.terminate()
            try:
                prometheus.wait(10)
            except subprocess.TimeoutExpired:
                prometheus.kill()
            log.close()
