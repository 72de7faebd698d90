"""Who may call what: every route of the app, with every role and with no token.

The matrix below names the expected answer for each (route, role). The test that walks it also
checks that a refused call changed nothing, and a separate test enumerates the app's URL map, so a
route cannot be added without deciding here who may call it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import psycopg
import pytest
from flask import Flask
from werkzeug.test import TestResponse

from service.api.wiring import container_of
from service.bootstrap import Container
from tests.api.client import Http, assert_problem
from tests.api.factories import Player, PlayerFactory, WalletFactory, deal_certification
from tests.builders import turnable_deck

Role = Literal["none", "owner", "stranger", "operator", "auditor", "finance"]
ROLES: tuple[Role, ...] = ("none", "owner", "stranger", "operator", "auditor", "finance")
STAFF: tuple[Role, ...] = ("operator", "auditor", "finance")
CHALLENGE = 'Bearer realm="vegas-solitaire"'
# Routes that are the API's own documentation, not part of it.
NOT_API = {
    "/metrics",  # tests/api/test_metrics.py: the loopback's, or a staff key's
    "/static/<path:filename>",
    "/v1/openapi.json",
    "/v1/docs",
    "/v1/docs/assets/<path:filename>",
}
DbConn = psycopg.Connection[tuple[Any, ...]]


@dataclass(frozen=True)
class Expect:
    status: int
    slug: str | None = None  # the problem type of a refusal
    mimetype: str = "application/json"  # of an answer that is not a refusal


OK = Expect(200)
CREATED = Expect(201)
UNAUTHORIZED = Expect(401, "unauthorized")
FORBIDDEN = Expect(403, "forbidden")
HIDDEN = Expect(404, "not-found")
#: What a seamless-mode route answers an admitted caller in a transfer-mode deployment.
TRANSFER_MODE = Expect(409, "wallet-mode")


@dataclass(frozen=True)
class World:
    """A funded player (the owner) with an in-progress draw-3 game on a known deck, and another
    player (the stranger) reaching for the owner's things."""

    http: Http
    owner: Player
    stranger: Player
    game_id: str

    def token(self, role: Role) -> str | None:
        return {
            "none": None,
            "owner": self.owner.token,
            "stranger": self.stranger.token,
            "operator": self.http.operator_key,
            "auditor": self.http.auditor_key,
            "finance": self.http.finance_key,
        }[role]

    def command(self, name: str, **body: Any) -> None:
        """The owner plays a command, to set the game up for the call under test."""
        done = self.http.post(
            f"/v1/games/{self.game_id}/{name}", self.owner.token, json=body or None
        )
        assert done.status_code == 200, done.get_json()


@dataclass(frozen=True)
class Call:
    path: str
    json: Any = None


@dataclass(frozen=True)
class Route:
    method: str
    rule: str  # as the app's url_map names it
    prepare: Callable[[World, Role], Call]
    expect: dict[Role, Expect]
    label: str = ""  # tells apart two matrix rows for one rule
    check: Callable[[World, Any], None] | None = field(default=None)

    @property
    def name(self) -> str:
        return f"{self.method} {self.rule}{self.label}"


# --- expectations -------------------------------------------------------------------------------


def anyone(ok: Expect = OK) -> dict[Role, Expect]:
    return dict.fromkeys(ROLES, ok)


def staff_only(ok: Expect, *allowed: Role) -> dict[Role, Expect]:
    """Only the listed staff roles; players (whoever's resource it is) are forbidden."""
    expect: dict[Role, Expect] = {"none": UNAUTHORIZED, "owner": FORBIDDEN, "stranger": FORBIDDEN}
    expect |= {role: ok if role in allowed else FORBIDDEN for role in STAFF}
    return expect


def own(ok: Expect, *staff: Role) -> dict[Role, Expect]:
    """The player whose resource it is, and the listed staff roles; another player gets 404."""
    expect: dict[Role, Expect] = {"none": UNAUTHORIZED, "owner": ok, "stranger": HIDDEN}
    expect |= {role: ok if role in staff else FORBIDDEN for role in STAFF}
    return expect


