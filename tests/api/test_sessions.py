"""Staff API keys from the CLI, and player session tokens: what works as a bearer, for how
long, and that only hashes of the secrets are ever stored."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from flask import Flask

from service import create_app
from service.bootstrap import Container
from service.runtime.config import Settings
from service.services.access import Access, key_actor
from tests.api.client import Http, assert_problem
from tests.api.factories import PlayerFactory

AdminConn = psycopg.Connection[tuple[Any, ...]]


def _sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _stored_values(conn: AdminConn, table: str, where: str, value: object) -> list[str]:
    """Every column of the matching rows, as text."""
    cursor = conn.execute(f"SELECT * FROM {table} WHERE {where} = %s", (value,))
    rows = cursor.fetchall()
    assert rows, f"no {table} row"
    return [str(column) for row in rows for column in row]


# --- staff keys from the CLI ---------------------------------------------------------------


@pytest.fixture
def cli_app(
    monkeypatch: pytest.MonkeyPatch,
    database_url: str,
    migration_database_url: str,
    settings: Settings,
) -> Flask:
    """The app as ``flask --app service`` makes it, configured from the environment: the owner's
    login too, which alone writes staff keys (migrations/0030)."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("MIGRATION_DATABASE_URL", migration_database_url)
    monkeypatch.setenv("SEED_ENCRYPTION_KEYS", settings.seed_keys[0])
    monkeypatch.setenv("APP_ENV", "test")
    return create_app()


@pytest.fixture
def flask_cli(cli_app: Flask) -> Callable[..., Result]:
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli_app.cli, list(args))

    return run


def _create_key(flask_cli: Callable[..., Result], name: str, role: str = "operator") -> str:
    created = flask_cli("keys", "create", "--role", role, "--name", name)
    assert created.exit_code == 0, created.output
    secret = created.output.strip().splitlines()[-1]
    assert secret.startswith("vsk_")
    return secret


def _open_player(http: Http, key: str) -> Any:
    return http.post(
        "/v1/players", key, json={"external_ref": f"cli-{uuid.uuid4()}", "currency": "GBP"}
    )


def test_a_key_created_on_the_command_line_works_as_a_bearer(
    flask_cli: Callable[..., Result], http: Http
) -> None:
    name = f"desk-{uuid.uuid4().hex[:8]}"
    created = flask_cli("keys", "create", "--role", "operator", "--name", name)
    assert created.exit_code == 0, created.output
    lines = created.output.strip().splitlines()
    secret = lines[-1]
    assert secret.startswith("vsk_")
    assert len(secret) > 40
    assert name in lines[0]
    assert secret not in "\n".join(lines[:-1])

    opened = _open_player(http, secret)
    assert opened.status_code == 201, opened.get_json()
    # an auditor key is a bearer too, with the auditor's rights
    auditor = _create_key(flask_cli, f"{name}-audit", "auditor")
    player = opened.get_json()["id"]
    assert http.get(f"/v1/players/{player}/wallet", auditor).status_code == 200
    assert_problem(_open_player(http, auditor), 403, "forbidden")


def test_keys_are_listed_by_name_and_role_never_by_secret(
    flask_cli: Callable[..., Result],
) -> None:
    name = f"lister-{uuid.uuid4().hex[:8]}"
    secret = _create_key(flask_cli, name, "finance")
    listed = flask_cli("keys", "list")
    assert listed.exit_code == 0, listed.output
    line = next(line for line in listed.output.splitlines() if line.startswith(f"{name}\t"))
    assert line.split("\t")[1] == "finance"
    assert line.endswith("live")
    assert secret not in listed.output
    assert secret.removeprefix("vsk_") not in listed.output
    assert _sha256(secret) not in listed.output


def test_a_revoked_key_answers_401(flask_cli: Callable[..., Result], http: Http) -> None:
    name = f"leaver-{uuid.uuid4().hex[:8]}"
    secret = _create_key(flask_cli, name)
    assert _open_player(http, secret).status_code == 201

    revoked = flask_cli("keys", "revoke", "--name", name)
    assert revoked.exit_code == 0, revoked.output
    _behind_the_service(http)  # the command line is another process than the API's
    refused = _open_player(http, secret)
    assert_problem(refused, 401, "unauthorized-revoked")
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")

    listed = flask_cli("keys", "list").output.splitlines()
    assert "revoked" in next(line for line in listed if line.startswith(f"{name}\t"))
    again = flask_cli("keys", "revoke", "--name", name)
    assert again.exit_code != 0
    assert "no live key" in again.output
    # The name is free again, for a new key with a new secret.
    assert _create_key(flask_cli, name) != secret


