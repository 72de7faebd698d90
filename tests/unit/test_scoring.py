"""Seed 003's points for a classic duel game (service.core.scoring), one rule at a time.

Most tests build the events by hand, so each rule is seen alone; the last ones play whole
``klondike-duel`` games through the decider and score what it recorded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    ClockStarted,
    Collected,
    GameEvent,
    StockRecycled,
)
from service.core import game_decider as g
from service.core import shuffle
from service.core.clock import instant
from service.core.scoring import Points, first_placing, points
from service.games.klondike import KLONDIKE_DUEL
from service.rules.cards import CANONICAL_DECK, Card
from tests.builders import GBP, SEED, easy_deck

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
LIMIT = timedelta(seconds=300)
DEADLINE = T0 + LIMIT
CLOCK = ClockStarted(instant(T0), instant(DEADLINE))
RANKS = "A23456789TJQK"
#: Seed 003's table: A 5, 2 10, ... 9 45, and 50 for each 10, J, Q, K.
FIRST_PLACING = dict(zip(RANKS, (5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 50, 50, 50), strict=True))
#: Every card in foundation order: Aces first, Kings last.
UP_ORDER = [r + s for r in RANKS for s in "SHDC"]
SUIT_PILE = {s: f"foundation:{i}" for i, s in enumerate("SHDC")}


def up(card: Card, source: str = "waste") -> CardMoved:
    """``card`` placed on its suit's foundation."""
    return CardMoved(source, SUIT_PILE[card[1]], (card,))


def down(card: Card, target: str = "tableau:0") -> CardMoved:
    """``card`` moved back off its foundation."""
    return CardMoved(SUIT_PILE[card[1]], target, (card,))


def ended(seconds: float, reason: str = "finished", units: int = 52) -> Collected:
    """The game's end recorded ``seconds`` after the deal."""
    at = T0 + timedelta(seconds=seconds)
    return Collected(reason, 0, "GBP", units, ended_at=instant(at))


def all_up(cards: Sequence[Card] = UP_ORDER) -> list[GameEvent]:
    return [up(c) for c in cards]


# --- first placings on the foundations ----------------------------------------------------------


@pytest.mark.parametrize("rank", RANKS)
def test_a_card_s_first_placing_scores_five_times_its_rank_up_to_fifty(rank: str) -> None:
    expected = FIRST_PLACING[rank]
    for suit in "SHDC":
        card = rank + suit
        assert first_placing(card) == expected
        assert points([up(card)]) == Points(expected, 0, 0, 0, 0)
        assert points([up(card)]).total == expected


def test_every_first_placing_adds_up_to_1700() -> None:
    assert sum(first_placing(c) for c in CANONICAL_DECK) == 1_700
    assert points([CLOCK, *all_up()]).foundations == 1_700


def test_a_card_moved_back_and_placed_again_scores_nothing_more() -> None:
    once = [up("AS"), up("2S")]
    again = [*once, down("2S"), up("2S", source="tableau:0")]
    twice_more = [*again, down("2S", "tableau:5"), up("2S", source="tableau:5")]
    assert points(once).foundations == 5 + 10
    assert points(again).foundations == 5 + 10
    assert points(twice_more).foundations == 5 + 10


def test_a_card_moved_back_keeps_what_its_first_placing_scored() -> None:
    assert points([up("AS"), up("2S"), down("2S")]).foundations == 15


def test_cards_the_rules_play_up_by_auto_complete_score_their_first_placing() -> None:
    auto = AutoCompleted(
        (
            AutoMove("tableau:0", "foundation:0", "9S"),
            AutoMove("tableau:1", "foundation:1", "TH"),
            AutoMove("tableau:2", "foundation:0", "KS"),
        )
    )
    assert points([auto]).foundations == 45 + 50 + 50


def test_auto_complete_of_a_card_placed_before_scores_nothing_more() -> None:
    auto = AutoCompleted((AutoMove("tableau:0", "foundation:0", "KS"),))
    assert points([up("KS"), down("KS"), auto]).foundations == 50