# --- calls ----------------------------------------------------------------------------------------


def at(template: str, **body: Any) -> Callable[[World, Role], Call]:
    """A call on ``template`` with {player} and {game} filled in from the world."""

    def prepare(world: World, role: Role) -> Call:
        path = template.format(player=world.owner.id, game=world.game_id)
        return Call(path, body or None)

    return prepare


def after(
    setup: Callable[[World], None], template: str, **body: Any
) -> Callable[[World, Role], Call]:
    """The same call, once the owner has put the game in a state where it applies."""

    def prepare(world: World, role: Role) -> Call:
        setup(world)
        return at(template, **body)(world, role)

    return prepare


def new_player(world: World, role: Role) -> Call:
    return Call("/v1/players", {"external_ref": f"access-{uuid.uuid4()}", "currency": "GBP"})


def transfer(kind: str) -> Callable[[World, Role], Call]:
    def prepare(world: World, role: Role) -> Call:
        body = {"amount": 104, "transaction_id": f"access-{uuid.uuid4()}"}
        return Call(f"/v1/players/{world.owner.id}/{kind}", body)

    return prepare


def correction(world: World, role: Role) -> Call:
    """An operator's correction of a hold the audit recorded for the owner (as its login)."""
    container = container_of(world.http.client.application)
    finding = {"check": "ledger", "location": "posting 1", "expected": "a", "found": "b"}
    with container.audit_unit_of_work() as uow:
        hold = uow.significant.record(
            "withdrawal-held", "audit", {"findings": [finding]}, player_id=uuid.UUID(world.owner.id)
        )
        uow.commit()
    body = {"hold": hold, "reason": "access matrix", "amount": 0}
    return Call(f"/v1/players/{world.owner.id}/corrections", body)


def deal(world: World, role: Role) -> Call:
    """The owner's game is collected first, so a deal can apply. Players deal for themselves
    (the stranger tries to deal for the owner); staff deal for the owner from a seed, as only a
    certification deal allows."""
    world.command("collect")
    body: dict[str, Any] = {"variant": "vegas-draw1", "stake": 520}
    if role == "stranger":
        body["player_id"] = world.owner.id
    elif role != "owner":
        body |= {"player_id": world.owner.id, "seed": "ab" * 32}
    return Call("/v1/games", body)


def draw_through_stock(world: World) -> None:
    for _ in range(8):  # 24 cards, three at a time
        world.command("draw")


def free_column_one(world: World) -> None:
    world.command("move", **{"from": "tableau:1", "to": "foundation"})


PREFERENCES = {"sound": False, "colour": "blue", "card_back": 7}


def owns_wallet(world: World, body: Any) -> None:
    assert body["player_id"] == world.owner.id


def owns_player(world: World, body: Any) -> None:
    assert body["id"] == world.owner.id


def is_game(world: World, body: Any) -> None:
    assert body["id"] == world.game_id
    assert body["player_id"] == world.owner.id


def is_full_view(world: World, body: Any) -> None:
    """Sealed until seen: the full view of a game in play is exactly its player's view."""
    is_game(world, body)
    assert "deck" not in body
    assert body == world.http.get(f"/v1/games/{world.game_id}", world.owner.token).get_json()


def an_audit(world: World, role: Role) -> Call:
    started = world.http.post(
        "/v1/audits", world.http.auditor_key, json={"player_id": world.owner.id}
    )
    assert started.status_code == 202, started.get_json()
    return Call(f"/v1/audits/{started.get_json()['id']}")


def a_checkpoint(world: World) -> dict[str, Any]:
    """A checkpoint signed just now (the world's own game is in it), as exported."""
    made = world.http.post("/v1/checkpoints", world.http.auditor_key)
    assert made.status_code in (200, 201), made.get_json()
    exported = world.http.get(f"/v1/checkpoints/{made.get_json()['seq']}", world.http.auditor_key)
    assert exported.status_code == 200, exported.get_json()
    document: dict[str, Any] = exported.get_json()
    return document


