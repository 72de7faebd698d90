"""Retries: an Idempotency-Key retry returns the first response and moves nothing again; the
same key with another request is refused; a cashier transaction id is applied once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from werkzeug.test import TestResponse

from tests.api.books import balance, sandbox_balance
from tests.api.client import Http, assert_problem
from tests.api.factories import Player, PlayerFactory, WalletFactory, deal_certification
from tests.builders import turnable_deck

DbConn = psycopg.Connection[tuple[Any, ...]]
STAKE = 520
WIN_RATE = 50  # per foundation card at a 520 stake


def new_key() -> dict[str, str]:
    return {"Idempotency-Key": f"idem-{uuid.uuid4()}"}


def footprint(conn: DbConn) -> tuple[int, ...]:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM ledger_transactions),"
        " (SELECT count(*) FROM postings), (SELECT count(*) FROM players),"
        " (SELECT count(*) FROM player_preferences)"
    ).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def event_types(conn: DbConn, stream: str) -> list[str]:
    rows = conn.execute(
        "SELECT type FROM events WHERE stream_id = %s ORDER BY version", (stream,)
    ).fetchall()
    return [str(r[0]) for r in rows]


def ledger_kinds(conn: DbConn, player_id: str, wallet: str = "player") -> list[tuple[str, int]]:
    """What moved a player's wallet: the real one, or (``"sandbox"``) certification games'."""
    rows = conn.execute(
        "SELECT t.kind, p.amount FROM postings p JOIN ledger_transactions t USING (transaction_id)"
        " WHERE p.account_id = %s ORDER BY p.posting_id",
        (f"{wallet}:{player_id}",),
    ).fetchall()
    return [(str(kind), int(amount)) for kind, amount in rows]


def assert_replay(first: TestResponse, again: TestResponse) -> None:
    """The retry is the first response again, marked as a replay."""
    assert again.status_code == first.status_code, again.get_data(as_text=True)
    assert again.get_json() == first.get_json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first.headers
    for header in ("ETag", "Location"):
        assert again.headers.get(header) == first.headers.get(header)


@dataclass(frozen=True)
class Table:
    http: Http
    player: Player
    game_id: str

    def post(self, command: str, body: Any = None, **headers: str) -> TestResponse:
        return self.http.post(
            f"/v1/games/{self.game_id}/{command}", self.player.token, json=body, headers=headers
        )

    def events(self, conn: DbConn) -> list[str]:
        return event_types(conn, f"game-{self.game_id}")


@pytest.fixture
def table(http: Http) -> Table:
    player = WalletFactory.create(balance=10_400).player
    return Table(http, player, deal_certification(http, player, turnable_deck(), stake=STAKE))


# --- opening players ------------------------------------------------------------------------------


def test_opening_a_player_again_with_the_key_returns_the_first_response(
    http: Http, admin_conn: DbConn
) -> None:
    key = new_key()
    body = {"external_ref": f"idem-{uuid.uuid4()}", "currency": "GBP"}
    first = http.post("/v1/players", http.operator_key, json=body, headers=key)
    assert first.status_code == 201
    before = footprint(admin_conn)
    again = http.post("/v1/players", http.operator_key, json=body, headers=key)
    # 201 as the first time, not the 200 a new request for the same external_ref gets.
    assert again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers["Location"] == first.headers["Location"]
    assert footprint(admin_conn) == before
    fresh = http.post("/v1/players", http.operator_key, json=body)
    assert fresh.status_code == 200
    assert fresh.get_json() == first.get_json()


def test_opening_a_player_again_with_the_key_is_marked_as_a_replay(http: Http) -> None:
    key = new_key()
    body = {"external_ref": f"idem-{uuid.uuid4()}", "currency": "GBP"}
    first = http.post("/v1/players", http.operator_key, json=body, headers=key)
    again = http.post("/v1/players", http.operator_key, json=body, headers=key)
    assert_replay(first, again)


@pytest.mark.parametrize("change", ["external_ref", "currency"])
def test_opening_another_player_with_a_used_key_is_refused(
    http: Http, admin_conn: DbConn, change: str
) -> None:
    key = new_key()
    body = {"external_ref": f"idem-{uuid.uuid4()}", "currency": "GBP"}
    first = http.post("/v1/players", http.operator_key, json=body, headers=key)
    assert first.status_code == 201
    before = footprint(admin_conn)
    other = {**body, change: f"idem-{uuid.uuid4()}" if change == "external_ref" else "EUR"}
    refused = http.post("/v1/players", http.operator_key, json=other, headers=key)
    assert_problem(refused, 422, "idempotency-key-reused")
    assert footprint(admin_conn) == before


# --- the cashier ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["deposits", "withdrawals"])
def test_a_cashier_retry_with_the_key_returns_the_first_response_and_moves_nothing(
    http: Http, admin_conn: DbConn, kind: str
) -> None:
    player = WalletFactory.create(balance=10_000).player
    key = new_key()
    body: dict[str, Any] = {"amount": 1_234, "transaction_id": f"idem-{uuid.uuid4()}"}
    path = f"/v1/players/{player.id}/{kind}"
    first = http.post(path, http.operator_key, json=body, headers=key)
    assert first.status_code == 201, first.get_json()
    expected = 10_000 + 1_234 if kind == "deposits" else 10_000 - 1_234
    assert first.get_json()["balance_after"] == expected
    before = footprint(admin_conn)

    again = http.post(path, http.operator_key, json=body, headers=key)
    assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert balance(http, player) == expected

    # Money moves on; a late retry still answers what the first request did.
    later = http.post(
        path, http.operator_key, json={"amount": 1, "transaction_id": f"other-{uuid.uuid4()}"}
    )
    assert later.status_code == 201
    late = http.post(path, http.operator_key, json=body, headers=key)
    assert_replay(first, late)
    posting = ("deposit", 1_234) if kind == "deposits" else ("withdrawal", -1_234)
    assert ledger_kinds(admin_conn, player.id).count(posting) == 1


@pytest.mark.parametrize("kind", ["deposits", "withdrawals"])
@pytest.mark.parametrize("change", ["amount", "transaction_id", "route"])
def test_a_cashier_request_that_differs_under_a_used_key_is_refused(
    http: Http, admin_conn: DbConn, kind: str, change: str
) -> None:
    player = WalletFactory.create(balance=10_000).player
    key = new_key()
    body = {"amount": 500, "transaction_id": f"idem-{uuid.uuid4()}"}
    first = http.post(f"/v1/players/{player.id}/{kind}", http.operator_key, json=body, headers=key)
    assert first.status_code == 201
    before = (footprint(admin_conn), balance(http, player))
    path = f"/v1/players/{player.id}/{kind}"
    if change == "amount":
        body = {**body, "amount": 501}
    elif change == "transaction_id":
        body = {**body, "transaction_id": f"idem-{uuid.uuid4()}"}
    else:
        path = f"/v1/players/{player.id}/{'withdrawals' if kind == 'deposits' else 'deposits'}"
    refused = http.post(path, http.operator_key, json=body, headers=key)
    assert_problem(refused, 422, "idempotency-key-reused")
    assert (footprint(admin_conn), balance(http, player)) == before


def test_the_same_key_for_another_players_deposit_is_refused(
    http: Http, admin_conn: DbConn
) -> None:
    one, two = PlayerFactory.create(), PlayerFactory.create()
    key = new_key()
    body = {"amount": 500, "transaction_id": f"idem-{uuid.uuid4()}"}
    assert (
        http.post(
            f"/v1/players/{one.id}/deposits", http.operator_key, json=body, headers=key
        ).status_code
        == 201
    )
    before = footprint(admin_conn)
    refused = http.post(f"/v1/players/{two.id}/deposits", http.operator_key, json=body, headers=key)
    assert_problem(refused, 422, "idempotency-key-reused")
    assert footprint(admin_conn) == before
    assert balance(http, two) == 0


# --- cashier transaction ids ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["deposits", "withdrawals"])
def test_the_same_transaction_id_and_amount_returns_the_first_result(
    http: Http, admin_conn: DbConn, kind: str
) -> None:
    player = WalletFactory.create(balance=10_000).player
    body = {"amount": 700, "transaction_id": f"tx-{uuid.uuid4()}"}
    path = f"/v1/players/{player.id}/{kind}"
    first = http.post(path, http.operator_key, json=body)
    assert first.status_code == 201
    assert first.get_json()["transaction_id"] == body["transaction_id"]
    before = footprint(admin_conn)
    for headers in ({}, new_key()):  # with or without an Idempotency-Key of its own
        again = http.post(path, http.operator_key, json=body, headers=headers)
        assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert balance(http, player) == (10_700 if kind == "deposits" else 9_300)


@pytest.mark.parametrize("kind", ["deposits", "withdrawals"])
@pytest.mark.parametrize("change", ["amount", "kind", "player"])
def test_the_same_transaction_id_for_another_movement_is_refused(
    http: Http, admin_conn: DbConn, kind: str, change: str
) -> None:
    player = WalletFactory.create(balance=10_000).player
    other = WalletFactory.create(balance=10_000).player
    body = {"amount": 700, "transaction_id": f"tx-{uuid.uuid4()}"}
    assert (
        http.post(f"/v1/players/{player.id}/{kind}", http.operator_key, json=body).status_code
        == 201
    )
    before = (footprint(admin_conn), balance(http, player), balance(http, other))
    path = f"/v1/players/{player.id}/{kind}"
    if change == "amount":
        body = {**body, "amount": 701}
    elif change == "kind":
        path = f"/v1/players/{player.id}/{'withdrawals' if kind == 'deposits' else 'deposits'}"
    else:
        path = f"/v1/players/{other.id}/{kind}"
    refused = http.post(path, http.operator_key, json=body)
    problem = assert_problem(refused, 409, "transaction-id-reused")
    assert body["transaction_id"] in problem["detail"]
    assert (footprint(admin_conn), balance(http, player), balance(http, other)) == before


# --- dealing --------------------------------------------------------------------------------------


def test_a_deal_retry_returns_the_first_game_and_takes_one_stake(
    http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=2_000).player
    key = new_key()
    body = {"variant": "vegas-draw1", "stake": STAKE}
    first = http.post("/v1/games", player.token, json=body, headers=key)
    assert first.status_code == 201, first.get_json()
    game_id = first.get_json()["id"]
    assert first.headers["ETag"] == '"2"'
    assert first.headers["Location"] == f"/v1/games/{game_id}"
    before = footprint(admin_conn)

    again = http.post("/v1/games", player.token, json=body, headers=key)
    assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert balance(http, player) == 2_000 - STAKE

    # After the game has moved on, the retry still answers the deal as it was.
    drawn = http.post(f"/v1/games/{game_id}/draw", player.token)
    assert drawn.status_code == 200
    late = http.post("/v1/games", player.token, json=body, headers=key)
    assert_replay(first, late)
    assert event_types(admin_conn, f"game-{game_id}") == ["StakePlaced", "Dealt", "CardDrawn"]
    assert ledger_kinds(admin_conn, player.id) == [("deposit", 2_000), ("stake", -STAKE)]
    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()["items"]
    assert [line["game_id"] for line in history] == [game_id]


def test_an_operator_deal_retry_returns_the_first_game(http: Http, admin_conn: DbConn) -> None:
    player = WalletFactory.create(balance=2_000).player
    key = new_key()
    body = {"variant": "vegas-draw1", "stake": STAKE, "player_id": player.id, "seed": "12" * 32}
    first = http.post("/v1/games", http.operator_key, json=body, headers=key)
    assert first.status_code == 201, first.get_json()
    before = footprint(admin_conn)
    assert_replay(first, http.post("/v1/games", http.operator_key, json=body, headers=key))
    assert footprint(admin_conn) == before
    # one stake, in the sandbox: a certification deal moves no real money
    assert (balance(http, player), sandbox_balance(http, player)) == (2_000, -STAKE)


def test_another_deal_under_a_used_key_is_refused_not_game_in_progress(
    http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=2_000).player
    key = new_key()
    first = http.post(
        "/v1/games", player.token, json={"variant": "vegas-draw1", "stake": STAKE}, headers=key
    )
    assert first.status_code == 201
    before = footprint(admin_conn)
    refused = http.post(
        "/v1/games", player.token, json={"variant": "vegas-draw1", "stake": 1_040}, headers=key
    )
    assert_problem(refused, 422, "idempotency-key-reused")
    assert footprint(admin_conn) == before


def test_a_failed_request_does_not_use_up_its_key(http: Http, admin_conn: DbConn) -> None:
    player = PlayerFactory.create()
    key = new_key()
    body = {"variant": "vegas-draw1", "stake": STAKE}
    poor = http.post("/v1/games", player.token, json=body, headers=key)
    assert_problem(poor, 422, "insufficient-funds")
    paid = http.post(
        f"/v1/players/{player.id}/deposits",
        http.operator_key,
        json={"amount": STAKE, "transaction_id": f"tx-{uuid.uuid4()}"},
    )
    assert paid.status_code == 201
    dealt = http.post("/v1/games", player.token, json=body, headers=key)
    assert dealt.status_code == 201, dealt.get_json()
    assert "Idempotent-Replayed" not in dealt.headers
    assert balance(http, player) == 0


# --- commands -------------------------------------------------------------------------------------


def test_a_draw_retry_returns_the_first_response_and_draws_once(
    table: Table, admin_conn: DbConn
) -> None:
    key = new_key()
    first = table.post("draw", **key)
    assert first.status_code == 200
    assert first.headers["ETag"] == '"3"'
    before = footprint(admin_conn)

    again = table.post("draw", **key)
    assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert table.events(admin_conn) == ["StakePlaced", "Dealt", "CardDrawn"]

    # The game moves on; the retry still answers the first draw, even with its If-Match.
    assert table.post("draw").headers["ETag"] == '"4"'
    late = table.post("draw", **key, **{"If-Match": '"2"'})
    assert_replay(first, late)
    assert table.events(admin_conn) == ["StakePlaced", "Dealt", "CardDrawn", "CardDrawn"]
    current = table.http.get(f"/v1/games/{table.game_id}", table.player.token)
    assert current.headers["ETag"] == '"4"'


@pytest.mark.parametrize(
    ("first_command", "first_body", "second_command", "second_body"),
    [
        ("draw", None, "undo", None),
        ("draw", None, "collect", None),
        (
            "move",
            {"from": "tableau:1", "to": "foundation"},
            "move",
            {"from": "tableau:1", "to": "foundation:2"},
        ),
        (
            "move",
            {"from": "tableau:1", "to": "foundation"},
            "move",
            {"from": "tableau:1", "to": "foundation", "count": 1},
        ),
    ],
)
def test_a_different_command_under_a_used_key_is_refused(
    table: Table,
    admin_conn: DbConn,
    first_command: str,
    first_body: Any,
    second_command: str,
    second_body: Any,
) -> None:
    key = new_key()
    assert table.post(first_command, first_body, **key).status_code == 200
    before = (footprint(admin_conn), table.events(admin_conn))
    refused = table.post(second_command, second_body, **key)
    assert_problem(refused, 422, "idempotency-key-reused")
    assert (footprint(admin_conn), table.events(admin_conn)) == before


def test_the_same_key_on_another_players_game_is_their_own(http: Http, admin_conn: DbConn) -> None:
    """Keys are scoped to the caller: two players using one key do not see each other's result."""
    key = new_key()
    views = []
    for _ in range(2):
        player = WalletFactory.create(balance=STAKE).player
        game = http.post("/v1/games", player.token, json={"variant": "vegas-draw1", "stake": STAKE})
        assert game.status_code == 201
        drawn = http.post(f"/v1/games/{game.get_json()['id']}/draw", player.token, headers=key)
        assert drawn.status_code == 200
        assert "Idempotent-Replayed" not in drawn.headers
        views.append(drawn.get_json())
    assert views[0]["id"] != views[1]["id"]
    assert [v["version"] for v in views] == [3, 3]


