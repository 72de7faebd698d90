"""Errors are problem details, each kind its own stable type, and a refused request changes
nothing: not the game (its version and ETag, its events), not the wallet, not anything else."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from werkzeug.test import TestResponse

from service.api.problems import TYPES
from tests.api.client import Http, assert_problem
from tests.api.factories import Player, PlayerFactory, WalletFactory, deal_certification
from tests.builders import turnable_deck

DbConn = psycopg.Connection[tuple[Any, ...]]
FUNDS = 10_400
STAKE = 520
TOO_BIG = 16 * 1024 + 1


@dataclass(frozen=True)
class Table:
    """A funded player with a draw-3 game in progress on a known deck (a certification deal:
    its stake is in the sandbox wallet)."""

    http: Http
    player: Player
    game_id: str

    def token(self, who: str) -> str:
        return self.http.operator_key if who == "operator" else self.player.token


@dataclass(frozen=True)
class Seen:
    """Everything a refused request must leave as it was."""

    etag: str
    view: dict[str, Any]
    wallet: dict[str, Any]
    game_events: int
    footprint: tuple[int, ...]


@pytest.fixture
def table(http: Http) -> Table:
    player = WalletFactory.create(balance=FUNDS).player
    return Table(http, player, deal_certification(http, player, turnable_deck(), stake=STAKE))


def footprint(conn: DbConn) -> tuple[int, ...]:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM ledger_transactions),"
        " (SELECT count(*) FROM postings), (SELECT count(*) FROM players),"
        " (SELECT count(*) FROM player_sessions), (SELECT count(*) FROM idempotency_keys),"
        " (SELECT count(*) FROM player_preferences)"
    ).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def game_events(conn: DbConn, game_id: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM events WHERE stream_id = %s", (f"game-{game_id}",)
    ).fetchone()
    assert row is not None
    return int(row[0])


def look(table: Table, conn: DbConn) -> Seen:
    http, player = table.http, table.player
    game = http.get(f"/v1/games/{table.game_id}", player.token)
    assert game.status_code == 200
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token)
    assert wallet.status_code == 200
    view: dict[str, Any] = game.get_json()
    assert game.headers["ETag"] == f'"{view["version"]}"'
    return Seen(
        game.headers["ETag"],
        view,
        wallet.get_json(),
        game_events(conn, table.game_id),
        footprint(conn),
    )


def assert_unchanged(table: Table, conn: DbConn, before: Seen) -> None:
    after = look(table, conn)
    assert after.etag == before.etag
    assert after.view["version"] == before.view["version"]
    assert after.view == before.view
    assert after.wallet == before.wallet
    assert after.game_events == before.game_events
    assert after.footprint == before.footprint


def assert_typed_problem(
    response: TestResponse, status: int, slug: str, rule: str | None = None
) -> dict[str, Any]:
    """assert_problem, and the title and status are the type's own, the instance is the path."""
    body = assert_problem(response, status, slug, rule)
    assert body["title"] == TYPES[slug].title
    assert body["instance"] == response.request.path
    if rule is None:
        assert "rule" not in body
    return body


# --- bad requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    who: str  # "player" or "operator"
    method: str
    path: str  # {player} and {game} filled in
    body: Any = None  # JSON to send
    raw: str | None = None  # or these bytes as application/json
    status: int = 422
    slug: str = "validation-error"
    field: str | None = None  # the field a validation error names

    def send(self, table: Table, headers: dict[str, str] | None = None) -> TestResponse:
        path = self.path.format(player=table.player.id, game=table.game_id)
        token = table.token(self.who)
        if self.raw is not None:
            return table.http.call(
                self.method,
                path,
                token,
                data=self.raw,
                content_type="application/json",
                headers=headers,
            )
        return table.http.call(self.method, path, token, json=self.body, headers=headers)


DEAL = "/v1/games"
DRAW = "/v1/games/{game}/draw"
MOVE = "/v1/games/{game}/move"
TURN = "/v1/games/{game}/turn"
COLLECT = "/v1/games/{game}/collect"
VOID = "/v1/games/{game}/void"
DEPOSIT = "/v1/players/{player}/deposits"
WITHDRAW = "/v1/players/{player}/withdrawals"
PREFS = "/v1/players/{player}/preferences"
PLAYERS = "/v1/players"
GOOD_PREFS = {"sound": True, "colour": "red", "card_back": 2}


