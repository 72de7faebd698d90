"""The classic duel (seed 003) as a decider: seats, one committed deal, points, the pot.

A duel seats N players (2 by default) for one entry fee under a published duel paytable. Each
fee goes into the duel's own pot account as its seat is taken. Once every seat is taken, each
player deals their seat's game (``klondike-duel``, its own stream, its own five minutes on the
server's clock); every seat's game is dealt from the one server seed the duel committed to when
it opened. When every seat has finished (won, stopped by its player, or out of time) the duel
settles once: the rake to the house, the rest of the pot to the best score, split evenly on a
tie with any indivisible minor units to the earliest finishers, and the seed revealed. A duel
not full by its fill-by time is cancelled and every fee refunded; so is one an operator voids.

``decide(state, command)`` returns the events or raises RuleViolation; ``evolve`` never
validates, so recorded history always replays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from functools import reduce
from typing import Any, Literal

from events.catalog import (
    DuelCancelled,
    DuelEvent,
    DuelOpened,
    DuelSettled,
    Payout,
    SeatDealt,
    SeatFinished,
    SeatTaken,
)
from service import errors
from service.core.clock import instant, parse_instant
from service.errors import RuleViolation
from service.games.klondike import KLONDIKE_DUEL

#: Each seat's game runs this long on the server's clock.
KLONDIKE_DUEL_TIME = timedelta(seconds=KLONDIKE_DUEL.time_limit or 0)

DuelStatus = Literal["new", "open", "full", "settled", "cancelled"]
RAKE = re.compile(r"0(\.[0-9]{1,4})?")
DEFAULT_SEATS = 2

# --- the published duel paytable ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DuelPaytable:
    """What a duel costs and pays, per currency: the entry fees offered, the most seats a duel
    may have, the operator's rake (a fraction of the pot) and how long a duel waits to fill.
    A change is a new version; every duel records the one it opened under."""

    id: str
    version: int
    currency: str
    fees: tuple[int, ...]  # the entry fees offered, ascending
    max_seats: int
    rake: str  # e.g. "0.1": the house keeps floor(pot x 0.1)
    fill_within: timedelta

    def __post_init__(self) -> None:
        if not self.fees or list(self.fees) != sorted(set(self.fees)) or self.fees[0] < 1:
            raise ValueError("a duel paytable offers distinct positive fees in ascending order")
        if not 2 <= self.max_seats <= 100:
            raise ValueError("a duel seats 2 to 100 players")
        if RAKE.fullmatch(self.rake) is None:
            raise ValueError("the rake is a fraction below 1 of at most 4 places, e.g. 0.1")
        if self.fill_within <= timedelta(0):
            raise ValueError("a duel waits a positive time to fill")

    def as_config(self) -> dict[str, Any]:
        """The table as configuration names it (DUEL_PAYTABLES_FILE's entries, and the log)."""
        return {
            "id": self.id,
            "version": self.version,
            "currency": self.currency,
            "fees": list(self.fees),
            "max_seats": self.max_seats,
            "rake": self.rake,
            "fill_within_seconds": int(self.fill_within.total_seconds()),
        }

    def check(self, fee: int, seats: int) -> None:
        if fee not in self.fees:
            offered = ", ".join(str(f) for f in self.fees)
            raise RuleViolation(
                errors.FEE_NOT_OFFERED,
                f"{fee} is not an entry fee in {self.currency}; the fees are {offered}",
            )
        if not 2 <= seats <= self.max_seats:
            raise RuleViolation(
                errors.SEATS_OUT_OF_RANGE, f"a duel seats 2 to {self.max_seats} players"
            )


def default_duel_paytables() -> dict[str, DuelPaytable]:
    """GBP 1.00 to 50.00 a seat, up to 6 seats, a 10% rake, 15 minutes to fill; the same per
    currency."""
    return {
        cur: DuelPaytable(
            id=f"duel-{cur.lower()}",
            version=1,
            currency=cur,
            fees=(100, 200, 500, 1_000, 2_000, 5_000),
            max_seats=6,
            rake="0.1",
            fill_within=timedelta(minutes=15),
        )
        for cur in ("GBP", "EUR", "USD")
    }


def duel_paytables_from_config(entries: Iterable[Mapping[str, Any]]) -> dict[str, DuelPaytable]:
    tables: dict[str, DuelPaytable] = {}
    for entry in entries:
        table = DuelPaytable(
            id=str(entry["id"]),
            version=int(entry["version"]),
            currency=str(entry["currency"]),
            fees=tuple(int(f) for f in entry["fees"]),
            max_seats=int(entry["max_seats"]),
            rake=str(entry["rake"]),
            fill_within=timedelta(seconds=int(entry["fill_within_seconds"])),
        )
        if table.currency in tables:
            raise ValueError(f"two duel paytables for {table.currency}")
        tables[table.currency] = table
    return tables


# --- money --------------------------------------------------------------------------------------


def rake_of(pot: int, rake: str) -> int:
    """The house's share of a pot: floor(pot x rake)."""
    return int((Decimal(pot) * Decimal(rake)).to_integral_value(rounding=ROUND_FLOOR))


def prize_shares(prize: int, winners: Sequence[int]) -> dict[int, int]:
    """The prize split evenly between the winning seats, listed earliest finisher first; the
    indivisible minor units go one each to the earliest finishers."""
    share, left = divmod(prize, len(winners))
    return {seat: share + (1 if n < left else 0) for n, seat in enumerate(winners)}


# --- commands -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenDuel:
    duel_id: str
    paytable: DuelPaytable
    fee: int
    seats: int
    shuffle_algorithm: str
    seed_commitment: str
    now: datetime
    certification: bool = False


@dataclass(frozen=True, slots=True)
class TakeSeat:
    player_id: str
    now: datetime


@dataclass(frozen=True, slots=True)
class DealSeat:
    player_id: str
    game_id: str
    deadline: datetime


@dataclass(frozen=True, slots=True)
class FinishSeat:
    """A seat's game ended (its points come from its events, service.core.scoring), or the seat
    never dealt it by its deal-by time (game_id None: no points)."""

    seat: int
    game_id: str | None
    points: int
    units: int
    reason: str
    ended_at: str


@dataclass(frozen=True, slots=True)
class Settle:
    server_seed: str | None
    deck: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    reason: str
    voided: bool
    server_seed: str | None
    deck: tuple[str, ...] | None = None
    now: datetime | None = None  # a duel not filled is cancelled only after its fill-by time


DuelCommand = OpenDuel | TakeSeat | DealSeat | FinishSeat | Settle | Cancel

# --- state --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seat:
    seat: int
    player_id: str
    fee: int
    taken_at: str
    game_id: str | None = None
    deadline: str | None = None
    result: SeatFinished | None = None


@dataclass(frozen=True, slots=True)
class Duel:
    status: DuelStatus = "new"
    version: int = 0
    opened: DuelOpened | None = None
    seats: tuple[Seat, ...] = ()
    ending: DuelSettled | DuelCancelled | None = None

    @property
    def duel_id(self) -> str:
        return self.opened.duel_id if self.opened else ""

    @property
    def pot(self) -> int:
        """The fees paid in and not yet paid out."""
        return 0 if self.ending else sum(s.fee for s in self.seats)

    @property
    def is_over(self) -> bool:
        return self.status in ("settled", "cancelled")

    def seat_of(self, player_id: str) -> Seat | None:
        return next((s for s in self.seats if s.player_id == player_id), None)

    @property
    def all_finished(self) -> bool:
        opened = self.opened
        return (
            opened is not None
            and len(self.seats) == opened.seats
            and all(s.result is not None for s in self.seats)
        )

    @property
    def fill_by(self) -> datetime | None:
        return parse_instant(self.opened.fill_by) if self.opened else None

    @property
    def deal_by(self) -> datetime | None:
        """A full duel's seats deal their games within the time the duel had to fill, counted
        from the moment it filled; a seat that has not by then scores nothing."""
        opened = self.opened
        if opened is None or self.status == "open" or not self.seats:
            return None
        waited = parse_instant(opened.fill_by) - parse_instant(opened.opened_at)
        return parse_instant(self.seats[-1].taken_at) + waited


INITIAL = Duel()

# --- decide -------------------------------------------------------------------------------------


def decide(state: Duel, command: DuelCommand) -> list[DuelEvent]:
    if isinstance(command, OpenDuel):
        return [_open(state, command)]
    if state.opened is None:
        raise RuleViolation(errors.DUEL_NOT_OPEN, "this duel has not been opened")
    if state.is_over:
        raise RuleViolation(
            errors.DUEL_OVER, f"the duel is {state.status}; it accepts no more commands"
        )
    if isinstance(command, TakeSeat):
        return [_take_seat(state, command)]
    if isinstance(command, DealSeat):
        return [_deal_seat(state, command)]
    if isinstance(command, FinishSeat):
        return [_finish_seat(state, command)]
    if isinstance(command, Settle):
        return [_settle(state, command)]
    return [_cancel(state, command)]


def _open(state: Duel, command: OpenDuel) -> DuelOpened:
    if state.status != "new":
        raise RuleViolation(errors.DUEL_ALREADY_OPEN, "this duel has already been opened")
    table = command.paytable
    table.check(command.fee, command.seats)
    return DuelOpened(
        duel_id=command.duel_id,
        variant=KLONDIKE_DUEL.id,
        rules_version=KLONDIKE_DUEL.rules_version,
        currency=table.currency,
        fee=command.fee,
        seats=command.seats,
        rake=table.rake,
        paytable_id=table.id,
        paytable_version=table.version,
        shuffle_algorithm=command.shuffle_algorithm,
        seed_commitment=command.seed_commitment,
        opened_at=instant(command.now),
        fill_by=instant(command.now + table.fill_within),
        certification=command.certification,
    )


def _take_seat(state: Duel, command: TakeSeat) -> SeatTaken:
    opened = state.opened
    assert opened is not None
    if state.status != "open":
        raise RuleViolation(errors.DUEL_FULL, "every seat of this duel is taken")
    if state.seat_of(command.player_id) is not None:
        raise RuleViolation(errors.ALREADY_SEATED, "the player already sits in this duel")
    fill_by = state.fill_by
    assert fill_by is not None
    if command.now >= fill_by:
        raise RuleViolation(errors.DUEL_EXPIRED, "this duel's time to fill has run out")
    return SeatTaken(len(state.seats), command.player_id, opened.fee, instant(command.now))


def _deal_seat(state: Duel, command: DealSeat) -> SeatDealt:
    seat = state.seat_of(command.player_id)
    if seat is None:
        raise RuleViolation(errors.NOT_SEATED, "the player does not sit in this duel")
    if state.status != "full":
        raise RuleViolation(
            errors.DUEL_NOT_FULL, "the seats are dealt once every seat of the duel is taken"
        )
    if seat.game_id is not None or seat.result is not None:
        raise RuleViolation(errors.SEAT_ALREADY_DEALT, "this seat's game is already dealt")
    deal_by = state.deal_by
    assert deal_by is not None
    if command.deadline - KLONDIKE_DUEL_TIME >= deal_by:  # the seat forfeits from deal_by
        raise RuleViolation(
            errors.DEAL_EXPIRED, f"a seat's game is dealt by {instant(deal_by)}; it is too late"
        )
    return SeatDealt(seat.seat, command.game_id, instant(command.deadline))


def _finish_seat(state: Duel, command: FinishSeat) -> SeatFinished:
    seats = state.seats
    if not 0 <= command.seat < len(seats) or seats[command.seat].game_id != command.game_id:
        raise RuleViolation(errors.NOT_SEATED, "no seat of this duel plays that game")
    if seats[command.seat].result is not None:
        raise RuleViolation(errors.SEAT_FINISHED, "this seat has already finished")
    if command.game_id is None:  # a forfeit: only once the seat's time to deal has run out
        deal_by = state.deal_by
        if deal_by is None or parse_instant(command.ended_at) < deal_by:
            raise RuleViolation(errors.DUEL_NOT_EXPIRED, "the seat may still deal its game")
        if command.points or command.units:
            raise RuleViolation(errors.NOT_SEATED, "a seat that never dealt scores nothing")
    return SeatFinished(
        command.seat,
        command.game_id,
        command.points,
        command.units,
        command.reason,
        command.ended_at,
    )


def winners(state: Duel) -> list[int]:
    """The seats with the best score, earliest finisher first (then seat order). A seat that
    never dealt its game did not play: it cannot win, unless no seat played at all."""
    results = [s.result for s in state.seats if s.result is not None]
    played = [r for r in results if r.game_id is not None]
    results = played or results
    best = max(r.points for r in results)
    tied = [r for r in results if r.points == best]
    return [r.seat for r in sorted(tied, key=lambda r: (parse_instant(r.ended_at), r.seat))]


def _settle(state: Duel, command: Settle) -> DuelSettled:
    opened = state.opened
    assert opened is not None
    if not state.all_finished:
        raise RuleViolation(
            errors.DUEL_NOT_FINISHED, "the duel settles once every seat has finished"
        )
    pot = state.pot
    rake = rake_of(pot, opened.rake)
    shares = prize_shares(pot - rake, winners(state))
    payouts = tuple(
        Payout(seat, state.seats[seat].player_id, amount)
        for seat, amount in sorted(shares.items())
        if amount > 0
    )
    return DuelSettled(pot, rake, payouts, command.server_seed, command.deck)


def _cancel(state: Duel, command: Cancel) -> DuelCancelled:
    if not command.voided:
        fill_by = state.fill_by
        assert fill_by is not None
        if state.status != "open" or command.now is None or command.now < fill_by:
            raise RuleViolation(
                errors.DUEL_NOT_EXPIRED,
                "only a duel that did not fill by its time is cancelled; an operator voids",
            )
    if not command.reason.strip() or len(command.reason) > 500:
        raise RuleViolation(errors.INVALID_REASON, "a cancellation needs a reason of 1 to 500")
    refunds = tuple(Payout(s.seat, s.player_id, s.fee) for s in state.seats)
    return DuelCancelled(command.reason, refunds, command.voided, command.server_seed, command.deck)


# --- evolve -------------------------------------------------------------------------------------


def evolve(state: Duel, event: DuelEvent) -> Duel:
    """The state after ``event``. Never validates."""
    version = state.version + 1
    if isinstance(event, DuelOpened):
        return Duel("open", version, event)
    if isinstance(event, SeatTaken):
        seats = (*state.seats, Seat(event.seat, event.player_id, event.fee, event.taken_at))
        opened = state.opened
        full = opened is not None and len(seats) >= opened.seats
        return Duel("full" if full else "open", version, opened, seats)
    if isinstance(event, SeatDealt | SeatFinished):
        changed = list(state.seats)
        if 0 <= event.seat < len(changed):
            seat = changed[event.seat]
            if isinstance(event, SeatDealt):
                changed[event.seat] = replace(seat, game_id=event.game_id, deadline=event.deadline)
            else:
                changed[event.seat] = replace(seat, result=event)
        return replace(state, version=version, seats=tuple(changed))
    if isinstance(event, DuelSettled):
        return replace(state, status="settled", version=version, ending=event)
    return replace(state, status="cancelled", version=version, ending=event)


def fold(events: Iterable[DuelEvent], state: Duel = INITIAL) -> Duel:
    return reduce(evolve, events, state)
