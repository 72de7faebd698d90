"""Bad input over real HTTP (gunicorn, as deployed): bodies however they are framed. A retry's
Idempotency-Key is matched against the body whether it came with a Content-Length or chunked;
a body nested too deep, an integer too long or a chunked body over the size cap is a clear 4xx
problem and changes nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from service.bootstrap import Container
from tests.api.test_gunicorn import Server, _check, gunicorn

__all__ = ["gunicorn"]


def _chunked(body: bytes, size: int = 1024) -> Iterator[bytes]:
    """The body as requests sends a generator: Transfer-Encoding: chunked, no Content-Length."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.fixture(scope="module")
def operator(container: Container) -> dict[str, str]:
    key = container.access.create_key(f"bad-input-{uuid.uuid4().hex[:8]}", "operator")
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def player(gunicorn: Server, operator: dict[str, str]) -> str:
    body = {"external_ref": f"bad-input-{uuid.uuid4()}", "currency": "GBP"}
    opened = requests.post(f"{gunicorn.url}/v1/players", json=body, headers=operator, timeout=10)
    player_id: str = _check(opened, 201)["id"]
    return player_id


def _balance(server: Server, operator: dict[str, str], player_id: str) -> int:
    wallet = requests.get(
        f"{server.url}/v1/players/{player_id}/wallet", headers=operator, timeout=10
    )
    balance: int = _check(wallet, 200)["balance"]
    return balance


def _problem(response: requests.Response, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["Content-Type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["type"] == f"/problems/{slug}"
    assert body["detail"]
    return body


def test_a_reused_key_with_another_body_sent_chunked_is_refused(
    gunicorn: Server, operator: dict[str, str], player: str
) -> None:
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    key = {"Idempotency-Key": f"chunked-{uuid.uuid4()}", "Content-Type": "application/json"}
    first = {"amount": 1_000, "transaction_id": f"a-{uuid.uuid4()}"}
    _check(requests.post(url, json=first, headers=operator | key, timeout=10), 201)
    other = json.dumps({"amount": 2_000, "transaction_id": f"b-{uuid.uuid4()}"}).encode()
    reused = requests.post(url, data=_chunked(other), headers=operator | key, timeout=10)
    _problem(reused, 422, "idempotency-key-reused")
    assert _balance(gunicorn, operator, player) == 1_000


def test_two_chunked_bodies_under_one_key_are_two_requests(
    gunicorn: Server, operator: dict[str, str], player: str
) -> None:
    """Before, a chunked body was not fingerprinted at all: a second deposit under the first's
    key was answered with the first's result and silently never applied."""
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    key = {"Idempotency-Key": f"both-{uuid.uuid4()}", "Content-Type": "application/json"}
    first = json.dumps({"amount": 1_500, "transaction_id": f"d-{uuid.uuid4()}"}).encode()
    _check(requests.post(url, data=_chunked(first), headers=operator | key, timeout=10), 201)
    other = json.dumps({"amount": 2_000, "transaction_id": f"e-{uuid.uuid4()}"}).encode()
    reused = requests.post(url, data=_chunked(other), headers=operator | key, timeout=10)
    _problem(reused, 422, "idempotency-key-reused")
    assert "Idempotent-Replayed" not in reused.headers
    assert _balance(gunicorn, operator, player) == 1_500


def test_an_identical_retry_sent_chunked_is_answered_as_the_first(
    gunicorn: Server, operator: dict[str, str], player: str
) -> None:
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    key = {"Idempotency-Key": f"retry-{uuid.uuid4()}", "Content-Type": "application/json"}
    body = {"amount": 700, "transaction_id": f"c-{uuid.uuid4()}"}
    first = _check(requests.post(url, json=body, headers=operator | key, timeout=10), 201)
    retry = requests.post(
        url, data=_chunked(json.dumps(body).encode(), 7), headers=operator | key, timeout=10
    )
    assert _check(retry, 201) == first
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert _balance(gunicorn, operator, player) == 700


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_body_nested_thousands_deep_is_malformed_not_a_crash(
    gunicorn: Server, operator: dict[str, str], player: str, framing: str
) -> None:
    deep = ("[" * 5_000 + "]" * 5_000).encode()
    body = {"amount": 104, "transaction_id": "x", "note": None}
    raw = json.dumps(body).encode().replace(b"null", deep)
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    data: Any = raw if framing == "length" else _chunked(raw)
    headers = operator | {"Content-Type": "application/json"}
    _problem(requests.post(url, data=data, headers=headers, timeout=10), 400, "malformed-request")
    assert _balance(gunicorn, operator, player) == 0


@pytest.mark.parametrize("digits", [4_301, 9_000])
def test_an_integer_of_thousands_of_digits_is_refused_not_a_crash(
    gunicorn: Server, operator: dict[str, str], player: str, digits: int
) -> None:
    raw = b'{"amount": ' + b"7" * digits + b', "transaction_id": "big"}'
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    headers = operator | {"Content-Type": "application/json"}
    response = requests.post(url, data=raw, headers=headers, timeout=10)
    assert response.status_code in (400, 422), response.text
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert _balance(gunicorn, operator, player) == 0


def test_a_chunked_body_over_the_cap_is_too_large(
    gunicorn: Server, operator: dict[str, str], player: str
) -> None:
    raw = b'{"amount": 104, "transaction_id": "' + b"x" * 1_000_000 + b'"}'
    url = f"{gunicorn.url}/v1/players/{player}/deposits"
    headers = operator | {"Content-Type": "application/json"}
    response = requests.post(url, data=_chunked(raw, 64 * 1024), headers=headers, timeout=30)
    _problem(response, 413, "payload-too-large")
    assert _balance(gunicorn, operator, player) == 0
