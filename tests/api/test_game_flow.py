"""A whole game over HTTP on a known deck (certification mode), from deal to collect."""

from __future__ import annotations

from typing import Any

from service.core import shuffle
from tests.api.client import Http, assert_salted_commitment
from tests.api.factories import GameFactory, WalletFactory
from tests.builders import easy_deck


def _command(http: Http, token: str, game_id: str, name: str, **body: Any) -> dict[str, Any]:
    response = http.post(f"/v1/games/{game_id}/{name}", token, json=body or None)
    assert response.status_code == 200, response.get_json()
    view: dict[str, Any] = response.get_json()
    assert response.headers["ETag"] == f'"{view["version"]}"'
    return view


def test_a_whole_certification_game_from_deal_to_collect(http: Http) -> None:
    wallet = WalletFactory.create(balance=2_000)
    player = wallet.player
    game = GameFactory.create(wallet=wallet, stake=1_040, deck=list(easy_deck()))
    view = game.view
    assert view["certification"] is True
    assert view["status"] == "in_progress"
    assert (view["stake"], view["win_rate"], view["winnings"]) == (1_040, 100, 0)
    assert view["stock_count"] == 24
    # A given deck has no seed: the game commits to the deck, which stays sealed until the end.
    assert_salted_commitment(view, easy_deck())
    assert view["revealed_deck"] is None
    assert [c["face_down"] for c in view["tableau"]] == [0, 1, 2, 3, 4, 5, 6]
    # The fields every game's view has: what it is, what it pays for, and every pile.
    assert (view["variant"], view["title"]) == ("vegas-draw1", "Vegas Klondike, draw one, one pass")
    assert (view["multiplier"], view["units"], view["max_units"]) == ("5", 0, 52)
    assert view["counters"] == {"stock": 24, "passes_left": 1}
    assert [(p["id"], p["kind"], p["count"], p["face_down"]) for p in view["piles"]] == [
        ("stock", "stock", 24, 24),
        ("waste", "waste", 0, 0),
        *((f"foundation:{f}", "foundation", 0, 0) for f in range(4)),
        *((f"tableau:{c}", "tableau", c + 1, c) for c in range(7)),
    ]
    assert [p["cards"] for p in view["piles"][6:]] == [c["face_up"] for c in view["tableau"]]

    # The player plays the operator's deal with their own session.
    for _ in range(24):
        view = _command(http, player.token, game.id, "draw")
        assert view["waste_playable"] is True
        view = _command(
            http, player.token, game.id, "move", **{"from": "waste", "to": "foundation"}
        )
    assert view["foundation_count"] == 24
    assert view["winnings"] == 2_400
    assert view["stock_count"] == 0

    # Turn and play the tableau up until the server auto-completes.
    while view["status"] == "in_progress":
        turn = next((m for m in view["legal_moves"] if m["action"] == "turn"), None)
        if turn is not None:
            view = _command(http, player.token, game.id, "turn", column=turn["column"])
            continue
        up = next(
            m
            for m in view["legal_moves"]
            if m["action"] == "move" and m["to"].startswith("foundation")
        )
        view = _command(
            http, player.token, game.id, "move", **{"from": up["from"], "to": "foundation"}
        )
    assert view["status"] == "complete"
    assert view["foundation_count"] == 52
    assert view["winnings"] == 5 * 1_040
    assert view["legal_moves"] == [{"action": "collect"}]

    done = _command(http, player.token, game.id, "collect")
    assert done["status"] == "collected"
    assert done["payout"] == 5_200
    assert done["ended_at"] is not None
    assert done["revealed_deck"] == list(easy_deck())
    # ... with the salt of its commitment, so anyone can check the deck was the one committed.
    assert shuffle.deck_matches(easy_deck(), done["server_seed"], done["seed_commitment"])

    # A certification game's money is the sandbox's: the real wallet keeps its 2,000.
    wallet_now = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    assert (wallet_now["balance"], wallet_now["held"]) == (2_000, 0)
    assert wallet_now["sandbox"] == {"currency": "XTS", "balance": -1_040 + 5_200, "held": 0}
    assert wallet_now["open_game_id"] is None

    path = f"/v1/players/{player.id}/ledger?wallet=sandbox"
    ledger = http.get(path, player.token).get_json()["items"]
    assert [(line["kind"], line["amount"]) for line in ledger] == [
        ("winnings", 5_200),
        ("stake", -1_040),
    ]
    assert [line["balance_after"] for line in ledger] == [4_160, -1_040]
    assert ledger[0]["cause_stream"] == f"game-{game.id}"
    real = http.get(f"/v1/players/{player.id}/ledger", player.token).get_json()["items"]
    assert [(line["kind"], line["amount"]) for line in real] == [("deposit", 2_000)]

    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()["items"]
    assert len(history) == 1
    line = history[0]
    assert (line["game_id"], line["status"], line["certification"]) == (game.id, "collected", True)
    assert line["currency"] == "XTS"
    assert (line["stake"], line["payout"], line["net"], line["foundation_count"]) == (
        1_040,
        5_200,
        4_160,
        52,
    )

    # Auditors see the stream, its chain intact, with the certification flag recorded.
    stream = http.get(f"/v1/games/{game.id}/events", http.auditor_key).get_json()
    assert stream["chain_intact"] is True
    types = [e["type"] for e in stream["events"]]
    assert types[:2] == ["StakePlaced", "Dealt"]
    assert types[-2:] == ["AutoCompleted", "Collected"]
    assert stream["events"][0]["data"]["certification"] is True