def test_moves_that_never_reach_a_foundation_score_nothing() -> None:
    events: list[GameEvent] = [
        CardDrawn("stock", "waste", ("AS", "2S", "3S")),
        CardMoved("waste", "tableau:3", ("3S",)),
        CardMoved("tableau:3", "tableau:5", ("QD", "JS")),
    ]
    assert points(events) == Points(0, 0, 0, 0, 0)


# --- cards turned ---------------------------------------------------------------------------


@pytest.mark.parametrize("turns", [0, 1, 7, 21])
def test_ten_per_face_down_tableau_card_turned(turns: int) -> None:
    events = [CardTurned(f"tableau:{1 + n % 6}", "QD") for n in range(turns)]
    assert points(events) == Points(0, 10 * turns, 0, 0, 0)


def test_the_21_face_down_cards_of_the_deal_score_at_most_210() -> None:
    dealt = g.fold(_deal(easy_deck())[0])
    assert dealt.table is not None
    assert sum(dealt.table.pile(f"tableau:{c}").down for c in range(7)) == 21
    events = [CardTurned(f"tableau:{c}", "QD") for c in range(1, 7) for _ in range(c)]
    assert len(events) == 21
    assert points(events).turned == 210


def test_only_tableau_turns_count() -> None:
    # Klondike never turns its stock (a draw shows cards, it is no turn), nor any other pile.
    events: list[GameEvent] = [
        CardTurned("stock", "AS"),
        CardTurned("waste", "2S"),
        CardDrawn("stock", "waste", ("3S", "4S", "5S")),
        CardTurned("tableau:4", "6S"),
    ]
    assert points(events).turned == 10


# --- recycles ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recycles", "penalty"),
    [(0, 0), (1, 0), (2, 0), (3, -20), (4, -40), (5, -60), (10, -160)],
)
def test_minus_20_for_each_recycle_after_the_second(recycles: int, penalty: int) -> None:
    events = [StockRecycled(24, None) for _ in range(recycles)]
    assert points(events) == Points(0, 0, penalty, 0, 0)
    assert points(events).total == penalty


def test_the_recycle_penalty_is_taken_from_the_other_points() -> None:
    events: list[GameEvent] = [
        up("AS"),
        *[StockRecycled(20, None)] * 4,
        CardTurned("tableau:1", "2D"),
    ]
    assert points(events).total == 5 + 10 - 40


# --- all 52 up and the time bonus -------------------------------------------------------------


@pytest.mark.parametrize(
    ("ended_after", "bonus"),
    [
        (199.1, 500),  # 100.9 s left: 100 whole seconds
        (200.0, 500),
        (199.0, 505),
        (299.0, 5),
        (299.5, 0),  # half a second left: no whole second
        (0.0, 1_500),
        (60.123456, 1_195),
    ],
)
def test_all_52_up_score_1700_and_5_per_whole_second_left(ended_after: float, bonus: int) -> None:
    score = points([CLOCK, *all_up(), ended(ended_after)])
    assert (score.all_up, score.time_bonus) == (1_700, bonus)
    assert score.total == 1_700 + 1_700 + bonus


def test_all_52_up_by_auto_complete_score_the_bonus() -> None:
    auto = AutoCompleted(tuple(AutoMove("tableau:0", SUIT_PILE[c[1]], c) for c in UP_ORDER[20:]))
    score = points([CLOCK, *all_up(UP_ORDER[:20]), auto, ended(100.0)])
    assert score == Points(1_700, 0, 0, 1_700, 1_000)


def test_51_cards_up_score_no_bonus() -> None:
    score = points([CLOCK, *all_up(UP_ORDER[:51]), ended(100.0, reason="player", units=51)])
    assert (score.all_up, score.time_bonus) == (0, 0)
    assert score.foundations == 1_700 - 50


def test_a_card_moved_back_off_a_full_set_leaves_51_up_and_no_bonus() -> None:
    score = points([CLOCK, *all_up(), down("KS"), ended(100.0, reason="player", units=51)])
    assert (score.all_up, score.time_bonus) == (0, 0)
    assert score.foundations == 1_700


