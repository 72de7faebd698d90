"""The app over the session's real PostgreSQL, staff keys for each role, and the factories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask

from service.app import create_app
from service.bootstrap import Container
from service.services.access import key_actor
from tests.api.client import Http
from tests.api.factories import Calls, WalletFactory
from tests.api.real_money import FUNDS, Session


@pytest.fixture(scope="session")
def app(container: Container) -> Flask:
    app = create_app(container)
    app.config["TESTING"] = True
    return app


@pytest.fixture(scope="session")
def staff_keys(container: Container) -> dict[str, str]:
    return {
        role: container.access.create_key(f"test-{role}", role)
        for role in ("operator", "auditor", "finance")
    }


@pytest.fixture(scope="session")
def staff_actors(container: Container, staff_keys: dict[str, str]) -> dict[str, str]:
    """How each test staff key is named in events and logs: by its id, never its name."""
    live = {k.name: k.key_id for k in container.access.list_keys() if k.revoked_at is None}
    return {role: key_actor(live[f"test-{role}"]) for role in staff_keys}


@pytest.fixture
def http(app: Flask, staff_keys: dict[str, str]) -> Iterator[Http]:
    helper = Http(
        app.test_client(),
        staff_keys["operator"],
        staff_keys["auditor"],
        staff_keys["finance"],
    )
    Calls.http = helper
    yield helper
    Calls.http = None


@pytest.fixture
def session(http: Http) -> Session:
    """A funded player's afternoon of certification games (tests.api.real_money)."""
    return Session(http, WalletFactory.create(balance=FUNDS).player)
