"""Timed games on the server's clock (seed 003's classic duel, ``klondike-duel``): the clock
started at the deal, nothing accepted after the deadline, a won game ending itself, the timeout
ending, the duel game's own rules (draw three, unlimited passes, explicit turn, no undo), a duel
game never revealing its seed nor paying anything itself, old events read back, and the audit
of a duel game with its duel's revealed seed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from events.catalog import (
    AutoCompleted,
    CardDrawn,
    CardMoved,
    CardTurned,
    ClockStarted,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    StockRecycled,
    Voided,
)
from events.codec import decode, decode_game, encode, upcast
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.core.clock import instant, parse_instant
from service.core.game_verification import CHECKS, Revealed, verify_game
from service.core.paytable import default_paytables
from service.errors import RuleViolation, TimeUp
from service.games import game_named
from service.games.klondike import KLONDIKE_DUEL, VEGAS_DRAW3
from service.rules.cards import Card
from tests.builders import GBP, SEED, easy_deck, postings_for, recorded, turnable_deck

T0 = datetime(2030, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
LIMIT = timedelta(seconds=300)
DEADLINE = T0 + LIMIT
TICK = timedelta(microseconds=1)
SOON = T0 + timedelta(seconds=10)
DECK = shuffle.derive_deck(SEED)
PAYTABLES = default_paytables()


class Duel:
    """A klondike-duel game in play: the state, every event and the server's secret."""

    def __init__(self, deck: Sequence[Card] | None = None) -> None:
        """Dealt at T0 from ``deck`` (a certification deck salted with SEED), else from SEED."""
        if deck is None:
            self.deck = DECK
            algorithm, commitment = shuffle.ALGORITHM, shuffle.commitment(SEED)
        else:
            self.deck = tuple(deck)
            algorithm = shuffle.CERTIFICATION_DECK
            commitment = shuffle.deck_commitment(self.deck, SEED)
        self.events = g.decide(g.INITIAL, start_duel_game(self.deck, algorithm, commitment))
        self.game = g.fold(self.events)
        self.sealed = g.hidden_cards(KLONDIKE_DUEL, self.deck)

    def decide(self, command: g.Command, now: datetime | None = SOON) -> list[GameEvent]:
        return g.decide(self.game, command, self.sealed, None, now)

    def play(self, *commands: g.Command, now: datetime | None = SOON) -> list[GameEvent]:
        played: list[GameEvent] = []
        for command in commands:
            new = self.decide(command, now)
            self.game = g.fold(new, self.game)
            self.events += new
            played += new
        return played

    def refused(self, command: g.Command, now: datetime | None = SOON) -> RuleViolation:
        before, count = self.game, len(self.events)
        with pytest.raises(RuleViolation) as info:
            self.decide(command, now)
        assert self.game is before
        assert len(self.events) == count
        return info.value


def start_duel_game(
    deck: Sequence[Card],
    algorithm: str = shuffle.ALGORITHM,
    commitment: str | None = None,
    *,
    variant: str = "klondike-duel",
    duel_id: str | None = "duel-1",
    now: datetime | None = T0,
) -> g.StartGame:
    return g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant=variant,
        stake=520,  # on the game paytable's grid, for the ordinary games dealt here
        paytable=GBP,
        deck=tuple(deck),
        shuffle_algorithm=algorithm,
        seed_commitment=commitment or shuffle.commitment(SEED),
        certification=algorithm == shuffle.CERTIFICATION_DECK,
        duel_id=duel_id,
        now=now,
    )


def _greedy(commands: Sequence[g.PlayCommand]) -> g.PlayCommand:
    """Up to a foundation if anything goes, else turn a card, else draw."""
    for command in commands:
        if isinstance(command, g.MoveCards) and command.target.startswith("foundation"):
            return command
    turns = [c for c in commands if isinstance(c, g.Turn)]
    return turns[0] if turns else g.Draw()


def _win(duel: Duel, now: datetime) -> None:
    """Play the easy deck to the end, every command at ``now``."""
    while not duel.game.is_over:
        duel.play(_greedy(g.legal_commands(duel.game)), now=now)


# --- the clock ------------------------------------------------------------------------------