def test_a_key_with_an_unknown_role_is_refused(flask_cli: Callable[..., Result]) -> None:
    refused = flask_cli("keys", "create", "--role", "player", "--name", "nobody")
    assert refused.exit_code != 0
    assert "vsk_" not in refused.output


def test_keys_are_stored_only_as_hashes(
    flask_cli: Callable[..., Result], admin_conn: AdminConn
) -> None:
    name = f"hashed-{uuid.uuid4().hex[:8]}"
    secret = _create_key(flask_cli, name)
    stored = _stored_values(admin_conn, "api_keys", "name", name)
    assert not [value for value in stored if secret in value or secret[4:] in value]
    assert _sha256(secret) in stored


# --- player sessions -------------------------------------------------------------------------


def _mint(http: Http, player_id: str) -> dict[str, Any]:
    minted = http.post(f"/v1/players/{player_id}/sessions", http.operator_key)
    assert minted.status_code == 201, minted.get_json()
    body: dict[str, Any] = minted.get_json()
    return body


def _refusal(http: Http, player_id: str, token: str) -> str | None:
    """Why the session is refused (its 401's reason), or None if it works."""
    answer = http.get(f"/v1/players/{player_id}/wallet", token)
    if answer.status_code == 401:
        reason: str = answer.get_json()["reason"]
        assert_problem(answer, 401, f"unauthorized-{reason}")
        return reason
    assert answer.status_code == 200, answer.get_json()
    return None


def _works(http: Http, player_id: str, token: str) -> bool:
    return _refusal(http, player_id, token) is None


def _behind_the_service(http: Http) -> None:
    """A change made in the database behind the service's back reaches a process once what it
    verified has aged out (Access.verified_for, 2 s); the tests let that happen at once."""
    container: Container = http.client.application.extensions["vegas"]
    container.access.forget()


def _idle_for(http: Http, conn: AdminConn, token: str, minutes: int) -> None:
    """As if the session was last used ``minutes`` ago."""
    moved = conn.execute(
        "UPDATE player_sessions SET last_used_at = statement_timestamp() - %s"
        " WHERE token_hash = %s",
        (timedelta(minutes=minutes), _sha256(token)),
    )
    assert moved.rowcount == 1
    _behind_the_service(http)


def test_a_minted_session_token_works_for_its_player(http: Http) -> None:
    player = PlayerFactory.create()
    session = _mint(http, player.id)
    assert session["token"].startswith("vsp_")
    assert session["player_id"] == player.id
    assert session["idle_timeout_seconds"] == 30 * 60
    assert _works(http, player.id, session["token"])
    assert http.get(f"/v1/players/{player.id}", session["token"]).get_json()["id"] == player.id
    # Each mint is a new, independent token; the older one keeps working.
    second = _mint(http, player.id)
    assert second["token"] != session["token"]
    assert _works(http, player.id, second["token"])
    assert _works(http, player.id, session["token"])


def test_a_session_has_a_hard_maximum_of_eight_hours(http: Http, admin_conn: AdminConn) -> None:
    player = PlayerFactory.create()
    session = _mint(http, player.id)
    row = admin_conn.execute(
        "SELECT created_at, expires_at FROM player_sessions WHERE token_hash = %s",
        (_sha256(session["token"]),),
    ).fetchone()
    assert row is not None
    created_at, expires_at = row
    assert expires_at - created_at == timedelta(hours=8)
    assert datetime.fromisoformat(session["expires_at"]) == expires_at


def test_a_session_expires_after_30_minutes_without_use(http: Http, admin_conn: AdminConn) -> None:
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    assert _works(http, player.id, token)
    _idle_for(http, admin_conn, token, 31)
    assert _refusal(http, player.id, token) == "expired"
    # An expired session stays expired: the failed attempt did not revive it.
    assert _refusal(http, player.id, token) == "expired"