def deal(**fields: Any) -> dict[str, Any]:
    return {"variant": "vegas-draw1", "stake": STAKE, **fields}


def money(**fields: Any) -> dict[str, Any]:
    return {"amount": 104, "transaction_id": f"bad-{uuid.uuid4()}", **fields}


def prefs(**fields: Any) -> dict[str, Any]:
    return {**GOOD_PREFS, **fields}


def malformed(who: str, method: str, path: str, raw: str) -> Bad:
    return Bad(who, method, path, raw=raw, status=400, slug="malformed-request")


def too_big(who: str, method: str, path: str, body: Any = None, raw: str | None = None) -> Bad:
    return Bad(who, method, path, body, raw, status=413, slug="payload-too-large")


PAD = "x" * TOO_BIG

BAD: dict[str, Bad] = {
    # invalid JSON
    "deal: not JSON": malformed("player", "POST", DEAL, "{"),
    "draw: not JSON": malformed("player", "POST", DRAW, "{"),
    "move: cut short": malformed("player", "POST", MOVE, '{"from": "waste", "to": '),
    "turn: form encoding": malformed("player", "POST", TURN, "column=1"),
    "turn: trailing garbage": malformed("player", "POST", TURN, '{"column": 1} x'),
    "collect: single quotes": malformed("player", "POST", COLLECT, "{'a': 1}"),
    "void: not JSON": malformed("operator", "POST", VOID, "reason: because"),
    "deposit: not JSON": malformed("operator", "POST", DEPOSIT, '{"amount": 104,}'),
    "withdrawal: not JSON": malformed("operator", "POST", WITHDRAW, "[1, 2"),
    "preferences: not JSON": malformed("player", "PUT", PREFS, "{"),
    "open player: not JSON": malformed("operator", "POST", PLAYERS, "nope"),
    # bodies that are JSON but not an object
    "deal: array": Bad("player", "POST", DEAL, raw="[]", field="_schema"),
    "draw: null": Bad("player", "POST", DRAW, raw="null", field="_schema"),
    "move: string": Bad("player", "POST", MOVE, raw='"waste"', field="_schema"),
    "deposit: number": Bad("operator", "POST", DEPOSIT, raw="104", field="_schema"),
    # wrong types
    "deal: stake as string": Bad("player", "POST", DEAL, deal(stake="520"), field="stake"),
    "deal: stake as float": Bad("player", "POST", DEAL, deal(stake=520.5), field="stake"),
    "deal: stake as bool": Bad("player", "POST", DEAL, deal(stake=True), field="stake"),
    "deal: variant as number": Bad("player", "POST", DEAL, deal(variant=1), field="variant"),
    "deal: client_seed as number": Bad(
        "player", "POST", DEAL, deal(client_seed=7), field="client_seed"
    ),
    "deal: player_id not a uuid": Bad(
        "operator", "POST", DEAL, deal(player_id="me", seed="ab" * 32), field="player_id"
    ),
    "deal: deck not a list": Bad(
        "operator", "POST", DEAL, deal(player_id="{player}", deck="AS 2S"), field="deck"
    ),
    "move: from as number": Bad(
        "player", "POST", MOVE, {"from": 1, "to": "foundation"}, field="from"
    ),
    "move: count as string": Bad(
        "player",
        "POST",
        MOVE,
        {"from": "tableau:1", "to": "foundation", "count": "1"},
        field="count",
    ),
    "turn: column as string": Bad("player", "POST", TURN, {"column": "1"}, field="column"),
    "turn: column as float": Bad("player", "POST", TURN, {"column": 1.5}, field="column"),
    "turn: column as bool": Bad("player", "POST", TURN, {"column": True}, field="column"),
    "turn: column null": Bad("player", "POST", TURN, {"column": None}, field="column"),
    "deposit: amount as string": Bad(
        "operator", "POST", DEPOSIT, money(amount="104"), field="amount"
    ),
    "deposit: amount as float": Bad(
        "operator", "POST", DEPOSIT, money(amount=104.0), field="amount"
    ),
    "deposit: amount as bool": Bad("operator", "POST", DEPOSIT, money(amount=True), field="amount"),
    "deposit: transaction_id as number": Bad(
        "operator", "POST", DEPOSIT, money(transaction_id=7), field="transaction_id"
    ),
    "withdrawal: amount null": Bad(
        "operator", "POST", WITHDRAW, money(amount=None), field="amount"
    ),
    "preferences: card_back as string": Bad(
        "player", "PUT", PREFS, prefs(card_back="3"), field="card_back"
    ),
    "preferences: card_back as bool": Bad(
        "player", "PUT", PREFS, prefs(card_back=True), field="card_back"
    ),
    "preferences: colour as list": Bad(
        "player", "PUT", PREFS, prefs(colour=["red"]), field="colour"
    ),
    "void: reason as list": Bad("operator", "POST", VOID, {"reason": ["x"]}, field="reason"),
    "open player: currency as number": Bad(
        "operator", "POST", PLAYERS, {"external_ref": "x", "currency": 826}, field="currency"
    ),
    # unknown fields
    "deal: unknown field": Bad("player", "POST", DEAL, deal(bonus=100), field="bonus"),
    "draw: unknown field": Bad("player", "POST", DRAW, {"cards": 3}, field="cards"),
    "collect: unknown field": Bad("player", "POST", COLLECT, {"force": True}, field="force"),
    "move: unknown field": Bad(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "foundation", "fast": 1}, field="fast"
    ),
    "turn: unknown field": Bad("player", "POST", TURN, {"column": 1, "twice": True}, field="twice"),
    "deposit: unknown field": Bad(
        "operator", "POST", DEPOSIT, money(currency="GBP"), field="currency"
    ),
    "preferences: unknown field": Bad("player", "PUT", PREFS, prefs(volume=3), field="volume"),
    "void: unknown field": Bad(
        "operator", "POST", VOID, {"reason": "x", "refund": 0}, field="refund"
    ),
    "open player: unknown field": Bad(
        "operator", "POST", PLAYERS, {"external_ref": "x", "currency": "GBP", "vip": 1}, field="vip"
    ),
    # unknown piles
    "move: from tableau:9": Bad(
        "player", "POST", MOVE, {"from": "tableau:9", "to": "foundation"}, field="from"
    ),
    "move: to tableau:7": Bad(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "tableau:7"}, field="to"
    ),
    "move: from stock": Bad(
        "player", "POST", MOVE, {"from": "stock", "to": "tableau:0"}, field="from"
    ),
    "move: to waste": Bad("player", "POST", MOVE, {"from": "tableau:1", "to": "waste"}, field="to"),
    "move: from any foundation": Bad(
        "player", "POST", MOVE, {"from": "foundation", "to": "tableau:0"}, field="from"
    ),
    "move: to a pile no game has": Bad(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "reserve"}, field="to"
    ),
    "move: from pyramid:28": Bad(
        "player", "POST", MOVE, {"from": "pyramid:28", "to": "foundation"}, field="from"
    ),
    "move: to foundation:4": Bad(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "foundation:4"}, field="to"
    ),
    "move: pile in capitals": Bad(
        "player", "POST", MOVE, {"from": "Tableau:1", "to": "foundation"}, field="from"
    ),
    # out of range
    "deal: stake 0": Bad("player", "POST", DEAL, deal(stake=0), field="stake"),
    "deal: stake negative": Bad("player", "POST", DEAL, deal(stake=-520), field="stake"),
    "deal: stake 10^13": Bad("player", "POST", DEAL, deal(stake=10**13), field="stake"),
    "deal: unknown variant": Bad(
        "player", "POST", DEAL, deal(variant="vegas-draw2"), field="variant"
    ),
    "deal: empty client_seed": Bad(
        "player", "POST", DEAL, deal(client_seed=""), field="client_seed"
    ),
    "deal: long client_seed": Bad(
        "player", "POST", DEAL, deal(client_seed="s" * 65), field="client_seed"
    ),
    "deal: short deck": Bad(
        "operator", "POST", DEAL, deal(player_id="{player}", deck=["AS"] * 51), field="deck"
    ),
    "deal: seed in capitals": Bad(
        "operator", "POST", DEAL, deal(player_id="{player}", seed="AB" * 32), field="seed"
    ),
    "move: count 105 (more than two decks)": Bad(
        "player",
        "POST",
        MOVE,
        {"from": "tableau:1", "to": "foundation", "count": 105},
        field="count",
    ),
    "move: count 0": Bad(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "foundation", "count": 0}, field="count"
    ),
    "turn: column 7": Bad("player", "POST", TURN, {"column": 7}, field="column"),
    "turn: column -1": Bad("player", "POST", TURN, {"column": -1}, field="column"),
    "turn: column and pile": Bad(
        "player", "POST", TURN, {"column": 1, "pile": "tableau:1"}, field="column"
    ),
    "turn: pile no game has": Bad("player", "POST", TURN, {"pile": "tableau:99"}, field="pile"),
    "preferences: card_back 13": Bad(
        "player", "PUT", PREFS, prefs(card_back=13), field="card_back"
    ),
    "preferences: card_back 0": Bad("player", "PUT", PREFS, prefs(card_back=0), field="card_back"),
    "preferences: colour purple": Bad(
        "player", "PUT", PREFS, prefs(colour="purple"), field="colour"
    ),
    "deposit: amount 0": Bad("operator", "POST", DEPOSIT, money(amount=0), field="amount"),
    "deposit: amount negative": Bad(
        "operator", "POST", DEPOSIT, money(amount=-104), field="amount"
    ),
    "deposit: amount 10^12 + 1": Bad(
        "operator", "POST", DEPOSIT, money(amount=10**12 + 1), field="amount"
    ),
    "deposit: empty transaction_id": Bad(
        "operator", "POST", DEPOSIT, money(transaction_id=""), field="transaction_id"
    ),
    "deposit: long transaction_id": Bad(
        "operator", "POST", DEPOSIT, money(transaction_id="t" * 201), field="transaction_id"
    ),
    "withdrawal: amount 0": Bad("operator", "POST", WITHDRAW, money(amount=0), field="amount"),
    "void: empty reason": Bad("operator", "POST", VOID, {"reason": ""}, field="reason"),
    "void: long reason": Bad("operator", "POST", VOID, {"reason": "r" * 501}, field="reason"),
    "open player: empty external_ref": Bad(
        "operator", "POST", PLAYERS, {"external_ref": "", "currency": "GBP"}, field="external_ref"
    ),
    "open player: currency in lower case": Bad(
        "operator", "POST", PLAYERS, {"external_ref": "x", "currency": "gbp"}, field="currency"
    ),
    # missing fields
    "deal: no variant": Bad("player", "POST", DEAL, {"stake": STAKE}, field="variant"),
    "move: no to": Bad("player", "POST", MOVE, {"from": "tableau:1"}, field="to"),
    "turn: no column": Bad("player", "POST", TURN, {}, field="column"),
    "deposit: no transaction_id": Bad(
        "operator", "POST", DEPOSIT, {"amount": 104}, field="transaction_id"
    ),
    "void: no reason": Bad("operator", "POST", VOID, {}, field="reason"),
    "operator deal: no player_id": Bad(
        "operator", "POST", DEAL, deal(seed="ab" * 32), field="player_id"
    ),
    "operator deal: seed and deck": Bad(
        "operator",
        "POST",
        DEAL,
        deal(player_id="{player}", seed="ab" * 32, deck=turnable_deck()),
        field="player_id",
    ),
    # queries
    "game: unknown view": Bad("player", "GET", "/v1/games/{game}?view=everything", field="view"),
    "ledger: limit 0": Bad("player", "GET", "/v1/players/{player}/ledger?limit=0", field="limit"),
    "ledger: limit 101": Bad(
        "player", "GET", "/v1/players/{player}/ledger?limit=101", field="limit"
    ),
    "ledger: limit not a number": Bad(
        "player", "GET", "/v1/players/{player}/ledger?limit=ten", field="limit"
    ),
    "ledger: cursor not a number": Bad(
        "player", "GET", "/v1/players/{player}/ledger?before=abc", field="before"
    ),
    "history: cursor garbage": Bad(
        "player", "GET", "/v1/players/{player}/history?before=!!!", field="before"
    ),
    "quote: stake not a number": Bad(
        "player", "GET", "/v1/quote?variant=vegas-draw1&stake=1e3", field="stake"
    ),
    "quote: no variant": Bad("player", "GET", "/v1/quote?stake=520", field="variant"),
    # bodies over 16 KiB
    "deal: huge": too_big("player", "POST", DEAL, deal(client_seed=PAD)),
    "draw: huge garbage": too_big("player", "POST", DRAW, raw=PAD),
    "move: huge": too_big(
        "player", "POST", MOVE, {"from": "tableau:1", "to": "foundation", "pad": PAD}
    ),
    "turn: huge": too_big("player", "POST", TURN, {"column": 1, "pad": PAD}),
    "collect: huge": too_big("player", "POST", COLLECT, {"pad": PAD}),
    "void: huge reason": too_big("operator", "POST", VOID, {"reason": PAD}),
    "deposit: huge": too_big("operator", "POST", DEPOSIT, money(transaction_id=PAD)),
    "withdrawal: huge": too_big("operator", "POST", WITHDRAW, money(transaction_id=PAD)),
    "preferences: huge": too_big("player", "PUT", PREFS, prefs(pad=PAD)),
    "open player: huge": too_big(
        "operator", "POST", PLAYERS, {"external_ref": PAD, "currency": "GBP"}
    ),
}