def test_klondike_duel_is_the_seed_003_game() -> None:
    rules = game_named("klondike-duel")
    assert rules is KLONDIKE_DUEL
    assert (rules.draw_count, rules.passes, rules.explicit_turn) == (3, None, True)
    assert (rules.undo, rules.time_limit, rules.duel) == (False, 300, True)
    assert "undo" not in rules.actions
    assert VEGAS_DRAW3.time_limit is None
    assert not VEGAS_DRAW3.duel


def test_the_deal_starts_the_clock_with_a_deadline_300_seconds_later() -> None:
    duel = Duel()
    placed, dealt, clock = duel.events[:3]
    assert isinstance(placed, StakePlaced)
    assert placed.duel_id == "duel-1"
    assert isinstance(dealt, Dealt)
    assert clock == ClockStarted(
        started_at="2030-01-01T12:00:00.123456Z", deadline="2030-01-01T12:05:00.123456Z"
    )
    assert parse_instant(clock.deadline) - parse_instant(clock.started_at) == LIMIT
    assert duel.game.info is not None
    assert duel.game.info.deadline == DEADLINE
    assert duel.game.status == "in_progress"
    assert [decode_game(*encode(e)) for e in duel.events] == duel.events


def test_the_clock_is_recorded_in_utc_whatever_zone_the_server_clock_reads() -> None:
    paris = T0.astimezone(ZoneInfo("Europe/Paris"))
    events = g.decide(g.INITIAL, start_duel_game(DECK, now=paris))
    assert events[2] == ClockStarted(instant(T0), instant(DEADLINE))


def test_an_untimed_game_starts_no_clock() -> None:
    events = g.decide(g.INITIAL, start_duel_game(DECK, variant="vegas-draw3", duel_id=None))
    assert not any(isinstance(e, ClockStarted) for e in events)
    info = g.fold(events).info
    assert info is not None
    assert info.deadline is None


def test_a_timed_game_is_dealt_and_decided_only_on_the_server_s_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        g.decide(g.INITIAL, start_duel_game(DECK, now=None))
    duel = Duel()
    with pytest.raises(ValueError, match="clock"):
        duel.decide(g.Draw(), now=None)
    with pytest.raises(ValueError, match="clock"):
        duel.decide(g.Collect(), now=None)


def test_a_command_at_the_deadline_itself_is_accepted() -> None:
    duel = Duel()
    (drawn,) = duel.play(g.Draw(), now=DEADLINE)
    assert isinstance(drawn, CardDrawn)


@pytest.mark.parametrize(
    "command",
    [g.Draw(), g.Recycle(), g.MoveCards("waste", "foundation"), g.Turn("tableau:1"), g.Collect()],
    ids=lambda c: type(c).__name__,
)
def test_every_command_a_microsecond_after_the_deadline_is_refused(command: g.Command) -> None:
    duel = Duel()
    duel.play(g.Draw())
    refusal = duel.refused(command, now=DEADLINE + TICK)
    assert isinstance(refusal, TimeUp)
    assert refusal.code == errors.TIME_UP == "time-up"
    assert refusal.deadline == instant(DEADLINE)
    assert duel.game.status == "in_progress"


def test_time_up_is_a_rule_violation_refused_long_after_too() -> None:
    duel = Duel()
    refusal = duel.refused(g.Draw(), now=DEADLINE + timedelta(days=3))
    assert isinstance(refusal, TimeUp)


def test_a_winning_move_ends_a_timed_game_at_that_moment() -> None:
    duel = Duel(easy_deck())
    now = T0 + timedelta(seconds=61, microseconds=5)
    last: list[GameEvent] = []
    while not duel.game.is_over:
        assert duel.game.status == "in_progress"  # never "complete": a win ends it at once
        last = duel.play(_greedy(g.legal_commands(duel.game)), now=now)
    # The command that won (the last turn, after which the rules play the rest up) recorded
    # its own play, then the ending, at that moment.
    assert [type(e) for e in last] == [CardTurned, AutoCompleted, Collected]
    assert last[-1] == Collected(
        reason="finished",
        winnings=0,
        currency="GBP",
        units=52,
        server_seed=None,
        deck=None,
        ended_at=instant(now),
    )
    assert sum(isinstance(e, Collected) for e in duel.events) == 1
    assert duel.game.status == "collected"
    assert duel.game.units == 52
    assert duel.game.payout == 0
    assert duel.game.end_reason == "finished"
    assert duel.refused(g.Draw(), now=now).code == errors.GAME_OVER
    assert duel.refused(g.Collect(), now=now).code == errors.GAME_OVER


