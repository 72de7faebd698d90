"""Helpers for duels over HTTP: the server's clock, moved by the tests, and seat play."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from service.wiring import Container
from tests.api.client import Http


@dataclass
class FakeClock:
    """The server's clock as the duel and game services read it; tests move it, never sleep."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(container: Container, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock(datetime.now(UTC))
    monkeypatch.setattr(container.duels, "clock", fake)
    monkeypatch.setattr(container.games, "clock", fake)
    return fake


def join(http: Http, player_id: str, fee: int, **extra: Any) -> dict[str, Any]:
    """An operator seats a player in a certification duel (opening one from ``deck``/``seed``)."""
    body = {"fee": fee, "player_id": player_id, "certification": True, **extra}
    response = http.post("/v1/duels", http.operator_key, json=body)
    assert response.status_code == 201, response.get_json()
    view: dict[str, Any] = response.get_json()
    return view


def seat_call(http: Http, token: str, duel_id: str, path: str, **body: Any) -> dict[str, Any]:
    response = http.post(f"/v1/duels/{duel_id}/{path}", token, json=body)
    assert response.status_code == 200, (path, body, response.get_json())
    view: dict[str, Any] = response.get_json()
    return view
