"""The three-shuffles family's strong player and clairvoyant bound: the search model agrees with
the rules move for move (redeals included), the strong player plays fair, and the bound's line
replays through the real decider."""

from __future__ import annotations

import random

from service.core import game_decider as g
from service.games import game_named
from service.rtp import knowledge, simulate
from service.rtp.experts import three_shuffles as expert
from service.rtp.experts import three_shuffles_model as tm
from tests.unit.rtp_support import blinded, deal, playable

GAME = "three-shuffles"
RULES = game_named(GAME)


def test_the_model_agrees_with_the_rules_move_for_move() -> None:
    rng = random.Random(3)
    checked = redeals = 0
    for index in range(4):
        state, sealed, redeal = deal(GAME, index)
        secrets = knowledge.clear_secrets(sealed, redeal)
        for _ in range(200):
            assert state.table is not None
            st = tm.state_of(state.table)
            legal = playable(state)
            assert sorted(tm.move_of(a, state.table) for a in legal) == sorted(tm.legal(st))
            for action in legal:
                move = tm.move_of(action, state.table)
                assert tm.real_action(st, move) == action
                after = g.fold(g.decide(state, action, sealed, redeal), state)
                assert after.table is not None
                assert tm.apply(st, move, secrets.shuffled) == tm.state_of(after.table)
                assert tm.units(tm.state_of(after.table)) == after.units
                checked += 1
            if not legal:
                break
            action = rng.choice(legal)
            redeals += tm.move_of(action, state.table) == (tm.REDEAL,)
            state = g.fold(g.decide(state, action, sealed, redeal), state)
            if state.status != "in_progress":
                break
    assert checked > 300
    assert redeals > 0


def test_the_closure_plays_only_legal_moves() -> None:
    state, _, _ = deal(GAME, 2)
    assert state.table is not None
    st = tm.state_of(state.table)
    while (m := tm.greedy_move(st)) is not None:
        assert m in tm.legal(st)
        st = tm.apply(st, m)
    assert all(m[0] != tm.MOVE for m in tm.legal(st))


def test_the_strong_player_plays_legally_deterministically_and_never_reads_a_sealed_card() -> None:
    for index in range(2):
        state, sealed, redeal = deal(GAME, index)
        seen_by = [expert.STRONG.start(RULES, random.Random(7), None) for _ in range(2)]
        for _ in range(200):
            if state.status != "in_progress":
                break
            assert state.table is not None
            legal = playable(state)
            action = seen_by[0](state.table, legal)
            assert action == seen_by[1](blinded(state.table), legal)  # same rng, blinded
            if action is None:
                break
            assert action in legal
            state = g.fold(g.decide(state, action, sealed, redeal), state)
        assert state.units > 0


def test_the_clairvoyant_line_replays_through_the_real_decider_to_its_units() -> None:
    for index in range(3):
        state, sealed, redeal = deal(GAME, index)
        assert state.table is not None
        secrets = knowledge.clear_secrets(sealed, redeal)
        units, line = expert.plan(tm.state_of(state.table), secrets, expert.CLAIRVOYANT_BUDGET)
        for move in line:
            assert state.table is not None
            action = tm.real_action(tm.state_of(state.table), move)
            assert action in playable(state)
            state = g.fold(g.decide(state, action, sealed, redeal), state)
        assert state.units == units
        assert simulate.play_one(GAME, index, "clairvoyant") == units
        assert simulate.play_one(GAME, index, "strong") <= units
