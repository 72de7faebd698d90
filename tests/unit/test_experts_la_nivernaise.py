"""La Nivernaise's strong player and clairvoyant bound: the search model against the real
rules, fair play on sealed tables, and the bound's line through the real decider."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.games.la_nivernaise import (
    FLANK_PILES,
    FOUNDATION_PILES,
    LA_NIVERNAISE,
    LINE_PILES,
    UP,
    S,
)
from service.rtp import knowledge, search, simulate
from service.rtp.bots import la_nivernaise as reference_bot
from service.rtp.experts import la_nivernaise as expert
from service.rtp.players import Choose, Player, stateless
from service.rules.actions import Draw, MoveCards, PlayAction, Redeal
from service.rules.game import Reveal
from service.rules.table import Table, seal
from tests.unit.rtp_support import blinded, playable

GAME = "la-nivernaise"
RULES = LA_NIVERNAISE

_BOT = Player(
    "bot", reference_bot.BOT_VERSION, stateless(reference_bot.choose), "the reference bot"
)


def _start(index: int) -> tuple[g.Game, tuple[str, ...], bytes]:
    seed = simulate.deal_seed(GAME, index)
    deck = shuffle.derive_deck(seed, None, RULES.decks)
    start = g.StartGame("sim", "expert", GAME, 520, simulate._TABLE, deck, "x", "", None, False)
    return g.fold(g.decide(g.INITIAL, start)), g.hidden_cards(RULES, deck), seed


def _as_model(action: PlayAction) -> expert.Move:
    if isinstance(action, Draw):
        return expert.DEAL_MOVE
    if isinstance(action, Redeal):
        return expert.REDEAL_MOVE
    assert isinstance(action, MoveCards)
    if action.target in FLANK_PILES:
        return (expert.LINE_TO_FLANK, LINE_PILES.index(action.source), 0)
    up = FOUNDATION_PILES.index(action.target) < UP
    direction = expert.UP_ if up else expert.DOWN_
    if action.source in FLANK_PILES:
        return (expert.FLANK_TO_FOUNDATION, FLANK_PILES.index(action.source), direction)
    return (expert.LINE_TO_FOUNDATION, LINE_PILES.index(action.source), direction)


def _true_pos(table: Table, reveal: Reveal) -> expert.Pos:
    stock = [expert.card_id(reveal(slot)) for slot in reversed(table.piles[S].cards)]
    return expert.read(table, stock)


def _first_flank(table: Table, action: PlayAction) -> bool:
    """A move to a flank other than the first empty one (the model's) is left out."""
    if not isinstance(action, MoveCards) or action.target not in FLANK_PILES:
        return True
    return action.target == next(f for f in FLANK_PILES if not table.pile(f).cards)


@pytest.mark.parametrize("index", range(4))
def test_the_model_moves_as_the_rules_do(index: int) -> None:
    """Random play through the real rules, deal to end, redeals included: at every position
    the model lists the moves the rules allow and plays each to the position they reach."""
    deck = shuffle.derive_deck(simulate.deal_seed(GAME, index), None, RULES.decks)
    table, sealed = seal(RULES.deal(deck))
    reveal = knowledge.clear_secrets(sealed, shuffle.redealer(b"-", None))
    rng = random.Random(index)
    redeals = 0
    for _ in range(2_000):
        legal = RULES.legal_actions(table)
        p = _true_pos(table, reveal)
        assert {_as_model(a) for a in legal} == set(expert.moves(p))
        if not legal:
            break
        ups = [a for a in legal if isinstance(a, MoveCards) and a.target in FOUNDATION_PILES]
        deals = [a for a in legal if isinstance(a, Draw | Redeal)]
        flanks = [a for a in legal if a not in ups and a not in deals and _first_flank(table, a)]
        roll = rng.random()
        pick = ups if ups and roll < 0.6 else flanks if flanks and roll < 0.75 else deals
        action = rng.choice(pick or ups or flanks)
        redeals += isinstance(action, Redeal)
        table = search.step(RULES, table, action, reveal)
        expert.apply(p, _as_model(action))
        assert _true_pos(table, reveal).key() == p.key()
        assert RULES.units(table) == p.units
    assert redeals == 2


def _play(
    index: int, chooser: Choose, blind: Choose | None = None
) -> tuple[list[PlayAction | None], int]:
    state, sealed, seed = _start(index)
    return _play_state(state, sealed, seed, chooser, blind)


def _play_state(
    state: g.Game,
    sealed: tuple[str, ...],
    seed: bytes,
    chooser: Choose,
    blind: Choose | None = None,
) -> tuple[list[PlayAction | None], int]:
    """Play to the end through the real decider (``blind``: a twin given sealed tables with
    every sealed number changed, which must choose alike)."""
    actions: list[PlayAction | None] = []
    for _ in range(simulate.MAX_ACTIONS):
        assert state.table is not None
        legal = playable(state)
        action = chooser(state.table, legal)
        if blind is not None:
            assert blind(blinded(state.table), legal) == action
        actions.append(action)
        if action is None:
            break
        assert action in legal
        state = g.fold(g.decide(state, action, sealed, shuffle.redealer(seed, None)), state)
    return actions, state.units


def _units(index: int, player: Player) -> int:
    """What ``player`` ends deal ``index`` of the RTP lab with, played as the lab's runner
    plays it (its random numbers, and the deal's secrets for the clairvoyant), whether or not
    the roster lists it yet."""
    state, sealed, seed = _start(index)
    secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
    rng = random.Random(simulate.player_seed(GAME, index))
    chooser = player.start(RULES, rng, secrets if player.kind == "clairvoyant" else None)
    return _play_state(state, sealed, seed, chooser)[1]


def test_the_strong_player_is_fair_legal_and_deterministic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expert, "WORLDS", 4)  # the same decisions, sooner
    rules = game_named(GAME)
    start = expert.STRONG.start
    first, units = _play(
        1, start(rules, random.Random(7), None), start(rules, random.Random(7), None)
    )
    again, _ = _play(1, start(rules, random.Random(7), None))
    assert first == again
    assert first[-1] is None  # it stops by itself
    assert 0 < units <= RULES.max_units


def test_the_clairvoyant_plays_its_line_to_the_units_it_claims(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its line replays through the real decider to the units its plan claims; the strong
    player's line it replays in the model reaches what the strong player really reaches, so
    the bound is never below the strong player."""
    monkeypatch.setattr(expert, "WORLDS", 4)
    rules = game_named(GAME)
    index = 3
    state, sealed, seed = _start(index)
    assert state.table is not None
    secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
    rng = random.Random(simulate.player_seed(GAME, index))
    claimed, _ = expert._clairvoyant_plan(rules, state.table, secrets, rng)
    bound = _units(index, expert.CLAIRVOYANT)
    assert bound == claimed
    p = expert.read(knowledge.clear_table(state.table, secrets))
    expert._strong_line(p, random.Random(simulate.player_seed(GAME, index)))
    strong = _units(index, expert.STRONG)
    assert p.units == strong <= bound
    assert bound >= _units(index, _BOT)
