"""The Klondike family's C solver (service/rtp/experts/klondike_solver.c) plays the rules: on
random positions of the lab's deals its legal moves and their positions are the fast model's
(which tests/unit/test_experts_klondike.py checks against the real rules), its safe moves
settle as the model's do, every search move it tries is a line of legal moves reaching the
position it says, and the line its search claims replays, through the real rules too, to the
cards it claims."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.games import game_named
from service.rtp import knowledge
from service.rtp.experts import klondike_model as km
from service.rtp.experts import klondike_solver as ks
from service.rules.actions import Draw, Recycle
from service.rules.table import Table
from tests.unit.rtp_support import deal, play_model_line, playable

GAMES = ("vegas-draw1", "vegas-draw3", "klondike")


def _positions(game_id: str, deals: int, moves: int, seed: int) -> list[tuple[Table, km.State]]:
    """Tables met wandering through the lab's deals (mostly moves, so the stock, the
    foundations and the passes all change), with each one's world (every card known)."""
    rng = random.Random(seed)
    out: list[tuple[Table, km.State]] = []
    for index in range(deals):
        state, sealed, redeal = deal(game_id, index)
        secrets = knowledge.clear_secrets(sealed, redeal)
        for _ in range(moves):
            if state.status != "in_progress":
                break
            assert state.table is not None
            out.append((state.table, km.state_of(knowledge.clear_table(state.table, secrets))))
            legal = playable(state)
            if not legal:
                break
            moves_only = [a for a in legal if not isinstance(a, Draw | Recycle)]
            action = rng.choice(moves_only if moves_only and rng.random() < 0.6 else legal)
            state = g.fold(g.decide(state, action, sealed, redeal), state)
    return out


def _replay(model: km.Model, st: km.State, moves: list[km.Move]) -> km.State:
    """Play model moves, each one legal where it is played."""
    for m in moves:
        assert m in model.legal(st), (m, st)
        st = model.step(st, m)
    return st


@pytest.mark.parametrize("game_id", GAMES)
def test_the_solver_s_moves_are_the_model_s(game_id: str) -> None:
    rules = game_named(game_id)
    model = km.Model(rules)
    solver = ks.Solver(model)
    checked = 0
    for _table, st in _positions(game_id, 4, 120, 11):
        assert solver.decode(list(solver.encode(st))) == st
        legal = model.legal(st)
        assert sorted(solver.legal(st)) == sorted(legal)
        for m in legal:
            assert solver.step(st, m) == model.step(st, m), m
            checked += 1
        # The safe moves settle as the model's solver settles them, by legal moves.
        settled, line = solver.settle(st)
        assert settled == km.Solver(model).settle(st, [])
        assert _replay(model, st, line) == settled
        # Every search move is a line of legal moves reaching the position it says.
        for plain in (False, True):
            for seg, child in solver.children(settled, plain):
                assert seg
                assert _replay(model, settled, seg) == child
                checked += 1
    assert checked > 2_000


@pytest.mark.parametrize("game_id", GAMES)
def test_the_candidates_are_legal_where_the_player_stands_and_never_loop(game_id: str) -> None:
    """From the player's view (sealed cards unknown), every move it weighs is legal there, and
    none leads back to a position it has decided in."""
    rules = game_named(game_id)
    model = km.Model(rules)
    solver = ks.Solver(model)
    moves = km.Solver(model)
    weighed = 0
    for table, _world in _positions(game_id, 3, 80, 5):
        view, _line = solver.settle(km.state_of(table))
        if view != km.state_of(table):
            continue  # the player turns a card or plays a safe one before weighing anything
        legal = {model.move_of(table, a) for a in rules.legal_actions(table)}
        cands = moves.candidates(view, legal, set())
        assert len(set(cands)) == len(cands)
        for m in cands:
            assert m in legal
            weighed += 1
        if cands:  # a position it has decided in is never gone back to
            after = model.automatic(model.step(view, cands[0]))
            assert cands[0] not in moves.candidates(view, legal, {after})
    assert weighed > 100


@pytest.mark.parametrize("game_id", GAMES)
def test_the_searched_line_reaches_the_cards_it_claims(game_id: str) -> None:
    rules = game_named(game_id)
    model = km.Model(rules)
    solver = ks.Solver(model)
    for index in range(6):
        state, sealed, redeal = deal(game_id, index)
        assert state.table is not None
        secrets = knowledge.clear_secrets(sealed, redeal)
        world = km.state_of(knowledge.clear_table(state.table, secrets))
        best, line, nodes = solver.solve(world, 3_000)
        assert 0 < nodes <= 3_000
        end = _replay(model, world, line)
        assert km.units(end) == best
        assert rules.units(play_model_line(rules, state.table, line, secrets)) == best
        # Each candidate's value is at least what the position after it holds.
        view = solver.settle(km.state_of(state.table))[0]
        cands = km.Solver(model).candidates(view, set(solver.legal(view)), set())
        assert cands
        values, _n = solver.evaluate(world, cands, 500)
        for m, v in zip(cands, values, strict=True):
            assert v >= km.units(solver.settle(model.step(world, m))[0])
            assert v <= best or nodes >= 3_000


@pytest.mark.parametrize("game_id", GAMES)
def test_an_exhaustive_search_finds_at_least_the_model_s(game_id: str) -> None:
    """Where both searches are exhaustive, the C solver's answer is at least the Python
    solver's (its moves include the Python solver's; only dominated ones are left out): a
    position it wrongly skipped, a move it wrongly pruned, would show here."""
    model = km.Model(game_named(game_id))
    solver = ks.Solver(model)
    compared = 0
    for _table, st in _positions(game_id, 4, 150, 3)[::6]:
        mine, _line, nodes = solver.solve(st, 5_000, widen=0)
        theirs, _their_line, exhaustive, _n = km.Solver(model).solve(st, 600)
        if exhaustive and nodes < 5_000:
            assert mine >= theirs, st
            compared += 1
    assert compared >= 5
