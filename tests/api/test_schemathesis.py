"""Property-based conformance: schemathesis fuzzes every operation of the committed openapi.yaml
against the app (in-process, over WSGI, on the session's real PostgreSQL).

Every response must be no 5xx and must match the document: a documented status, the documented
content type, a body valid against the schema, the documented headers. Schemathesis's other
checks run too (schema-invalid requests are refused, a missing or invalid token is refused, an
undeclared method answers 405), except ``positive_data_acceptance``: the document cannot express
the business rules (stakes on the paytable's ladder, enough funds, one open game per player, an
operator's deal naming a player and one of seed or deck), so schema-valid requests are rightly
refused with a documented 422 or 409.

Each case is sent as one of several callers (staff keys, a live player session, an unknown key),
and some of the time its path ids are replaced by a real player's and that player's in-progress
game (with a matching If-Match), so the handlers are exercised, not only their 404s.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from requests.structures import CaseInsensitiveDict
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import positive_data_acceptance

from service.bootstrap import Container
from service.services.access import KEY_PREFIX
from tests.credentials import OPERATOR

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
MAX_EXAMPLES = int(
    os.environ.get("SCHEMATHESIS_EXAMPLES", "25")
)  # per operation, in the fuzzing phase; the coverage phase adds its own cases
CALLERS = ("operator", "auditor", "finance", "player", "stranger")

Case = schemathesis.Case[Any]


@dataclass
class World:
    """Real things for generated requests to point at: staff keys, one funded player with a
    session, and that player's game (dealt again whenever the fuzzing ends it)."""

    client: FlaskClient
    tokens: dict[str, str]
    player_id: str

    def _call(self, method: str, path: str, json: Any = None) -> Any:
        who = self.tokens["player"]
        response = self.client.open(
            path, method=method, json=json, headers={"Authorization": f"Bearer {who}"}
        )
        assert response.status_code < 300, (path, response.get_json())
        return response.get_json()

    def live_game(self) -> tuple[str, int]:
        """The player's in-progress game (the fuzzer may have dealt, collected or voided one)
        and its version."""
        game_id = self._call("GET", f"/v1/players/{self.player_id}/wallet")["open_game_id"]
        if game_id is not None:
            view = self._call("GET", f"/v1/games/{game_id}")
            if view["status"] == "in_progress":
                return str(game_id), int(view["version"])
            self._call("POST", f"/v1/games/{game_id}/collect")  # complete: all cards home
        view = self._call("POST", "/v1/games", {"variant": "vegas-draw1", "stake": 104})
        return str(view["id"]), int(view["version"])


@pytest.fixture(scope="module")
def world(app: Flask, staff_keys: dict[str, str]) -> World:
    client = app.test_client()
    operator = {"Authorization": f"Bearer {staff_keys['operator']}"}
    opened = client.post(
        "/v1/players",
        json={"external_ref": f"schemathesis-{uuid.uuid4()}", "currency": "GBP"},
        headers=operator,
    )
    assert opened.status_code == 201, opened.get_json()
    player_id = opened.get_json()["id"]
    funded = client.post(
        f"/v1/players/{player_id}/deposits",
        json={"amount": 10**9, "transaction_id": f"fund-{uuid.uuid4()}"},
        headers=operator,
    )
    assert funded.status_code == 201, funded.get_json()
    session = client.post(f"/v1/players/{player_id}/sessions", headers=operator)
    assert session.status_code == 201, session.get_json()
    tokens = {role: staff_keys[role] for role in ("operator", "auditor", "finance")}
    tokens |= {"player": session.get_json()["token"], "stranger": KEY_PREFIX + "not-a-real-key"}
    return World(client, tokens, player_id)


@pytest.fixture(scope="module")
def api_schema(app: Flask) -> schemathesis.BaseSchema:
    """The committed document, bound to the app (as ``from_wsgi`` would bind it)."""
    loaded = schemathesis.openapi.from_path(SPEC)
    loaded.app = app
    # Authorization is sent by the test (below), as one of the CALLERS.
    loaded.config.generation.update(max_examples=MAX_EXAMPLES, with_security_parameters=False)
    return loaded


schema = schemathesis.pytest.from_fixture("api_schema")


def _aim_at_real_things(case: Case, world: World) -> None:
    """Point the case at the real player and game (with the game's version in If-Match).
    Containers are replaced, not edited, so schemathesis re-checks what the case now is."""
    params = dict(case.path_parameters or {})
    if "player_id" in params:
        params["player_id"] = world.player_id
    if "game_id" in params:
        game_id, version = world.live_game()
        params["game_id"] = game_id
        if case.headers is not None and "If-Match" in case.headers:
            headers = CaseInsensitiveDict(case.headers)
            headers["If-Match"] = f'"{version}"'
            case.headers = headers
    if params:
        case.path_parameters = params
    # An operator's deal names its player in the body.
    if isinstance(case.body, dict) and "player_id" in case.body:
        case.body = {**case.body, "player_id": world.player_id}


