"""Golf and Pyramid end to end over HTTP, for real money: an operator deals each game from a
known deck or seed (certification mode) for a funded player, who plays it through the actions
route and collects. After every game the wallet holds exactly what the paytable says; at the end
the ledger and the betting history tell the same story, and every game replays and verifies."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from service.games import GAMES
from tests.api.client import Http, assert_salted_commitment
from tests.api.factories import Player, WalletFactory
from tests.api.play import (
    PYRAMID_REMOVALS,
    golf_clearing,
    golf_winning_deck,
    legal,
    played,
    pyramid_winning_deck,
    refused,
    remove,
    winnings,
)

FUNDS = 20_800


@dataclass
class Session:
    """A player's afternoon: the games they were dealt and what each paid."""

    http: Http
    player: Player
    balance: int = FUNDS

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
        wallet = self.http.get(f"/v1/players/{self.player.id}/wallet", self.player.token)
        assert wallet.status_code == 200
        assert wallet.get_json() == {
            "player_id": self.player.id,
            "currency": "GBP",
            "balance": self.balance,
            "held": held,
            "open_game_id": open_game,
        }


@pytest.fixture
def session(http: Http) -> Session:
    return Session(http, WalletFactory.create(balance=FUNDS).player)


def _greedy(session: Session, game_id: str, view: dict[str, Any], takes: str) -> dict[str, Any]:
    """Play the first legal move that takes cards (``takes``: move or remove), else draw,
    until neither is left: a deterministic game for a given seed."""
    while True:
        taking = legal(view, takes)
        if taking:
            view = played(session.http, session.player.token, game_id, taking[0])
        elif legal(view, "draw"):
            view = session.play(game_id, action="draw")
        else:
            return view


def _draw_out(session: Session, game_id: str, stock: int) -> dict[str, Any]:
    """Draw the whole stock one card at a time; one pass, so another draw is refused."""
    for _ in range(stock):
        view = session.play(game_id, action="draw")
    assert view["stock_count"] == 0
    assert legal(view, "draw") == []
    refused(session.http, session.player.token, game_id, {"action": "draw"}, "stock-empty")
    return view


def _check_books(session: Session, games: list[tuple[str, str, int, int]]) -> None:
    """The ledger and the history, newest first: (game id, variant, stake, units) each."""
    http, player = session.http, session.player
    ledger = http.get(f"/v1/players/{player.id}/ledger?limit=100", player.token).get_json()
    expected: list[tuple[str, int, str | None]] = []
    for game_id, variant, stake, units in reversed(games):
        owed = winnings(variant, units, stake)
        if owed:
            expected.append(("winnings", owed, f"game-{game_id}"))
        expected.append(("stake", -stake, f"game-{game_id}"))
    expected.append(("deposit", FUNDS, None))
    lines = ledger["items"]
    assert [
        (line["kind"], line["amount"], line["cause_stream"] if line["kind"] != "deposit" else None)
        for line in lines
    ] == expected
    assert lines[0]["balance_after"] == session.balance
    for line, below in itertools.pairwise(lines):
        assert line["balance_before"] == below["balance_after"]
        assert line["balance_after"] == line["balance_before"] + line["amount"]

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


def test_three_golf_games_for_real_money(session: Session) -> None:
    # 1. A deck cleared completely: 35 cards, a full win of M x the stake.
    deck = golf_winning_deck()
    first, view = session.deal("golf", 520, deck=deck)
    assert_salted_commitment(view, deck)
    session.play(first, action="draw")
    clearing = golf_clearing()
    session.play(first, **clearing[0])
    session.play(first, action="undo")
    for body in clearing:
        view = session.play(first, **body)
    assert (view["status"], view["units"]) == ("complete", 35)
    assert view["winnings"] == winnings("golf", 35, 520)
    done = session.collect(first, "golf", 520, 35)
    assert done["revealed_deck"] == deck

    # 2. A seeded deal, played greedily to the end of the stock: part of the columns cleared.
    second, view = session.deal("golf", 1_040, seed="33" * 32)
    view = _greedy(session, second, view, "move")
    cleared = 35 - sum(p["count"] for p in view["piles"] if p["kind"] == "tableau")
    assert view["units"] == cleared == 32
    assert view["winnings"] == winnings("golf", cleared, 1_040)
    done = session.collect(second, "golf", 1_040, cleared)
    assert done["server_seed"] == "33" * 32

    # 3. Drawn through without a move: nothing won, nothing paid.
    third, _ = session.deal("golf", 104, seed="44" * 32)
    _draw_out(session, third, 16)
    session.collect(third, "golf", 104, 0)

    _check_books(
        session,
        [(first, "golf", 520, 35), (second, "golf", 1_040, cleared), (third, "golf", 104, 0)],
    )


def test_three_pyramid_games_for_real_money(session: Session) -> None:
    # 1. A deck removed completely: the pyramid row by row, then the stock in pairs as drawn.
    deck = pyramid_winning_deck()
    first, view = session.deal("pyramid", 520, deck=deck)
    session.play(first, **remove(*PYRAMID_REMOVALS[0]))
    session.play(first, action="undo")
    for numbers in PYRAMID_REMOVALS:
        view = session.play(first, **remove(*numbers))
    assert view["units"] == 28
    for _ in range(12):
        session.play(first, action="draw")
        view = session.play(first, action="remove", piles=["stock", "waste"])
    assert (view["status"], view["units"], view["stock_count"]) == ("complete", 52, 0)
    done = session.collect(first, "pyramid", 520, 52)
    assert done["revealed_deck"] == deck

    # 2. A seeded deal, played greedily: every removal the view lists first, else a draw.
    second, view = session.deal("pyramid", 1_040, seed="22" * 32)
    view = _greedy(session, second, view, "remove")
    removed = [p["count"] for p in view["piles"] if p["kind"] == "foundation"]
    assert view["units"] == removed[0] == 36
    done = session.collect(second, "pyramid", 1_040, 36)
    assert done["server_seed"] == "22" * 32

    # 3. Drawn through without a removal: nothing won, nothing paid.
    third, _ = session.deal("pyramid", 104, seed="44" * 32)
    _draw_out(session, third, 24)
    session.collect(third, "pyramid", 104, 0)

    _check_books(
        session,
        [(first, "pyramid", 520, 52), (second, "pyramid", 1_040, 36), (third, "pyramid", 104, 0)],
    )
