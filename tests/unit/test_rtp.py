"""The RTP lab: seeded simulated deals, the bots' fair play, and the RTP arithmetic."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from decimal import Decimal

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.games import STANDALONE, game_named
from service.rtp import simulate
from service.rtp.players import Choose, Kind, Player
from service.rtp.roster import STRONG, player_for
from service.rules.actions import Draw, PlayAction, Undo
from tests.unit.rtp_support import blinded


def test_each_simulated_deal_has_its_own_published_seed() -> None:
    assert simulate.deal_seed("golf", 0) == simulate.deal_seed("golf", 0)
    assert simulate.deal_seed("golf", 0) != simulate.deal_seed("golf", 1)
    assert simulate.deal_seed("golf", 0) != simulate.deal_seed("pyramid", 0)


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_a_chunk_counts_every_deal_once_and_is_repeatable(game_id: str) -> None:
    histogram = simulate.simulate(game_id, 10, 6)
    assert sum(histogram.values()) == 6
    assert all(0 <= units <= game_named(game_id).max_units for units in histogram)
    assert simulate.simulate(game_id, 10, 6) == histogram  # seeded: a chunk run twice agrees


def test_chunks_add_up_to_the_whole() -> None:
    whole = simulate.simulate("golf", 0, 8)
    parts = simulate.simulate("golf", 0, 3), simulate.simulate("golf", 3, 5)
    summed: dict[int, int] = {}
    for part in parts:
        for units, n in part.items():
            summed[units] = summed.get(units, 0) + n
    assert summed == whole


def test_rtp_is_the_mean_payout_over_the_stake_with_the_house_rounding_down() -> None:
    # Golf pays floor(units x 520 x M / 35): at M 1.3, 35 units pay 676 and 10 units pay 193
    # (193.14 rounded down), so these two games return (676 + 193) / 1040.
    found = simulate.rtp_of("golf", {35: 1, 10: 1}, "1.3")
    assert found.rtp == Decimal("0.8356")
    assert found.full_wins == 1
    assert found.mean_units == 22.5
    assert found.low < found.rtp < found.high


def test_an_rtp_with_no_spread_has_no_interval() -> None:
    found = simulate.rtp_of("vegas-draw1", {52: 40})
    assert found.rtp == found.low == found.high == Decimal("5.0000")


def test_no_games_no_rtp() -> None:
    with pytest.raises(ValueError, match="no games"):
        simulate.rtp_of("golf", {})


@pytest.mark.parametrize(
    ("game_id", "kind", "deals", "moves"),
    [(game_id, "bot", 3, 150) for game_id in STANDALONE]
    + [(r.id, "strong", 1, 40) for r in STANDALONE.values() if r.family in STRONG],
)
def test_a_fair_player_plays_only_legal_actions_and_never_reads_a_sealed_card(
    game_id: str, kind: Kind, deals: int, moves: int
) -> None:
    """Two copies of the player, one given the table and one the same table with every sealed
    number changed, with the same random numbers: they choose alike at every move."""
    rules = game_named(game_id)
    player = player_for(rules, kind)
    assert player.kind == kind
    for index in range(deals):
        seed = simulate.deal_seed(game_id, index)
        deck = shuffle.derive_deck(seed, None, rules.decks)
        start = g.StartGame("sim", "bot", game_id, 520, simulate._TABLE, deck, "x", "", None, False)
        state = g.fold(g.decide(g.INITIAL, start))
        sealed = g.hidden_cards(rules, deck)
        sees = player.start(rules, random.Random(index), None)
        blind = player.start(rules, random.Random(index), None)
        for _ in range(moves):
            assert state.table is not None
            legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect | g.Undo)]
            action = sees(state.table, legal)
            assert action == blind(blinded(state.table), legal)
            if action is None or state.status != "in_progress":
                break
            assert action in legal
            state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)


@pytest.mark.parametrize("game_id", ["golf", "salic-law"])
def test_the_clairvoyant_plays_its_line_through_the_real_decider(game_id: str) -> None:
    """The bound is a line of play the real rules accept, so the units it claims are real."""
    for index in range(2):
        bound = simulate.play_one(game_id, index, "clairvoyant")
        assert bound >= simulate.play_one(game_id, index, "bot")


@pytest.mark.parametrize("takes_undo", [False, True])
def test_the_lab_offers_undo_only_to_a_player_that_takes_it(
    takes_undo: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Undo is a legal advantage (a peek at the next draw, taken back): the lab offers it to a
    player that takes it, so its published figure includes it, and to no other."""
    offered: list[bool] = []

    def start(rules: object, rng: random.Random, secrets: object) -> Choose:
        def choose(table: object, legal: Sequence[PlayAction]) -> PlayAction | None:
            offered.append(any(isinstance(a, Undo) for a in legal))
            if Undo() in legal:
                return Undo()  # taken: the draw before it is undone through the real decider
            return next((a for a in legal if isinstance(a, Draw)), None)

        return choose

    player = Player("strong", "undo-taker/test", start, "draws, and undoes each draw")
    player = dataclasses.replace(player, takes_undo=takes_undo)
    monkeypatch.setattr(simulate, "player_for", lambda rules, kind: player)
    units = simulate.play_one("vegas-draw3", 0, "strong")
    assert any(offered) is takes_undo
    assert units == 0 or not takes_undo  # undoing every draw plays nothing