def exported_checkpoint(world: World, role: Role) -> Call:
    return Call(f"/v1/checkpoints/{a_checkpoint(world)['checkpoint']['seq']}")


def checkpoint_to_verify(world: World, role: Role) -> Call:
    return Call("/v1/checkpoints/verify", a_checkpoint(world))


def is_verified(world: World, body: Any) -> None:
    assert body["verified"] is True, body["findings"]


def is_replay(world: World, body: Any) -> None:
    assert body["label"] == "replay"
    assert body["game_id"] == world.game_id


def a_duel(world: World, *, void: bool = False) -> str:
    """A full two-seat certification duel the owner sits in (with another player, never the
    stranger), opened by an operator; voided (so ended) if asked."""
    other = WalletFactory.create(balance=1_000).player
    ids: list[str] = []
    for player in (world.owner, other):
        body = {"fee": 100, "player_id": player.id, "certification": True, "seats": 2}
        if not ids:
            body["seed"] = "cd" * 32
        joined = world.http.post("/v1/duels", world.http.operator_key, json=body)
        assert joined.status_code == 201, joined.get_json()
        ids.append(joined.get_json()["id"])
    assert ids[0] == ids[1]
    if void:
        voided = world.http.post(
            f"/v1/duels/{ids[0]}/void", world.http.operator_key, json={"reason": "access"}
        )
        assert voided.status_code == 200, voided.get_json()
    return str(ids[0])


def on_duel(path: str, *, dealt: bool = False, void: bool = False, **body: Any) -> Any:
    """A call on a new duel of the owner's (its seat dealt first, or the duel voided)."""

    def prepare(world: World, role: Role) -> Call:
        duel_id = a_duel(world, void=void)
        if dealt:
            done = world.http.post(f"/v1/duels/{duel_id}/deal", world.owner.token, json={})
            assert done.status_code == 200, done.get_json()
        return Call(path.format(duel=duel_id, player=world.owner.id), body or None)

    return prepare


def join_duel(world: World, role: Role) -> Call:
    """Players join for themselves (the stranger tries to for the owner); an operator joins the
    owner into a certification duel. Six seats at the top fee: no other test's duel."""
    body: dict[str, Any] = {"fee": 5_000, "seats": 6}
    if role == "stranger":
        body["player_id"] = world.owner.id
    elif role != "owner":
        body |= {"player_id": world.owner.id, "certification": True}
    return Call("/v1/duels", body)


PLAYER = "/v1/players/<uuid:player_id>"
GAME = "/v1/games/<uuid:game_id>"
DUEL = "/v1/duels/<uuid:duel_id>"

