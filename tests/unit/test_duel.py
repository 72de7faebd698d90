"""The classic duel's decider (service.core.duel_decider): opening under a duel paytable, seats and
their fees, dealing each seat's game, finishing seats (forfeits included), settling the pot (rake,
best score, ties split with the odd minor units to the earliest finishers) and cancelling (not
filled, or voided), with evolve never validating and fold agreeing with decide."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import codec
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
from service.core import duel_decider as d
from service.core import shuffle
from service.core.clock import instant
from service.core.duel_decider import (
    Cancel,
    DealSeat,
    DuelCommand,
    DuelPaytable,
    FinishSeat,
    OpenDuel,
    Settle,
    TakeSeat,
)
from service.errors import RuleViolation
from service.games.klondike import KLONDIKE_DUEL
from tests.builders import SEED

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
FILL = timedelta(minutes=15)
GAME_TIME = timedelta(seconds=300)
SEED_HEX = SEED.hex()
TABLE = DuelPaytable(
    id="duel-gbp",
    version=3,
    currency="GBP",
    fees=(100, 200, 500, 1_000),
    max_seats=6,
    rake="0.1",
    fill_within=FILL,
)
PLAYERS = tuple(f"player-{n}" for n in range(10))


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class Table:
    """One duel driven through the decider: the state and every event, refusals checked to
    change nothing."""

    def __init__(self) -> None:
        self.state = d.INITIAL
        self.events: list[DuelEvent] = []

    def do(self, command: DuelCommand) -> DuelEvent:
        new = d.decide(self.state, command)
        assert len(new) == 1
        for event in new:  # every event the decider makes is storable
            type_name, version, data = codec.encode(event)
            assert codec.decode_duel(type_name, version, data) == event
        self.state = d.fold(new, self.state)
        self.events += new
        assert self.state == d.fold(self.events)
        assert self.state.version == len(self.events)
        return new[0]

    def refused(self, command: DuelCommand) -> str:
        before, count = self.state, len(self.events)
        with pytest.raises(RuleViolation) as info:
            d.decide(self.state, command)
        assert self.state is before
        assert len(self.events) == count
        return info.value.code

    # --- whole steps ----------------------------------------------------------------------------

    def open(self, seats: int = 2, fee: int = 100, rake: str = "0.1") -> Table:
        table = replace(TABLE, rake=rake)
        self.do(open_duel(table, fee, seats))
        return self

    def fill(self) -> Table:
        opened = self.state.opened
        assert opened is not None
        for n in range(len(self.state.seats), opened.seats):
            self.do(TakeSeat(PLAYERS[n], at(10 + n)))
        return self

    def deal_all(self) -> Table:
        for seat in self.state.seats:
            self.do(DealSeat(seat.player_id, f"game-{seat.seat}", at(100) + GAME_TIME))
        return self

    def finish(self, seat: int, points: int, ended: float, reason: str = "finished") -> Table:
        self.do(FinishSeat(seat, f"game-{seat}", points, 52, reason, instant(at(ended))))
        return self

    def played(self, *results: tuple[int, float]) -> Table:
        """Every seat filled, dealt and finished with (points, ended after T0 in seconds)."""
        self.fill().deal_all()
        for seat, (points, ended) in enumerate(results):
            self.finish(seat, points, ended)
        return self


def open_duel(table: DuelPaytable = TABLE, fee: int = 100, seats: int = 2) -> OpenDuel:
    return OpenDuel(
        duel_id="duel-1",
        paytable=table,
        fee=fee,
        seats=seats,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(SEED),
        now=T0,
    )


def settled(table: Table) -> DuelSettled:
    event = table.do(Settle(SEED_HEX))
    assert isinstance(event, DuelSettled)
    assert sum(p.amount for p in event.payouts) + event.rake == event.pot
    return event


# --- the duel paytable ----------------------------------------------------------------------------


def test_the_default_duel_paytables_offer_gbp_1_to_50_with_a_10_percent_rake() -> None:
    tables = d.default_duel_paytables()
    assert set(tables) == {"GBP", "EUR", "USD"}
    gbp = tables["GBP"]
    assert (gbp.fees, gbp.max_seats, gbp.rake) == ((100, 200, 500, 1_000, 2_000, 5_000), 6, "0.1")
    assert gbp.fill_within == FILL


@pytest.mark.parametrize(
    "change",
    [
        {"fees": ()},
        {"fees": (200, 100)},
        {"fees": (100, 100)},
        {"fees": (0, 100)},
        {"max_seats": 1},
        {"max_seats": 101},
        {"rake": "1"},
        {"rake": "0.12345"},
        {"rake": "-0.1"},
        {"rake": ".1"},
        {"fill_within": timedelta(0)},
    ],
    ids=str,
)
def test_a_duel_paytable_out_of_shape_is_refused(change: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"duel|rake"):
        replace(TABLE, **change)  # type: ignore[arg-type]


def test_duel_paytables_read_from_configuration() -> None:
    entry = {
        "id": "duel-eur",
        "version": 2,
        "currency": "EUR",
        "fees": [200, 500],
        "max_seats": 4,
        "rake": "0.05",
        "fill_within_seconds": 600,
    }
    tables = d.duel_paytables_from_config([entry])
    assert tables == {
        "EUR": DuelPaytable("duel-eur", 2, "EUR", (200, 500), 4, "0.05", timedelta(minutes=10))
    }
    assert d.duel_paytables_from_config([tables["EUR"].as_config()]) == tables
    with pytest.raises(ValueError, match="two duel paytables for EUR"):
        d.duel_paytables_from_config([entry, {**entry, "id": "other"}])


# --- opening --------------------------------------------------------------------------------------


def test_opening_records_the_duel_its_game_paytable_and_commitment() -> None:
    table = Table()
    opened = table.do(open_duel(fee=500, seats=3))
    assert opened == DuelOpened(
        duel_id="duel-1",
        variant="klondike-duel",
        rules_version=KLONDIKE_DUEL.rules_version,
        currency="GBP",
        fee=500,
        seats=3,
        rake="0.1",
        paytable_id="duel-gbp",
        paytable_version=3,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(SEED),
        opened_at=instant(T0),
        fill_by=instant(T0 + FILL),
        certification=False,
    )
    assert table.state.status == "open"
    assert table.state.duel_id == "duel-1"
    assert table.state.pot == 0
    assert table.state.deal_by is None


@pytest.mark.parametrize("fee", [0, 99, 101, 150, 5_000, -100])
def test_a_fee_the_paytable_does_not_offer_is_refused(fee: int) -> None:
    assert Table().refused(open_duel(fee=fee)) == errors.FEE_NOT_OFFERED


@pytest.mark.parametrize("fee", TABLE.fees)
def test_every_offered_fee_opens_a_duel(fee: int) -> None:
    opened = Table().do(open_duel(fee=fee))
    assert isinstance(opened, DuelOpened)
    assert opened.fee == fee


@pytest.mark.parametrize("seats", [-1, 0, 1, 7, 100])
def test_seats_outside_2_to_the_paytable_s_most_are_refused(seats: int) -> None:
    assert Table().refused(open_duel(seats=seats)) == errors.SEATS_OUT_OF_RANGE


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_2_to_the_paytable_s_most_seats_open(seats: int) -> None:
    assert Table().open(seats=seats).state.opened is not None


def test_a_duel_opens_once() -> None:
    table = Table().open()
    assert table.refused(open_duel()) == errors.DUEL_ALREADY_OPEN


@pytest.mark.parametrize(
    "command",
    [
        TakeSeat("player-0", T0),
        DealSeat("player-0", "game-0", T0 + GAME_TIME),
        FinishSeat(0, None, 0, 0, "not-dealt", instant(T0)),
        Settle(SEED_HEX),
        Cancel("fault", voided=True, server_seed=SEED_HEX),
    ],
    ids=lambda c: type(c).__name__,
)
def test_nothing_happens_to_a_duel_not_opened(command: DuelCommand) -> None:
    assert Table().refused(command) == errors.DUEL_NOT_OPEN


# --- seats ----------------------------------------------------------------------------------------


def test_a_seat_records_its_player_and_fee_and_the_duel_fills() -> None:
    table = Table().open(seats=3, fee=200)
    first = table.do(TakeSeat("alice", at(1)))
    assert first == SeatTaken(0, "alice", 200, instant(at(1)))
    assert (table.state.status, table.state.pot) == ("open", 200)
    assert table.state.deal_by is None
    table.do(TakeSeat("bob", at(2)))
    assert table.state.status == "open"
    last = table.do(TakeSeat("carol", at(3.5)))
    assert last == SeatTaken(2, "carol", 200, instant(at(3.5)))
    assert (table.state.status, table.state.pot) == ("full", 600)
    assert [s.player_id for s in table.state.seats] == ["alice", "bob", "carol"]
    seat = table.state.seat_of("bob")
    assert seat is not None
    assert (seat.seat, seat.fee, seat.game_id, seat.result) == (1, 200, None, None)
    assert table.state.seat_of("dave") is None


def test_a_player_takes_one_seat_of_a_duel() -> None:
    table = Table().open(seats=3)
    table.do(TakeSeat("alice", at(1)))
    assert table.refused(TakeSeat("alice", at(2))) == errors.ALREADY_SEATED


def test_a_full_duel_seats_no_one_else() -> None:
    table = Table().open(seats=2).fill()
    assert table.refused(TakeSeat("late", at(20))) == errors.DUEL_FULL
    assert table.refused(TakeSeat(PLAYERS[0], at(20))) == errors.DUEL_FULL


@pytest.mark.parametrize("late", [FILL, FILL + timedelta(microseconds=1), FILL * 2])
def test_no_seat_is_taken_at_or_after_the_fill_by_time(late: timedelta) -> None:
    table = Table().open(seats=2)
    table.do(TakeSeat("alice", at(1)))
    assert table.refused(TakeSeat("bob", T0 + late)) == errors.DUEL_EXPIRED


def test_a_seat_is_taken_up_to_just_before_the_fill_by_time() -> None:
    table = Table().open(seats=2)
    table.do(TakeSeat("alice", at(1)))
    table.do(TakeSeat("bob", T0 + FILL - timedelta(microseconds=1)))
    assert table.state.status == "full"


# --- dealing each seat's game ---------------------------------------------------------------------


def test_a_seated_player_deals_their_seat_s_game_once_the_duel_is_full() -> None:
    table = Table().open(seats=2).fill()
    deadline = at(60) + GAME_TIME
    dealt = table.do(DealSeat(PLAYERS[1], "game-b", deadline))
    assert dealt == SeatDealt(1, "game-b", instant(deadline))
    seat = table.state.seats[1]
    assert (seat.game_id, seat.deadline) == ("game-b", instant(deadline))
    assert table.state.seats[0].game_id is None


def test_only_a_seated_player_deals_a_game() -> None:
    table = Table().open(seats=2).fill()
    assert table.refused(DealSeat("stranger", "game-x", at(60) + GAME_TIME)) == errors.NOT_SEATED


def test_no_game_is_dealt_before_the_duel_is_full() -> None:
    table = Table().open(seats=3)
    table.do(TakeSeat("alice", at(1)))
    table.do(TakeSeat("bob", at(2)))
    assert table.refused(DealSeat("alice", "game-a", at(3) + GAME_TIME)) == errors.DUEL_NOT_FULL


def test_a_seat_s_game_is_dealt_once() -> None:
    table = Table().open().fill()
    table.do(DealSeat(PLAYERS[0], "game-a", at(60) + GAME_TIME))
    again = DealSeat(PLAYERS[0], "game-a2", at(61) + GAME_TIME)
    assert table.refused(again) == errors.SEAT_ALREADY_DEALT


def test_a_seat_deals_within_the_fill_time_counted_from_the_moment_the_duel_filled() -> None:
    table = Table().open().fill()
    filled = at(11)  # the last seat's taken_at
    deal_by = filled + FILL
    assert table.state.deal_by == deal_by
    # From deal_by on the seat forfeits, so it can no longer deal.
    for late in (deal_by, deal_by + timedelta(microseconds=1), deal_by + FILL):
        refused = DealSeat(PLAYERS[0], "game-a", late + GAME_TIME)
        assert table.refused(refused) == errors.DEAL_EXPIRED
    just_in_time = deal_by - timedelta(microseconds=1)
    dealt = table.do(DealSeat(PLAYERS[1], "game-b", just_in_time + GAME_TIME))
    assert dealt == SeatDealt(1, "game-b", instant(just_in_time + GAME_TIME))


# --- finishing seats ------------------------------------------------------------------------------


def test_a_seat_finishes_with_its_own_game_s_points_once() -> None:
    table = Table().open().fill().deal_all()
    finished = table.do(FinishSeat(0, "game-0", 2_345, 40, "timeout", instant(at(400))))
    assert finished == SeatFinished(0, "game-0", 2_345, 40, "timeout", instant(at(400)))
    assert table.state.seats[0].result == finished
    assert not table.state.all_finished
    again = FinishSeat(0, "game-0", 2_345, 40, "timeout", instant(at(400)))
    assert table.refused(again) == errors.SEAT_FINISHED


@pytest.mark.parametrize(
    ("seat", "game_id"),
    [(0, "game-1"), (1, "game-0"), (0, "game-x"), (2, "game-2"), (-1, "game-1"), (0, None)],
)
def test_a_seat_finishes_only_with_the_game_dealt_to_it(seat: int, game_id: str | None) -> None:
    table = Table().open().fill().deal_all()
    command = FinishSeat(seat, game_id, 0, 0, "player", instant(at(200)))
    assert table.refused(command) == errors.NOT_SEATED


def test_a_seat_never_dealt_forfeits_with_no_points_once_its_time_to_deal_ran_out() -> None:
    table = Table().open().fill()
    table.do(DealSeat(PLAYERS[0], "game-0", at(60) + GAME_TIME))
    deal_by = table.state.deal_by
    assert deal_by is not None
    early = FinishSeat(1, None, 0, 0, "not-dealt", instant(deal_by - timedelta(microseconds=1)))
    assert table.refused(early) == errors.DUEL_NOT_EXPIRED
    scored = FinishSeat(1, None, 10, 0, "not-dealt", instant(deal_by))
    assert table.refused(scored) == errors.NOT_SEATED
    carded = FinishSeat(1, None, 0, 3, "not-dealt", instant(deal_by))
    assert table.refused(carded) == errors.NOT_SEATED
    forfeit = table.do(FinishSeat(1, None, 0, 0, "not-dealt", instant(deal_by)))
    assert forfeit == SeatFinished(1, None, 0, 0, "not-dealt", instant(deal_by))
    # The forfeited seat can no longer deal its game.
    late = DealSeat(PLAYERS[1], "game-1", deal_by + GAME_TIME)
    assert table.refused(late) == errors.SEAT_ALREADY_DEALT


def test_no_seat_forfeits_while_the_duel_is_still_filling() -> None:
    table = Table().open(seats=3)
    table.do(TakeSeat("alice", at(1)))
    forfeit = FinishSeat(0, None, 0, 0, "not-dealt", instant(T0 + FILL * 5))
    assert table.refused(forfeit) == errors.DUEL_NOT_EXPIRED


# --- settling -------------------------------------------------------------------------------------


def test_a_duel_settles_only_once_every_seat_has_finished() -> None:
    table = Table().open(seats=3).fill()
    assert table.refused(Settle(SEED_HEX)) == errors.DUEL_NOT_FINISHED
    table.deal_all()
    assert table.refused(Settle(SEED_HEX)) == errors.DUEL_NOT_FINISHED
    table.finish(0, 100, 200).finish(1, 200, 210)
    assert table.refused(Settle(SEED_HEX)) == errors.DUEL_NOT_FINISHED
    table.finish(2, 50, 220)
    assert table.state.all_finished
    settled(table)


def test_the_best_score_takes_the_pot_less_the_rake() -> None:
    table = Table().open(seats=3, fee=500).played((1_200, 300), (3_400, 310), (900, 250))
    event = settled(table)
    assert event == DuelSettled(
        pot=1_500,
        rake=150,
        payouts=(Payout(1, PLAYERS[1], 1_350),),
        server_seed=SEED_HEX,
        deck=None,
    )
    assert table.state.status == "settled"
    assert table.state.ending == event
    assert table.state.pot == 0  # paid out
    assert d.winners(table.state) == [1]


@pytest.mark.parametrize(
    ("pot", "rake", "expected"),
    [
        (200, "0.1", 20),
        (300, "0.0334", 10),  # 10.02: rounded down
        (333, "0.1", 33),  # 33.3
        (1_999, "0.15", 299),  # 299.85: never rounded up
        (500, "0", 0),
        (500, "0.9999", 499),
        (7, "0.1", 0),
    ],
)
def test_the_rake_is_the_pot_times_the_rake_rounded_down(
    pot: int, rake: str, expected: int
) -> None:
    assert d.rake_of(pot, rake) == expected


def test_a_two_way_tie_splits_the_prize_evenly() -> None:
    table = Table().open(seats=3, fee=100).played((500, 100), (800, 200), (800, 150))
    event = settled(table)
    assert (event.pot, event.rake) == (300, 30)
    assert event.payouts == (Payout(1, PLAYERS[1], 135), Payout(2, PLAYERS[2], 135))


def test_an_indivisible_unit_goes_to_the_earliest_finisher_by_time_not_by_seat() -> None:
    # Pot 300, rake 15 (0.05), prize 285 between seats 0 and 2: seat 2 finished first.
    table = Table().open(seats=3, fee=100, rake="0.05").played((700, 260.5), (100, 100), (700, 260))
    assert d.winners(table.state) == [2, 0]
    event = settled(table)
    assert (event.pot, event.rake) == (300, 15)
    assert event.payouts == (Payout(0, PLAYERS[0], 142), Payout(2, PLAYERS[2], 143))


def test_indivisible_units_go_one_each_to_the_earliest_finishers() -> None:
    # Pot 300, rake 10 (0.0334), prize 290 three ways: 97, 97, 96 by finishing order.
    table = Table().open(seats=3, fee=100, rake="0.0334").played((60, 30), (60, 10), (60, 20))
    assert d.winners(table.state) == [1, 2, 0]
    event = settled(table)
    assert event.rake == 10
    assert event.payouts == (
        Payout(0, PLAYERS[0], 96),
        Payout(1, PLAYERS[1], 97),
        Payout(2, PLAYERS[2], 97),
    )


def test_a_tie_finished_at_the_same_moment_goes_by_seat_order() -> None:
    table = Table().open(seats=2, fee=100, rake="0.05").played((10, 50), (10, 50))
    event = settled(table)  # prize 190: even
    assert event.payouts == (Payout(0, PLAYERS[0], 95), Payout(1, PLAYERS[1], 95))
    odd = Table().open(seats=3, fee=100, rake="0.05").played((10, 50), (0, 1), (10, 50))
    assert d.winners(odd.state) == [0, 2]
    assert settled(odd).payouts == (Payout(0, PLAYERS[0], 143), Payout(2, PLAYERS[2], 142))


def test_negative_scores_still_have_a_best() -> None:
    table = Table().open(seats=2).played((-60, 300), (-20, 300))
    assert settled(table).payouts == (Payout(1, PLAYERS[1], 180),)


def _with_forfeits(points: dict[int, int], seats: int = 3) -> Table:
    """A full duel where the seats in ``points`` played (and scored that), the rest forfeited."""
    table = Table().open(seats=seats).fill()
    for seat, score in points.items():
        table.do(DealSeat(PLAYERS[seat], f"game-{seat}", at(60) + GAME_TIME))
        table.finish(seat, score, 200 + seat)
    deal_by = table.state.deal_by
    assert deal_by is not None
    for seat in range(seats):
        if seat not in points:
            table.do(FinishSeat(seat, None, 0, 0, "not-dealt", instant(deal_by)))
    return table


def test_a_seat_that_never_dealt_cannot_beat_a_seat_that_played() -> None:
    # Seat 0 played and lost points (-40); seats 1 and 2 never dealt (0): seat 0 still wins.
    table = _with_forfeits({0: -40})
    assert d.winners(table.state) == [0]
    assert settled(table).payouts == (Payout(0, PLAYERS[0], 270),)


def test_the_best_of_the_seats_that_played_wins_over_forfeits() -> None:
    table = _with_forfeits({0: 35, 2: 900})
    assert d.winners(table.state) == [2]
    assert settled(table).payouts == (Payout(2, PLAYERS[2], 270),)


def test_when_no_seat_played_the_forfeits_tie_and_share_the_prize() -> None:
    table = _with_forfeits({})
    assert d.winners(table.state) == [0, 1, 2]  # all forfeited at deal_by: seat order
    event = settled(table)
    assert (event.pot, event.rake) == (300, 30)
    assert event.payouts == tuple(Payout(s, PLAYERS[s], 90) for s in range(3))


def test_the_prize_shares_split_evenly_with_the_first_listed_taking_the_odd_units() -> None:
    assert d.prize_shares(270, [1]) == {1: 270}
    assert d.prize_shares(270, [2, 0]) == {2: 135, 0: 135}
    assert d.prize_shares(11, [4, 1, 3]) == {4: 4, 1: 4, 3: 3}
    assert d.prize_shares(1, [0, 1]) == {0: 1, 1: 0}


def test_a_settlement_with_a_prize_smaller_than_the_tie_pays_only_whole_units() -> None:
    # Pot 200, rake 199 (0.9999 rounded down), prize 1 between two: the earliest finisher.
    table = Table().open(seats=2, rake="0.9999").played((5, 70), (5, 60))
    event = settled(table)
    assert (event.rake, event.payouts) == (199, (Payout(1, PLAYERS[1], 1),))


# --- cancelling -----------------------------------------------------------------------------------


def test_a_duel_not_filled_by_its_time_is_cancelled_and_every_fee_refunded() -> None:
    table = Table().open(seats=3, fee=200)
    table.do(TakeSeat("alice", at(1)))
    table.do(TakeSeat("bob", at(2)))
    early = Cancel(
        "not-filled", voided=False, server_seed=SEED_HEX, now=T0 + FILL - timedelta(microseconds=1)
    )
    assert table.refused(early) == errors.DUEL_NOT_EXPIRED
    no_clock = Cancel("not-filled", voided=False, server_seed=SEED_HEX)
    assert table.refused(no_clock) == errors.DUEL_NOT_EXPIRED
    event = table.do(Cancel("not-filled", voided=False, server_seed=SEED_HEX, now=T0 + FILL))
    assert event == DuelCancelled(
        reason="not-filled",
        refunds=(Payout(0, "alice", 200), Payout(1, "bob", 200)),
        voided=False,
        server_seed=SEED_HEX,
        deck=None,
    )
    assert table.state.status == "cancelled"
    assert table.state.pot == 0


def test_a_duel_nobody_joined_is_cancelled_with_nothing_to_refund() -> None:
    table = Table().open()
    event = table.do(Cancel("not-filled", voided=False, server_seed=SEED_HEX, now=T0 + FILL))
    assert isinstance(event, DuelCancelled)
    assert event.refunds == ()


def test_a_full_duel_is_not_cancelled_as_not_filled() -> None:
    table = Table().open().fill()
    late = Cancel("not-filled", voided=False, server_seed=SEED_HEX, now=T0 + FILL * 10)
    assert table.refused(late) == errors.DUEL_NOT_EXPIRED


@pytest.mark.parametrize("stage", ["open", "filling", "full", "dealt", "partly finished", "done"])
def test_an_operator_voids_a_duel_at_any_time_before_its_end(stage: str) -> None:
    table = Table().open(seats=2, fee=1_000)
    if stage != "open":
        table.do(TakeSeat(PLAYERS[0], at(1)))
    if stage not in ("open", "filling"):
        table.fill()
    if stage in ("dealt", "partly finished", "done"):
        table.deal_all()
    if stage in ("partly finished", "done"):
        table.finish(0, 500, 200)
    if stage == "done":
        table.finish(1, 600, 210)
    event = table.do(Cancel("operator: table fault", voided=True, server_seed=SEED_HEX, now=T0))
    assert isinstance(event, DuelCancelled)
    assert event.voided
    assert event.refunds == tuple(Payout(s.seat, s.player_id, 1_000) for s in table.state.seats)
    assert sum(r.amount for r in event.refunds) == 1_000 * len(table.state.seats)
    assert table.state.status == "cancelled"


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_a_cancellation_needs_a_storable_reason(reason: str) -> None:
    table = Table().open().fill()
    assert table.refused(Cancel(reason, voided=True, server_seed=SEED_HEX)) == (
        errors.INVALID_REASON
    )


# --- nothing after the end ------------------------------------------------------------------------


def _ended(how: str) -> Table:
    table = Table().open().fill()
    if how == "settled":
        table.played((100, 100), (200, 200))
        settled(table)
    else:
        table.do(Cancel("fault", voided=True, server_seed=SEED_HEX))
    return table


@pytest.mark.parametrize("how", ["settled", "cancelled"])
@pytest.mark.parametrize(
    "command",
    [
        TakeSeat("newcomer", at(5)),
        DealSeat(PLAYERS[0], "game-9", at(50) + GAME_TIME),
        FinishSeat(0, "game-0", 1, 1, "player", instant(at(300))),
        Settle(SEED_HEX),
        Cancel("again", voided=True, server_seed=SEED_HEX),
        Cancel("not-filled", voided=False, server_seed=SEED_HEX, now=T0 + FILL * 9),
    ],
    ids=lambda c: type(c).__name__,
)
def test_a_settled_or_cancelled_duel_accepts_nothing_more(how: str, command: DuelCommand) -> None:
    table = _ended(how)
    assert table.refused(command) == errors.DUEL_OVER
    assert table.refused(open_duel()) == errors.DUEL_ALREADY_OPEN


# --- evolve and fold ------------------------------------------------------------------------------


def test_evolve_never_validates_what_was_recorded() -> None:
    """Events no decider would make still fold (recorded history always replays)."""
    opened = d.decide(d.INITIAL, open_duel(seats=2))[0]
    odd: list[DuelEvent] = [
        SeatDealt(0, "game-early", instant(at(5))),  # before any seat
        SeatFinished(5, "game-5", 10, 1, "player", instant(at(6))),  # no such seat
        opened,
        SeatTaken(0, "alice", 100, instant(at(1))),
        SeatTaken(1, "alice", 999, instant(at(2))),  # the same player, another fee
        SeatTaken(2, "bob", 100, instant(at(3))),  # beyond the seats
        SeatFinished(7, None, 0, 0, "not-dealt", instant(at(4))),
        DuelSettled(1, 0, (Payout(0, "x", 1),), None),  # a pot nobody paid into
    ]
    state = d.fold(odd)
    assert state.version == len(odd)
    assert len(state.seats) == 3
    assert state.seats[1].fee == 999
    assert all(s.result is None for s in state.seats)
    assert state.status == "settled"
    cancelled = d.evolve(d.INITIAL, DuelCancelled("x", (), True, None))
    assert (cancelled.status, cancelled.version) == ("cancelled", 1)


def test_the_state_is_the_fold_of_the_events_step_by_step() -> None:
    table = Table().open(seats=3).played((10, 100), (20, 110), (20, 105))
    settled(table)
    steps = [d.INITIAL]
    for event in table.events:
        steps.append(d.evolve(steps[-1], event))
    assert steps[-1] == table.state == d.fold(table.events)
    assert [s.version for s in steps] == list(range(len(table.events) + 1))
    assert [s.status for s in steps[1:5]] == ["open", "open", "open", "full"]
    # Folding from any point on gives the same state.
    for n in range(len(table.events) + 1):
        assert d.fold(table.events[n:], steps[n]) == table.state


# --- a property: the money always adds up ---------------------------------------------------------

RAKES = st.sampled_from(["0", "0.01", "0.05", "0.1", "0.125", "0.2", "0.3333", "0.5", "0.9999"])


@settings(max_examples=200, deadline=None)
@given(
    seats=st.integers(2, 6),
    fee=st.sampled_from(TABLE.fees),
    rake=RAKES,
    data=st.data(),
)
def test_payouts_and_rake_always_make_the_pot_and_go_to_best_scores(
    seats: int, fee: int, rake: str, data: st.DataObject
) -> None:
    points = data.draw(st.lists(st.integers(-200, 400), min_size=seats, max_size=seats))
    ended = data.draw(st.lists(st.integers(0, 300), min_size=seats, max_size=seats))
    # Now and then a seat never deals its game and forfeits (0 points, at its deal-by time).
    played = data.draw(
        st.lists(st.sampled_from([True] * 4 + [False]), min_size=seats, max_size=seats)
    )
    table = Table().open(seats=seats, fee=fee, rake=rake).fill()
    deal_by = table.state.deal_by
    assert deal_by is not None
    for seat in range(seats):
        if played[seat]:
            table.do(DealSeat(PLAYERS[seat], f"game-{seat}", at(100) + GAME_TIME))
            table.finish(seat, points[seat], ended[seat])
        else:
            table.do(FinishSeat(seat, None, 0, 0, "not-dealt", instant(deal_by)))
            points[seat], ended[seat] = 0, int((deal_by - T0).total_seconds())
    event = settled(table)
    pot = fee * seats
    assert event.pot == pot
    assert event.rake == int(Fraction(pot) * Fraction(Decimal(rake)))  # floor: both positive
    assert sum(p.amount for p in event.payouts) + event.rake == pot
    # The best score among the seats that played (every seat's, if none did).
    contenders = [s for s in range(seats) if played[s]] or list(range(seats))
    best = max(points[s] for s in contenders)
    tied = [s for s in contenders if points[s] == best]
    assert {p.seat for p in event.payouts} <= set(tied)
    assert all(p.amount > 0 for p in event.payouts)
    assert all(p.player_id == PLAYERS[p.seat] for p in event.payouts)
    prize = pot - event.rake
    amounts = {p.seat: p.amount for p in event.payouts}
    shares = [amounts.get(s, 0) for s in tied]
    assert max(shares) - min(shares) <= 1
    # The odd units went to the earliest finishers (then the lower seat).
    order = sorted(tied, key=lambda s: (ended[s], s))
    assert [amounts.get(s, 0) for s in order] == sorted(shares, reverse=True)
    assert sum(shares) == prize