def test_a_win_in_an_untimed_game_still_waits_for_the_player_to_collect() -> None:
    events = g.decide(g.INITIAL, start_duel_game(easy_deck(), variant="vegas-draw3", duel_id=None))
    game = g.fold(events)
    sealed = g.hidden_cards(VEGAS_DRAW3, easy_deck())
    while game.status == "in_progress":
        new = g.decide(game, _greedy(g.legal_commands(game)), sealed, None, SOON)
        assert not any(isinstance(e, Collected) for e in new)
        game = g.fold(new, game)
    assert game.status == "complete"


def test_the_player_s_collect_records_the_moment_it_ended() -> None:
    duel = Duel()
    duel.play(g.Draw())
    now = T0 + timedelta(seconds=42, microseconds=7)
    (collected,) = duel.play(g.Collect(), now=now)
    assert collected == Collected("player", 0, "GBP", 0, None, None, instant(now))
    assert duel.game.end_reason == "player"


def test_a_collect_at_the_deadline_itself_is_the_player_s() -> None:
    duel = Duel()
    (collected,) = duel.play(g.Collect(), now=DEADLINE)
    assert isinstance(collected, Collected)
    assert (collected.reason, collected.ended_at) == ("player", instant(DEADLINE))


@pytest.mark.parametrize("early", [T0, SOON, DEADLINE - TICK])
def test_a_timeout_before_the_deadline_is_refused(early: datetime) -> None:
    duel = Duel()
    refusal = duel.refused(g.Collect("timeout"), now=early)
    assert refusal.code == errors.INVALID_REASON
    assert not isinstance(refusal, TimeUp)


@pytest.mark.parametrize(
    "late", [DEADLINE, DEADLINE + TICK, DEADLINE + timedelta(hours=1)], ids=["at", "tick", "hour"]
)
def test_a_timeout_at_or_after_the_deadline_records_the_deadline_as_its_end(
    late: datetime,
) -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Draw())
    units = duel.game.units
    (collected,) = duel.play(g.Collect("timeout"), now=late)
    assert collected == Collected("timeout", 0, "GBP", units, None, None, instant(DEADLINE))
    assert duel.game.status == "collected"
    assert duel.game.end_reason == "timeout"


def test_an_untimed_game_records_no_end_time_and_knows_no_finished_reason() -> None:
    events = g.decide(g.INITIAL, start_duel_game(DECK, variant="vegas-draw3", duel_id=None))
    game = g.fold(events)
    (collected,) = g.decide(game, g.Collect(server_seed=SEED.hex()), (), None, SOON)
    assert isinstance(collected, Collected)
    assert collected.ended_at is None
    with pytest.raises(RuleViolation) as info:
        g.decide(game, g.Collect("finished", server_seed=SEED.hex()))
    assert info.value.code == errors.INVALID_REASON


def test_an_operator_may_void_a_timed_game_after_its_deadline() -> None:
    duel = Duel()
    (voided,) = duel.play(g.Void("operator: table fault"), now=DEADLINE + timedelta(hours=2))
    assert voided == Voided("operator: table fault", 0, "GBP", None, None)
    assert duel.game.status == "voided"


# --- the duel game's own rules ---------------------------------------------------------------


def test_klondike_duel_has_no_undo() -> None:
    duel = Duel()
    duel.play(g.Draw())
    assert duel.game.undo is None
    assert g.Undo() not in g.legal_commands(duel.game)
    refusal = duel.refused(g.Undo())
    assert refusal.code == errors.UNDO_NOT_ALLOWED
    assert "no undo" in refusal.detail


def test_klondike_duel_turns_cards_only_when_the_player_turns_them() -> None:
    duel = Duel(turnable_deck())
    (moved,) = duel.play(g.MoveCards("tableau:1", "foundation"))
    assert moved == CardMoved("tableau:1", "foundation:0", ("AS",))  # and nothing turned by itself
    assert duel.game.table is not None
    column = duel.game.table.pile("tableau:1")
    assert (len(column.cards), column.down) == (1, 1)
    assert g.Turn("tableau:1") in g.legal_commands(duel.game)
    (turned,) = duel.play(g.Turn("tableau:1"))
    assert turned == CardTurned("tableau:1", duel.deck[1])
    assert duel.refused(g.Turn("tableau:1")).code == errors.TOP_CARD_FACE_UP