ROUTES: tuple[Route, ...] = (
    # public
    Route("GET", "/healthz", at("/healthz"), anyone()),
    Route("GET", "/readyz", at("/readyz"), anyone()),
    Route("GET", "/v1/variants", at("/v1/variants"), anyone()),
    Route("GET", "/v1/quote", at("/v1/quote?variant=vegas-draw1&stake=520"), anyone()),
    Route("GET", "/problems/<slug>", at("/problems/forbidden"), anyone()),
    # the console's page and files hold no data: anyone may load them (the API decides the rest)
    Route("GET", "/console", at("/console"), anyone(Expect(308, mimetype="text/html"))),
    Route("GET", "/console/", at("/console/"), anyone(Expect(200, mimetype="text/html"))),
    Route(
        "GET",
        "/console/static/<path:filename>",
        at("/console/static/console.js"),
        anyone(Expect(200, mimetype="text/javascript")),
    ),
    Route("GET", "/v1/whoami", at("/v1/whoami"), {**anyone(), "none": UNAUTHORIZED}),
    # players
    Route("POST", "/v1/players", new_player, staff_only(CREATED, "operator")),
    Route(
        "GET", PLAYER, at("/v1/players/{player}"), own(OK, "operator", "auditor"), check=owns_player
    ),
    Route(
        "POST",
        f"{PLAYER}/sessions",
        at("/v1/players/{player}/sessions"),
        staff_only(CREATED, "operator"),
    ),
    Route(
        "POST",
        f"{PLAYER}/sessions/revoke",
        at("/v1/players/{player}/sessions/revoke"),
        staff_only(OK, "operator"),
    ),
    Route(
        "DELETE",
        f"{PLAYER}/sessions/current",
        at("/v1/players/{player}/sessions/current"),
        own(OK),
    ),
    Route("POST", f"{PLAYER}/deposits", transfer("deposits"), staff_only(CREATED, "operator")),
    Route(
        "POST", f"{PLAYER}/withdrawals", transfer("withdrawals"), staff_only(CREATED, "operator")
    ),
    Route("POST", f"{PLAYER}/corrections", correction, staff_only(CREATED, "operator")),
    Route(
        "GET",
        f"{PLAYER}/wallet",
        at("/v1/players/{player}/wallet"),
        own(OK, "operator", "auditor"),
        check=owns_wallet,
    ),
    Route(
        "GET", f"{PLAYER}/ledger", at("/v1/players/{player}/ledger"), own(OK, "operator", "auditor")
    ),
    Route(
        "GET",
        f"{PLAYER}/history",
        at("/v1/players/{player}/history"),
        own(OK, "operator", "auditor"),
    ),
    Route(
        "GET",
        f"{PLAYER}/preferences",
        at("/v1/players/{player}/preferences"),
        own(OK, "operator", "auditor"),
    ),
    Route(
        "PUT",
        f"{PLAYER}/preferences",
        at("/v1/players/{player}/preferences", **PREFERENCES),
        own(OK),
    ),
    # safer gambling (a limit far above anything the matrix wagers)
    Route(
        "GET", f"{PLAYER}/limits", at("/v1/players/{player}/limits"), own(OK, "operator", "auditor")
    ),
    Route(
        "PUT",
        f"{PLAYER}/limits/<limit>",
        at("/v1/players/{player}/limits/loss-month", value=10**10),
        own(OK, "operator"),
    ),
    Route(
        "GET",
        f"{PLAYER}/exclusion",
        at("/v1/players/{player}/exclusion"),
        own(OK, "operator", "auditor"),
    ),
    # disable on demand (switching on only: off would stop the matrix's own deals; off is
    # tests/api/test_controls.py)
    Route("GET", "/v1/controls", at("/v1/controls"), staff_only(OK, "operator", "auditor")),
    Route(
        "PUT",
        "/v1/controls/gaming",
        at("/v1/controls/gaming", enabled=True, reason="matrix"),
        staff_only(OK, "operator"),
    ),
    Route(
        "PUT",
        "/v1/controls/games/<game>",
        at("/v1/controls/games/golf", enabled=True, reason="matrix"),
        staff_only(OK, "operator"),
    ),
    Route(
        "PUT",
        "/v1/controls/versions/<path:rules_version>",
        at("/v1/controls/versions/golf/3", enabled=True, reason="matrix"),
        staff_only(OK, "operator"),
    ),
    Route(
        "PUT",
        "/v1/controls/players/<uuid:player_id>",
        at("/v1/controls/players/{player}", enabled=True, reason="matrix"),
        staff_only(OK, "operator"),
    ),
    Route("GET", f"{PLAYER}/reality-check", at("/v1/players/{player}/reality-check"), own(OK)),
    Route("POST", f"{PLAYER}/reality-check", at("/v1/players/{player}/reality-check"), own(OK)),
    # (taking one is tests/api/test_safer_gambling.py: it would stop the matrix's own deals)
    Route(
        "POST",
        f"{PLAYER}/exclusions",
        at("/v1/players/{player}/exclusions", length="forever"),
        own(Expect(422, "validation-error"), "operator"),
    ),
    # games
    Route(
        "POST",
        "/v1/games",
        deal,
        {
            "none": UNAUTHORIZED,
            "owner": CREATED,
            "stranger": Expect(403, "certification-disabled"),
            "operator": CREATED,
            "auditor": FORBIDDEN,
            "finance": FORBIDDEN,
        },
    ),
    Route("GET", GAME, at("/v1/games/{game}"), own(OK, "operator", "auditor"), check=is_game),
    Route(
        "GET",
        GAME,
        at("/v1/games/{game}?view=full"),
        # Another player's game stays hidden (404) whatever is asked of it; its owner is
        # told the full view is for auditors.
        staff_only(OK, "auditor") | {"stranger": HIDDEN},
        label="?view=full",
        check=is_full_view,
    ),
    Route("POST", f"{GAME}/draw", at("/v1/games/{game}/draw"), own(OK), check=is_game),
    Route(
        "POST", f"{GAME}/recycle", after(draw_through_stock, "/v1/games/{game}/recycle"), own(OK)
    ),
    Route(
        "POST",
        f"{GAME}/move",
        at("/v1/games/{game}/move", **{"from": "tableau:1", "to": "foundation"}),
        own(OK),
    ),
    Route(
        "POST", f"{GAME}/turn", after(free_column_one, "/v1/games/{game}/turn", column=1), own(OK)
    ),
    Route(
        "POST", f"{GAME}/undo", after(lambda w: w.command("draw"), "/v1/games/{game}/undo"), own(OK)
    ),
    Route("POST", f"{GAME}/collect", at("/v1/games/{game}/collect"), own(OK), check=is_game),
    Route(
        "POST",
        f"{GAME}/actions",
        at("/v1/games/{game}/actions", action="draw"),
        own(OK),
        check=is_game,
    ),
    Route(
        "POST",
        f"{GAME}/actions",
        at("/v1/games/{game}/actions", action="move", **{"from": "tableau:1", "to": "foundation"}),
        own(OK),
        label=" move",
        check=is_game,
    ),
    Route(
        "POST",
        f"{GAME}/actions",
        after(free_column_one, "/v1/games/{game}/actions", action="turn", pile="tableau:1"),
        own(OK),
        label=" turn",
        check=is_game,
    ),
    Route(
        "POST",
        f"{GAME}/actions",
        at("/v1/games/{game}/actions", action="collect"),
        own(OK),
        label=" collect",
        check=is_game,
    ),
    Route(
        "POST",
        f"{GAME}/void",
        at("/v1/games/{game}/void", reason="access test"),
        staff_only(OK, "operator"),
    ),
    Route("GET", f"{GAME}/events", at("/v1/games/{game}/events"), staff_only(OK, "auditor")),
    # compliance
    Route(
        "GET",
        f"{GAME}/replay",
        after(lambda w: w.command("collect"), "/v1/games/{game}/replay"),
        own(OK, "auditor"),
        check=is_replay,
    ),
    Route(
        "POST",
        "/v1/audits",
        lambda world, role: Call("/v1/audits", {"player_id": world.owner.id}),
        staff_only(Expect(202), "auditor"),
    ),
    Route("GET", "/v1/audits/<uuid:audit_id>", an_audit, staff_only(OK, "auditor")),
    Route(
        "GET",
        "/v1/significant-events",
        at("/v1/significant-events"),
        staff_only(OK, "auditor"),
    ),
    # anchored history
    Route(
        "POST", "/v1/checkpoints", at("/v1/checkpoints"), staff_only(CREATED, "operator", "auditor")
    ),
    Route("GET", "/v1/checkpoints", at("/v1/checkpoints"), staff_only(OK, "operator", "auditor")),
    Route(
        "GET",
        "/v1/checkpoints/<int:seq>",
        exported_checkpoint,
        staff_only(OK, "operator", "auditor"),
    ),
    Route("GET", "/v1/checkpoints/keys", at("/v1/checkpoints/keys"), anyone()),
    Route(
        "POST",
        "/v1/checkpoints/verify",
        checkpoint_to_verify,
        staff_only(OK, "operator", "auditor"),
        check=is_verified,
    ),
    # duels
    Route(
        "POST",
        "/v1/duels",
        join_duel,
        {
            "none": UNAUTHORIZED,
            "owner": CREATED,
            "stranger": Expect(403, "certification-disabled"),
            "operator": CREATED,
            "auditor": FORBIDDEN,
            "finance": FORBIDDEN,
        },
    ),
    Route("GET", "/v1/duels", at("/v1/duels"), staff_only(OK, "operator", "auditor")),
    Route("GET", "/v1/duels/paytables", at("/v1/duels/paytables"), anyone()),
    Route("GET", DUEL, on_duel("/v1/duels/{duel}"), own(OK, "operator", "auditor")),
    Route("POST", f"{DUEL}/deal", on_duel("/v1/duels/{duel}/deal"), own(OK)),
    Route(
        "POST",
        f"{DUEL}/actions",
        on_duel("/v1/duels/{duel}/actions", dealt=True, action="draw"),
        own(OK),
    ),
    Route(
        "POST",
        f"{DUEL}/void",
        on_duel("/v1/duels/{duel}/void", reason="access test"),
        staff_only(OK, "operator"),
    ),
    Route("GET", f"{DUEL}/events", on_duel("/v1/duels/{duel}/events"), staff_only(OK, "auditor")),
    Route(
        "GET", f"{DUEL}/replay", on_duel("/v1/duels/{duel}/replay", void=True), own(OK, "auditor")
    ),
    Route(
        "GET",
        f"{PLAYER}/duels",
        at("/v1/players/{player}/duels"),
        own(OK, "operator", "auditor"),
    ),
    # finance
    Route(
        "GET",
        "/v1/reports/daily",
        at("/v1/reports/daily?from=2026-01-01&to=2026-01-31&currency=GBP"),
        staff_only(OK, "finance"),
    ),
    Route(
        "GET",
        "/v1/reports/daily/chart",
        at("/v1/reports/daily/chart?from=2026-01-01&to=2026-01-31&currency=GBP&chart=rtp"),
        staff_only(Expect(200, mimetype="image/svg+xml"), "finance"),
    ),
    Route(
        "GET",
        "/v1/reconciliation",
        at("/v1/reconciliation?date=2026-01-01"),
        staff_only(OK, "finance", "auditor"),
    ),
    Route(
        "GET",
        "/v1/reconciliation/wallet",
        at("/v1/reconciliation/wallet?date=2026-01-01"),
        staff_only(OK, "finance", "auditor"),
    ),
    # seamless mode's reviews (this app is in transfer mode: the mode's refusal, once admitted)
    Route(
        "GET",
        "/v1/wallet/reviews",
        at("/v1/wallet/reviews"),
        staff_only(TRANSFER_MODE, "operator", "auditor", "finance"),
    ),
    Route(
        "POST",
        "/v1/wallet/transactions/<uuid:transaction_uuid>/resolution",
        at(f"/v1/wallet/transactions/{uuid.uuid4()}/resolution", action="retry", reason="test"),
        staff_only(TRANSFER_MODE, "operator"),
    ),
)