def _fill(body: Any, table: Table) -> Any:
    if isinstance(body, dict):
        return {k: _fill(v, table) for k, v in body.items()}
    if body == "{player}":
        return table.player.id
    return body


@pytest.mark.parametrize("bad", BAD.values(), ids=BAD.keys())
def test_a_bad_request_is_a_problem_and_changes_nothing(
    table: Table, admin_conn: DbConn, bad: Bad
) -> None:
    before = look(table, admin_conn)
    sent = Bad(bad.who, bad.method, bad.path, _fill(bad.body, table), bad.raw, bad.status, bad.slug)
    response = sent.send(table)
    body = assert_typed_problem(response, bad.status, bad.slug)
    if bad.field is not None:
        assert list(body["errors"]) == [bad.field]
    assert_unchanged(table, admin_conn, before)


def test_a_bad_request_with_an_idempotency_key_does_not_use_up_the_key(
    table: Table, admin_conn: DbConn
) -> None:
    key = {"Idempotency-Key": f"bad-{uuid.uuid4()}"}
    path = f"/v1/games/{table.game_id}/turn"
    before = look(table, admin_conn)
    refused = table.http.post(path, table.player.token, json={"column": 7}, headers=key)
    assert_typed_problem(refused, 422, "validation-error")
    assert_unchanged(table, admin_conn, before)
    # The key was never claimed: a good request may still use it.
    moved = table.http.post(
        f"/v1/games/{table.game_id}/move",
        table.player.token,
        json={"from": "tableau:1", "to": "foundation"},
        headers=key,
    )
    assert moved.status_code == 200, moved.get_json()


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("If-Match", "abc"),
        ("If-Match", "*"),
        ("If-Match", '"1", "2"'),
        ("If-Match", '"1234567890"'),
        ("If-Match", '"-1"'),
        ("Idempotency-Key", " "),
        ("Idempotency-Key", "two words"),
        ("Idempotency-Key", "k" * 201),
    ],
)
def test_a_malformed_header_is_400_and_changes_nothing(
    table: Table, admin_conn: DbConn, header: str, value: str
) -> None:
    before = look(table, admin_conn)
    response = table.http.post(
        f"/v1/games/{table.game_id}/draw", table.player.token, headers={header: value}
    )
    body = assert_typed_problem(response, 400, "malformed-request")
    assert header in body["detail"]
    assert_unchanged(table, admin_conn, before)