def test_klondike_duel_draws_three_and_recycles_without_limit() -> None:
    duel = Duel()
    (first,) = duel.play(g.Draw())
    assert isinstance(first, CardDrawn)
    assert first.cards == DECK[28:31]
    for _ in range(6):  # six passes: beyond any Vegas limit
        while g.Draw() in g.legal_commands(duel.game):
            drawn = duel.play(g.Draw())
            assert all(isinstance(e, CardDrawn) and len(e.cards) == 3 for e in drawn)
        (recycled,) = duel.play(g.Recycle())
        assert recycled == StockRecycled(24, None)
    assert duel.game.table is not None
    assert duel.game.table.passes_left is None
    assert g.Draw() in g.legal_commands(duel.game)


# --- money and the seed: the duel's, not the game's --------------------------------------------


def test_a_duel_game_cannot_reveal_a_seed_or_a_deck() -> None:
    duel = Duel()
    for command in (
        g.Collect(server_seed=SEED.hex()),
        g.Collect(server_seed=SEED.hex(), deck=DECK),
        g.Collect(deck=DECK),
        g.Collect("timeout", server_seed=SEED.hex()),
        g.Void("fault", server_seed=SEED.hex()),
    ):
        late = DEADLINE if isinstance(command, g.Collect) and command.reason == "timeout" else SOON
        assert duel.refused(command, now=late).code == errors.SEED_MISMATCH
    (collected,) = duel.play(g.Collect())
    assert isinstance(collected, Collected)
    assert (collected.server_seed, collected.deck) == (None, None)
    assert duel.game.server_seed is None


def test_a_certification_duel_game_cannot_reveal_its_deck_either() -> None:
    duel = Duel(easy_deck())
    refusal = duel.refused(g.Collect(server_seed=SEED.hex(), deck=easy_deck()))
    assert refusal.code == errors.SEED_MISMATCH


def test_klondike_duel_is_dealt_only_to_a_duel_seat() -> None:
    with pytest.raises(RuleViolation) as info:
        g.decide(g.INITIAL, start_duel_game(DECK, duel_id=None))
    assert info.value.code == errors.ACTION_NOT_ALLOWED


@pytest.mark.parametrize("variant", ["vegas-draw1", "vegas-draw3", "klondike", "golf"])
def test_an_ordinary_game_is_not_dealt_to_a_duel_seat(variant: str) -> None:
    rules = game_named(variant)
    deck = shuffle.derive_deck(SEED, None, rules.decks)
    with pytest.raises(RuleViolation) as info:
        g.decide(g.INITIAL, start_duel_game(deck, variant=variant, duel_id="duel-1"))
    assert info.value.code == errors.ACTION_NOT_ALLOWED


def test_a_duel_game_s_stake_is_not_held_to_the_game_paytable_grid() -> None:
    # A seat's stake is its duel's entry fee, which the duel paytable offers, not the grid.
    with pytest.raises(RuleViolation):
        GBP.check_stake(101)
    command = start_duel_game(DECK)
    events = g.decide(g.INITIAL, replace(command, stake=101))
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    assert (placed.stake, placed.duel_id) == (101, "duel-1")


def test_a_duel_game_pays_nothing_itself_however_many_cards_are_up() -> None:
    duel = Duel(easy_deck())
    while duel.game.units < 10:
        duel.play(_greedy(g.legal_commands(duel.game)))
    assert duel.game.units >= 10
    assert (duel.game.winnings, duel.game.win_rate) == (0, 0)
    (collected,) = duel.play(g.Collect())
    assert isinstance(collected, Collected)
    assert collected.winnings == 0
    assert collected.units == duel.game.units >= 10
    assert duel.game.payout == 0


def test_a_voided_duel_game_refunds_nothing_itself() -> None:
    duel = Duel()
    (voided,) = duel.play(g.Void("fault"))
    assert isinstance(voided, Voided)
    assert voided.refund == 0
    assert duel.game.refund == 0


# --- old events read back --------------------------------------------------------------------

STAKE_PLACED_V2 = {
    "game_id": "g-1",
    "player_id": "p-1",
    "variant": "vegas-draw3",
    "stake": 520,
    "currency": "GBP",
    "multiplier": "5",
    "max_units": 52,
    "paytable_id": "vegas-gbp",
    "paytable_version": 1,
    "rules_version": "vegas-klondike/1",
    "certification": False,
}
COLLECTED_V2 = {
    "reason": "timeout",
    "winnings": 100,
    "currency": "GBP",
    "units": 2,
    "server_seed": SEED.hex(),
    "deck": None,
}


