"""Versions and races: game responses carry their version as ETag, If-Match guards a command, and
of simultaneous commands on one game exactly one applies, never two on the same version.

The races run each request on its own thread with its own test client, released together by a
barrier. Where a test needs every request to have read the game before any of them writes, it
holds what their writes must wait for until all of them wait: the writers' lock (the advisory lock
deals and money take) and the game's betting-history row, which a command's write updates after
appending (the first to append waits there; the others, appending the same version, wait on it).
The overlap is then certain rather than likely.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from events.postgres import APPEND_LOCK_KEY
from tests.api.books import sandbox_balance
from tests.api.client import Http, assert_problem
from tests.api.factories import Player, PlayerFactory, WalletFactory, deal_certification
from tests.builders import turnable_deck

DbConn = psycopg.Connection[tuple[Any, ...]]
Request = Callable[[FlaskClient], TestResponse]
STAKE = 520
FUNDS = 10_400
WIN_RATE = 50  # per foundation card at a 520 stake


@dataclass(frozen=True)
class Table:
    """A funded player with a draw-3 game in progress on a known deck (a certification deal,
    so its money is the player's sandbox wallet's)."""

    http: Http
    player: Player
    game_id: str

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.player.token}"}

    def post(self, command: str, body: Any = None, **headers: str) -> TestResponse:
        return self.http.post(
            f"/v1/games/{self.game_id}/{command}", self.player.token, json=body, headers=headers
        )

    def view(self) -> TestResponse:
        seen = self.http.get(f"/v1/games/{self.game_id}", self.player.token)
        assert seen.status_code == 200
        return seen

    def version(self) -> int:
        seen = self.view()
        version: int = seen.get_json()["version"]
        assert seen.headers["ETag"] == f'"{version}"'
        return version

    def balance(self) -> int:
        """The sandbox balance: the table's game is a certification deal, played for it."""
        return sandbox_balance(self.http, self.player)

    def command(self, name: str, body: Any = None, **headers: str) -> Request:
        """The player's command, as a request for a racing thread."""
        path = f"/v1/games/{self.game_id}/{name}"

        def send(client: FlaskClient) -> TestResponse:
            return client.post(path, json=body, headers={**self.bearer, **headers})

        return send


@pytest.fixture
def table(http: Http) -> Table:
    player = WalletFactory.create(balance=FUNDS).player
    return Table(http, player, deal_certification(http, player, turnable_deck(), stake=STAKE))


def event_types(conn: DbConn, stream: str) -> list[str]:
    rows = conn.execute(
        "SELECT type FROM events WHERE stream_id = %s ORDER BY version", (stream,)
    ).fetchall()
    return [str(r[0]) for r in rows]


def ledger_kinds(conn: DbConn, player_id: str, wallet: str = "player") -> list[str]:
    """What moved a player's wallet: the real one, or (``"sandbox"``) certification games'."""
    rows = conn.execute(
        "SELECT t.kind FROM postings p JOIN ledger_transactions t USING (transaction_id)"
        " WHERE p.account_id = %s ORDER BY p.posting_id",
        (f"{wallet}:{player_id}",),
    ).fetchall()
    return [str(r[0]) for r in rows]


# --- racing ---------------------------------------------------------------------------------------


def _waiting_on_locks(conn: DbConn) -> int:
    """Backends of this database waiting for a lock: the log's, or a row another one holds."""
    conn.execute("SELECT pg_stat_clear_snapshot()")  # else a transaction sees one snapshot
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchone()
    assert row is not None
    return int(row[0])


@contextmanager
def log_held(conn: DbConn, game_id: str | None = None) -> Iterator[Callable[[int], None]]:
    """Hold the writers' lock and the game's history row; yields a wait for that many writers
    to queue behind them (on one of them, or on a row that a writer queued on them holds)."""

    def wait_for(writers: int) -> None:
        deadline = time.monotonic() + 4  # the service's lock_timeout is 5 s
        while _waiting_on_locks(conn) < writers:
            assert time.monotonic() < deadline, f"{writers} writers never queued on the log"
            time.sleep(0.005)

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK_KEY,))
        if game_id is not None:
            conn.execute("SELECT 1 FROM game_history WHERE game_id = %s FOR UPDATE", (game_id,))
        yield wait_for