def test_a_collect_retry_returns_the_first_response_and_pays_once(
    table: Table, admin_conn: DbConn
) -> None:
    assert table.post("move", {"from": "tableau:1", "to": "foundation"}).status_code == 200
    key = new_key()
    first = table.post("collect", **key)
    assert first.status_code == 200
    collected = first.get_json()
    assert (collected["status"], collected["payout"]) == ("collected", WIN_RATE)
    before = footprint(admin_conn)
    paid = sandbox_balance(table.http, table.player)  # a certification game's money
    assert paid == -STAKE + WIN_RATE

    again = table.post("collect", **key)
    assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert sandbox_balance(table.http, table.player) == paid
    assert table.events(admin_conn)[-1] == "Collected"
    paid_out = ledger_kinds(admin_conn, table.player.id, "sandbox")
    assert paid_out.count(("winnings", WIN_RATE)) == 1

    # Without the key, a second collect is refused: the game is over.
    assert_problem(table.post("collect"), 409, "game-finished", rule="game-over")


def test_a_void_retry_returns_the_first_response_and_refunds_once(
    table: Table, admin_conn: DbConn
) -> None:
    key = new_key()
    path = f"/v1/games/{table.game_id}/void"
    first = table.http.post(
        path, table.http.operator_key, json={"reason": "table fault"}, headers=key
    )
    assert first.status_code == 200
    voided = first.get_json()
    assert (voided["status"], voided["refund"], voided["payout"]) == ("voided", STAKE, 0)
    before = footprint(admin_conn)
    assert sandbox_balance(table.http, table.player) == 0  # a certification game's money

    again = table.http.post(
        path, table.http.operator_key, json={"reason": "table fault"}, headers=key
    )
    assert_replay(first, again)
    assert footprint(admin_conn) == before
    assert sandbox_balance(table.http, table.player) == 0
    assert ledger_kinds(admin_conn, table.player.id, "sandbox").count(("refund", STAKE)) == 1

    refused = table.http.post(
        path, table.http.operator_key, json={"reason": "another"}, headers=key
    )
    assert_problem(refused, 422, "idempotency-key-reused")
    assert footprint(admin_conn) == before


