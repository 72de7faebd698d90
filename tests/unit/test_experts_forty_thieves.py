"""The forty-thieves family's strong player and clairvoyant bound: the search model agrees with
the rules move for move, the strong player plays fair, and the bound's line replays."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.games import game_named
from service.rtp import knowledge, roster, simulate
from service.rtp.experts import forty_thieves as expert
from service.rtp.experts import forty_thieves_model as ftm
from service.rules.actions import Draw
from tests.unit.rtp_support import blinded, deal, playable

GAME = "forty-thieves"
RULES = game_named(GAME)


def test_the_model_agrees_with_the_rules_move_for_move() -> None:
    rng = random.Random(4)
    checked = 0
    for index in range(3):
        state, sealed, redeal = deal(GAME, index)
        secrets = knowledge.clear_secrets(sealed, redeal)
        for _ in range(120):
            assert state.table is not None
            world = knowledge.clear_table(state.table, secrets)
            model, stock = ftm.state_of(world), ftm.stock_of(world)
            legal = playable(state)
            assert sorted({ftm.move_of(a, world) for a in legal}) == sorted(ftm.legal(model, stock))
            for action in legal:
                after = g.fold(g.decide(state, action, sealed, redeal), state)
                assert after.table is not None
                seen = knowledge.clear_table(after.table, secrets)
                played = ftm.play(model, ftm.move_of(action, world), stock)
                expected = ftm.state_of(seen)
                assert (played[0], played[1], played[3]) == (expected[0], expected[1], expected[3])
                assert tuple(stock[played[2] :]) == ftm.stock_of(seen)
                assert ftm.units(played) == after.units
                checked += 1
            if not legal or after.status != "in_progress":
                break
            moves = [a for a in legal if not isinstance(a, Draw)]
            pick = legal if not moves or rng.random() < 0.3 else moves
            state = g.fold(g.decide(state, rng.choice(pick), sealed, redeal), state)
    assert checked > 1_000


def test_the_strong_player_plays_legally_deterministically_and_never_reads_a_sealed_card() -> None:
    state, sealed, redeal = deal(GAME, 5)
    seen_by = [expert.STRONG.start(RULES, random.Random(i), None) for i in range(3)]
    for _ in range(400):
        if state.status != "in_progress":
            break
        assert state.table is not None
        legal = playable(state)
        action = seen_by[0](state.table, legal)
        assert action == seen_by[1](state.table, legal)  # another rng: no randomness used
        assert action == seen_by[2](blinded(state.table), legal)
        if action is None:
            break
        assert action in legal
        state = g.fold(g.decide(state, action, sealed, redeal), state)
    assert state.units > 0


def test_the_strong_player_s_search_reads_only_the_stock_s_top_card() -> None:
    state, _, _ = deal(GAME, 6)
    assert state.table is not None
    model, stock = ftm.state_of(state.table), ftm.stock_of(state.table)
    assert stock[0] != ftm.UNKNOWN
    assert set(stock[1:]) == {ftm.UNKNOWN}
    assert expert.best_segment(model, stock)


def test_the_clairvoyant_line_replays_through_the_real_decider_to_its_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(roster.STRONG, RULES.family, expert.STRONG)  # the runner plays ours
    index = 1
    state, sealed, redeal = deal(GAME, index)
    assert state.table is not None
    secrets = knowledge.clear_secrets(sealed, redeal)
    world = knowledge.clear_table(state.table, secrets)
    units, line = expert.clairvoyant_line(state.table, secrets)
    for move in line:
        assert state.table is not None
        action = ftm.action_of(state.table, move, playable(state))
        state = g.fold(g.decide(state, action, sealed, redeal), state)
    assert state.units == units
    # Never below the strong player, whose own play through the real decider its model replays.
    strong = expert.strong_line(ftm.state_of(world), ftm.stock_of(world))[0]
    assert simulate.play_one(GAME, index, "strong") == strong <= units
