"""Verifying a recorded duel from its events, its seats' game streams and its ledger postings.

Pure: the caller reads the records. The checks: the duel's hash chain; its revealed seed (or
given deck and salt) against its commitment; each seat's game (dealt for that duel, that player
and that commitment, its clock the one the duel recorded, and every check of the game's own
verification with the duel's secret); each seat's points, worked out again from its game's
events by seed 003's table; the settlement (or cancellation) decided again from the seats; and
the ledger (each fee, the prize and rake, each refund, exactly).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from events.catalog import (
    ClockStarted,
    Collected,
    Dealt,
    DuelCancelled,
    DuelEvent,
    DuelOpened,
    DuelSettled,
    GameEvent,
    SeatFinished,
    StakePlaced,
)
from events.codec import InvalidEvent, UnknownEvent, decode_duel, decode_game
from events.records import RecordedEvent
from service.core import duel_decider as d
from service.core import ledger, scoring, shuffle
from service.core.game_verification import (
    Finding,
    PostingRow,
    Revealed,
    check_chain,
    check_sandbox,
    compare_ledger,
    verify_game,
)
from service.core.paytable import Paytable
from service.core.streams import game_stream
from service.errors import RuleViolation

Status = Literal["pass", "fail", "pending"]
DUEL_CHECKS = ("hash-chain", "seed-commitment", "seats", "points", "settlement", "ledger")


@dataclass(frozen=True, slots=True)
class SeatStream:
    """One seat's game stream and the postings it caused (none, for a seat's game)."""

    records: Sequence[RecordedEvent]
    postings: Sequence[PostingRow]


@dataclass
class DuelVerification:
    stream_id: str
    checks: dict[str, Status] = field(default_factory=lambda: dict.fromkeys(DUEL_CHECKS, "pass"))
    findings: list[Finding] = field(default_factory=list)
    state: d.Duel = d.INITIAL

    @property
    def ok(self) -> bool:
        return not self.findings

    def fail(self, check: str, location: str, expected: object, found: object) -> None:
        self.checks[check] = "fail"
        self.findings.append(Finding(check, location, str(expected), str(found)))


def verify_duel(
    records: Sequence[RecordedEvent],
    postings: Sequence[PostingRow],
    seats: Mapping[str, SeatStream],
    paytables: Mapping[str, Paytable],
) -> DuelVerification:
    """Every check on one duel; ``seats`` holds each dealt seat's game stream by game id."""
    stream = records[0].stream_id if records else "?"
    result = DuelVerification(stream)
    check_chain(records, result.fail)
    events: list[DuelEvent] = []
    for record in records:
        try:
            events.append(decode_duel(record.type, record.schema_version, record.data))
        except (InvalidEvent, UnknownEvent) as exc:
            result.fail("settlement", f"{stream} v{record.version}", "a valid duel event", exc)
            return result
    if not events or not isinstance(events[0], DuelOpened):
        result.fail("settlement", f"{stream} v1", "DuelOpened", [type(e).__name__ for e in events])
        return result
    opened = events[0]
    result.state = d.fold(events)
    revealed = _check_seed(result, opened, result.state)
    _check_seats(result, opened, seats, paytables, revealed)
    _check_decisions(result, events)
    check_sandbox(result.fail, f"{stream} v1", opened.currency, opened.certification)
    expected: dict[int, ledger.Entry] = {}
    for version, event in enumerate(events, start=1):
        entry = ledger.duel_entry_for(event, opened.duel_id, opened.currency, stream, version)
        if entry is not None:
            expected[version] = entry
    compare_ledger(result.fail, stream, expected, postings)
    return result


def _check_seed(result: DuelVerification, opened: DuelOpened, state: d.Duel) -> Revealed | None:
    ending = state.ending
    if ending is None:
        result.checks["seed-commitment"] = "pending"
        return None
    seed, deck = ending.server_seed, ending.deck
    given = opened.shuffle_algorithm == shuffle.CERTIFICATION_DECK
    if given and not opened.certification:
        result.fail("seed-commitment", f"{result.stream_id} v1", "a shuffled deal", "a given deck")
        return None
    if given:
        ok = deck is not None and seed is not None
        ok = ok and shuffle.deck_matches(deck or (), seed or "", opened.seed_commitment)
    else:
        ok = seed is not None and shuffle.seed_matches(seed, opened.seed_commitment)
    if not ok:
        result.fail(
            "seed-commitment",
            f"{result.stream_id} v{state.version}",
            opened.seed_commitment,
            f"seed {seed}, deck {deck}",
        )
        return None
    return Revealed(seed, deck)


