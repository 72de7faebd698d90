"""Golf and Pyramid end to end over HTTP, for real money: an operator deals each game from a
known deck or seed (certification mode) for a funded player, who plays it through the actions
route and collects. After every game the wallet holds exactly what the paytable says; at the end
the ledger and the betting history tell the same story, and every game replays and verifies."""

from __future__ import annotations

from typing import Any

from tests.api.client import assert_salted_commitment
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
from tests.api.real_money import Session, check_books


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

    check_books(
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

    check_books(
        session,
        [(first, "pyramid", 520, 52), (second, "pyramid", 1_040, 36), (third, "pyramid", 104, 0)],
    )
