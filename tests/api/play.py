"""Playing over HTTP through the generic actions route, and decks that deal known games.

Every helper checks what any command answer must hold: a played action answers 200 with the new
view and its version as ETag; a refused one answers its problem and leaves the game exactly as
it was (same view, same ETag)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from service.games import GAMES
from tests.api.client import Http, assert_problem

RANKS = "A23456789TJQK"
#: A card code standing on its own in JSON text: "AS", "TH", never part of a hash or a word.
CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])([A2-9TJQK][SHDC])(?![0-9A-Za-z])")


def view(http: Http, token: str, game_id: str) -> tuple[dict[str, Any], str]:
    """The game as ``token`` sees it, and its ETag."""
    seen = http.get(f"/v1/games/{game_id}", token)
    assert seen.status_code == 200, seen.get_json()
    body: dict[str, Any] = seen.get_json()
    return body, seen.headers["ETag"]


def played(http: Http, token: str, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST /actions with ``body``, which the rules accept."""
    response = http.post(f"/v1/games/{game_id}/actions", token, json=body)
    assert response.status_code == 200, (body, response.get_json())
    answer: dict[str, Any] = response.get_json()
    assert response.headers["ETag"] == f'"{answer["version"]}"'
    return answer


def refused(
    http: Http,
    token: str,
    game_id: str,
    body: Any,
    rule: str | None,
    *,
    slug: str = "rule-violation",
    status: int = 422,
) -> dict[str, Any]:
    """POST /actions with ``body``, which is refused with this problem (and, for a broken
    rule, its code); the game is left exactly as it was."""
    before, etag = view(http, token, game_id)
    response = http.post(f"/v1/games/{game_id}/actions", token, json=body)
    problem = assert_problem(response, status, slug, rule)
    if rule is None:
        assert "rule" not in problem
    else:
        assert problem["rule"] == rule
    after, etag_after = view(http, token, game_id)
    assert (after["version"], etag_after) == (before["version"], etag)
    assert after == before
    return problem


def move(source: str, target: str, count: int | None = None) -> dict[str, Any]:
    """The actions route's body for a move (``count`` only when given)."""
    body: dict[str, Any] = {"action": "move", "from": source, "to": target}
    if count is not None:
        body["count"] = count
    return body


def legal(answer: dict[str, Any], action: str) -> list[dict[str, Any]]:
    """The legal moves of one action in a view."""
    return [m for m in answer["legal_moves"] if m["action"] == action]


def winnings(variant: str, units: int, stake: int) -> int:
    """floor(units x stake x M / max_units), worked out here from the published M."""
    game = GAMES[variant]
    return int(Fraction(game.multiplier) * units * stake / game.max_units)


def win_and_collect(http: Http, token: str, game_id: str) -> dict[str, Any]:
    """Play tests.builders.easy_deck() in Vegas draw one to the end (the aces off the stock,
    then every column up, the server auto-completing) and collect all 52 cards."""
    for _ in range(24):
        played(http, token, game_id, {"action": "draw"})
        answer = played(http, token, game_id, move("waste", "foundation"))
    while answer["status"] == "in_progress":
        up = [m for m in legal(answer, "move") if m["to"].startswith("foundation")]
        answer = played(http, token, game_id, (legal(answer, "turn") or up)[0])
    return played(http, token, game_id, {"action": "collect"})


def cards_in(document: Any) -> set[str]:
    """Every card code anywhere in a JSON document (keys, values, and words of messages)."""
    found: set[str] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            found |= cards_in(key) | cards_in(value)
    elif isinstance(document, list):
        for item in document:
            found |= cards_in(item)
    elif isinstance(document, str):
        found |= set(CARD_TOKEN.findall(document))
    return found


def assert_none_of(cards: Iterable[str], document: Any, where: str) -> None:
    leaked = sorted(set(cards) & cards_in(document))
    assert leaked == [], f"{where} shows sealed cards {leaked}"


# --- decks --------------------------------------------------------------------------------------


def _pool() -> dict[str, list[str]]:
    return {r: [r + s for s in "SHDC"] for r in RANKS}


#: Golf's columns in the order a winning game clears them: up to the Queen, down to the Ace,
#: up again, then a Jack and a Ten (35 cards, every step one rank apart, never onto a King).
GOLF_CHAIN = "23456789TJQJT98765432A23456789TJQJT"


def golf_winning_deck() -> list[str]:
    """A Golf deal cleared by one draw and then every column in turn, top card first.

    The waste starts on a King (nothing goes on it), the first stock card is an Ace, and
    column c holds GOLF_CHAIN[5c:5c+5], its top card first."""
    pool = _pool()
    waste, first_draw = pool["K"].pop(0), pool["A"].pop(0)
    chain = [pool[r].pop(0) for r in GOLF_CHAIN]
    deck = [""] * 52
    for c in range(7):
        for k in range(5):
            deck[(4 - k) * 7 + c] = chain[5 * c + k]  # row 4 is the top card
    deck[35], deck[36] = waste, first_draw
    deck[37:] = [card for r in RANKS for card in pool[r]]
    return deck


def golf_clearing() -> list[dict[str, Any]]:
    """The actions that clear golf_winning_deck's columns after its draw."""
    return [
        {"action": "move", "from": f"tableau:{c}", "to": "waste"}
        for c in range(7)
        for _ in range(5)
    ]


#: Pyramid rows, apex first: each row clears by pairs within it (and a King alone) once the
#: row below it is gone. The stock then pairs up as it is drawn: A-Q, 2-J, ... twice over.
PYRAMID_ROWS = ("K", "67", "58K", "3T49", "AQ2JK", "495867", "AQ2J3TK")
PYRAMID_STOCK = "AQ2J3T495867" * 2
#: Which pyramid cards each removal takes, bottom row first.
PYRAMID_REMOVALS: tuple[tuple[int, ...], ...] = (
    (21, 22),
    (23, 24),
    (25, 26),
    (27,),
    (15, 16),
    (17, 18),
    (19, 20),
    (10, 11),
    (12, 13),
    (14,),
    (6, 7),
    (8, 9),
    (3, 4),
    (5,),
    (1, 2),
    (0,),
)


def pyramid_winning_deck() -> list[str]:
    pool = _pool()
    deck = [pool[r].pop(0) for row in PYRAMID_ROWS for r in row]
    deck += [pool[r].pop(0) for r in PYRAMID_STOCK]
    return deck


def remove(*numbers: int) -> dict[str, Any]:
    return {"action": "remove", "piles": [f"pyramid:{n}" for n in numbers]}


def pile(view: dict[str, Any], pile_id: str) -> dict[str, Any]:
    """One pile of a game view, by id (exactly one)."""
    found: list[dict[str, Any]] = [p for p in view["piles"] if p["id"] == pile_id]
    assert len(found) == 1
    return found[0]