# --- rule violations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "body", "rule"),
    [
        ("recycle", None, "stock-not-empty"),
        ("undo", None, "undo-not-allowed"),
        ("turn", {"column": 0}, "top-card-face-up"),
        ("move", {"from": "waste", "to": "foundation"}, "waste-empty"),
        ("move", {"from": "tableau:0", "to": "tableau:0"}, "same-pile"),
        ("move", {"from": "foundation:0", "to": "tableau:0"}, "source-empty"),
        ("move", {"from": "tableau:3", "to": "tableau:0", "count": 5}, "invalid-count"),
        ("turn", {"pile": "waste"}, "unknown-pile"),
        # Piles only other games have: /move refuses them as invalid input (it always has),
        # the generic route by the game's rules.
        ("actions", {"action": "move", "from": "tableau:1", "to": "waste"}, "invalid-destination"),
        ("actions", {"action": "move", "from": "foundation", "to": "tableau:0"}, "invalid-source"),
        ("actions", {"action": "move", "from": "pyramid:3", "to": "foundation"}, "unknown-pile"),
    ],
)
def test_a_broken_rule_names_the_rule_and_changes_nothing(
    table: Table, admin_conn: DbConn, command: str, body: Any, rule: str
) -> None:
    before = look(table, admin_conn)
    response = table.http.post(
        f"/v1/games/{table.game_id}/{command}", table.player.token, json=body
    )
    assert_typed_problem(response, 422, "rule-violation", rule)
    assert_unchanged(table, admin_conn, before)