def test_stake_placed_v2_reads_as_an_ordinary_game() -> None:
    assert upcast("StakePlaced", 2, STAKE_PLACED_V2) == {**STAKE_PLACED_V2, "duel_id": None}
    placed = decode("StakePlaced", 2, STAKE_PLACED_V2)
    assert isinstance(placed, StakePlaced)
    assert placed.duel_id is None
    assert placed.stake == 520


def test_collected_v2_reads_as_an_untimed_ending() -> None:
    assert upcast("Collected", 2, COLLECTED_V2) == {**COLLECTED_V2, "ended_at": None}
    collected = decode("Collected", 2, COLLECTED_V2)
    assert collected == Collected("timeout", 100, "GBP", 2, SEED.hex(), None, None)


# --- the audit of a duel game ------------------------------------------------------------------


def _verify(duel: Duel, revealed: Revealed | None) -> tuple[dict[str, str], list[str]]:
    records = recorded("game-1", duel.events)
    result = verify_game(records, postings_for("game-1", duel.events), PAYTABLES, duel=revealed)
    return dict(result.checks), [f"{f.check}: {f.expected} / {f.found}" for f in result.findings]


def test_a_finished_duel_game_passes_every_check_with_its_duel_s_revealed_seed() -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Draw(), g.Draw())
    duel.play(g.Collect(), now=SOON + timedelta(seconds=1))
    assert postings_for("game-1", duel.events) == []  # a seat's game moves no money itself
    checks, findings = _verify(duel, Revealed(SEED.hex()))
    assert findings == []
    assert checks == dict.fromkeys(CHECKS, "pass")


def test_a_won_certification_duel_game_passes_every_check_with_its_revealed_deck() -> None:
    duel = Duel(easy_deck())
    _win(duel, T0 + timedelta(seconds=90))
    checks, findings = _verify(duel, Revealed(SEED.hex(), easy_deck()))
    assert findings == []
    assert checks == dict.fromkeys(CHECKS, "pass")


def test_a_duel_game_timed_out_passes_every_check() -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Draw())
    duel.play(g.Collect("timeout"), now=DEADLINE + timedelta(seconds=3))
    checks, findings = _verify(duel, Revealed(SEED.hex()))
    assert findings == []
    assert checks == dict.fromkeys(CHECKS, "pass")


def test_without_the_duel_s_seed_the_seed_checks_are_pending_not_failing() -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Draw())
    duel.play(g.Collect())
    checks, findings = _verify(duel, None)
    assert findings == []
    assert checks == {
        **dict.fromkeys(CHECKS, "pass"),
        "seed-commitment": "pending",
        "deck": "pending",
    }


def test_a_wrong_duel_seed_is_a_seed_commitment_finding() -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Collect())
    checks, _ = _verify(duel, Revealed(bytes(32).hex()))
    assert checks["seed-commitment"] == "fail"


def test_a_timeout_recorded_before_the_deadline_is_a_rules_finding() -> None:
    """An edited record: the timeout's end moved inside the game's five minutes cannot have
    been accepted (the replay re-decides it on the recorded clock)."""
    duel = Duel()
    duel.play(g.Draw())
    duel.play(g.Collect("timeout"), now=DEADLINE + timedelta(seconds=1))
    ending = duel.events[-1]
    assert isinstance(ending, Collected)
    duel.events[-1] = Collected(
        ending.reason, 0, "GBP", ending.units, None, None, instant(T0 + timedelta(seconds=1))
    )
    checks, findings = _verify(duel, Revealed(SEED.hex()))
    assert checks["rules"] == "fail"
    assert [f.split(":")[0] for f in findings] == ["rules"]


def test_a_voided_duel_game_passes_every_check_with_its_duel_s_revealed_seed() -> None:
    duel = Duel()
    duel.play(g.Draw(), g.Void("operator: table fault"))
    checks, findings = _verify(duel, Revealed(SEED.hex()))
    assert findings == []
    assert checks == dict.fromkeys(CHECKS, "pass")


def test_only_a_won_timed_game_ends_as_finished() -> None:
    duel = Duel()
    with pytest.raises(RuleViolation) as info:
        duel.play(g.Collect("finished"), now=T0 + timedelta(seconds=5))
    assert info.value.code == errors.INVALID_REASON