def race(
    app: Flask, requests: list[Request], hold: DbConn | None = None, game: str | None = None
) -> list[TestResponse]:
    """Send the requests at once, one thread and test client each; with ``hold``, keep the
    writers (of ``game``) waiting until every one of them is about to write."""
    barrier = threading.Barrier(len(requests))
    answers: list[TestResponse | None] = [None] * len(requests)
    failures: list[BaseException] = []

    def run(index: int, request: Request) -> None:
        client = app.test_client()
        try:
            barrier.wait(timeout=10)
            answers[index] = request(client)
        except BaseException as error:  # surfaced below, in the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate(requests)]

    def go() -> None:
        for thread in threads:
            thread.start()

    if hold is None:
        go()
    else:
        with log_held(hold, game) as wait_for:
            go()
            wait_for(len(requests))
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), "a racing request never finished"
    assert failures == []
    done = [a for a in answers if a is not None]
    assert len(done) == len(requests)
    return done


def statuses(answers: list[TestResponse]) -> list[int]:
    return sorted(a.status_code for a in answers)


# --- ETags and If-Match --------------------------------------------------------------------------


def test_every_game_response_carries_its_version_as_etag(table: Table, admin_conn: DbConn) -> None:
    stream = f"game-{table.game_id}"
    assert table.version() == 2 == len(event_types(admin_conn, stream))
    for command, body in (
        ("draw", None),
        ("move", {"from": "tableau:1", "to": "foundation"}),
        ("turn", {"column": 1}),
        ("draw", None),
        ("undo", None),
        ("collect", None),
    ):
        before = len(event_types(admin_conn, stream))
        response = table.post(command, body)
        assert response.status_code == 200, response.get_json()
        version = response.get_json()["version"]
        assert response.headers["ETag"] == f'"{version}"'
        assert version == before + 1 == len(event_types(admin_conn, stream))
        assert table.version() == version
    full = table.http.get(f"/v1/games/{table.game_id}?view=full", table.http.auditor_key)
    assert full.headers["ETag"] == f'"{full.get_json()["version"]}"' == '"8"'


@pytest.mark.parametrize("stale", [1, 3, 999_999_999])
@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("draw", None),
        ("move", {"from": "tableau:1", "to": "foundation"}),
        ("undo", None),
        ("collect", None),
        ("actions", {"action": "draw"}),
        ("actions", {"action": "collect"}),
    ],
)
def test_a_stale_if_match_is_412_and_changes_nothing(
    table: Table, admin_conn: DbConn, command: str, body: Any, stale: int
) -> None:
    assert table.post("draw").status_code == 200  # version 3, and something to undo
    current = 3 if stale != 3 else 4
    if current == 4:
        assert table.post("draw").status_code == 200
    before = (
        event_types(admin_conn, f"game-{table.game_id}"),
        table.view().get_json(),
        table.balance(),
    )

    refused = table.post(command, body, **{"If-Match": f'"{stale}"'})
    problem = assert_problem(refused, 412, "version-mismatch")
    assert problem["current_version"] == current
    assert refused.headers["ETag"] == f'"{current}"'
    after = (
        event_types(admin_conn, f"game-{table.game_id}"),
        table.view().get_json(),
        table.balance(),
    )
    assert after == before


@pytest.mark.parametrize("form", ['"{v}"', "{v}"], ids=["quoted", "bare"])
def test_a_matching_if_match_applies(table: Table, admin_conn: DbConn, form: str) -> None:
    drawn = table.post("draw", **{"If-Match": form.format(v=2)})
    assert drawn.status_code == 200, drawn.get_json()
    assert drawn.headers["ETag"] == '"3"'
    moved = table.post(
        "move", {"from": "tableau:1", "to": "foundation"}, **{"If-Match": form.format(v=3)}
    )
    assert moved.status_code == 200, moved.get_json()
    collected = table.post("collect", **{"If-Match": form.format(v=4)})
    assert collected.status_code == 200
    assert collected.get_json()["payout"] == WIN_RATE
    assert event_types(admin_conn, f"game-{table.game_id}") == [
        "StakePlaced",
        "Dealt",
        "CardDrawn",
        "CardMoved",
        "Collected",
    ]
    assert table.balance() == -STAKE + WIN_RATE


