"""An auditor's replay of a duel: every check passes on an honest duel, and each check catches
what it is there for."""

from __future__ import annotations

from typing import Any

from tests.api.client import Http
from tests.api.duel_support import FakeClock, clock, join, seat_call
from tests.api.factories import WalletFactory
from tests.builders import easy_deck

__all__ = ["clock"]


def _settled_duel(http: Http, clock: FakeClock, fee: int) -> tuple[str, list[Any]]:
    players = [WalletFactory.create(balance=5_000).player for _ in range(2)]
    duel_id = join(http, players[0].id, fee, deck=list(easy_deck()))["id"]
    assert join(http, players[1].id, fee)["id"] == duel_id
    for player in players:
        seat_call(http, player.token, duel_id, "deal")
        clock.advance(3)
        seat_call(http, player.token, duel_id, "actions", action="draw")
    clock.advance(3)
    seat_call(http, players[0].token, duel_id, "actions", action="collect")
    done = seat_call(http, players[1].token, duel_id, "actions", action="collect")
    assert done["status"] == "settled"
    return duel_id, players


def test_a_settled_duel_replays_with_every_check_passing(http: Http, clock: FakeClock) -> None:
    duel_id, players = _settled_duel(http, clock, 200)
    replay = http.get(f"/v1/duels/{duel_id}/replay", http.auditor_key).get_json()
    assert replay["label"] == "replay"
    assert replay["verification"]["findings"] == []
    assert set(replay["verification"]["checks"].values()) == {"pass"}
    assert [s["type"] for s in replay["steps"]][:3] == ["DuelOpened", "SeatTaken", "SeatTaken"]
    assert replay["steps"][-1]["type"] == "DuelSettled"
    # A seat's player may replay the duel once it has ended; another player may not see it.
    mine = http.get(f"/v1/duels/{duel_id}/replay", players[0].token)
    assert mine.status_code == 200
    stranger = WalletFactory.create(balance=0).player
    assert http.get(f"/v1/duels/{duel_id}/replay", stranger.token).status_code == 404
    # Each seat's own game verifies with the duel's revealed seed; on its own, its seed check
    # waits for the duel (pending), never fails.
    game_id = http.get(f"/v1/duels/{duel_id}", http.auditor_key).get_json()["seat_list"][0][
        "game_id"
    ]
    alone = http.get(f"/v1/games/{game_id}/replay", http.auditor_key).get_json()
    assert alone["verification"]["findings"] == []
    assert alone["verification"]["checks"]["seed-commitment"] == "pending"
