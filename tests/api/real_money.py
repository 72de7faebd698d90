"""A player's afternoon of certification games, over HTTP: the operator deals from a known deck
or seed, the player plays and collects, and the wallets, the ledger and the betting history are
checked to tell the same story. The games' money is the sandbox's (ledger.SANDBOX): every stake
and payout moves the player's sandbox wallet, and the real one keeps exactly what was deposited.
Shared by every game's end-to-end test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.games import GAMES
from tests.api.books import statement, wallet
from tests.api.client import Http
from tests.api.factories import Player
from tests.api.play import played, winnings

FUNDS = 20_800


@dataclass
class Session:
    """A player's afternoon: the games they were dealt and what each paid. ``balance`` is the
    sandbox wallet's, the net of the afternoon's certification games; the real wallet holds
    the FUNDS deposited throughout."""

    http: Http
    player: Player
    balance: int = 0

    def deal(self, variant: str, stake: int, **source: Any) -> tuple[str, dict[str, Any]]:
        """The operator deals the player a certification game from a deck or a seed."""
        body = {"variant": variant, "stake": stake, "player_id": self.player.id, **source}
        dealt = self.http.post("/v1/games", self.http.operator_key, json=body)
        assert dealt.status_code == 201, dealt.get_json()
        view: dict[str, Any] = dealt.get_json()
        assert (view["certification"], view["status"], view["variant"]) == (
            True,
            "in_progress",
            variant,
        )
        assert (view["units"], view["winnings"], view["max_units"]) == (
            0,
            0,
            GAMES[variant].max_units,
        )
        assert view["multiplier"] == GAMES[variant].multiplier
        assert view["currency"] == "XTS"
        self.balance -= stake
        self.check_wallet(open_game=view["id"], held=stake)
        return str(view["id"]), view

    def play(self, game_id: str, **body: Any) -> dict[str, Any]:
        return played(self.http, self.player.token, game_id, body)

    def collect(self, game_id: str, variant: str, stake: int, units: int) -> dict[str, Any]:
        done = self.play(game_id, action="collect")
        owed = winnings(variant, units, stake)
        assert (done["status"], done["units"], done["foundation_count"]) == (
            "collected",
            units,
            units,
        )
        assert (done["payout"], done["winnings"], done["refund"]) == (owed, owed, 0)
        assert done["ended_at"] is not None
        self.balance += owed
        self.check_wallet(open_game=None, held=0)
        return done

    def check_wallet(self, *, open_game: str | None, held: int) -> None:
        assert wallet(self.http, self.player) == {
            "player_id": self.player.id,
            "currency": "GBP",
            "balance": FUNDS,
            "held": 0,
            "open_game_id": open_game,
            "sandbox": {"currency": "XTS", "balance": self.balance, "held": held},
            "wallet_mode": "transfer",
            "unsettled": 0,
        }


def check_books(session: Session, games: list[tuple[str, str, int, int]]) -> None:
    """The ledgers and the history, newest first: (game id, variant, stake, units) each. The
    games' money is all in the sandbox wallet's statement; the real one has the deposit only."""
    http, player = session.http, session.player
    expected: list[tuple[str, int, str | None]] = []
    for game_id, variant, stake, units in reversed(games):
        owed = winnings(variant, units, stake)
        if owed:
            expected.append(("winnings", owed, f"game-{game_id}"))
        expected.append(("stake", -stake, f"game-{game_id}"))
    assert statement(http, player, "sandbox") == expected
    assert sum(amount for _, amount, _ in expected) == session.balance
    assert statement(http, player) == [("deposit", FUNDS, None)]

    history = http.get(f"/v1/players/{player.id}/history", player.token).get_json()["items"]
    assert [
        (h["game_id"], h["variant"], h["status"], h["stake"], h["foundation_count"])
        for h in history
    ] == [
        (game_id, variant, "collected", stake, units)
        for game_id, variant, stake, units in reversed(games)
    ]
    for line, (_, variant, stake, units) in zip(history, reversed(games), strict=True):
        owed = winnings(variant, units, stake)
        assert (line["payout"], line["refund"], line["net"]) == (owed, 0, owed - stake)
        assert (line["certification"], line["end_reason"]) == (True, "player")
        rules = GAMES[variant]
        assert (line["title"], line["units"], line["max_units"]) == (
            rules.title,
            units,
            rules.max_units,
        )

    for game_id, *_ in games:
        replay = http.get(f"/v1/games/{game_id}/replay", http.auditor_key).get_json()
        assert replay["verification"]["verified"] is True, replay["verification"]["findings"]
        assert set(replay["verification"]["checks"].values()) == {"pass"}