# --- races on one game ---------------------------------------------------------------------------


@pytest.mark.parametrize("racers", [2, 3, 4, 5, 6])
def test_simultaneous_draws_that_read_one_version_apply_exactly_one(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    answers = race(
        app, [table.command("draw") for _ in range(racers)], hold=admin_conn, game=table.game_id
    )

    assert statuses(answers) == [200] + [409] * (racers - 1)
    (applied,) = [a for a in answers if a.status_code == 200]
    assert applied.headers["ETag"] == '"3"'
    for refused in (a for a in answers if a.status_code == 409):
        assert_problem(refused, 409, "concurrent-update")
    assert table.version() == 3
    assert event_types(admin_conn, f"game-{table.game_id}").count("CardDrawn") == 1
    assert applied.get_json() == table.view().get_json()


@pytest.mark.parametrize("racers", [2, 4])
def test_draws_through_either_route_that_read_one_version_apply_exactly_one(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    """The generic actions route and the draw route are one command: racing, one applies."""
    commands = [
        table.command("actions", {"action": "draw"}) if i % 2 == 0 else table.command("draw")
        for i in range(racers)
    ]
    answers = race(app, commands, hold=admin_conn, game=table.game_id)

    assert statuses(answers) == [200] + [409] * (racers - 1)
    for refused in (a for a in answers if a.status_code == 409):
        assert_problem(refused, 409, "concurrent-update")
    assert table.version() == 3
    assert event_types(admin_conn, f"game-{table.game_id}").count("CardDrawn") == 1


def test_a_draw_racing_a_collect_through_the_actions_route_applies_exactly_one(
    app: Flask, table: Table, admin_conn: DbConn
) -> None:
    draw, collect = race(
        app,
        [
            table.command("actions", {"action": "draw"}),
            table.command("actions", {"action": "collect"}),
        ],
        hold=admin_conn,
        game=table.game_id,
    )

    assert sorted([draw.status_code, collect.status_code]) == [200, 409]
    events = event_types(admin_conn, f"game-{table.game_id}")
    assert table.version() == 3 == len(events)
    assert events[-1] == ("Collected" if collect.status_code == 200 else "CardDrawn")
    assert ledger_kinds(admin_conn, table.player.id, "sandbox") == ["stake"]  # nothing won


@pytest.mark.parametrize("racers", [2, 3, 4, 5, 6])
def test_simultaneous_draws_never_apply_two_on_one_version(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    """Left to race freely, a draw may read the game after another's commit and apply on the new
    version; but each applied draw is a version of its own, and every other is told."""
    answers = race(app, [table.command("draw") for _ in range(racers)])

    applied = [a for a in answers if a.status_code == 200]
    assert applied, "at least one draw applies"
    assert sorted(a.headers["ETag"] for a in applied) == [f'"{3 + i}"' for i in range(len(applied))]
    for refused in (a for a in answers if a.status_code != 200):
        assert_problem(refused, 409, "concurrent-update")
    assert table.version() == 2 + len(applied)
    assert event_types(admin_conn, f"game-{table.game_id}").count("CardDrawn") == len(applied)
    assert table.view().get_json()["stock_count"] == 24 - 3 * len(applied)


@pytest.mark.parametrize("racers", [2, 3, 4, 5, 6])
def test_simultaneous_draws_with_one_if_match_apply_exactly_one(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    answers = race(app, [table.command("draw", **{"If-Match": '"2"'}) for _ in range(racers)])

    assert Counter(a.status_code == 200 for a in answers) == Counter({True: 1, False: racers - 1})
    for refused in (a for a in answers if a.status_code != 200):
        if refused.status_code == 412:
            assert_problem(refused, 412, "version-mismatch")
        else:
            assert_problem(refused, 409, "concurrent-update")
    assert table.version() == 3
    assert event_types(admin_conn, f"game-{table.game_id}").count("CardDrawn") == 1


def test_a_draw_racing_a_collect_applies_exactly_one(
    app: Flask, table: Table, admin_conn: DbConn
) -> None:
    assert table.post("move", {"from": "tableau:1", "to": "foundation"}).status_code == 200
    draw, collect = race(
        app, [table.command("draw"), table.command("collect")], hold=admin_conn, game=table.game_id
    )

    assert sorted([draw.status_code, collect.status_code]) == [200, 409]
    events = event_types(admin_conn, f"game-{table.game_id}")
    assert table.version() == 4 == len(events)
    if collect.status_code == 200:
        assert_problem(draw, 409, "concurrent-update")
        assert events[-1] == "Collected"
        assert table.balance() == -STAKE + WIN_RATE
        assert ledger_kinds(admin_conn, table.player.id, "sandbox") == ["stake", "winnings"]
    else:
        assert_problem(collect, 409, "concurrent-update")
        assert events[-1] == "CardDrawn"
        assert table.balance() == -STAKE
        assert ledger_kinds(admin_conn, table.player.id, "sandbox") == ["stake"]


def _collect_and_void(app: Flask, table: Table, conn: DbConn) -> tuple[TestResponse, TestResponse]:
    """A collect and an operator's void, both having read the game at one version."""
    assert table.post("move", {"from": "tableau:1", "to": "foundation"}).status_code == 200
    operator = {"Authorization": f"Bearer {table.http.operator_key}"}

    def void(client: FlaskClient) -> TestResponse:
        return client.post(
            f"/v1/games/{table.game_id}/void", json={"reason": "race"}, headers=operator
        )

    collect, voided = race(app, [table.command("collect"), void], hold=conn, game=table.game_id)
    return collect, voided


def test_a_collect_racing_a_void_pays_or_refunds_never_both(
    app: Flask, table: Table, admin_conn: DbConn
) -> None:
    collect, voided = _collect_and_void(app, table, admin_conn)

    assert sorted([collect.status_code, voided.status_code])[0] == 200
    events = event_types(admin_conn, f"game-{table.game_id}")
    assert events.count("Collected") + events.count("Voided") == 1
    assert table.version() == len(events) == 4
    kinds = ledger_kinds(admin_conn, table.player.id, "sandbox")
    if events[-1] == "Collected":
        assert collect.status_code == 200
        assert kinds == ["stake", "winnings"]
        assert table.balance() == -STAKE + WIN_RATE
    else:
        assert voided.status_code == 200
        assert kinds == ["stake", "refund"]
        assert table.balance() == 0


def test_the_loser_of_a_collect_void_race_is_told_with_a_409(
    app: Flask, table: Table, admin_conn: DbConn
) -> None:
    collect, voided = _collect_and_void(app, table, admin_conn)

    if collect.status_code == 200:
        # A void retries once on a conflict, and then finds the game over.
        assert_problem(voided, 409, "game-finished", rule="game-over")
    else:
        assert voided.status_code == 200
        assert_problem(collect, 409, "concurrent-update")


@pytest.mark.parametrize("racers", [2, 4])
def test_simultaneous_voids_refund_once(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    operator = {"Authorization": f"Bearer {table.http.operator_key}"}

    def void(client: FlaskClient) -> TestResponse:
        return client.post(
            f"/v1/games/{table.game_id}/void", json={"reason": "race"}, headers=operator
        )

    answers = race(app, [void] * racers, hold=admin_conn, game=table.game_id)

    assert statuses(answers) == [200] + [409] * (racers - 1)
    for refused in (a for a in answers if a.status_code == 409):
        assert_problem(refused, 409, "game-finished", rule="game-over")
    assert event_types(admin_conn, f"game-{table.game_id}").count("Voided") == 1
    assert ledger_kinds(admin_conn, table.player.id, "sandbox") == ["stake", "refund"]
    assert table.balance() == 0


@pytest.mark.parametrize("racers", [2, 4])
def test_simultaneous_retries_under_one_key_draw_once(
    app: Flask, table: Table, admin_conn: DbConn, racers: int
) -> None:
    key = {"Idempotency-Key": f"race-{uuid.uuid4()}"}
    answers = race(
        app,
        [table.command("draw", **key) for _ in range(racers)],
        hold=admin_conn,
        game=table.game_id,
    )

    assert statuses(answers) == [200] * racers
    bodies = [a.get_json() for a in answers]
    assert all(body == bodies[0] for body in bodies)
    assert {a.headers["ETag"] for a in answers} == {'"3"'}
    replayed = Counter(a.headers.get("Idempotent-Replayed") for a in answers)
    assert replayed == Counter({"true": racers - 1, None: 1})
    assert event_types(admin_conn, f"game-{table.game_id}").count("CardDrawn") == 1
    assert table.version() == 3


# --- races on one wallet -------------------------------------------------------------------------


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_simultaneous_deals_for_one_player_take_one_stake(
    app: Flask, http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=FUNDS).player

    def deal(client: FlaskClient) -> TestResponse:
        body = {"variant": "vegas-draw1", "stake": STAKE}
        return client.post("/v1/games", json=body, headers=_as(player.token))

    answers = race(app, [deal] * 4, hold=admin_conn)

    assert statuses(answers) == [201, 409, 409, 409]
    (dealt,) = [a for a in answers if a.status_code == 201]
    game_id = dealt.get_json()["id"]
    for refused in (a for a in answers if a.status_code == 409):
        assert assert_problem(refused, 409, "game-in-progress")["game_id"] == game_id
    assert ledger_kinds(admin_conn, player.id) == ["deposit", "stake"]
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet["balance"], wallet["held"], wallet["open_game_id"]) == (
        FUNDS - STAKE,
        STAKE,
        game_id,
    )
    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()["items"]
    assert [line["game_id"] for line in history] == [game_id]


def test_simultaneous_withdrawals_never_overdraw(
    app: Flask, http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=1_000).player

    def withdraw(client: FlaskClient) -> TestResponse:
        body = {"amount": 600, "transaction_id": f"race-{uuid.uuid4()}"}
        return client.post(
            f"/v1/players/{player.id}/withdrawals", json=body, headers=_as(http.operator_key)
        )

    answers = race(app, [withdraw] * 4, hold=admin_conn)

    assert statuses(answers) == [201, 422, 422, 422]
    for refused in (a for a in answers if a.status_code == 422):
        assert_problem(refused, 422, "insufficient-funds")
    assert ledger_kinds(admin_conn, player.id) == ["deposit", "withdrawal"]
    assert http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()["balance"] == 400


def test_simultaneous_retries_of_one_deposit_post_it_once(
    app: Flask, http: Http, admin_conn: DbConn
) -> None:
    player = PlayerFactory.create()
    body = {"amount": 2_500, "transaction_id": f"race-{uuid.uuid4()}"}

    def deposit(client: FlaskClient) -> TestResponse:
        return client.post(
            f"/v1/players/{player.id}/deposits", json=body, headers=_as(http.operator_key)
        )

    answers = race(app, [deposit] * 4, hold=admin_conn)

    assert statuses(answers) == [201] * 4
    assert len({a.get_json()["id"] for a in answers}) == 1
    assert {a.get_json()["balance_after"] for a in answers} == {2_500}
    replayed = Counter(a.headers.get("Idempotent-Replayed") for a in answers)
    assert replayed == Counter({"true": 3, None: 1})
    assert ledger_kinds(admin_conn, player.id) == ["deposit"]
    assert event_types(admin_conn, f"player-{player.id}") == ["PlayerRegistered", "FundsDeposited"]
    assert http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()["balance"] == 2_500