# --- fixtures and helpers -------------------------------------------------------------------------


@pytest.fixture
def world(http: Http) -> World:
    owner = WalletFactory.create(balance=10_400).player
    stranger = PlayerFactory.create()
    return World(http, owner, stranger, deal_certification(http, owner, turnable_deck()))


def footprint(conn: DbConn) -> tuple[int, ...]:
    """How much has been written anywhere: a refused call must leave it as it was."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM ledger_transactions),"
        " (SELECT count(*) FROM players), (SELECT count(*) FROM player_sessions),"
        " (SELECT count(*) FROM idempotency_keys), (SELECT count(*) FROM api_keys)"
    ).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def game_version(conn: DbConn, game_id: str) -> int:
    row = conn.execute(
        "SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %s", (f"game-{game_id}",)
    ).fetchone()
    assert row is not None
    return int(row[0])


def balance(conn: DbConn, player_id: str) -> int:
    row = conn.execute(
        "SELECT balance FROM account_balances WHERE account_id = %s", (f"player:{player_id}",)
    ).fetchone()
    assert row is not None
    return int(row[0])


def assert_answer(response: TestResponse, expect: Expect) -> None:
    if expect.slug is None:
        assert response.status_code == expect.status, response.get_data(as_text=True)
        assert response.mimetype == expect.mimetype
        return
    assert_problem(response, expect.status, expect.slug)
    if expect.status == 401:
        assert response.headers["WWW-Authenticate"] == CHALLENGE
    else:
        assert "WWW-Authenticate" not in response.headers


def cases() -> Iterator[Any]:
    for route in ROUTES:
        for role in ROLES:
            yield pytest.param(route, role, id=f"{route.name} as {role}")


# --- the matrix -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("route", "role"), list(cases()))
def test_every_route_with_every_role(
    world: World, admin_conn: DbConn, route: Route, role: Role
) -> None:
    call = route.prepare(world, role)
    before = footprint(admin_conn)
    version = game_version(admin_conn, world.game_id)
    money = balance(admin_conn, world.owner.id)

    response = world.http.call(route.method, call.path, world.token(role), json=call.json)

    expect = route.expect[role]
    assert_answer(response, expect)
    if expect.status >= 400:
        assert footprint(admin_conn) == before
        assert game_version(admin_conn, world.game_id) == version
        assert balance(admin_conn, world.owner.id) == money
    elif route.check is not None:
        route.check(world, response.get_json())


def test_the_matrix_decides_every_route_of_the_app(app: Flask) -> None:
    served = {
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        if rule.rule not in NOT_API
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }
    decided = {(route.method, route.rule) for route in ROUTES}
    assert served - decided == set(), "routes nobody decided access for"
    assert decided - served == set(), "matrix rows for routes the app does not serve"
    for route in ROUTES:
        assert set(route.expect) == set(ROLES), route.name


def test_the_documentation_routes_are_public(http: Http) -> None:
    assert http.get("/v1/openapi.json").status_code == 200
    assert http.get("/v1/docs").status_code == 200


# --- bad credentials ------------------------------------------------------------------------------

#: Authorization headers that let nobody in, and why each is refused (its 401's type).
BAD_AUTHORIZATION = {
    "unknown player token": ("Bearer vsp_" + "x" * 43, "unauthorized-unknown"),
    "unknown staff key": ("Bearer vsk_" + "y" * 43, "unauthorized-unknown"),
    "short token": ("Bearer vsp_not-a-real-token", "unauthorized-malformed"),
    "neither prefix": ("Bearer abcdef", "unauthorized-malformed"),
    "empty bearer": ("Bearer ", "unauthorized-malformed"),
    "basic scheme": ("Basic b3BlcmF0b3I6c2VjcmV0", "unauthorized-malformed"),
    "token without scheme": ("vsk_not-a-real-key", "unauthorized-malformed"),
}


@pytest.mark.parametrize(
    ("header", "refused"), BAD_AUTHORIZATION.values(), ids=BAD_AUTHORIZATION.keys()
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/players/{player}/wallet"),
        ("POST", "/v1/players/{player}/deposits"),
        ("POST", "/v1/games/{game}/draw"),
        ("POST", "/v1/games/{game}/actions"),
        ("GET", "/v1/games/{game}/events"),
    ],
)
def test_bad_credentials_are_401_and_change_nothing(
    world: World, admin_conn: DbConn, method: str, path: str, header: str, refused: str
) -> None:
    url = path.format(player=world.owner.id, game=world.game_id)
    body: Any = None
    if "deposits" in url:
        body = {"amount": 104, "transaction_id": f"bad-{uuid.uuid4()}"}
    elif "actions" in url:
        body = {"action": "draw"}
    before = footprint(admin_conn)
    response = world.http.call(method, url, json=body, headers={"Authorization": header})
    assert_problem(response, 401, refused)
    assert response.get_json()["reason"] == refused.removeprefix("unauthorized-")
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    assert footprint(admin_conn) == before


def test_a_revoked_staff_key_is_401(http: Http, container: Container) -> None:
    name = f"revoked-{uuid.uuid4()}"
    key = container.access.create_key(name, "operator")
    assert http.get("/v1/variants", key).status_code == 200
    assert (
        http.post("/v1/players", key, json={"external_ref": name, "currency": "GBP"}).status_code
        == 201
    )
    assert container.access.revoke_key(name) is True
    refused = http.post("/v1/players", key, json={"external_ref": f"{name}-2", "currency": "GBP"})
    assert_problem(refused, 401, "unauthorized-revoked")
    assert refused.headers["WWW-Authenticate"] == CHALLENGE


# --- another player's things look exactly like things that do not exist --------------------------


@pytest.mark.parametrize(
    "template",
    [
        "/v1/players/{player}",
        "/v1/players/{player}/wallet",
        "/v1/players/{player}/ledger",
        "/v1/players/{player}/history",
        "/v1/players/{player}/preferences",
        "/v1/players/{player}/limits",
        "/v1/players/{player}/exclusion",
        "/v1/games/{game}",
    ],
)
def test_another_players_resource_is_indistinguishable_from_a_missing_one(
    world: World, template: str
) -> None:
    nobody = str(uuid.uuid4())
    theirs = world.http.get(
        template.format(player=world.owner.id, game=world.game_id), world.stranger.token
    )
    missing = world.http.get(template.format(player=nobody, game=nobody), world.stranger.token)
    seen = assert_problem(theirs, 404, "not-found")
    unseen = assert_problem(missing, 404, "not-found")
    real_id = world.owner.id if "{player}" in template else world.game_id
    assert seen["detail"].replace(real_id, "<id>") == unseen["detail"].replace(nobody, "<id>")
    assert seen["title"] == unseen["title"]
    assert set(seen) == set(unseen)


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("draw", None),
        ("recycle", None),
        ("undo", None),
        ("collect", None),
        ("actions", {"action": "draw"}),
        ("actions", {"action": "collect"}),
    ],
    ids=["draw", "recycle", "undo", "collect", "actions-draw", "actions-collect"],
)
def test_another_players_game_command_is_indistinguishable_from_a_missing_game(
    world: World, name: str, body: Any
) -> None:
    nobody = str(uuid.uuid4())
    theirs = world.http.post(f"/v1/games/{world.game_id}/{name}", world.stranger.token, json=body)
    missing = world.http.post(f"/v1/games/{nobody}/{name}", world.stranger.token, json=body)
    seen = assert_problem(theirs, 404, "not-found")
    unseen = assert_problem(missing, 404, "not-found")
    assert seen["detail"].replace(world.game_id, "<id>") == unseen["detail"].replace(nobody, "<id>")


# --- who is asked first ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/games", {"variant": "vegas-draw1", "stake": "lots"}),
        ("POST", "/v1/players", {"external_ref": "", "currency": "pounds"}),
        ("GET", "/v1/players/{player}/ledger?limit=0", None),
    ],
    ids=["deal", "open-player", "ledger-query"],
)
def test_an_anonymous_invalid_request_is_401_not_422(
    world: World, method: str, path: str, body: Any
) -> None:
    response = world.http.call(method, path.format(player=world.owner.id), json=body)
    assert_problem(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == CHALLENGE


@pytest.mark.parametrize(
    ("command", "body"),
    [("turn", {"column": 99}), ("actions", {"action": "fly"}), ("actions", {})],
    ids=["turn", "actions-unknown", "actions-empty"],
)
@pytest.mark.parametrize("role", ["stranger", "auditor"])
def test_an_invalid_command_from_someone_not_allowed_is_refused_by_role(
    world: World, role: Role, command: str, body: Any
) -> None:
    response = world.http.post(f"/v1/games/{world.game_id}/{command}", world.token(role), json=body)
    expect = HIDDEN if role == "stranger" else FORBIDDEN
    assert_problem(response, expect.status, str(expect.slug))