def _check_seats(
    result: DuelVerification,
    opened: DuelOpened,
    seats: Mapping[str, SeatStream],
    paytables: Mapping[str, Paytable],
    revealed: Revealed | None,
) -> None:
    for seat in result.state.seats:
        if seat.game_id is None:
            continue
        where = f"{result.stream_id} seat {seat.seat}"
        found = seats.get(seat.game_id)
        if found is None or not found.records:
            result.fail("seats", where, game_stream(seat.game_id), "no such stream")
            continue
        try:
            events = [decode_game(r.type, r.schema_version, r.data) for r in found.records]
        except (InvalidEvent, UnknownEvent) as exc:
            result.fail("seats", where, "a readable game", exc)
            continue
        _check_seat_deal(result, where, opened, seat, events)
        checked = verify_game(found.records, found.postings, paytables, duel=revealed)
        for finding in checked.findings:
            result.fail(
                "seats", finding.location, finding.expected, f"{finding.check}: {finding.found}"
            )
        if revealed is None:
            result.checks["seats"] = "pending" if result.checks["seats"] == "pass" else "fail"
        _check_points(result, where, seat.result, events)


def _check_seat_deal(
    result: DuelVerification,
    where: str,
    opened: DuelOpened,
    seat: d.Seat,
    events: list[GameEvent],
) -> None:
    """The seat's game was dealt for this duel, this player and this commitment, in the duel's
    money (a sandbox duel's seat in the sandbox), on the clock the duel recorded."""
    placed = events[0] if events else None
    dealt = events[1] if len(events) > 1 else None
    clock = events[2] if len(events) > 2 else None
    facts = (
        isinstance(placed, StakePlaced)
        and placed.duel_id == opened.duel_id
        and placed.player_id == seat.player_id
        and placed.variant == opened.variant
        and (placed.currency, placed.certification) == (opened.currency, opened.certification)
        and isinstance(dealt, Dealt)
        and dealt.seed_commitment == opened.seed_commitment
        and isinstance(clock, ClockStarted)
        and clock.deadline == seat.deadline
    )
    if not facts:
        result.fail(
            "seats",
            where,
            f"a {opened.variant} game of {seat.player_id} for this duel, in "
            f"{opened.currency}, due {seat.deadline}",
            [type(e).__name__ for e in events[:3]],
        )


def _check_points(
    result: DuelVerification,
    where: str,
    finished: SeatFinished | None,
    events: list[GameEvent],
) -> None:
    ending = events[-1] if events else None
    if finished is None:
        if isinstance(ending, Collected):
            result.fail("points", where, "a result recorded for the ended game", "none")
        return
    if not isinstance(ending, Collected):
        result.fail("points", where, "the seat's game ended", "it did not")
        return
    points = scoring.points(events).total
    recorded = (finished.points, finished.units, finished.reason, finished.ended_at)
    actual = (points, ending.units, ending.reason, ending.ended_at)
    if recorded != actual:
        result.fail("points", where, f"points, units, reason, end {actual}", recorded)


def _check_decisions(result: DuelVerification, events: list[DuelEvent]) -> None:
    """Every seat, result and ending is what the duel's rules decide from what came before
    (the money: the settlement's pot, rake and shares, and each refund)."""
    state = d.INITIAL
    for version, event in enumerate(events, start=1):
        where = f"{result.stream_id} v{version}"
        if version > 1 and state.opened is not None:
            try:
                expected = _decided(state, event)
            except RuleViolation as exc:
                result.fail("settlement", where, "an event the duel's rules allow", exc)
                expected = event
            if expected != event:
                result.fail("settlement", where, expected, event)
        state = d.evolve(state, event)


def _decided(state: d.Duel, event: DuelEvent) -> DuelEvent:
    """What the duel's rules decide in ``state`` for the command behind ``event``."""
    if isinstance(event, DuelSettled):
        return d.decide(state, d.Settle(event.server_seed, event.deck))[0]
    if isinstance(event, DuelCancelled):
        cancel = d.Cancel(event.reason, event.voided, event.server_seed, event.deck)
        if not event.voided:  # not filled: only once its time ran out, which it says it did
            cancel = d.Cancel(event.reason, False, event.server_seed, event.deck, state.fill_by)
        return d.decide(state, cancel)[0]
    if isinstance(event, SeatFinished):
        finish = d.FinishSeat(
            event.seat, event.game_id, event.points, event.units, event.reason, event.ended_at
        )
        return d.decide(state, finish)[0]
    return event  # seats taken and dealt: the money and the games are checked elsewhere