@pytest.mark.parametrize(
    ("stake", "rule"),
    [(52, "stake-out-of-range"), (157, "stake-not-multiple"), (1_040_052, "stake-out-of-range")],
)
def test_a_stake_the_paytable_refuses_is_a_rule_violation_and_moves_no_money(
    http: Http, admin_conn: DbConn, stake: int, rule: str
) -> None:
    player = WalletFactory.create(balance=2_000_000).player
    before = footprint(admin_conn)
    response = http.post("/v1/games", player.token, json=deal(stake=stake))
    assert_typed_problem(response, 422, "rule-violation", rule)
    assert footprint(admin_conn) == before
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet["balance"], wallet["held"], wallet["open_game_id"]) == (2_000_000, 0, None)


def test_an_unknown_currency_is_a_rule_violation(http: Http, admin_conn: DbConn) -> None:
    before = footprint(admin_conn)
    response = http.post(
        "/v1/players",
        http.operator_key,
        json={"external_ref": f"x-{uuid.uuid4()}", "currency": "XYZ"},
    )
    assert_typed_problem(response, 422, "rule-violation", "unknown-currency")
    assert footprint(admin_conn) == before


def test_an_invalid_certification_deck_is_a_rule_violation(http: Http, admin_conn: DbConn) -> None:
    player = WalletFactory.create(balance=STAKE).player
    before = footprint(admin_conn)
    response = http.post(
        "/v1/games", http.operator_key, json=deal(player_id=player.id, deck=["AS"] * 52)
    )
    assert_typed_problem(response, 422, "rule-violation", "invalid-deck")
    assert footprint(admin_conn) == before


