"""The scorpion family's strong player and clairvoyant bound, and the fast model they search
with: the model agrees with the real rules move for move, its bot plays as the reference bot,
the strong player is fair and repeatable, and the clairvoyant's line replays to its units."""

from __future__ import annotations

import hashlib
import random

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import Paytable
from service.games import game_named
from service.games.scorpion import SCORPION, SUPER_SCORPION, Scorpion
from service.rtp import knowledge, search
from service.rtp.bots.scorpion import choose as bot_choose
from service.rtp.experts import scorpion as expert
from service.rtp.experts.scorpion_model import (
    Model,
    Solver,
    replay,
    search_moves,
)
from service.rules.actions import Draw, PlayAction
from service.rules.game import Secrets
from tests.unit.rtp_support import blinded, playable

GAMES = ("scorpion", "super-scorpion")
_TABLE = Paytable("rtp-lab", 1, "XXX", 520, 520, 520, (520,))
_ITSELF = Secrets(lambda s: str(s), lambda label, cards: tuple(cards))


def _deal(game_id: str, index: int) -> tuple[Scorpion, g.Game, tuple[str, ...], bytes]:
    rules = game_named(game_id)
    assert isinstance(rules, Scorpion)
    seed = hashlib.sha256(f"test-experts-scorpion|{game_id}|{index}".encode()).digest()
    deck = shuffle.derive_deck(seed, None, rules.decks)
    start = g.StartGame("sim", "x", game_id, 520, _TABLE, deck, "x", "", None, False)
    return rules, g.fold(g.decide(g.INITIAL, start)), g.hidden_cards(rules, deck), seed


@pytest.mark.parametrize("game_id", GAMES)
def test_the_model_agrees_with_the_rules_move_for_move(game_id: str) -> None:
    rng = random.Random(7)
    for index in range(4):
        rules = game_named(game_id)
        assert isinstance(rules, Scorpion)
        model = Model(rules)
        seed = hashlib.sha256(f"conformance|{index}".encode()).digest()
        table = rules.deal(shuffle.derive_deck(seed, None, rules.decks))
        for _ in range(120):
            state = model.world(table)
            legal = rules.legal_actions(table)
            assert [model.action(m) for m in model.all_moves(state)] == legal
            searched = search_moves(state[0], state[1], bool(state[2]), rules.decks > 1)
            assert set(searched) <= set(model.all_moves(state))
            assert model.units(state) == rules.units(table)
            if not legal:
                break
            # mostly moves the search would make (they go somewhere), now and then any
            pool = searched if searched and rng.random() < 0.8 else model.all_moves(state)
            move = rng.choice(pool)
            table = search.step(rules, table, model.action(move), _ITSELF)
            after = model.apply(state, move)
            assert after == model.world(table)
            assert model.units(after) == rules.units(table)


@pytest.mark.parametrize("game_id", GAMES)
def test_the_model_plays_as_the_reference_bot(game_id: str) -> None:
    for index in range(3):
        rules, state, sealed, seed = _deal(game_id, index)
        model = Model(rules)
        for _ in range(400):
            table = state.table
            assert table is not None
            legal = playable(state)
            action = bot_choose(rules, table, legal)
            secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
            move = model.bot_move(model.world(knowledge.clear_table(table, secrets)))
            assert action == (None if move is None else model.action(move))
            # the bot reads face-up cards only: the same from the player's view
            assert model.bot_move(model.view(table)) == move
            if action is None or state.status != "in_progress":
                break
            state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)


@pytest.mark.parametrize("game_id", GAMES)
def test_the_solver_line_replays_through_the_rules(game_id: str) -> None:
    rules, state, sealed, seed = _deal(game_id, 0)
    model = Model(rules)
    assert state.table is not None
    secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
    world = model.world(knowledge.clear_table(state.table, secrets))
    units, line, _, nodes = Solver(model).solve(world, 3_000)
    assert nodes <= 3_000
    assert model.units(replay(model, world, line)) == units
    for move in line:
        action = model.action(move)
        assert action in playable(state)
        state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)
    assert state.units == units


@pytest.mark.parametrize(
    ("rules", "deals", "steps", "again"), [(SCORPION, 2, 60, True), (SUPER_SCORPION, 1, 20, False)]
)
def test_the_strong_player_is_legal_repeatable_and_never_reads_a_sealed_card(
    rules: Scorpion, deals: int, steps: int, again: bool
) -> None:
    for index in range(deals):
        _, state, sealed, seed = _deal(rules.id, index)
        start = expert.STRONG.start
        player = start(rules, random.Random(index), None)
        twin = start(rules, random.Random(index), None)  # the same seed: the same choices
        blind = start(rules, random.Random(index), None)  # sees every sealed number changed
        for _ in range(steps):
            table = state.table
            assert table is not None
            legal = playable(state)
            action = player(table, legal)
            if again:
                assert twin(table, legal) == action
            assert blind(blinded(table), legal) == action
            if action is None or state.status != "in_progress":
                break
            assert action in legal
            state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)


@pytest.mark.parametrize("game_id", GAMES)
def test_the_clairvoyant_line_replays_to_the_units_it_claims(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(expert, "CLAIR_BUDGET", 4_000)
    rules, state, sealed, seed = _deal(game_id, 1)
    model = Model(rules)
    assert state.table is not None
    secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
    world = model.world(knowledge.clear_table(state.table, secrets))
    claimed, _ = expert.clairvoyant_line(model, world, 4_000)
    bot_units = model.rollout(world)[0]
    assert claimed >= bot_units  # the rollout step never does worse than the bot
    choose = expert.CLAIRVOYANT.start(rules, random.Random(0), secrets)
    for _ in range(600):
        table = state.table
        assert table is not None
        legal = playable(state)
        action = choose(table, legal)
        if action is None or state.status != "in_progress":
            break
        state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)
    assert state.units == claimed


def test_the_clairvoyant_needs_the_secrets() -> None:
    with pytest.raises(ValueError, match="secrets"):
        expert.CLAIRVOYANT.start(SCORPION, random.Random(0), None)


def test_versions() -> None:
    assert expert.STRONG.kind == "strong"
    assert expert.STRONG.version == "scorpion-strong/1"
    assert expert.CLAIRVOYANT.kind == "clairvoyant"
    assert expert.CLAIRVOYANT.version == "scorpion-clairvoyant/1"
    assert isinstance(Draw(), PlayAction)