def _caller_and_aim(case: Case) -> tuple[str, bool]:
    """Who sends the case, and whether it aims at the real player and game: drawn from the
    case itself, so a replayed or shrunk case is sent the same way (a hypothesis ``given`` would
    do, but schemathesis then skips its coverage phase)."""
    seen = (case.operation.label, case.path_parameters, case.query, case.headers, case.body)
    digest = hashlib.sha256(repr(seen).encode("utf-8", "backslashreplace")).digest()
    return CALLERS[digest[0] % len(CALLERS)], digest[1] % 2 == 0


@schema.parametrize()
@settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_response_matches_the_document(
    case: Case, world: World, container: Container
) -> None:
    caller, aimed = _caller_and_aim(case)
    # A case probing the validation of its path or body keeps its invalid ids.
    probe = case.meta is not None and any(
        case.meta.is_negative_at(where)
        for where in (ParameterLocation.PATH, ParameterLocation.BODY)
    )
    # Ending the shared player's sessions would leave every later case unauthorised, and a
    # limit or an exclusion would stop its deals: those routes are fuzzed against ids of
    # nobody (their success is tested in test_sessions and test_safer_gambling).
    stops_the_player = case.operation.path.endswith(
        ("/sessions/current", "/sessions/revoke", "/exclusions", "/limits/{limit}")
    )
    if aimed and not probe and not stops_the_player:
        _aim_at_real_things(case, world)
    try:
        case.call_and_validate(
            headers={"Authorization": f"Bearer {world.tokens[caller]}"},
            excluded_checks=[positive_data_acceptance],
        )
    finally:
        if case.operation.path.startswith("/v1/controls/"):
            _switch_everything_back_on(container)


def _switch_everything_back_on(container: Container) -> None:
    """A fuzzed switch may have turned gaming off for the whole casino (the test database is
    shared): every switch is turned back on before the next case."""
    for off in container.controls.off():
        container.controls.switch(OPERATOR, off.scope, off.target, True, "fuzzing done")


# --- what the fuzzing found, pinned ------------------------------------------------------------
# Each was a 500 (or an unknown parameter silently ignored) before its fix. They are sent as
# schemathesis cases, so the same checks judge them, and must be refused as validation errors.

NUL, SURROGATE = "a\x00b", "a\udb03b"
FOUND: dict[str, tuple[str, str, dict[str, Any]]] = {
    "withdrawal id with NUL": (
        "POST",
        "/v1/players/{player_id}/withdrawals",
        {"body": {"amount": 1, "transaction_id": NUL}},
    ),
    "deposit id with a lone surrogate": (
        "POST",
        "/v1/players/{player_id}/deposits",
        {"body": {"amount": 1, "transaction_id": SURROGATE}},
    ),
    "external_ref with NUL": (
        "POST",
        "/v1/players",
        {"body": {"external_ref": NUL, "currency": "GBP"}},
    ),
    "external_ref with a lone surrogate": (
        "POST",
        "/v1/players",
        {"body": {"external_ref": SURROGATE, "currency": "GBP"}},
    ),
    "void reason with NUL": ("POST", "/v1/games/{game_id}/void", {"body": {"reason": NUL}}),
    "ledger cursor not ASCII digits": (
        "GET",
        "/v1/players/{player_id}/ledger",
        {"query": {"before": "\u00b2"}},
    ),
    "ledger cursor beyond bigint": (
        "GET",
        "/v1/players/{player_id}/ledger",
        {"query": {"before": "9" * 40}},
    ),
    "unknown query parameter (game)": ("GET", "/v1/games/{game_id}", {"query": {"": "false"}}),
    "unknown query parameter (history)": (
        "GET",
        "/v1/players/{player_id}/history",
        {"query": {"limit": 5, "cursor": "x"}},
    ),
    "unknown query parameter (quote)": (
        "GET",
        "/v1/quote",
        {"query": {"variant": "vegas-draw1", "stake": 104, "currency": "GBP", "stakes": 1}},
    ),
}


@pytest.mark.parametrize("found", list(FOUND), ids=list(FOUND))
def test_what_the_fuzzing_found_stays_fixed(
    api_schema: schemathesis.BaseSchema, world: World, found: str
) -> None:
    method, path, parts = FOUND[found]
    operation = api_schema[path][method]
    ids = {"player_id": world.player_id}
    if "{game_id}" in path:
        ids["game_id"] = world.live_game()[0]
    known = {name: value for name, value in ids.items() if "{" + name + "}" in path}
    case = operation.Case(path_parameters=known, **parts)
    caller = "player" if method == "GET" else "operator"
    response = case.call_and_validate(
        headers={"Authorization": f"Bearer {world.tokens[caller]}"},
        excluded_checks=[positive_data_acceptance],
    )
    assert response.status_code == 422, response.text
    assert response.json()["type"] == "/problems/validation-error"