@pytest.mark.parametrize("ended_after", [300.0, 300.000001, 400.0])
def test_no_bonus_when_the_game_ended_at_or_after_the_deadline(ended_after: float) -> None:
    score = points([CLOCK, *all_up(), ended(ended_after, reason="timeout")])
    assert (score.all_up, score.time_bonus) == (1_700, 0)


def test_no_bonus_without_a_recorded_end_or_a_clock() -> None:
    assert points([CLOCK, *all_up()]).time_bonus == 0  # the game has not ended (yet)
    assert points([*all_up(), ended(10.0)]).time_bonus == 0  # an untimed game
    untimed_end = Collected("player", 0, "GBP", 52)  # ended_at None
    assert points([CLOCK, *all_up(), untimed_end]).time_bonus == 0


def test_the_points_are_the_same_from_a_list_and_from_a_one_pass_iterator() -> None:
    events = [CLOCK, up("AS"), CardTurned("tableau:2", "5H"), *all_up(UP_ORDER[1:]), ended(61.0)]
    assert points(iter(events)) == points(events) == points(tuple(events))
    assert points(events) == Points(1_700, 10, 0, 1_700, 5 * 239)


# --- games played through the decider --------------------------------------------------------


def _deal(
    deck: Sequence[Card], seed: bytes = SEED, certification: bool = True
) -> tuple[list[GameEvent], tuple[Card, ...]]:
    """A klondike-duel game dealt at T0: its first events and its sealed cards."""
    if certification:
        algorithm, commitment = shuffle.CERTIFICATION_DECK, shuffle.deck_commitment(deck, seed)
    else:
        algorithm, commitment = shuffle.ALGORITHM, shuffle.commitment(seed)
    start = g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant="klondike-duel",
        stake=100,
        paytable=GBP,
        deck=tuple(deck),
        shuffle_algorithm=algorithm,
        seed_commitment=commitment,
        certification=certification,
        duel_id="duel-1",
        now=T0,
    )
    return g.decide(g.INITIAL, start), g.hidden_cards(KLONDIKE_DUEL, deck)


def _greedy(commands: Sequence[g.PlayCommand]) -> g.PlayCommand:
    """Up to a foundation if anything goes, else turn a card, else draw."""
    for command in commands:
        if isinstance(command, g.MoveCards) and command.target.startswith("foundation"):
            return command
    turns = [c for c in commands if isinstance(c, g.Turn)]
    return turns[0] if turns else g.Draw()


def test_a_whole_won_game_scores_every_rule_from_its_recorded_events() -> None:
    events, sealed = _deal(easy_deck())
    game = g.fold(events)
    now = T0 + timedelta(seconds=120.25)  # the server's clock at every command: 179.75 s left
    while not game.is_over:
        new = g.decide(game, _greedy(g.legal_commands(game)), sealed, None, now)
        events += new
        game = g.fold(new, game)
    last = events[-1]
    assert last == Collected("finished", 0, "GBP", 52, ended_at=instant(now))
    assert any(isinstance(e, AutoCompleted) for e in events)  # the last cards went up by rule
    score = points(events)
    assert score == Points(
        foundations=1_700, turned=210, recycles=0, all_up=1_700, time_bonus=5 * 179
    )
    assert score.total == 1_700 + 210 + 1_700 + 895


def test_a_game_out_of_time_after_five_recycles_scores_its_penalty_and_no_bonus() -> None:
    events, sealed = _deal(shuffle.derive_deck(SEED), certification=False)
    game = g.fold(events)
    now = T0 + timedelta(seconds=5)
    recycles = 0
    while recycles < 5:
        command: g.PlayCommand = g.Draw() if g.Draw() in g.legal_commands(game) else g.Recycle()
        recycles += isinstance(command, g.Recycle)
        new = g.decide(game, command, sealed, None, now)
        events += new
        game = g.fold(new, game)
    late = DEADLINE + timedelta(seconds=30)
    events += g.decide(game, g.Collect("timeout"), sealed, None, late)
    ending = events[-1]
    assert isinstance(ending, Collected)
    assert ending.ended_at == instant(DEADLINE)
    assert sum(isinstance(e, StockRecycled) for e in events) == 5
    assert points(events) == Points(foundations=0, turned=0, recycles=-60, all_up=0, time_bonus=0)
