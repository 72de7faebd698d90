"""Three Shuffles and a Draw (seed 004), rule by rule, refusals included, its seeded redeals
as the audit re-derives them, and its reference bot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest

from events.catalog import (
    CardMoved,
    CardPicked,
    Collected,
    Dealt,
    DealtPile,
    GameEvent,
    Reshuffled,
    Undone,
)
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.core.game_verification import CHECKS, verify_game
from service.core.paytable import winnings
from service.errors import RuleViolation
from service.games import three_shuffles
from service.games.three_shuffles import FAN_PILES, LAYOUT, THREE_SHUFFLES, deal_fans
from service.rtp.bots import three_shuffles as bot
from service.rtp.simulate import play_one
from service.rules import fold
from service.rules.actions import Draw, MoveCards, Pick, PlayAction, Recycle, Redeal, Turn
from service.rules.building import same_suit_up
from service.rules.cards import CANONICAL_DECK, RANKS, SUITS, Card
from service.rules.game import GameRules, Secrets
from service.rules.table import Pile, Table, table
from tests import builders
from tests.builders import SEED, play, postings_for, recorded, start

TS = THREE_SHUFFLES
GAME = "three-shuffles"


# --- helpers ------------------------------------------------------------------------------------


def fans_table(
    fans: Sequence[str],
    foundations: Mapping[str, str] | None = None,
    passes_left: int = 3,
    picks_left: int = 1,
) -> Table:
    """Fans written as text, bottom first (``"5H 9S 6H"``), fan 0 first; each suit's foundation
    up to the rank given (``{"S": "4"}``: Ace to 4 of spades), else its Ace alone."""
    tops = foundations or {}
    piles = {FAN_PILES[i]: Pile(tuple(text.split())) for i, text in enumerate(fans)}
    for i, suit in enumerate(SUITS):
        top = RANKS.index(tops.get(suit, "A"))
        piles[f"foundation:{i}"] = Pile(tuple(r + suit for r in RANKS[: top + 1]))
    return table(LAYOUT, piles, passes_left=passes_left, picks_left=picks_left)


def secrets(seed: bytes = SEED) -> Secrets:
    return Secrets(lambda s: str(s), shuffle.redealer(seed, None))


def act(lay: Table, action: PlayAction) -> tuple[Table, list[GameEvent]]:
    events = TS.decide(lay, action, secrets())
    for event in events:
        lay = fold.apply(lay, event)
    return lay, events


def refused(lay: Table, action: PlayAction) -> str:
    with pytest.raises(RuleViolation) as info:
        TS.decide(lay, action, secrets())
    return info.value.code


def deck_of(fans: Sequence[Sequence[Card]]) -> tuple[Card, ...]:
    """The deal-order deck that deals these 16 fans (bottom first, three each), row by row,
    with the Aces wherever they fall (here: at the end)."""
    assert len(fans) == 16
    assert all(len(f) == 3 for f in fans)
    rows = [fans[c][r] for r in range(3) for c in range(16)]
    return (*rows, "AS", "AH", "AD", "AC")


def won_in_order() -> list[list[Card]]:
    """16 fans whose top cards, taken fan by fan from fan 0 and over again, climb every
    foundation: row 2 (tops) holds 2..5 of each suit, row 1 holds 6..9, row 0 holds T..K."""
    needed = [r + s for r in RANKS[1:] for s in SUITS]  # 2S 2H 2D 2C 3S ...
    return [[needed[32 + c], needed[16 + c], needed[c]] for c in range(16)]


# --- declarations -------------------------------------------------------------------------------


def test_three_shuffles_declares_its_piles_counters_and_units() -> None:
    assert (TS.id, TS.family, TS.rules_version) == (GAME, GAME, "three-shuffles/2")
    assert (TS.decks, TS.max_units, TS.passes, TS.picks) == (1, 48, 3, 1)
    assert TS.layout.ids == (*(f"foundation:{i}" for i in range(4)), *FAN_PILES)
    assert tuple(f"fan:{i}" for i in range(16)) == FAN_PILES
    assert all(TS.layout.kind(p) == "tableau" for p in FAN_PILES)
    assert set(TS.actions) == {"move", "redeal", "pick", "undo"}
    assert any("/ 48" in line for line in TS.summary)


# --- the deal -----------------------------------------------------------------------------------


def test_the_aces_start_the_foundations_and_48_cards_fill_16_fans_of_3_row_by_row() -> None:
    deck = CANONICAL_DECK  # Aces at 0, 13, 26, 39: taken out wherever they lie
    lay = TS.deal(deck)
    for i, suit in enumerate(SUITS):
        assert lay.pile(f"foundation:{i}") == Pile(("A" + suit,))
    rest = [c for c in deck if c[0] != "A"]
    for c, fan in enumerate(FAN_PILES):
        assert lay.pile(fan) == Pile((rest[c], rest[c + 16], rest[c + 32]), 0)
    assert (lay.passes_left, lay.picks_left) == (3, 1)


def test_the_deal_seals_nothing_every_card_lies_face_up() -> None:
    game, events = start(deck_of(won_in_order()), GAME)
    assert builders.sealed_of(game) == ()
    dealt = events[1]
    assert isinstance(dealt, Dealt)
    assert dealt.piles is not None
    assert all(p.down == 0 for p in dealt.piles)
    assert sum(len(p.up) for p in dealt.piles) == 52
    assert game.units == 0


# --- moves --------------------------------------------------------------------------------------


def test_a_top_card_goes_to_its_foundation_one_rank_higher_by_suit() -> None:
    lay = fans_table(["9S 2H", "3H"], {"H": "A"})
    lay, events = act(lay, MoveCards("fan:0", "foundation:1"))
    assert events == [CardMoved("fan:0", "foundation:1", ("2H",))]
    lay, events = act(lay, MoveCards("fan:1", "foundation"))
    assert events == [CardMoved("fan:1", "foundation:1", ("3H",))]
    assert TS.units(lay) == 2


@pytest.mark.parametrize(
    ("fans", "move", "code"),
    [
        (["2S"], MoveCards("fan:0", "foundation:1"), errors.FOUNDATION_WRONG_SUIT),
        (["3S"], MoveCards("fan:0", "foundation:0"), errors.FOUNDATION_WRONG_RANK),
        (["3S"], MoveCards("fan:0", "foundation"), errors.NO_FOUNDATION_FITS),
        (["2S 7H"], MoveCards("fan:0", "foundation:0"), errors.FOUNDATION_WRONG_SUIT),
    ],
)
def test_foundations_refuse_a_card_out_of_turn(fans: list[str], move: MoveCards, code: str) -> None:
    assert refused(fans_table(fans), move) == code


def test_a_top_card_goes_onto_another_fans_top_card_of_its_suit_one_rank_higher() -> None:
    lay = fans_table(["KD 5H", "2C 6H"])
    lay, events = act(lay, MoveCards("fan:0", "fan:1"))
    assert events == [CardMoved("fan:0", "fan:1", ("5H",))]
    assert lay.pile("fan:1").cards == ("2C", "6H", "5H")
    assert lay.pile("fan:0").cards == ("KD",)


@pytest.mark.parametrize(
    ("fans", "code"),
    [
        (["5H", "7H"], errors.NOT_ONE_RANK_LOWER),
        (["5H", "4H"], errors.NOT_ONE_RANK_LOWER),
        (["5H", "6S"], errors.NOT_SAME_SUIT),
        (["5H", ""], errors.EMPTY_FAN),
    ],
)
def test_fans_build_down_by_suit_and_an_empty_fan_stays_empty(fans: list[str], code: str) -> None:
    assert refused(fans_table(fans), MoveCards("fan:0", "fan:1")) == code


@pytest.mark.parametrize(
    ("move", "code"),
    [
        (MoveCards("fan:0", "fan:99"), errors.UNKNOWN_PILE),
        (MoveCards("stock", "fan:1"), errors.UNKNOWN_PILE),
        (MoveCards("fan:0", "fan:0"), errors.SAME_PILE),
        (MoveCards("foundation:1", "fan:1"), errors.INVALID_SOURCE),
        (MoveCards("fan:2", "fan:1"), errors.SOURCE_EMPTY),
        (MoveCards("fan:0", "fan:1", 2), errors.INVALID_COUNT),
    ],
)
def test_only_a_fans_top_card_moves_one_at_a_time(move: MoveCards, code: str) -> None:
    assert refused(fans_table(["4H 5H", "6H"], {"H": "3"}), move) == code


def test_only_top_cards_are_listed_as_moves() -> None:
    lay = fans_table(["2H 9C", "TC", "3S"], {"S": "2"})
    moves = [a for a in TS.legal_actions(lay) if isinstance(a, MoveCards)]
    # 2H is buried: only the Draw could play it.
    assert moves == [MoveCards("fan:0", "fan:1", 1), MoveCards("fan:2", "foundation:0", 1)]


def test_the_game_has_no_stock_draw_recycle_or_turn() -> None:
    lay = fans_table(["5H"])
    for action in (Draw(), Recycle(), Turn("fan:0")):
        assert refused(lay, action) == errors.ACTION_NOT_ALLOWED


# --- redeals ------------------------------------------------------------------------------------


def test_a_redeal_gathers_the_fans_in_order_shuffles_with_the_seed_and_deals_fans_of_three() -> (
    None
):
    lay = fans_table(["KD 5H", "", "2C 6H 9S", "QS"])
    lay, events = act(lay, Redeal())
    gathered = ["KD", "5H", "2C", "6H", "9S", "QS"]
    shuffled = shuffle.redeal(SEED, None, "redeal-1", gathered)
    assert events == [
        Reshuffled(
            "redeal-1",
            FAN_PILES,
            (DealtPile("fan:0", 0, shuffled[:3]), DealtPile("fan:1", 0, shuffled[3:])),
            2,
        )
    ]
    assert [lay.pile(p).cards for p in FAN_PILES[:2]] == [shuffled[:3], shuffled[3:]]
    assert all(not lay.pile(p).cards for p in FAN_PILES[2:])
    assert lay.passes_left == 2


def test_the_last_fan_takes_what_is_left() -> None:
    assert deal_fans(list("abcdefgh")) == [("a", "b", "c"), ("d", "e", "f"), ("g", "h")]
    assert deal_fans(list("abcdefg")) == [("a", "b", "c"), ("d", "e", "f"), ("g",)]


def test_the_second_redeal_is_labelled_redeal_2_and_there_is_no_third() -> None:
    lay = fans_table(["KD 5H", "2C 6H 9S"])
    lay, first = act(lay, Redeal())
    lay, second = act(lay, Redeal())
    assert [e.label for e in first + second if isinstance(e, Reshuffled)] == [
        "redeal-1",
        "redeal-2",
    ]
    gathered = [c for p in FAN_PILES for c in fold.apply(lay, second[0]).pile(p).cards]
    assert Counter(gathered) == Counter(["KD", "5H", "2C", "6H", "9S"])
    assert lay.passes_left == 1
    assert refused(lay, Redeal()) == errors.NO_PASSES_LEFT
    assert Redeal() not in TS.legal_actions(lay)


def test_a_redeal_needs_the_games_seed() -> None:
    lay = fans_table(["KD 5H"])
    with pytest.raises(g.SealedCardMissing):
        TS.decide(lay, Redeal(), lambda s: str(s))
    with pytest.raises(g.SealedCardMissing):
        TS.decide(lay, Redeal(), Secrets(lambda s: str(s)))


def test_redeals_and_the_draw_cannot_be_undone_but_a_move_can() -> None:
    game, _ = start(deck_of(won_in_order()), GAME)
    game, events = play(game, g.MoveCards("fan:0", "foundation"))
    assert events == [CardMoved("fan:0", "foundation:0", ("2S",))]
    before = game
    game, events = play(game, g.MoveCards("fan:1", "foundation"), g.Undo())
    assert isinstance(events[-1], Undone)
    assert game.table == before.table
    game, _ = play(game, g.Redeal())
    with pytest.raises(RuleViolation) as info:
        g.decide(game, g.Undo())
    assert info.value.code == errors.UNDO_NOT_ALLOWED
    assert "redeal" in str(info.value)
    pick = next(c for c in g.legal_commands(game) if isinstance(c, g.Pick))
    game, _ = play(game, pick)
    with pytest.raises(RuleViolation) as info:
        g.decide(game, g.Undo())
    assert info.value.code == errors.UNDO_NOT_ALLOWED


# --- the Draw -----------------------------------------------------------------------------------


def test_the_draw_plays_a_buried_card_to_its_foundation_once_per_game() -> None:
    lay = fans_table(["2H 9C KS", "3H"])
    lay, events = act(lay, Pick("fan:0", "2H", "foundation"))
    assert events == [CardPicked("fan:0", 0, "2H", "foundation:1", 0)]
    assert lay.pile("fan:0").cards == ("9C", "KS")
    assert lay.picks_left == 0
    assert refused(lay, Pick("fan:0", "9C", "foundation")) == errors.NO_PICKS_LEFT
    assert not any(isinstance(a, Pick) for a in TS.legal_actions(lay))


def test_the_draw_plays_a_buried_card_onto_a_fans_top_card_its_own_included() -> None:
    lay = fans_table(["5H 9C", "6H", "8C 2D 9C"])
    after, events = act(lay, Pick("fan:0", "5H", "fan:1"))
    assert events == [CardPicked("fan:0", 0, "5H", "fan:1", 0)]
    assert after.pile("fan:1").cards == ("6H", "5H")
    after, events = act(lay, Pick("fan:2", "8C", "fan:2"))
    assert after.pile("fan:2").cards == ("2D", "9C", "8C")


@pytest.mark.parametrize(
    ("pick", "code"),
    [
        (Pick("fan:0", "9C", "fan:1"), errors.NOT_BURIED),
        (Pick("fan:0", "7D", "fan:1"), errors.CARD_NOT_IN_PILE),
        (Pick("fan:0", "5H", "fan:2"), errors.EMPTY_FAN),
        (Pick("fan:0", "5H", "foundation:1"), errors.FOUNDATION_WRONG_RANK),
        (Pick("fan:0", "5S", "fan:1"), errors.NOT_SAME_SUIT),
        (Pick("foundation:1", "AH", "fan:1"), errors.INVALID_SOURCE),
        (Pick("fan:0", "5H", "nowhere"), errors.UNKNOWN_PILE),
    ],
)
def test_the_draw_refuses(pick: Pick, code: str) -> None:
    assert refused(fans_table(["5S 5H 9C", "6H", ""]), pick) == code


def test_legal_picks_are_every_buried_card_that_fits_somewhere() -> None:
    lay = fans_table(["2H 5H 9C", "6H", "3S KD"], {"S": "2"})
    picks = [a for a in TS.legal_actions(lay) if isinstance(a, Pick)]
    assert picks == [
        Pick("fan:0", "2H", "foundation:1"),
        Pick("fan:0", "5H", "fan:1"),
        Pick("fan:2", "3S", "foundation:0"),
    ]


# --- units and winning --------------------------------------------------------------------------


def test_units_are_the_cards_played_up_and_52_on_the_foundations_wins() -> None:
    game, _ = start(deck_of(won_in_order()), GAME)
    moves = [g.MoveCards(f, "foundation") for _ in range(3) for f in FAN_PILES]
    game, _ = play(game, *moves)
    assert game.units == 48
    assert game.status == "complete"
    assert game.winnings == winnings(48, 520, TS.multiplier, 48)
    assert sum(len(builders.pile(game, f"foundation:{i}").cards) for i in range(4)) == 52
    half, _ = play(start(deck_of(won_in_order()), GAME)[0], *moves[:24])
    assert (half.units, half.status) == (24, "in_progress")
    assert half.winnings == winnings(24, 520, TS.multiplier, 48)


# --- the audit re-derives every redeal ----------------------------------------------------------


def _redealt_game() -> tuple[g.Game, list[GameEvent]]:
    deck = deck_of(won_in_order())
    game, events = start(deck, GAME)
    game, played = play(game, g.MoveCards("fan:0", "foundation"), g.Redeal(), g.Redeal())
    return game, events + played


def test_a_finished_game_with_two_redeals_verifies_with_every_check() -> None:
    game, events = _redealt_game()
    ended, collected = play(game, g.Collect(server_seed=SEED.hex(), deck=game_deck()))
    assert isinstance(collected[-1], Collected)
    stream = events + collected
    result = verify_game(recorded("game-1", stream), postings_for("game-1", stream), {})
    assert result.findings == []
    assert result.checks == dict.fromkeys(CHECKS, "pass")
    assert result.state == ended


def game_deck() -> tuple[Card, ...]:
    return deck_of(won_in_order())


def test_an_unfinished_game_with_a_redeal_leaves_the_deck_check_pending() -> None:
    _, events = _redealt_game()
    result = verify_game(recorded("game-1", events), postings_for("game-1", events), {})
    assert result.findings == []
    assert result.checks["deck"] == "pending"
    assert result.checks["rules"] == "pass"


def test_a_redeal_the_seed_did_not_shuffle_is_a_deck_finding() -> None:
    game, events = _redealt_game()
    _, collected = play(game, g.Collect(server_seed=SEED.hex(), deck=game_deck()))
    stream = events + collected
    i = max(n for n, e in enumerate(stream) if isinstance(e, Reshuffled))  # the last redeal
    forged = stream[i]
    assert isinstance(forged, Reshuffled)
    first, second, *rest = forged.piles
    swapped = (
        replace(first, up=(second.up[0], *first.up[1:])),
        replace(second, up=(first.up[0], *second.up[1:])),
        *rest,
    )
    # Rewritten and re-hashed consistently, so only the re-derivation can tell.
    stream[i] = replace(forged, piles=swapped)
    result = verify_game(recorded("game-1", stream), postings_for("game-1", stream), {})
    assert result.checks["deck"] == "fail"
    assert [f.location for f in result.findings] == [f"game-game-1 v{i + 1}"]
    assert result.checks["hash-chain"] == "pass"


def test_a_reshuffle_that_deals_other_cards_than_it_gathered_cannot_be_folded() -> None:
    _, events = _redealt_game()
    i = next(n for n, e in enumerate(events) if isinstance(e, Reshuffled))
    forged = events[i]
    assert isinstance(forged, Reshuffled)
    first, *rest = forged.piles
    events[i] = replace(forged, piles=(replace(first, up=("AS", *first.up[1:])), *rest))
    result = verify_game(recorded("game-1", events), postings_for("game-1", events), {})
    assert result.checks["rules"] == "fail"
    assert "not the cards gathered" in result.findings[0].found


# --- the reference bot --------------------------------------------------------------------------


def test_the_bot_plays_up_first_then_between_fans() -> None:
    lay = fans_table(["5H", "6H 2S"])
    assert bot.choose(TS, lay, TS.legal_actions(lay)) == MoveCards("fan:1", "foundation:0", 1)
    lay = fans_table(["5H", "6H"])
    assert bot.choose(TS, lay, TS.legal_actions(lay)) == MoveCards("fan:0", "fan:1", 1)


def test_stuck_the_bot_makes_a_winning_draw_before_redealing() -> None:
    lay = fans_table(["KS QS JS TS 9S 8S 7S 6S 5S 4S 2S 3S"], {"H": "K", "D": "K", "C": "K"})
    legal = TS.legal_actions(lay)
    assert Redeal() in legal
    assert not any(isinstance(a, MoveCards) for a in legal)
    assert bot.choose(TS, lay, legal) == Pick("fan:0", "2S", "foundation:0")


def test_stuck_with_no_winning_draw_the_bot_redeals_then_draws_then_stops() -> None:
    lay = fans_table(["2S 3S", "9H"])
    assert bot.choose(TS, lay, TS.legal_actions(lay)) == Redeal()
    last = replace(lay, passes_left=1)
    assert bot.choose(TS, last, TS.legal_actions(last)) == Pick("fan:0", "2S", "foundation:0")
    done = replace(last, picks_left=0)
    assert bot.choose(TS, done, TS.legal_actions(done)) is None


def test_the_bot_plays_seeded_deals_to_the_end() -> None:
    units = [play_one(GAME, i) for i in range(5)]
    assert all(0 <= u <= 48 for u in units)
    assert any(u > 0 for u in units)


def table_invariant(rules: GameRules, table: Table, deck: tuple[Card, ...]) -> None:
    """What random play checks of every table of this family's games, beside every game's
    invariants (tests/unit/test_game_properties.py)."""
    assert table.picks_left in (0, 1)  # the Draw, once per game
    for suit, i in zip("SHDC", three_shuffles.F, strict=True):
        pile = table.piles[i].cards  # its suit's Ace (there from the deal) up
        assert pile[0] == "A" + suit
        for n, card in enumerate(pile):
            assert same_suit_up(str(card), str(pile[n - 1]) if n else None), pile
    for i in three_shuffles.T:
        assert table.piles[i].down == 0  # every card lies face up
