"""The console in a real browser: the app served over real HTTP (werkzeug's threaded server on
a free port, on the session's PostgreSQL), Debian's Chromium driven by Selenium, and a
screenshot of the page saved under .data/browser-artifacts/ when a test fails."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from selenium import webdriver
from werkzeug.serving import make_server

from service.app import create_app
from service.bootstrap import Container
from service.runtime.config import PROJECT_ROOT
from tests.api.client import Http
from tests.browser import chromium

ARTIFACTS = PROJECT_ROOT / ".data" / "browser-artifacts"


@dataclass(frozen=True)
class Live:
    url: str
    http: Http  # the same app through its test client, for setting a scene up


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def console_app(container: Container) -> Flask:
    return create_app(container)


@pytest.fixture(scope="session")
def live(console_app: Flask, container: Container) -> Iterator[Live]:
    keys = {
        role: container.access.create_key(f"browser-{role}", role)
        for role in ("operator", "auditor", "finance")
    }
    server = make_server("127.0.0.1", 0, console_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="console-server", daemon=True)
    thread.start()
    try:
        yield Live(
            f"http://127.0.0.1:{server.server_port}",
            Http(console_app.test_client(), keys["operator"], keys["auditor"], keys["finance"]),
        )
    finally:
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser_installed() -> None:
    try:
        chromium.ensure_installed()
    except chromium.BrowserMissing as missing:
        pytest.fail(str(missing))


@pytest.fixture
def browser(
    browser_installed: None, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[webdriver.Chrome]:
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = chromium.start(downloads)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        failed = getattr(request.node, "report_call", None)
        if failed is not None and failed.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
            driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
            (ARTIFACTS / f"{name}.html").write_text(driver.page_source)
        driver.quit()


@pytest.fixture
def downloads(browser: webdriver.Chrome, tmp_path: Path) -> Path:
    return tmp_path / "downloads"