# --- money and game state: each refusal its own type ----------------------------------------------


def test_a_stake_the_wallet_cannot_cover_is_insufficient_funds(
    http: Http, admin_conn: DbConn
) -> None:
    player = WalletFactory.create(balance=STAKE - 52).player
    before = footprint(admin_conn)
    response = http.post("/v1/games", player.token, json=deal())
    body = assert_typed_problem(response, 422, "insufficient-funds")
    assert str(STAKE) in body["detail"]
    assert footprint(admin_conn) == before
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet["balance"], wallet["held"], wallet["open_game_id"]) == (STAKE - 52, 0, None)
    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()
    assert history["items"] == []


def test_an_operator_deal_needs_no_real_money(http: Http) -> None:
    """Not a refusal any more: a certification deal is staked in the player's sandbox wallet,
    which is never funded and never short (tests/api/test_sandbox.py)."""
    player = PlayerFactory.create()
    response = http.post(
        "/v1/games", http.operator_key, json=deal(player_id=player.id, seed="cd" * 32)
    )
    assert response.status_code == 201, response.get_json()
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet["balance"], wallet["sandbox"]["balance"]) == (0, -STAKE)


def test_a_withdrawal_over_the_balance_is_insufficient_funds(
    table: Table, admin_conn: DbConn
) -> None:
    before = look(table, admin_conn)
    available = before.wallet["balance"]
    assert available == FUNDS  # the table's certification game is staked in the sandbox
    response = table.http.post(
        f"/v1/players/{table.player.id}/withdrawals",
        table.http.operator_key,
        json=money(amount=available + 1),
    )
    assert_typed_problem(response, 422, "insufficient-funds")
    assert_unchanged(table, admin_conn, before)


