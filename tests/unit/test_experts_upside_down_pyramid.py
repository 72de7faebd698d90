"""The upside-down-pyramid family's strong player and clairvoyant bound: the search model agrees
with the rules move for move, the strong player plays fair, and the bound's line replays."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.games import game_named
from service.rtp import knowledge, roster, simulate
from service.rtp.experts import upside_down_pyramid as expert
from service.rtp.experts import upside_down_pyramid_model as udm
from service.rules.actions import MoveCards, Recycle
from tests.unit.rtp_support import blinded, deal, playable

GAME = "upside-down-pyramid"
RULES = game_named(GAME)


def test_the_model_agrees_with_the_rules_move_for_move() -> None:
    rng = random.Random(4)
    checked = 0
    recycled = 0
    for index in range(3):
        state, sealed, redeal = deal(GAME, index)
        secrets = knowledge.clear_secrets(sealed, redeal)
        for _ in range(200):
            assert state.table is not None
            world = knowledge.clear_table(state.table, secrets)
            model = udm.state_of(world)
            # What the player sees: the same position with the sealed stock slots unknown.
            sealed_view = udm.state_of(state.table)
            assert sealed_view[:2] == model[:2]
            assert sealed_view[3:] == model[3:]
            assert len(sealed_view[2]) == len(model[2])
            legal = playable(state)
            assert sorted({udm.move_of(a) for a in legal}) == sorted(udm.legal(model))
            for action in legal:
                after = g.fold(g.decide(state, action, sealed, redeal), state)
                assert after.table is not None
                played = udm.play(model, udm.move_of(action))
                assert played == udm.state_of(knowledge.clear_table(after.table, secrets))
                assert udm.units(played) == after.units
                checked += 1
            if not legal:
                break
            moves = [a for a in legal if isinstance(a, MoveCards)]
            pick = legal if not moves or rng.random() < 0.4 else moves
            action = rng.choice(pick)
            recycled += isinstance(action, Recycle)
            state = g.fold(g.decide(state, action, sealed, redeal), state)
            if state.status != "in_progress":
                break
    assert checked > 1_000
    assert recycled


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


def test_the_strong_player_sees_the_stock_only_once_it_has_drawn_it() -> None:
    state, _, _ = deal(GAME, 6)
    assert state.table is not None
    model = udm.state_of(state.table)
    assert set(model[2]) == {udm.UNKNOWN}
    assert not expert.sees_whole_stock(model)
    assert expert.best_segment(model)[-1] == udm.DRAW


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
        action = udm.action_of(state.table, move, playable(state))
        state = g.fold(g.decide(state, action, sealed, redeal), state)
    assert state.units == units
    # Never below the strong player, whose own play through the real decider its model replays.
    strong = expert.strong_line(udm.state_of(world))[0]
    assert simulate.play_one(GAME, index, "strong") == strong <= units