def test_using_a_session_within_the_idle_window_keeps_it_alive(
    http: Http, admin_conn: AdminConn
) -> None:
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    _idle_for(http, admin_conn, token, 29)
    assert _works(http, player.id, token)
    _idle_for(http, admin_conn, token, 29)
    assert _works(http, player.id, token)  # 58 minutes after minting, never 30 idle
    _idle_for(http, admin_conn, token, 31)
    assert _refusal(http, player.id, token) == "expired"


def test_a_session_past_its_hard_expiry_is_refused_even_if_just_used(
    http: Http, admin_conn: AdminConn
) -> None:
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    assert _works(http, player.id, token)  # just used
    moved = admin_conn.execute(
        "UPDATE player_sessions SET expires_at = statement_timestamp() - interval '1 second'"
        " WHERE token_hash = %s",
        (_sha256(token),),
    )
    assert moved.rowcount == 1
    _behind_the_service(http)
    assert _refusal(http, player.id, token) == "expired"


def test_session_tokens_are_stored_only_as_hashes(http: Http, admin_conn: AdminConn) -> None:
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    stored = _stored_values(admin_conn, "player_sessions", "token_hash", _sha256(token))
    assert not [value for value in stored if token in value or token[4:] in value]
    assert str(player.id) in stored
    everything = admin_conn.execute("SELECT * FROM player_sessions").fetchall()
    assert not [row for row in everything if any(token[4:] in str(column) for column in row)]


def test_sessions_are_minted_by_operators_for_existing_players(http: Http) -> None:
    player = PlayerFactory.create()
    assert_problem(
        http.post(f"/v1/players/{uuid.uuid4()}/sessions", http.operator_key), 404, "not-found"
    )
    assert_problem(http.post(f"/v1/players/{player.id}/sessions", player.token), 403, "forbidden")
    assert_problem(
        http.post(f"/v1/players/{player.id}/sessions", http.auditor_key), 403, "forbidden"
    )
    assert_problem(http.post(f"/v1/players/{player.id}/sessions"), 401, "unauthorized")


# --- revoking sessions, and the record of it ------------------------------------------------


def _mint_for(http: Http, key: str, player_id: str) -> str:
    minted = http.post(f"/v1/players/{player_id}/sessions", key)
    assert minted.status_code == 201, minted.get_json()
    token: str = minted.get_json()["token"]
    return token


def _session_events(http: Http, player_id: str) -> list[dict[str, Any]]:
    page = http.get("/v1/significant-events?kind=session&limit=200", http.auditor_key)
    assert page.status_code == 200, page.get_json()
    return [i for i in page.get_json()["items"] if i["player_id"] == player_id]


def test_a_player_logs_out_and_the_token_stops_working_at_once(http: Http) -> None:
    player = PlayerFactory.create()
    other = _mint_for(http, http.operator_key, player.id)
    out = http.call("DELETE", f"/v1/players/{player.id}/sessions/current", player.token)
    assert out.status_code == 200, out.get_data(as_text=True)
    assert out.get_json() == {"revoked": 1}
    assert _refusal(http, player.id, player.token) == "revoked"
    assert _works(http, player.id, other)  # only the token used to log out
    actions = [e["details"]["action"] for e in _session_events(http, player.id)]
    assert actions[0] == "logout"  # newest first
    assert actions.count("mint") == 2


def test_an_operator_revokes_every_session_of_a_player(
    http: Http, staff_actors: dict[str, str]
) -> None:
    player = PlayerFactory.create()
    second = _mint_for(http, http.operator_key, player.id)
    revoked = http.post(f"/v1/players/{player.id}/sessions/revoke", http.operator_key)
    assert revoked.status_code == 200, revoked.get_json()
    assert revoked.get_json() == {"revoked": 2}
    assert _refusal(http, player.id, player.token) == "revoked"
    assert _refusal(http, player.id, second) == "revoked"
    latest = _session_events(http, player.id)[0]
    assert latest["details"] == {"action": "revoke", "sessions": 2}
    assert latest["actor"] == staff_actors["operator"]
    # Nobody else may: players and other staff roles are refused, and nothing more is revoked.
    fresh = _mint_for(http, http.operator_key, player.id)
    for who in (fresh, http.auditor_key, http.finance_key):
        assert http.post(f"/v1/players/{player.id}/sessions/revoke", who).status_code == 403
    assert _works(http, player.id, fresh)