def test_a_withdrawal_of_money_a_balance_forgery_added_is_an_integrity_breach(
    table: Table, admin_conn: DbConn
) -> None:
    """The insider's forgery (issue 22): the balance raised behind the service's back, then
    withdrawn over HTTP. The posting function refuses a balance its postings do not explain:
    500 integrity-breach, nothing posted, nothing appended."""
    account = f"player:{table.player.id}"
    forged = "UPDATE account_balances SET balance = balance + %s WHERE account_id = %s"
    admin_conn.execute(forged, (2_000_000, account))
    try:
        before = footprint(admin_conn)
        response = table.http.post(
            f"/v1/players/{table.player.id}/withdrawals",
            table.http.operator_key,
            json=money(amount=2_000_000),
        )
        assert_typed_problem(response, 500, "integrity-breach")
        assert footprint(admin_conn) == before
    finally:  # the session's books back as they were, for the tests after this one
        admin_conn.execute(forged, (-2_000_000, account))
    assert look(table, admin_conn).wallet["balance"] == FUNDS


def test_a_second_game_while_one_is_in_progress_is_game_in_progress(
    table: Table, admin_conn: DbConn
) -> None:
    before = look(table, admin_conn)
    for token, body in (
        (table.player.token, deal()),
        (table.player.token, deal(variant="vegas-draw3", stake=104)),
        (table.http.operator_key, deal(player_id=table.player.id, seed="ef" * 32)),
    ):
        response = table.http.post("/v1/games", token, json=body)
        problem = assert_typed_problem(response, 409, "game-in-progress")
        assert problem["game_id"] == table.game_id
    assert_unchanged(table, admin_conn, before)
    assert before.wallet["open_game_id"] == table.game_id


@pytest.mark.parametrize("ending", ["collect", "void"])
@pytest.mark.parametrize(
    ("who", "command", "body"),
    [
        ("player", "draw", None),
        ("player", "recycle", None),
        ("player", "move", {"from": "tableau:1", "to": "foundation"}),
        ("player", "turn", {"column": 1}),
        ("player", "undo", None),
        ("player", "collect", None),
        ("operator", "void", {"reason": "again"}),
    ],
)
def test_a_command_on_a_finished_game_is_game_finished(
    table: Table, admin_conn: DbConn, ending: str, who: str, command: str, body: Any
) -> None:
    if ending == "collect":
        ended = table.http.post(f"/v1/games/{table.game_id}/collect", table.player.token)
    else:
        ended = table.http.post(
            f"/v1/games/{table.game_id}/void", table.http.operator_key, json={"reason": "test"}
        )
    assert ended.status_code == 200, ended.get_json()
    before = look(table, admin_conn)
    assert before.view["status"] == ("collected" if ending == "collect" else "voided")
    response = table.http.post(f"/v1/games/{table.game_id}/{command}", table.token(who), json=body)
    assert_typed_problem(response, 409, "game-finished", "game-over")
    assert_unchanged(table, admin_conn, before)


# --- the problem documents themselves -----------------------------------------------------------

NAMED = {
    "malformed-request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "certification-disabled": 403,
    "not-found": 404,
    "method-not-allowed": 405,
    "game-in-progress": 409,
    "game-finished": 409,
    "concurrent-update": 409,
    "log-empty": 409,
    "transaction-id-reused": 409,
    "version-mismatch": 412,
    "payload-too-large": 413,
    "validation-error": 422,
    "rule-violation": 422,
    "insufficient-funds": 422,
    "limit-exceeded": 422,
    "player-excluded": 403,
    "gaming-disabled": 403,
    "game-disabled": 403,
    "reality-check-due": 409,
    "idempotency-key-reused": 422,
    "internal-error": 500,
    "integrity-breach": 500,
}


@pytest.mark.parametrize(("slug", "status"), NAMED.items())
def test_every_problem_type_is_described_at_its_uri(http: Http, slug: str, status: int) -> None:
    response = http.get(f"/problems/{slug}")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    described = response.get_json()
    assert described["type"] == f"/problems/{slug}"
    assert described["status"] == status
    assert described["title"] == TYPES[slug].title
    assert described["description"]


def test_the_problem_types_are_distinct(http: Http) -> None:
    titles = [http.get(f"/problems/{slug}").get_json()["title"] for slug in NAMED]
    assert len(set(titles)) == len(titles)


def test_an_unknown_problem_type_is_not_found(http: Http) -> None:
    assert_typed_problem(http.get("/problems/no-such-thing"), 404, "not-found")