# --- preferences ----------------------------------------------------------------------------------

BLUE = {"sound": False, "colour": "blue", "card_back": 4}
RED = {"sound": True, "colour": "red", "card_back": 5}


def test_a_preferences_retry_records_nothing_again(http: Http, admin_conn: DbConn) -> None:
    player = PlayerFactory.create()
    key = new_key()
    path = f"/v1/players/{player.id}/preferences"
    first = http.put(path, player.token, json=BLUE, headers=key)
    assert first.status_code == 200
    assert first.get_json() == BLUE
    before = event_types(admin_conn, f"player-{player.id}")
    assert before == ["PlayerRegistered", "PreferencesChanged"]
    again = http.put(path, player.token, json=BLUE, headers=key)
    assert again.status_code == 200
    assert again.get_json() == BLUE
    assert event_types(admin_conn, f"player-{player.id}") == before
    refused = http.put(path, player.token, json=RED, headers=key)
    assert_problem(refused, 422, "idempotency-key-reused")
    assert http.get(path, player.token).get_json() == BLUE


def test_a_late_preferences_retry_returns_the_first_response(http: Http) -> None:
    player = PlayerFactory.create()
    key = new_key()
    path = f"/v1/players/{player.id}/preferences"
    first = http.put(path, player.token, json=BLUE, headers=key)
    assert http.put(path, player.token, json=RED).status_code == 200
    late = http.put(path, player.token, json=BLUE, headers=key)
    assert_replay(first, late)
    assert http.get(path, player.token).get_json() == RED


# --- keys that every idempotent route shares ------------------------------------------------------

Send = Callable[[Http, Player, dict[str, str]], TestResponse]


def _deposit(http: Http, player: Player, key: dict[str, str]) -> TestResponse:
    body = {"amount": 1, "transaction_id": f"shared-{key['Idempotency-Key']}"}
    return http.post(f"/v1/players/{player.id}/deposits", http.operator_key, json=body, headers=key)


def _open(http: Http, player: Player, key: dict[str, str]) -> TestResponse:
    body = {"external_ref": f"shared-{key['Idempotency-Key']}", "currency": "GBP"}
    return http.post("/v1/players", http.operator_key, json=body, headers=key)


@pytest.mark.parametrize(("first", "second"), [(_deposit, _open), (_open, _deposit)])
def test_one_key_on_two_routes_is_refused(
    http: Http, admin_conn: DbConn, first: Send, second: Send
) -> None:
    player = PlayerFactory.create()
    key = new_key()
    assert first(http, player, key).status_code == 201
    before = footprint(admin_conn)
    assert_problem(second(http, player, key), 422, "idempotency-key-reused")
    assert footprint(admin_conn) == before