def test_revoking_a_key_can_revoke_the_sessions_it_minted(
    flask_cli: Callable[..., Result], http: Http
) -> None:
    name = f"desk-{uuid.uuid4().hex[:8]}"
    desk = _create_key(flask_cli, name)
    player = PlayerFactory.create()
    minted = _mint_for(http, desk, player.id)
    kept = _mint_for(http, http.operator_key, player.id)
    done = flask_cli("keys", "revoke", "--name", name, "--sessions")
    assert done.exit_code == 0, done.output
    assert _refusal(http, player.id, minted) == "revoked"
    assert _works(http, player.id, kept)  # another key's session stays


def test_staff_are_named_in_events_by_their_key_id_not_a_reusable_name(
    flask_cli: Callable[..., Result], http: Http, container: Container
) -> None:
    name = f"desk-{uuid.uuid4().hex[:8]}"
    player = PlayerFactory.create()
    first = _create_key(flask_cli, name)
    _mint_for(http, first, player.id)
    assert flask_cli("keys", "revoke", "--name", name).exit_code == 0
    second = _create_key(flask_cli, name)  # the same name again, for another key
    _mint_for(http, second, player.id)
    ids = [k.key_id for k in container.access.list_keys() if k.name == name]
    assert len(ids) == 2
    minted = [e for e in _session_events(http, player.id) if e["details"]["action"] == "mint"]
    # Newest first: the second key's mint, then the first's; each by its own key's id.
    assert [e["actor"] for e in minted[:2]] == [key_actor(i) for i in ids]  # keys newest first
    assert all(name not in e["actor"] for e in minted)


# --- the in-process cache (service/services/access.py)
# -----------------------------------------------------


class _Clock:
    """A process's monotonic clock that the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _last_used(conn: AdminConn, token: str) -> datetime:
    row = conn.execute(
        "SELECT last_used_at FROM player_sessions WHERE token_hash = %s", (_sha256(token),)
    ).fetchone()
    assert row is not None
    used: datetime = row[0]
    return used


def test_a_process_trusts_a_verified_session_for_two_seconds_only(
    http: Http, container: Container, admin_conn: AdminConn
) -> None:
    """A revocation written by another process (here: behind the service's back) reaches this
    one within Access.verified_for; one through this process reaches it at once (above)."""
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    clock = _Clock()
    access = Access(container.unit_of_work, clock=clock)
    first = access.authenticate(token)
    assert first is not None
    assert str(first.player_id) == player.id
    admin_conn.execute(
        "UPDATE player_sessions SET revoked_at = statement_timestamp() WHERE token_hash = %s",
        (_sha256(token),),
    )
    clock.now += 1.9
    assert access.authenticate(token) == first  # still within what it verified
    clock.now += 0.2
    assert access.authenticate(token) is None  # asked again: revoked
    assert access.authenticate(token) is None  # and a refusal is never cached as valid


def test_a_session_s_use_is_written_at_most_once_a_minute(
    http: Http, container: Container, admin_conn: AdminConn
) -> None:
    player = PlayerFactory.create()
    token = _mint(http, player.id)["token"]
    clock = _Clock()
    access = Access(container.unit_of_work, clock=clock)
    assert access.authenticate(token) is not None
    touched = _last_used(admin_conn, token)
    for _ in range(5):  # verified again every few seconds, never written
        clock.now += 10
        assert access.authenticate(token) is not None
        assert _last_used(admin_conn, token) == touched
    clock.now += 10.5  # 60.5 s after the last write
    assert access.authenticate(token) is not None
    assert _last_used(admin_conn, token) > touched


def test_a_key_is_trusted_for_two_seconds_and_a_new_one_is_never_refused_from_memory(
    container: Container, admin_conn: AdminConn
) -> None:
    clock = _Clock()
    access = Access(container.unit_of_work, clock=clock)
    name = f"cache-{uuid.uuid4()}"
    assert access.authenticate("vsk_not-yet-made") is None
    key = container.access.create_key(name, "auditor")
    found = access.authenticate(key)
    assert found is not None
    assert found.role == "auditor"
    admin_conn.execute(
        "UPDATE api_keys SET revoked_at = statement_timestamp() WHERE name = %s", (name,)
    )
    assert access.authenticate(key) == found
    clock.now += 2.5
    assert access.authenticate(key) is None