def test_an_unknown_route_is_not_found(http: Http) -> None:
    assert_typed_problem(http.get("/v1/nothing-here", http.operator_key), 404, "not-found")
    assert_typed_problem(http.get(f"/v1/games/{uuid.uuid4()}/nothing"), 404, "not-found")
    assert_typed_problem(http.get("/v1/games/not-a-uuid", http.auditor_key), 404, "not-found")


def test_a_missing_game_or_player_is_not_found(http: Http) -> None:
    nobody = str(uuid.uuid4())
    for method, path, token in (
        ("GET", f"/v1/games/{nobody}", http.operator_key),
        ("GET", f"/v1/games/{nobody}/events", http.auditor_key),
        ("GET", f"/v1/players/{nobody}/wallet", http.auditor_key),
        ("POST", f"/v1/players/{nobody}/sessions", http.operator_key),
    ):
        body = assert_typed_problem(http.call(method, path, token), 404, "not-found")
        assert nobody in body["detail"]


def test_money_for_a_missing_player_is_not_found_and_moves_nothing(
    http: Http, admin_conn: DbConn
) -> None:
    before = footprint(admin_conn)
    for kind in ("deposits", "withdrawals"):
        response = http.post(f"/v1/players/{uuid.uuid4()}/{kind}", http.operator_key, json=money())
        assert_typed_problem(response, 404, "not-found")
    response = http.post(
        "/v1/games", http.operator_key, json=deal(player_id=str(uuid.uuid4()), seed="ab" * 32)
    )
    assert_typed_problem(response, 404, "not-found")
    assert footprint(admin_conn) == before


def test_a_wrong_method_is_405_with_allow(table: Table) -> None:
    response = table.http.call("DELETE", f"/v1/games/{table.game_id}", table.player.token)
    assert_typed_problem(response, 405, "method-not-allowed")
    assert set(response.headers["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "OPTIONS"}
    response = table.http.call("GET", f"/v1/games/{table.game_id}/draw", table.player.token)
    assert_typed_problem(response, 405, "method-not-allowed")
    assert "POST" in response.headers["Allow"]


def test_a_problem_carries_the_request_id(http: Http) -> None:
    response = http.get("/v1/nothing", headers={"X-Request-Id": "trace-me-1"})
    body = assert_typed_problem(response, 404, "not-found")
    assert body["request_id"] == "trace-me-1"
    assert response.headers["X-Request-Id"] == "trace-me-1"
    # An insane request id is replaced, not echoed.
    response = http.get("/v1/nothing", headers={"X-Request-Id": "has spaces"})
    body = assert_typed_problem(response, 404, "not-found")
    assert body["request_id"] == response.headers["X-Request-Id"] != "has spaces"


# --- suspected bugs -------------------------------------------------------------------------------


@pytest.mark.parametrize("cursor", ["%C2%B2", "9" * 40], ids=["superscript-two", "forty-nines"])
def test_a_nonsense_ledger_cursor_is_a_validation_error(table: Table, cursor: str) -> None:
    response = table.http.get(
        f"/v1/players/{table.player.id}/ledger?before={cursor}", table.player.token
    )
    assert_typed_problem(response, 422, "validation-error")


@pytest.mark.parametrize("sound", ["yes", "on", 1, "false"])
def test_preferences_refuse_a_sound_that_is_not_a_boolean(
    table: Table, admin_conn: DbConn, sound: Any
) -> None:
    before = look(table, admin_conn)
    response = table.http.put(
        f"/v1/players/{table.player.id}/preferences", table.player.token, json=prefs(sound=sound)
    )
    body = assert_typed_problem(response, 422, "validation-error")
    assert list(body["errors"]) == ["sound"]
    assert_unchanged(table, admin_conn, before)


@pytest.mark.parametrize(
    ("command", "body"), [("turn", '{"column": 1}'), ("draw", "{}")], ids=["turn", "draw"]
)
def test_a_body_that_is_not_json_is_415_and_changes_nothing(
    table: Table, admin_conn: DbConn, command: str, body: str
) -> None:
    before = look(table, admin_conn)
    response = table.http.post(
        f"/v1/games/{table.game_id}/{command}",
        table.player.token,
        data=body,
        content_type="text/plain",
    )
    assert_typed_problem(response, 415, "unsupported-media-type")
    assert_unchanged(table, admin_conn, before)
