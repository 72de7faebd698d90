"""The generic command route, POST /v1/games/{id}/actions: every action of Vegas draw three,
Golf and Pyramid through it, each refusal a problem naming its rule with nothing changed, and
bodies that name no action the way a view lists it refused as validation errors."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from tests.api.client import Http, assert_problem
from tests.api.factories import Player, WalletFactory, deal_certification
from tests.api.play import (
    golf_clearing,
    golf_winning_deck,
    legal,
    played,
    pyramid_winning_deck,
    refused,
    remove,
    view,
    winnings,
)
from tests.builders import turnable_deck

STAKE = 520


@dataclass(frozen=True)
class Table:
    """A funded player with a certification game in progress on a known deck."""

    http: Http
    player: Player
    game_id: str

    def play(self, **body: Any) -> dict[str, Any]:
        return played(self.http, self.player.token, self.game_id, body)

    def refuse(self, rule: str, **body: Any) -> dict[str, Any]:
        return refused(self.http, self.player.token, self.game_id, body, rule)

    def invalid(self, body: Any) -> dict[str, Any]:
        return refused(
            self.http, self.player.token, self.game_id, body, None, slug="validation-error"
        )

    def view(self) -> dict[str, Any]:
        return view(self.http, self.player.token, self.game_id)[0]


def _table(http: Http, variant: str, deck: list[str]) -> Table:
    player = WalletFactory.create(balance=10 * STAKE).player
    return Table(http, player, deal_certification(http, player, deck, variant=variant, stake=STAKE))


def _finished(table: Table) -> None:
    """A finished game takes no action at all: 409, the game left as it was."""
    for body in ({"action": "draw"}, {"action": "undo"}, {"action": "collect"}):
        refused(
            table.http,
            table.player.token,
            table.game_id,
            body,
            "game-over",
            slug="game-finished",
            status=409,
        )


# --- Vegas draw three ---------------------------------------------------------------------------


def test_every_vegas_draw_three_action_through_the_actions_route(http: Http) -> None:
    # turnable_deck: column 1 is the Ace of spades on one face-down card; the stock starts JC 2S 3S.
    table = _table(http, "vegas-draw3", turnable_deck())
    start = table.view()
    assert start["tableau"][1] == {"face_down": 1, "face_up": ["AS"]}

    table.refuse("undo-not-allowed", action="undo")
    table.refuse("stock-not-empty", action="recycle")
    table.refuse("top-card-face-up", action="turn", column=1)
    table.refuse("top-card-face-up", action="turn", pile="tableau:0")
    table.refuse("waste-empty", action="move", **{"from": "waste", "to": "foundation"})
    table.refuse("same-pile", action="move", **{"from": "tableau:0", "to": "tableau:0"})
    table.refuse(
        "invalid-count", action="move", **{"from": "tableau:1", "to": "tableau:0"}, count=2
    )
    table.refuse("action-not-allowed", action="remove", piles=["tableau:0"])

    drawn = table.play(action="draw")
    assert (drawn["waste"], drawn["stock_count"]) == (["JC", "2S", "3S"], 21)
    assert drawn["can_undo"] is True
    undone = table.play(action="undo")
    assert (undone["waste_count"], undone["stock_count"]) == (0, 24)
    assert undone["version"] == drawn["version"] + 1

    moved = table.play(action="move", **{"from": "tableau:1", "to": "foundation"})
    assert moved["foundation_count"] == 1
    assert moved["tableau"][1] == {"face_down": 1, "face_up": []}
    # A legal move is sent back exactly as the view lists it: the turn names pile and column.
    (turn,) = legal(moved, "turn")
    assert turn == {"action": "turn", "pile": "tableau:1", "column": 1}
    turned = played(http, table.player.token, table.game_id, turn)
    assert turned["tableau"][1]["face_down"] == 0
    assert len(turned["tableau"][1]["face_up"]) == 1
    table.refuse("top-card-face-up", action="turn", pile="tableau:1")
    table.refuse("undo-not-allowed", action="undo")  # a turn cannot be undone

    for _ in range(8):
        seen = table.play(action="draw")
    assert (seen["stock_count"], seen["waste_count"]) == (0, 24)
    table.refuse("stock-empty", action="draw")
    recycled = table.play(action="recycle")
    assert (recycled["stock_count"], recycled["waste_count"]) == (24, 0)
    assert recycled["passes_left"] == seen["passes_left"] - 1

    done = table.play(action="collect")
    assert (done["status"], done["units"], done["payout"]) == ("collected", 1, 50)
    _finished(table)


# --- Golf -----------------------------------------------------------------------------------------


def test_every_golf_action_through_the_actions_route(http: Http) -> None:
    deck = golf_winning_deck()
    table = _table(http, "golf", deck)
    start = table.view()
    assert start["waste"] == [deck[35]]  # a King: nothing goes on it

    table.refuse("nothing-on-a-king", action="move", **{"from": "tableau:0", "to": "waste"})
    table.refuse("undo-not-allowed", action="undo")
    table.refuse("action-not-allowed", action="recycle")
    table.refuse("action-not-allowed", action="turn", pile="tableau:0")
    table.refuse("action-not-allowed", action="remove", piles=["tableau:0"])
    table.refuse("invalid-destination", action="move", **{"from": "tableau:0", "to": "tableau:1"})
    table.refuse("invalid-source", action="move", **{"from": "waste", "to": "tableau:0"})
    table.refuse("unknown-pile", action="move", **{"from": "tableau:0", "to": "foundation:0"})

    drawn = table.play(action="draw")
    assert drawn["waste"] == [deck[36]]  # an Ace
    assert drawn["can_undo"] is False
    table.refuse("undo-not-allowed", action="undo")  # a draw showed a new card
    table.refuse("invalid-count", action="move", **{"from": "tableau:0", "to": "waste"}, count=2)
    table.refuse("not-one-rank-apart", action="move", **{"from": "tableau:1", "to": "waste"})

    clearing = golf_clearing()
    moved = table.play(**clearing[0])
    assert (moved["units"], moved["waste"], moved["can_undo"]) == (1, [deck[28]], True)
    undone = table.play(action="undo")
    assert (undone["units"], undone["waste"]) == (0, [deck[36]])
    assert undone["piles"] == drawn["piles"]
    for body in clearing:
        answer = table.play(**body)
    assert (answer["status"], answer["units"], answer["max_units"]) == ("complete", 35, 35)
    assert answer["legal_moves"] == [{"action": "collect"}]
    table.refuse("game-complete", action="draw")

    done = table.play(action="collect")
    assert (done["status"], done["payout"]) == ("collected", winnings("golf", 35, STAKE))
    _finished(table)


# --- Pyramid ------------------------------------------------------------------------------------


def test_every_pyramid_action_through_the_actions_route(http: Http) -> None:
    deck = pyramid_winning_deck()
    table = _table(http, "pyramid", deck)
    start = table.view()
    assert [p["cards"] for p in start["piles"] if p["id"] == "stock"] == [[deck[28]]]

    table.refuse("undo-not-allowed", action="undo")
    table.refuse("action-not-allowed", action="move", **{"from": "pyramid:21", "to": "foundation"})
    table.refuse("action-not-allowed", action="recycle")
    table.refuse("action-not-allowed", action="turn", pile="stock")
    table.refuse("pair-not-thirteen", **remove(21, 23))  # an Ace and a 2
    table.refuse("only-king-alone", **remove(21))
    table.refuse("card-covered", **remove(0))  # the apex King, under every other card
    table.refuse("card-covered", **remove(10, 11))  # an Ace and a Queen under row 5
    table.refuse("same-pile", **remove(21, 21))
    table.refuse("invalid-source", action="remove", piles=["foundation"])
    table.refuse("source-empty", action="remove", piles=["waste", "pyramid:22"])

    first = table.play(**remove(21, 22))
    assert (first["units"], first["can_undo"]) == (2, True)
    undone = table.play(action="undo")
    assert undone["units"] == 0
    assert undone["piles"] == start["piles"]
    table.play(**remove(21, 22))
    king = table.play(**remove(27))
    assert king["units"] == 3

    drawn = table.play(action="draw")
    assert [p["cards"] for p in drawn["piles"] if p["id"] in ("stock", "waste")] == [
        [deck[29]],  # the next stock card turned face up by itself
        [deck[28]],
    ]
    table.refuse("undo-not-allowed", action="undo")  # a draw showed a new card
    pair = {"action": "remove", "piles": ["stock", "waste"]}
    assert pair in legal(drawn, "remove")
    paired = table.play(**pair)
    assert paired["units"] == 5
    table.refuse("undo-not-allowed", action="undo")  # that removal showed a new stock card

    done = table.play(action="collect")
    assert (done["status"], done["units"]) == ("collected", 5)
    assert done["payout"] == winnings("pyramid", 5, STAKE)
    _finished(table)


# --- bodies that are no action --------------------------------------------------------------------

INVALID: dict[str, tuple[Any, str]] = {
    "move without to": ({"action": "move", "from": "pyramid:21"}, "action"),
    "move without from": ({"action": "move", "to": "foundation"}, "action"),
    "remove with 3 piles": (
        {"action": "remove", "piles": ["pyramid:21", "pyramid:22", "pyramid:23"]},
        "piles",
    ),
    "remove with no piles": ({"action": "remove", "piles": []}, "piles"),
    "remove without piles": ({"action": "remove"}, "action"),
    "remove of one pile as text": ({"action": "remove", "piles": "pyramid:27"}, "piles"),
    "remove of a pile no game has": ({"action": "remove", "piles": ["pyramid:28"]}, "piles"),
    "unknown action": ({"action": "shuffle"}, "action"),
    "action in capitals": ({"action": "DRAW"}, "action"),
    "action as a number": ({"action": 1}, "action"),
    "no action": ({"piles": ["pyramid:27"]}, "action"),
    "empty object": ({}, "action"),
    "draw with a pile": ({"action": "draw", "from": "waste"}, "action"),
    "collect with piles": ({"action": "collect", "piles": ["pyramid:27"]}, "action"),
    "turn naming nothing": ({"action": "turn"}, "action"),
    "turn of two piles": ({"action": "turn", "pile": "tableau:1", "column": 2}, "action"),
    "turn of column 7": ({"action": "turn", "column": 7}, "column"),
    "move with count 0": (
        {"action": "move", "from": "tableau:1", "to": "foundation", "count": 0},
        "count",
    ),
    "move with count null": (
        {"action": "move", "from": "tableau:1", "to": "foundation", "count": None},
        "count",
    ),
    "unknown field": ({"action": "draw", "cards": 3}, "cards"),
    "array": (["draw"], "_schema"),
}


@pytest.mark.parametrize(("body", "field"), INVALID.values(), ids=INVALID.keys())
def test_a_body_that_is_no_action_is_a_validation_error(http: Http, body: Any, field: str) -> None:
    table = _table(http, "pyramid", pyramid_winning_deck())
    problem = table.invalid(body)
    assert list(problem["errors"]) == [field]


def test_a_move_from_the_stock_is_a_rule_for_the_game_to_refuse(http: Http) -> None:
    # Some games play the stock's face-up top card (Forty Thieves); Vegas Klondike draws it.
    table = _table(http, "vegas-draw3", turnable_deck())
    table.refuse("invalid-source", action="move", **{"from": "stock", "to": "tableau:0"})
    table.refuse("invalid-source", action="move", **{"from": "stock", "to": "foundation"})


def test_an_actions_body_that_is_not_json_is_refused_and_changes_nothing(http: Http) -> None:
    table = _table(http, "vegas-draw3", turnable_deck())
    before = table.view()
    path = f"/v1/games/{table.game_id}/actions"
    token = table.player.token
    assert_problem(http.post(path, token), 422, "validation-error")  # a body is required
    malformed = http.post(path, token, data='{"action": ', content_type="application/json")
    assert_problem(malformed, 400, "malformed-request")
    text = http.post(path, token, data='{"action": "draw"}', content_type="text/plain")
    assert_problem(text, 415, "unsupported-media-type")
    assert table.view() == before


# --- versions and retries -------------------------------------------------------------------------


def test_the_actions_route_honours_if_match_and_idempotency_keys(http: Http) -> None:
    table = _table(http, "golf", golf_winning_deck())
    path = f"/v1/games/{table.game_id}/actions"
    token = table.player.token
    version = table.view()["version"]

    stale = http.post(path, token, json={"action": "draw"}, headers={"If-Match": '"1"'})
    problem = assert_problem(stale, 412, "version-mismatch")
    assert problem["current_version"] == version
    assert table.view()["version"] == version

    key = {"Idempotency-Key": f"actions-{uuid.uuid4()}", "If-Match": f'"{version}"'}
    first = http.post(path, token, json={"action": "draw"}, headers=key)
    assert first.status_code == 200, first.get_json()
    again = http.post(path, token, json={"action": "draw"}, headers=key)
    assert again.status_code == 200
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert table.view()["version"] == version + 1  # drawn once
    other = http.post(path, token, json={"action": "collect"}, headers=key)
    assert_problem(other, 422, "idempotency-key-reused")
    assert table.view()["version"] == version + 1


# --- the named routes play every game too -------------------------------------------------------


def _named(table: Table, name: str, body: Any = None) -> dict[str, Any]:
    response = table.http.post(f"/v1/games/{table.game_id}/{name}", table.player.token, json=body)
    assert response.status_code == 200, (name, response.get_json())
    answer: dict[str, Any] = response.get_json()
    return answer


def test_the_named_routes_play_golf_and_turn_takes_a_pile(http: Http) -> None:
    deck = golf_winning_deck()
    golf = _table(http, "golf", deck)
    assert _named(golf, "draw")["waste"] == [deck[36]]
    # /move keeps Vegas Klondike's piles (its validation errors are unchanged); other games
    # move through /actions.
    refused = http.post(
        f"/v1/games/{golf.game_id}/move",
        golf.player.token,
        json={"from": "tableau:0", "to": "waste"},
    )
    assert_problem(refused, 422, "validation-error")
    moved = _named(golf, "actions", {"action": "move", "from": "tableau:0", "to": "waste"})
    assert (moved["units"], moved["waste"]) == (1, [deck[28]])
    assert _named(golf, "undo")["units"] == 0
    refused_recycle = http.post(f"/v1/games/{golf.game_id}/recycle", golf.player.token)
    assert_problem(refused_recycle, 422, "rule-violation", "action-not-allowed")
    assert _named(golf, "collect")["status"] == "collected"

    vegas = _table(http, "vegas-draw1", turnable_deck())
    _named(vegas, "move", {"from": "tableau:1", "to": "foundation"})
    turned = _named(vegas, "turn", {"pile": "tableau:1"})
    assert turned["tableau"][1]["face_down"] == 0


def test_klondike_turns_its_cards_itself_and_has_unlimited_passes(http: Http) -> None:
    table = _table(http, "klondike", turnable_deck())
    start = table.view()
    assert start["passes_left"] is None
    assert start["counters"] == {"stock": 24, "passes_left": None}
    assert legal(start, "turn") == []
    table.refuse("action-not-allowed", action="turn", pile="tableau:1")

    moved = table.play(action="move", **{"from": "tableau:1", "to": "foundation"})
    assert moved["tableau"][1]["face_down"] == 0  # the card beneath turned by itself
    assert len(moved["tableau"][1]["face_up"]) == 1
    for _ in range(3):  # three passes and more: Klondike has no limit
        for _ in range(8):
            view = table.play(action="draw")
        assert view["stock_count"] == 0
        view = table.play(action="recycle")
        assert (view["stock_count"], view["passes_left"]) == (24, None)
    done = table.play(action="collect")
    assert (done["units"], done["payout"]) == (1, winnings("klondike", 1, STAKE))
