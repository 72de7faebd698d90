"""A thin HTTP helper over the app's test client: who is calling, and problem assertions."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse


@dataclass
class Http:
    client: FlaskClient
    operator_key: str
    auditor_key: str
    finance_key: str
    extra_headers: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def bearer(token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    def call(
        self,
        method: str,
        path: str,
        token: str | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> TestResponse:
        sent = {**self.bearer(token), **(headers or {})}
        return self.client.open(path, method=method, json=json, headers=sent, **kwargs)

    def get(self, path: str, token: str | None = None, **kwargs: Any) -> TestResponse:
        return self.call("GET", path, token, **kwargs)

    def post(self, path: str, token: str | None = None, **kwargs: Any) -> TestResponse:
        return self.call("POST", path, token, **kwargs)

    def put(self, path: str, token: str | None = None, **kwargs: Any) -> TestResponse:
        return self.call("PUT", path, token, **kwargs)


def assert_problem(
    response: TestResponse, status: int, slug: str, rule: str | None = None
) -> dict[str, Any]:
    """The response is an RFC 9457 problem of this status and type."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    assert body["type"] == f"/problems/{slug}"
    assert body["status"] == status
    assert body["title"]
    assert body["detail"]
    if rule is not None:
        assert body["rule"] == rule
    return body


def assert_salted_commitment(view: dict[str, Any], deck: Sequence[str]) -> None:
    """A game dealt from a given deck commits to it salted (64 hex digits), never to the bare
    deck, whose few unseen cards a player could otherwise search for near the end."""
    commitment = view["seed_commitment"]
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    assert commitment != hashlib.sha256(" ".join(deck).encode("ascii")).hexdigest()
