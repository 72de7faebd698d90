"""The pyramid family's strong player and clairvoyant bound (service/rtp/experts/pyramid.py):
fair, deterministic, legal, and its fast model agrees with the real rules move for move."""

from __future__ import annotations

import random

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.rtp import knowledge, search, simulate
from service.rtp.bots import pyramid as bot
from service.rtp.experts import pyramid as expert
from service.rtp.players import Player
from service.rules.actions import Draw, PlayAction, Remove
from service.rules.cards import RANK_OF
from service.rules.game import Secrets
from service.rules.table import Table
from tests.unit.rtp_support import blinded, playable

RULES = game_named("pyramid")


def _deal(index: int) -> tuple[g.Game, tuple[str, ...], Secrets]:
    seed = simulate.deal_seed("pyramid", index)
    deck = shuffle.derive_deck(seed, None, RULES.decks)
    start = g.StartGame("sim", "t", "pyramid", 520, simulate._TABLE, deck, "x", "", None, False)
    state = g.fold(g.decide(g.INITIAL, start))
    sealed = g.hidden_cards(RULES, deck)
    return state, sealed, knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))


def _game(player: Player, index: int) -> int:
    """The units ``player`` ends deal ``index`` with, played as the RTP lab plays it (its own
    random numbers, the true secrets for the clairvoyant only)."""
    state, sealed, secrets = _deal(index)
    rng = random.Random(simulate.player_seed("pyramid", index))
    choose = player.start(RULES, rng, secrets if player.kind == "clairvoyant" else None)
    while state.status == "in_progress" and state.table is not None:
        action = choose(state.table, playable(state))
        if action is None:
            break
        state = g.fold(g.decide(state, action, sealed), state)
    return state.units


def _play(index: int, blind: bool) -> tuple[list[PlayAction | None], int]:
    """The strong player's whole game on deal ``index`` (the tables blinded or not)."""
    state, sealed, _ = _deal(index)
    choose = expert.STRONG.start(RULES, random.Random(simulate.player_seed("pyramid", index)), None)
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
    for index in (0, 5):
        line, units = _play(index, blind=False)
        assert _play(index, blind=False) == (line, units)  # deterministic
        assert _play(index, blind=True) == (line, units)  # blind to the sealed numbers
        assert units == _game(expert.STRONG, index)


def test_a_question_asked_twice_gets_one_answer() -> None:
    state, _, _ = _deal(2)
    choose = expert.STRONG.start(RULES, random.Random(2), None)
    assert state.table is not None
    legal = playable(state)
    assert choose(state.table, legal) == choose(blinded(state.table), legal)


def _modelplayable(table: Table) -> set[PlayAction]:
    pos = expert.position(table)
    waste_top = pos.waste[-1] if pos.waste else 0
    found: set[PlayAction] = {
        Remove(expert.piles_of(m))
        for m in expert.removals(pos.pyramid, pos.present, pos.stock_top, waste_top)
    }
    if pos.stock:
        found.add(Draw())
    return found


def test_the_model_agrees_with_the_rules_move_for_move() -> None:
    rng = random.Random(2024)
    checked = 0
    for index in range(25):
        state, sealed, secrets = _deal(index)
        assert state.table is not None
        stock = _true_stock(state.table, secrets)
        present, p = (1 << 28) - 1, 0
        waste: list[int] = []
        while state.status == "in_progress" and state.table is not None:
            table = state.table
            pos = expert.position(table)
            assert (pos.present, pos.stock, pos.waste) == (present, len(stock) - p, tuple(waste))
            assert pos.stock_top == (stock[p] if p < len(stock) else 0)
            assert RULES.units(table) == expert.MAX_UNITS - present.bit_count() - pos.stock - len(
                waste
            )
            legal = playable(state)
            assert _modelplayable(table) == set(legal)
            if not legal:
                break
            action = rng.choice(legal)
            move = expert.move_of(action) if isinstance(action, Remove) else None
            assert move is None or Remove(expert.piles_of(move)) == action
            present, p = expert.play(move, present, stock, p, waste)
            state = g.fold(g.decide(state, action, sealed), state)
            checked += 1
    assert checked > 500


def _true_stock(table: Table, secrets: Secrets) -> list[int]:
    world = knowledge.clear_table(table, secrets)
    return [RANK_OF[c] for c in reversed(world.pile("stock").cards)]  # type: ignore[index]


def test_the_clairvoyant_line_replays_to_the_units_it_claims() -> None:
    for index in (0, 4):  # two deals the search exhausts quickly
        state, _, secrets = _deal(index)
        assert state.table is not None
        pos = expert.position(state.table)
        found = expert.solve(
            pos.pyramid, pos.present, _true_stock(state.table, secrets), pos.waste, expert.BUDGET
        )
        assert _game(expert.CLAIRVOYANT, index) == found.units
        assert found.units >= _game(expert.STRONG, index)


def test_the_clairvoyant_solve_matches_the_exhaustive_search_late_in_a_deal() -> None:
    """With few stock cards left the generic search through the real rules is exhaustive:
    the model's search must find the same maximum, and its line must replay to it. (The
    reference bot plays the deal down to that point.)"""
    for index in range(6):
        state, sealed, secrets = _deal(index)
        while state.table is not None and len(state.table.pile("stock").cards) > 7:
            action = bot.choose(RULES, state.table, playable(state))
            assert action is not None
            state = g.fold(g.decide(state, action, sealed), state)
        assert state.table is not None
        world = knowledge.clear_table(state.table, secrets)
        exhaustive = search.best_line(RULES, world, secrets, budget=100_000)
        assert exhaustive.exhaustive
        pos = expert.position(state.table)
        stock = _true_stock(state.table, secrets)
        found = expert.solve(pos.pyramid, pos.present, stock, pos.waste, expert.BUDGET)
        assert found.exhaustive
        assert found.units == exhaustive.units
        for move in found.line:
            play = Draw() if move is None else Remove(expert.piles_of(move))
            assert play in playable(state)
            state = g.fold(g.decide(state, play, sealed), state)
        assert state.units == found.units
