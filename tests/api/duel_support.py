"""Helpers for duels over HTTP: the server's clock, moved by the tests, seat play, and looking
behind the service's back at the duel's money (the wallets' side is tests.api.books)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from events import chain
from service.bootstrap import Container
from tests.api.books import DbConn, stream_transactions
from tests.api.client import Http, assert_problem
from tests.dbtools import move_db_clock


class FakeClock:
    """The server's clock as the duel and game services read it; tests move it, never sleep.
    The database's clock moves with it (tests/dbtools.py move_db_clock): its rules decide on
    their own clock when a seat's time or a duel's time to fill has run out (migrations/0031)."""

    def __init__(self, now: datetime, owner_url: str = "") -> None:
        self._owner_url = owner_url
        self._now = now

    @property
    def now(self) -> datetime:
        return self._now

    @now.setter
    def now(self, moment: datetime) -> None:
        self._now = moment
        if self._owner_url:
            move_db_clock(self._owner_url, moment)

    def __call__(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self.now = self._now + timedelta(seconds=seconds)


@pytest.fixture
def clock(container: Container, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClock]:
    owner_url = container.settings.migration_database_url or ""
    fake = FakeClock(datetime.now(UTC), owner_url)
    monkeypatch.setattr(container.duels, "clock", fake)
    monkeypatch.setattr(container.games, "clock", fake)
    yield fake
    if owner_url:
        move_db_clock(owner_url, None)  # the real time again, for the tests after


def join(http: Http, player_id: str, fee: int, **extra: Any) -> dict[str, Any]:
    """An operator seats a player in a certification duel (opening one from ``deck``/``seed``)."""
    body = {"fee": fee, "player_id": player_id, "certification": True, **extra}
    response = http.post("/v1/duels", http.operator_key, json=body)
    assert response.status_code == 201, response.get_json()
    view: dict[str, Any] = response.get_json()
    assert response.headers["Location"].endswith(f"/v1/duels/{view['id']}")
    return view


def seat_call(http: Http, token: str, duel_id: str, path: str, **body: Any) -> dict[str, Any]:
    response = http.post(f"/v1/duels/{duel_id}/{path}", token, json=body)
    assert response.status_code == 200, (path, body, response.get_json())
    view: dict[str, Any] = response.get_json()
    return view


def seat_refused(
    http: Http,
    token: str,
    duel_id: str,
    path: str,
    body: dict[str, Any],
    status: int,
    slug: str,
    rule: str | None = None,
) -> dict[str, Any]:
    """POST to a seat route, refused with this problem."""
    response = http.post(f"/v1/duels/{duel_id}/{path}", token, json=body)
    return assert_problem(response, status, slug, rule)


def look(http: Http, token: str, duel_id: str) -> dict[str, Any]:
    """GET the duel as ``token`` sees it."""
    response = http.get(f"/v1/duels/{duel_id}", token)
    assert response.status_code == 200, response.get_json()
    view: dict[str, Any] = response.get_json()
    return view


def at(text: str | None) -> datetime | None:
    """A time the API answered, parsed (None stays None)."""
    return datetime.fromisoformat(text) if text is not None else None


def moves(game: dict[str, Any], action: str, to: str | None = None) -> list[dict[str, Any]]:
    """The seat game's legal moves of one action (and for a move, onto piles named ``to``...)."""
    return [
        m
        for m in game["legal_moves"]
        if m["action"] == action and (to is None or str(m.get("to", "")).startswith(to))
    ]


@dataclass
class Played:
    """What a seat sent while playing: every command, and the counts the points depend on."""

    view: dict[str, Any]
    sent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def game(self) -> dict[str, Any]:
        game: dict[str, Any] = self.view["you"]["game"]
        return game

    def count(self, action: str) -> int:
        return sum(1 for m in self.sent if m["action"] == action)


def play(http: Http, token: str, duel_id: str, view: dict[str, Any], *bodies: Any) -> Played:
    """Send these commands to the seat's game, in order; each must be accepted."""
    played = Played(view)
    for body in bodies:
        played.view = seat_call(http, token, duel_id, "actions", **body)
        played.sent.append(body)
    return played


def play_up(http: Http, token: str, duel_id: str, view: dict[str, Any]) -> Played:
    """Play the seat's game greedily until it ends: any move onto a foundation, else turn a
    face-down card, else draw (or recycle). Wins tests.builders.easy_deck()."""
    played = Played(view)
    for _ in range(400):
        game = played.game
        if game["status"] != "in_progress":
            return played
        choice = moves(game, "move", "foundation") or moves(game, "turn") or moves(game, "draw")
        choice = choice or moves(game, "recycle")
        assert choice, game["legal_moves"]
        played.view = seat_call(http, token, duel_id, "actions", **choice[0])
        played.sent.append(choice[0])
    raise AssertionError("the game did not end in 400 commands")


# --- money --------------------------------------------------------------------------------------


def pot_balance(conn: DbConn, duel_id: str) -> int:
    row = conn.execute(
        "SELECT balance FROM account_balances WHERE account_id = %s", (f"duel-pot:{duel_id}",)
    ).fetchone()
    assert row is not None, f"no pot account for duel {duel_id}"
    return int(row[0])


def duel_transactions(conn: DbConn, duel_id: str) -> list[tuple[str, dict[str, int]]]:
    """The ledger transactions a duel caused, in order: (kind, {account: amount})."""
    return [(kind, postings) for kind, _, postings in stream_transactions(conn, f"duel-{duel_id}")]


def assert_books_balance(conn: DbConn, duel_id: str) -> None:
    """Every transaction the duel caused sums to zero, and so do all its postings together."""
    for kind, postings in duel_transactions(conn, duel_id):
        assert sum(postings.values()) == 0, (kind, postings)
    row = conn.execute(
        "SELECT coalesce(sum(amount), 0) FROM postings WHERE cause_stream = %s",
        (f"duel-{duel_id}",),
    ).fetchone()
    assert row is not None
    assert int(row[0]) == 0


def duel_event_types(http: Http, duel_id: str) -> list[str]:
    """The duel's stream as an auditor reads it: the event types in order (chain intact)."""
    response = http.get(f"/v1/duels/{duel_id}/events", http.auditor_key)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["chain_intact"] is True
    assert [e["version"] for e in body["events"]] == list(range(1, len(body["events"]) + 1))
    return [str(e["type"]) for e in body["events"]]


def game_events(http: Http, game_id: str) -> list[dict[str, Any]]:
    """A seat's game's stream as stored, read behind the API: staff's route for it answers
    409 duel-in-progress until the duel ends (test_staff_see_no_seat_s_cards...), and these
    tests look at seats mid-duel."""
    container: Container = http.client.application.extensions["vegas"]
    with container.unit_of_work() as uow:
        records = uow.events.read_stream(f"game-{game_id}")
    assert records
    assert chain.verify(records) is None
    return [
        {"type": r.type, "schema_version": r.schema_version, "data": r.data, "version": r.version}
        for r in records
    ]
