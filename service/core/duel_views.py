"""What each kind of user may see of a duel.

Before the duel ends, a seat's player sees their own seat (its game, points so far and time
left) and of the others only that their seats are taken: never another seat's cards, moves or
score. Staff see every seat's player, game and whether it has finished, but no points before
the end either (a score tells how a deal plays). Once the duel has settled (or been cancelled)
everyone who may see it sees every seat's result, the payouts and the revealed seed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from service.core.clock import parse_instant
from service.core.context import Actor
from service.core.duel_decider import Duel
from service.core.game_decider import Game
from service.core.game_views import player_view


class _SeatGame(Protocol):
    @property
    def state(self) -> Game: ...


class ShownDuel(Protocol):
    """What a view needs of a loaded duel (service.services.duels.LoadedDuel is one), named here
    so the views stay pure."""

    @property
    def state(self) -> Duel: ...

    @property
    def ended_at(self) -> datetime | None: ...

    @property
    def own_game(self) -> _SeatGame | None: ...

    @property
    def own_points(self) -> int | None: ...


def duel_view(loaded: ShownDuel, viewer: Actor, now: datetime) -> dict[str, Any]:
    """The duel as ``viewer`` may see it at ``now``."""
    duel = loaded.state
    opened = duel.opened
    assert opened is not None
    ended = duel.is_over
    is_player = viewer.role == "player"
    view: dict[str, Any] = {
        "id": opened.duel_id,
        "status": duel.status,
        "variant": opened.variant,
        "rules_version": opened.rules_version,
        "currency": opened.currency,
        "fee": opened.fee,
        "seats": opened.seats,
        "taken": len(duel.seats),
        "pot": sum(s.fee for s in duel.seats),
        "rake": opened.rake,
        "paytable": {"id": opened.paytable_id, "version": opened.paytable_version},
        "certification": opened.certification,
        "opened_at": parse_instant(opened.opened_at),  # the server's clock, as recorded
        "fill_by": parse_instant(opened.fill_by),
        "deal_by": duel.deal_by,
        "ended_at": loaded.ended_at,
        "seed_commitment": opened.seed_commitment,
        "server_seed": getattr(duel.ending, "server_seed", None),
        "revealed_deck": _revealed_deck(duel),
        "seat_list": [_seat(duel, seat.seat, viewer, ended) for seat in duel.seats],
        "you": None,
        "result": _result(duel) if ended else None,
    }
    if is_player:
        mine = duel.seat_of(viewer.id)
        if mine is not None:
            view["you"] = _own_seat(loaded, mine.seat, now)
    return view


def _revealed_deck(duel: Duel) -> list[str] | None:
    deck = getattr(duel.ending, "deck", None)
    return list(deck) if deck else None


def _seat(duel: Duel, index: int, viewer: Actor, ended: bool) -> dict[str, Any]:
    seat = duel.seats[index]
    own = viewer.role == "player" and seat.player_id == viewer.id
    shown: dict[str, Any] = {"seat": seat.seat, "taken": True}
    if ended or own or viewer.role != "player":
        shown["player_id"] = seat.player_id
        shown["game_id"] = seat.game_id
        shown["finished"] = seat.result is not None
    if ended or own:
        result = seat.result
        shown["points"] = result.points if result else None
        shown["units"] = result.units if result else None
        shown["end_reason"] = result.reason if result else None
        shown["ended_at"] = parse_instant(result.ended_at) if result else None
    if ended:
        shown["payout"] = next(
            (p.amount for p in getattr(duel.ending, "payouts", ()) if p.seat == seat.seat), 0
        )
        shown["refund"] = next(
            (p.amount for p in getattr(duel.ending, "refunds", ()) if p.seat == seat.seat), 0
        )
    return shown


def _own_seat(loaded: ShownDuel, index: int, now: datetime) -> dict[str, Any]:
    seat = loaded.state.seats[index]
    game = loaded.own_game
    deadline = parse_instant(seat.deadline) if seat.deadline else None
    left = None
    if deadline is not None and seat.result is None:
        left = max(int((deadline - now).total_seconds()), 0)
    return {
        "seat": seat.seat,
        "game_id": seat.game_id,
        "deadline": deadline,
        "seconds_left": left,
        "points": seat.result.points if seat.result else loaded.own_points,
        "game": player_view(game.state) if game is not None else None,
    }


def _result(duel: Duel) -> dict[str, Any]:
    ending = duel.ending
    payouts = getattr(ending, "payouts", ())
    refunds = getattr(ending, "refunds", ())
    return {
        "pot": getattr(ending, "pot", sum(r.amount for r in refunds)),
        "rake": getattr(ending, "rake", 0),
        "payouts": [
            {"seat": p.seat, "player_id": p.player_id, "amount": p.amount} for p in payouts
        ],
        "refunds": [
            {"seat": p.seat, "player_id": p.player_id, "amount": p.amount} for p in refunds
        ],
        "cancelled_because": getattr(ending, "reason", None),
    }
