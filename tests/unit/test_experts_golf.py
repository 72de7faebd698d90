"""The golf family's strong player and clairvoyant bound (service/rtp/experts/golf.py): fair,
deterministic, legal, and its fast model agrees with the real rules move for move."""

from __future__ import annotations

import random

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.games.golf import TABLEAU_PILES, WASTE
from service.rtp import knowledge, search, simulate
from service.rtp.experts import golf as expert
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import RANK_OF
from service.rules.game import Secrets
from service.rules.table import Table
from tests.unit.rtp_support import blinded, playable

RULES = game_named("golf")


def _deal(index: int) -> tuple[g.Game, tuple[str, ...], Secrets]:
    seed = simulate.deal_seed("golf", index)
    deck = shuffle.derive_deck(seed, None, RULES.decks)
    start = g.StartGame("sim", "t", "golf", 520, simulate._TABLE, deck, "x", "", None, False)
    state = g.fold(g.decide(g.INITIAL, start))
    sealed = g.hidden_cards(RULES, deck)
    return state, sealed, knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))


def _play(index: int, blind: bool) -> tuple[list[PlayAction | None], int]:
    """The strong player's whole game on deal ``index`` (the tables blinded or not)."""
    state, sealed, _ = _deal(index)
    choose = expert.STRONG.start(RULES, random.Random(index), None)
    chosen: list[PlayAction | None] = []
    while state.status == "in_progress" and state.table is not None:
        legal = playable(state)
        table = blinded(state.table) if blind else state.table
        action = choose(table, legal)
        chosen.append(action)
        if action is None:
            break
        assert action in legal
        state = g.fold(g.decide(state, action, sealed), state)
    return chosen, state.units


def test_the_strong_player_is_legal_deterministic_and_never_reads_a_sealed_card() -> None:
    for index in (0, 3):
        line, units = _play(index, blind=False)
        assert _play(index, blind=False) == (line, units)  # deterministic
        assert _play(index, blind=True) == (line, units)  # blind to the sealed numbers
        assert units == simulate.play_one("golf", index, "strong")


def test_a_question_asked_twice_gets_one_answer() -> None:
    state, _, _ = _deal(1)
    choose = expert.STRONG.start(RULES, random.Random(1), None)
    assert state.table is not None
    legal = playable(state)
    assert choose(state.table, legal) == choose(blinded(state.table), legal)


def _modelplayable(table: Table) -> set[PlayAction]:
    pos = expert.position(table)
    found: set[PlayAction] = {
        MoveCards(TABLEAU_PILES[c], WASTE, 1)
        for c in expert.moves(pos.columns, pos.heights, pos.waste)
    }
    if pos.stock:
        found.add(Draw())
    return found


def _real_reach(table: Table, reveal: Secrets) -> set[int]:
    """The height vectors the real rules reach by column-to-waste moves alone."""
    found: set[int] = set()
    seen: set[tuple[object, ...]] = set()
    todo = [table]
    while todo:
        t = todo.pop()
        if search.key(t) in seen:
            continue
        seen.add(search.key(t))
        found.add(expert.position(t).heights)
        for action in RULES.legal_actions(t):
            if isinstance(action, MoveCards):
                todo.append(search.step(RULES, t, action, reveal))
    return found


def test_the_model_agrees_with_the_rules_move_for_move() -> None:
    rng = random.Random(2024)
    checked = 0
    for index in range(12):
        state, sealed, secrets = _deal(index)
        layout: expert.Layout | None = None
        while state.status == "in_progress" and state.table is not None:
            table = state.table
            pos = expert.position(table)
            layout = layout or expert.Layout(pos.columns)
            assert layout.fits(pos.columns)
            legal = playable(state)
            assert _modelplayable(table) == set(legal)
            assert RULES.units(table) == expert.cleared(pos.heights)
            reach = layout.reach(pos.heights, pos.waste)
            assert {h for h, _ in reach} == _real_reach(table, secrets)
            assert all(u == expert.cleared(h) for h, u in reach)
            if not legal:
                break
            action = rng.choice(legal)
            state = g.fold(g.decide(state, action, sealed), state)
            assert state.table is not None
            after = expert.position(state.table)
            if isinstance(action, MoveCards):
                c = TABLEAU_PILES.index(action.source)
                assert after.heights == pos.heights - (1 << (3 * c))
                assert after.waste == pos.columns[c][-1]
                assert after.stock == pos.stock
            else:
                assert (after.heights, after.stock) == (pos.heights, pos.stock - 1)
            checked += 1
    assert checked > 300


def _true_stock(table: Table, secrets: Secrets) -> list[int]:
    world = knowledge.clear_table(table, secrets)
    return [RANK_OF[c] for c in reversed(world.pile("stock").cards)]  # type: ignore[index]


def test_the_clairvoyant_line_replays_to_the_units_it_claims() -> None:
    for index in range(4):
        state, _, secrets = _deal(index)
        assert state.table is not None
        pos = expert.position(state.table)
        units, _ = expert.solve(pos.columns, pos.waste, _true_stock(state.table, secrets))
        assert simulate.play_one("golf", index, "clairvoyant") == units
        assert units >= simulate.play_one("golf", index, "strong")


def test_the_clairvoyant_solve_is_the_exhaustive_searchs_maximum() -> None:
    """Late in a deal (few stock cards left) the generic search through the real rules is
    exhaustive: the bitset sweep must find the same maximum."""
    rng = random.Random(7)
    for index in range(6):
        state, sealed, secrets = _deal(index)
        while state.table is not None and len(state.table.pile("stock").cards) > 3:
            legal = playable(state)
            moves = [a for a in legal if isinstance(a, MoveCards)]
            action = rng.choice(moves) if moves and rng.random() < 0.7 else Draw()
            state = g.fold(g.decide(state, action, sealed), state)
        assert state.table is not None
        world = knowledge.clear_table(state.table, secrets)
        found = search.best_line(RULES, world, secrets, budget=200_000)
        assert found.exhaustive
        pos = expert.position(state.table)
        units, line = expert.solve(pos.columns, pos.waste, _true_stock(state.table, secrets))
        assert units == found.units
        # ... and the line it gives plays through the real decider to that many units
        for step in line:
            play = Draw() if step is None else MoveCards(TABLEAU_PILES[step], WASTE, 1)
            assert play in playable(state)
            state = g.fold(g.decide(state, play, sealed), state)
        assert state.units == units
