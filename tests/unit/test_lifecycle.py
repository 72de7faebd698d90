"""A game's life: winnings as play goes on, auto-complete, collect, void, and start refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    Voided,
)
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import winnings
from service.errors import RuleViolation
from service.games.klondike import KLONDIKE, VEGAS_DRAW1
from service.rules.cards import RANKS, Card
from service.rules.table import Table
from tests.builders import GBP, SEED, easy_deck, game_on, layout, play, start

SEED_HEX = SEED.hex()
EASY = easy_deck()
TABLEAU = [f"tableau:{i}" for i in range(7)]
FOUNDATIONS = [f"foundation:{i}" for i in range(4)]


def _table(game: g.Game) -> Table:
    assert game.table is not None
    return game.table


def _foundations(game: g.Game) -> tuple[tuple[Card, ...], ...]:
    return tuple(_table(game).pile(f).up for f in FOUNDATIONS)


def _foundation_count(game: g.Game) -> int:
    """Cards on the foundations, counted from the table itself."""
    return sum(len(f) for f in _foundations(game))


def _refused(game: g.Game, command: g.Command) -> str:
    with pytest.raises(RuleViolation) as info:
        g.decide(game, command)
    return info.value.code


def _suit(suit: str, top: str) -> str:
    """``_suit("S", "Q")`` -> ``"AS 2S ... QS"``: a foundation built up to ``top``."""
    return " ".join(r + suit for r in RANKS[: RANKS.index(top) + 1])


PLAY_COMMANDS: list[g.Command] = [
    g.Draw(),
    g.Recycle(),
    g.MoveCards("waste", "foundation"),
    g.MoveCards("tableau:0", "tableau:1"),
    g.Turn("tableau:0"),
    g.Undo(),
]


# --- winnings -----------------------------------------------------------------------------------


def test_winnings_follow_the_foundation_count_at_every_step() -> None:
    game = game_on(layout(["4S|2H", "|3C", "5C 6C|"], stock="9D", waste="AH"))
    steps: list[tuple[g.Command, int]] = [
        (g.MoveCards("waste", "foundation"), 50),
        (g.MoveCards("tableau:0", "foundation"), 100),
        (g.MoveCards("foundation:0", "tableau:1"), 50),  # a card back off costs one win rate
        (g.MoveCards("tableau:1", "foundation:0"), 100),
        (g.Draw(), 100),
        (g.Undo(), 100),
        (g.Turn("tableau:0"), 100),
        (g.MoveCards("foundation:0", "tableau:1"), 50),
        (g.Undo(), 100),
    ]
    assert (game.win_rate, game.winnings) == (50, 0)
    for command, expected in steps:
        game, _ = play(game, command)
        assert game.winnings == expected
        assert game.units == _foundation_count(game)
        assert game.winnings == _foundation_count(game) * game.win_rate
        assert game.winnings == winnings(game.units, 520, "5", 52)


def test_win_rate_is_a_fifty_second_of_five_stakes() -> None:
    game = game_on(layout(["4S|2H"], stock="9D", waste="AH"), stake=1040)
    game, _ = play(game, g.MoveCards("waste", "foundation"), g.MoveCards("tableau:0", "foundation"))
    assert (game.win_rate, game.units, game.winnings) == (100, 2, 200)


def test_winnings_follow_the_multiplier_the_game_was_dealt_under() -> None:
    """Klondike pays its own M over 52 cards (3.5: at 520 a card is worth 35, not Vegas's
    50), and the stake records it."""
    lay = layout(["4S|2H"], stock="9D", waste="AH", passes_left=None, rules=KLONDIKE)
    game = game_on(lay, variant="klondike")
    assert game.info is not None
    assert (game.info.multiplier, game.info.max_units) == (KLONDIKE.multiplier, 52)
    game, _ = play(game, g.MoveCards("waste", "foundation"), g.MoveCards("tableau:0", "foundation"))
    per_card = winnings(1, 520, KLONDIKE.multiplier, 52)
    assert (game.win_rate, game.units, game.winnings) == (
        per_card,
        2,
        winnings(2, 520, KLONDIKE.multiplier, 52),
    )


# --- auto-complete ------------------------------------------------------------------------------


def _almost_done_by_turn() -> g.Game:
    """48 cards up; the last face-down card is the only thing left to reveal."""
    return game_on(
        layout(
            ["QD|", "|KH", "|KD", "|KS"],
            foundations=[_suit("S", "Q"), _suit("H", "Q"), _suit("D", "J"), _suit("C", "K")],
        )
    )


def test_turning_the_last_face_down_card_triggers_auto_complete() -> None:
    game, events = play(_almost_done_by_turn(), g.Turn("tableau:0"))
    assert events == [
        CardTurned("tableau:0", "QD"),
        AutoCompleted(
            (
                AutoMove("tableau:0", "foundation:2", "QD"),
                AutoMove("tableau:1", "foundation:1", "KH"),
                AutoMove("tableau:2", "foundation:2", "KD"),
                AutoMove("tableau:3", "foundation:0", "KS"),
            )
        ),
    ]
    assert game.status == "complete"
    assert game.units == 52
    assert game.winnings == 52 * 50
    assert all(len(f) == 13 for f in _foundations(game))
    assert all(len(_table(game).pile(t)) == 0 for t in TABLEAU)


def test_playing_the_last_waste_card_triggers_auto_complete() -> None:
    lay = layout(
        ["|KC"],
        foundations=[_suit("S", "K"), _suit("H", "K"), _suit("D", "K"), _suit("C", "J")],
        waste="QC",
    )
    game, events = play(game_on(lay), g.MoveCards("waste", "foundation"))
    assert events == [
        CardMoved("waste", "foundation:3", ("QC",)),
        AutoCompleted((AutoMove("tableau:0", "foundation:3", "KC"),)),
    ]
    assert (game.status, game.winnings) == ("complete", 2600)


@pytest.mark.parametrize("command", PLAY_COMMANDS, ids=lambda c: type(c).__name__)
def test_a_completed_game_refuses_every_play_command(command: g.Command) -> None:
    game, _ = play(_almost_done_by_turn(), g.Turn("tableau:0"))
    assert _refused(game, command) == errors.GAME_COMPLETE


def test_a_completed_game_can_be_collected_for_the_maximum() -> None:
    game, _ = play(_almost_done_by_turn(), g.Turn("tableau:0"))
    game, events = play(game, g.Collect(server_seed=SEED_HEX))
    assert events == [Collected("player", 2600, "GBP", 52, SEED_HEX)]
    assert (game.status, game.payout, game.refund) == ("collected", 2600, 0)


def test_auto_complete_waits_while_a_face_down_card_remains() -> None:
    lay = layout(
        ["KS|", "|QD", "|KD"],
        foundations=[_suit("S", "Q"), _suit("H", "K"), _suit("D", "J"), _suit("C", "K")],
    )
    game, events = play(game_on(lay), g.MoveCards("tableau:1", "foundation"))
    assert events == [CardMoved("tableau:1", "foundation:2", ("QD",))]
    assert game.status == "in_progress"
    game, events = play(game, g.Turn("tableau:0"))
    assert events == [
        CardTurned("tableau:0", "KS"),
        AutoCompleted(
            (
                AutoMove("tableau:0", "foundation:0", "KS"),
                AutoMove("tableau:2", "foundation:2", "KD"),
            )
        ),
    ]
    assert game.status == "complete"


def test_auto_complete_waits_while_the_waste_holds_a_card() -> None:
    lay = layout(
        ["|QD", "|KD"],
        foundations=[_suit("S", "Q"), _suit("H", "K"), _suit("D", "J"), _suit("C", "K")],
        waste="KS",
    )
    game, events = play(game_on(lay), g.MoveCards("tableau:0", "foundation"))
    assert events == [CardMoved("tableau:0", "foundation:2", ("QD",))]
    assert (game.status, game.units) == ("in_progress", 50)
    game, events = play(game, g.MoveCards("waste", "foundation"))
    assert events == [
        CardMoved("waste", "foundation:0", ("KS",)),
        AutoCompleted((AutoMove("tableau:1", "foundation:2", "KD"),)),
    ]
    assert game.status == "complete"


def test_auto_complete_waits_while_the_stock_holds_a_card() -> None:
    lay = layout(
        ["|QD", "|KD"],
        foundations=[_suit("S", "Q"), _suit("H", "K"), _suit("D", "J"), _suit("C", "K")],
        stock="KS",
    )
    game, events = play(game_on(lay), g.MoveCards("tableau:0", "foundation"), g.Draw())
    assert events == [
        CardMoved("tableau:0", "foundation:2", ("QD",)),
        CardDrawn("stock", "waste", ("KS",)),
    ]
    assert (game.status, game.units) == ("in_progress", 50)
    game, events = play(game, g.MoveCards("waste", "foundation"))
    assert events[-1] == AutoCompleted((AutoMove("tableau:1", "foundation:2", "KD"),))
    assert (game.status, game.winnings) == ("complete", 2600)


def _next_tableau_command(game: g.Game) -> g.Command:
    """Turn a face-down top card if there is one, else play the first top card that fits."""
    table = _table(game)
    for pile_id in TABLEAU:
        col = table.pile(pile_id)
        if col.down and col.top is None:
            return g.Turn(pile_id)
    for i, pile_id in enumerate(TABLEAU):
        if table.pile(pile_id).up:
            try:
                g.decide(game, g.MoveCards(f"tableau:{i}", "foundation"))
            except RuleViolation:
                continue
            return g.MoveCards(f"tableau:{i}", "foundation")
    raise AssertionError("the easy deck got stuck")


def test_easy_deck_is_won_and_auto_completed_by_the_last_turn() -> None:
    game, _ = start(EASY)
    stock = EASY[28:]
    for n, card in enumerate(stock):
        game, events = play(game, g.Draw(), g.MoveCards("waste", "foundation"))
        assert events == [
            CardDrawn("stock", "waste", (card,)),
            CardMoved("waste", f"foundation:{n % 4}", (card,)),
        ]
        assert game.winnings == (n + 1) * 50
    assert (len(_table(game).pile("stock")), _table(game).pile("waste").cards) == (0, ())

    turns: list[list[GameEvent]] = []
    while game.status == "in_progress":
        command = _next_tableau_command(game)
        before = game.units
        game, events = play(game, command)
        if not isinstance(command, g.Turn):
            assert len(events) == 1
            continue
        turns.append(events)
    *earlier, last = turns
    assert all(len(events) == 1 for events in earlier)  # nothing auto-completes before
    turned, auto = last
    assert isinstance(turned, CardTurned)
    assert isinstance(auto, AutoCompleted)
    assert len(auto.moves) == 52 - before
    assert all(m.source.startswith("tableau:") for m in auto.moves)
    assert game.status == "complete"
    assert game.winnings == 52 * game.win_rate == 2600
    assert _foundations(game) == tuple(tuple(r + s for r in RANKS) for s in "SHDC")
    game, events = play(game, g.Collect(server_seed=SEED.hex(), deck=EASY))
    assert events == [Collected("player", 2600, "GBP", 52, SEED.hex(), EASY)]


# --- collect ------------------------------------------------------------------------------------


def test_collect_right_after_the_deal_pays_nothing_and_reveals_the_seed() -> None:
    game, _ = start()
    game, events = play(game, g.Collect(server_seed=SEED_HEX))
    assert events == [
        Collected(reason="player", winnings=0, currency="GBP", units=0, server_seed=SEED_HEX)
    ]
    assert (game.status, game.payout, game.server_seed) == ("collected", 0, SEED_HEX)
    assert game.revealed_deck is None


def test_collect_mid_game_pays_the_winnings_held() -> None:
    game = game_on(layout(["4S 5C|"], foundations=["AS 2S", "AH"], stock="9D"))
    game, events = play(game, g.Collect(reason="timeout", server_seed=SEED_HEX))
    assert events == [Collected("timeout", 150, "GBP", 3, SEED_HEX)]
    assert (game.status, game.payout, game.end_reason) == ("collected", 150, "timeout")


def test_collect_without_the_seed_is_refused_seed_required() -> None:
    game, _ = start()
    assert _refused(game, g.Collect()) == errors.SEED_REQUIRED


def test_collect_of_a_seeded_game_revealing_a_deck_is_refused() -> None:
    """A seeded game reveals its seed; its deck, however right, is not what it committed to."""
    game, _ = start()
    seed_deck = shuffle.derive_deck(SEED)
    assert _refused(game, g.Collect(deck=seed_deck)) == errors.SEED_REQUIRED
    assert _refused(game, g.Collect(server_seed=SEED_HEX, deck=seed_deck)) == errors.SEED_MISMATCH


@pytest.mark.parametrize(
    "seed",
    [bytes(32).hex(), SEED_HEX[:-2], SEED_HEX + "00", "not-hex", ""],
)
def test_collect_with_a_wrong_seed_is_refused_seed_mismatch(seed: str) -> None:
    game, _ = start()
    assert _refused(game, g.Collect(server_seed=seed)) == errors.SEED_MISMATCH


def test_collect_of_a_given_deck_game_reveals_the_deck() -> None:
    game, _ = start(EASY)
    assert game.info is not None
    assert game.info.shuffle_algorithm == shuffle.CERTIFICATION_DECK
    assert game.seed_commitment == shuffle.deck_commitment(EASY, SEED)
    game, events = play(game, g.Collect(server_seed=SEED.hex(), deck=EASY))
    assert events == [Collected("player", 0, "GBP", 0, SEED.hex(), EASY)]
    assert (game.status, game.revealed_deck, game.server_seed) == ("collected", EASY, SEED.hex())


def test_collect_of_a_given_deck_game_without_the_deck_is_refused_seed_required() -> None:
    game, _ = start(EASY)
    assert _refused(game, g.Collect()) == errors.SEED_REQUIRED


def _swapped(deck: tuple[Card, ...], i: int, j: int) -> tuple[Card, ...]:
    cards = list(deck)
    cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


WRONG_DECKS = [
    pytest.param(EASY[::-1], id="reversed"),
    pytest.param(_swapped(EASY, 0, 51), id="two-cards-swapped"),
    pytest.param(_swapped(EASY, 27, 28), id="tableau-and-stock-swapped"),
    pytest.param(shuffle.derive_deck(SEED), id="another-valid-deck"),
    pytest.param(EASY[:51], id="51-cards"),
    pytest.param((), id="empty"),
]


@pytest.mark.parametrize("deck", WRONG_DECKS)
def test_collect_of_a_given_deck_game_with_a_wrong_deck_is_refused_seed_mismatch(
    deck: tuple[Card, ...],
) -> None:
    game, _ = start(EASY)
    assert _refused(game, g.Collect(server_seed=SEED.hex(), deck=deck)) == errors.SEED_MISMATCH


def test_collect_of_a_given_deck_game_needs_both_the_deck_and_its_salt() -> None:
    """A given deck's commitment is salted with the game's seed: both are revealed."""
    game, _ = start(EASY)
    assert _refused(game, g.Collect(server_seed=SEED_HEX)) == errors.SEED_REQUIRED
    assert _refused(game, g.Collect(deck=EASY)) == errors.SEED_REQUIRED
    wrong_salt = g.Collect(server_seed=bytes(32).hex(), deck=EASY)
    assert _refused(game, wrong_salt) == errors.SEED_MISMATCH
    assert game.status == "in_progress"


def _v1_given_deck_game() -> g.Game:
    """A game recorded before sealing: a v1 deal names its deck in clear and commits to none."""
    placed = StakePlaced(
        game_id="game-v1",
        player_id="player-1",
        variant="vegas-draw1",
        stake=520,
        currency="GBP",
        multiplier="5",
        max_units=52,
        paytable_id=GBP.id,
        paytable_version=GBP.version,
        rules_version="vegas-klondike/1",
        certification=True,
    )
    dealt = Dealt(shuffle_algorithm=shuffle.CERTIFICATION_DECK, deck=EASY)
    return g.fold([placed, dealt])


def test_a_v1_given_deck_game_ends_revealing_nothing_and_refuses_a_seed_or_deck() -> None:
    game = _v1_given_deck_game()
    assert (game.status, game.seed_commitment) == ("in_progress", None)
    assert _refused(game, g.Collect(server_seed=SEED_HEX)) == errors.SEED_MISMATCH
    assert _refused(game, g.Collect(server_seed=SEED.hex(), deck=EASY)) == errors.SEED_MISMATCH
    assert _refused(game, g.Void(reason="x", server_seed=SEED_HEX)) == errors.SEED_MISMATCH
    _, events = play(game, g.Collect())
    assert events == [Collected("player", 0, "GBP", 0, None, None)]


# --- void ---------------------------------------------------------------------------------------


def test_void_refunds_the_stake_whatever_the_winnings() -> None:
    game = game_on(layout(["4S 5C|"], foundations=["AS 2S"], stock="9D"), stake=1040)
    game, events = play(game, g.Void(reason="operator error", server_seed=SEED_HEX))
    assert events == [Voided("operator error", 1040, "GBP", SEED_HEX)]
    assert (game.status, game.refund, game.payout) == ("voided", 1040, 0)


def test_a_won_game_is_collected_never_voided() -> None:
    game, _ = play(_almost_done_by_turn(), g.Turn("tableau:0"))
    assert game.status == "complete"
    assert _refused(game, g.Void(reason="x", server_seed=SEED_HEX)) == errors.GAME_COMPLETE
    game, _ = play(game, g.Collect(server_seed=SEED_HEX))
    assert (game.status, game.payout) == ("collected", 2600)


def test_void_without_the_seed_is_refused_seed_required() -> None:
    game, _ = start()
    assert _refused(game, g.Void(reason="x")) == errors.SEED_REQUIRED


def test_void_with_a_wrong_seed_is_refused_seed_mismatch() -> None:
    game, _ = start()
    assert _refused(game, g.Void(reason="x", server_seed=bytes(32).hex())) == errors.SEED_MISMATCH


def test_void_of_a_given_deck_game_reveals_the_deck_and_refunds_the_stake() -> None:
    game, _ = start(EASY, stake=1040)
    game, events = play(game, g.Void(reason="operator error", server_seed=SEED.hex(), deck=EASY))
    assert events == [Voided("operator error", 1040, "GBP", SEED.hex(), EASY)]
    assert (game.status, game.refund, game.payout, game.revealed_deck) == (
        "voided",
        1040,
        0,
        EASY,
    )


@pytest.mark.parametrize(
    ("reveal", "code"),
    [
        pytest.param({}, errors.SEED_REQUIRED, id="nothing"),
        pytest.param({"server_seed": SEED_HEX}, errors.SEED_REQUIRED, id="a-seed"),
        pytest.param({"deck": EASY}, errors.SEED_REQUIRED, id="no-salt"),
        pytest.param(
            {"server_seed": SEED_HEX, "deck": EASY[::-1]}, errors.SEED_MISMATCH, id="a-wrong-deck"
        ),
    ],
)
def test_void_of_a_given_deck_game_needs_its_deck(reveal: dict[str, object], code: str) -> None:
    game, _ = start(EASY)
    assert _refused(game, g.Void("operator error", **reveal)) == code  # type: ignore[arg-type]


# --- game over and not started ------------------------------------------------------------------

ALL_AFTER_START: list[g.Command] = [
    *PLAY_COMMANDS,
    g.Collect(server_seed=SEED_HEX),
    g.Void(reason="again", server_seed=SEED_HEX),
]


@pytest.mark.parametrize(
    "ending",
    [g.Collect(server_seed=SEED_HEX), g.Void(reason="operator", server_seed=SEED_HEX)],
    ids=["collected", "voided"],
)
@pytest.mark.parametrize("command", ALL_AFTER_START, ids=lambda c: type(c).__name__)
def test_an_ended_game_refuses_every_command_game_over(
    ending: g.Command, command: g.Command
) -> None:
    game, _ = start()
    game, _ = play(game, g.Draw(), ending)
    assert _refused(game, command) == errors.GAME_OVER


@pytest.mark.parametrize("command", ALL_AFTER_START, ids=lambda c: type(c).__name__)
def test_any_command_before_the_deal_is_refused_game_not_started(command: g.Command) -> None:
    assert _refused(g.INITIAL, command) == errors.GAME_NOT_STARTED


# --- starting -----------------------------------------------------------------------------------


def _start_command(**changes: object) -> g.StartGame:
    command = g.StartGame(
        game_id="game-2",
        player_id="player-2",
        variant="vegas-draw1",
        stake=520,
        paytable=GBP,
        deck=easy_deck(),
        shuffle_algorithm=shuffle.CERTIFICATION_DECK,
        seed_commitment=shuffle.deck_commitment(easy_deck(), SEED),
        certification=True,
    )
    return replace(command, **changes)  # type: ignore[arg-type]


def test_start_game_on_a_started_game_is_refused_game_already_started() -> None:
    game, _ = start()
    assert _refused(game, _start_command()) == errors.GAME_ALREADY_STARTED


def test_start_game_on_an_ended_game_is_refused_game_already_started() -> None:
    game, _ = start(EASY)
    game, _ = play(game, g.Collect(server_seed=SEED.hex(), deck=EASY))
    assert _refused(game, _start_command()) == errors.GAME_ALREADY_STARTED


def test_start_game_with_an_unknown_variant_is_refused() -> None:
    assert _refused(g.INITIAL, _start_command(variant="vegas-draw2")) == errors.UNKNOWN_VARIANT


@pytest.mark.parametrize(
    "deck",
    [
        pytest.param(easy_deck()[:51], id="51-cards"),
        pytest.param((*easy_deck()[:51], easy_deck()[0]), id="duplicate-card"),
        pytest.param((*easy_deck(), "AS"), id="53-cards"),
        pytest.param((*easy_deck()[:51], "1S"), id="not-a-card"),
        pytest.param((), id="empty"),
    ],
)
def test_start_game_with_a_bad_deck_is_refused_invalid_deck(deck: tuple[str, ...]) -> None:
    assert _refused(g.INITIAL, _start_command(deck=deck)) == errors.INVALID_DECK


@pytest.mark.parametrize("stake", [0, 52, 1_040_052, -520])
def test_start_game_with_a_stake_outside_the_range_is_refused(stake: int) -> None:
    assert _refused(g.INITIAL, _start_command(stake=stake)) == errors.STAKE_OUT_OF_RANGE


@pytest.mark.parametrize("stake", [530, 105, 1_039_999])
def test_start_game_with_a_stake_not_a_multiple_of_52_is_refused(stake: int) -> None:
    assert _refused(g.INITIAL, _start_command(stake=stake)) == errors.STAKE_NOT_MULTIPLE


@pytest.mark.parametrize("stake", [104, 1_040_000])
def test_start_game_accepts_the_stake_limits(stake: int) -> None:
    events = g.decide(g.INITIAL, _start_command(stake=stake))
    game = g.fold(events)
    assert game.win_rate == stake * 5 // 52
    assert game.win_rate * 52 == 5 * stake
    assert game.info is not None
    assert (game.info.multiplier, game.info.max_units) == (VEGAS_DRAW1.multiplier, 52) == ("5", 52)


def test_only_a_certification_game_is_dealt_a_given_deck() -> None:
    """A real-money game is always shuffled from a fresh seed the player cannot know."""
    command = _start_command(certification=False)
    assert _refused(g.INITIAL, command) == errors.INVALID_DECK
