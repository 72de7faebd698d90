"""Salic Law's strong player and clairvoyant bound: the search model against the real rules,
fair play on sealed tables, and the bound's line through the real decider."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.games.salic_law import (
    FOUNDATION_PILES,
    HAND,
    LAYOUT,
    QUEENS,
    SALIC_LAW,
    TABLEAU_PILES,
)
from service.rtp import knowledge, search, simulate
from service.rtp.bots.salic_law import BOT_VERSION
from service.rtp.bots.salic_law import choose as bot_choose
from service.rtp.experts import salic_law as expert
from service.rtp.players import Choose, Player, stateless
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import CANONICAL_DECK, RANK_OF, Card
from service.rules.game import Reveal
from service.rules.table import Pile, Table, seal
from tests.unit.rtp_support import blinded, playable

GAME = "salic-law"
_NO_SHUFFLE = shuffle.redealer(b"salic-law has no redeal", None)
_OPEN = knowledge.clear_secrets((), _NO_SHUFFLE)  # a table with no sealed card

_BOT = Player("bot", BOT_VERSION, stateless(bot_choose), "the reference bot")


def _start(index: int) -> tuple[g.Game, tuple[Card, ...], bytes]:
    seed = simulate.deal_seed(GAME, index)
    deck = shuffle.derive_deck(seed, None, SALIC_LAW.decks)
    start = g.StartGame("sim", "expert", GAME, 520, simulate._TABLE, deck, "x", "", None, False)
    return g.fold(g.decide(g.INITIAL, start)), g.hidden_cards(SALIC_LAW, deck), seed


def _as_model(action: PlayAction) -> tuple[int, int]:
    if isinstance(action, Draw):
        return expert.DRAW
    assert isinstance(action, MoveCards)
    source = TABLEAU_PILES.index(action.source)
    if action.target in FOUNDATION_PILES:
        return (source, expert.FOUNDATION)
    return (source, TABLEAU_PILES.index(action.target))


def _check_random_play(table: Table, reveal: Reveal, rng: random.Random) -> tuple[int, Table]:
    """Random play through the real rules: at every position the model lists the moves the
    rules allow (less a lone card's move into a space, which changes nothing but the column's
    name), and plays each to the position the rules reach. Returns the moves into spaces and
    the table it ends at."""
    into_spaces = 0
    for _ in range(600):
        legal = SALIC_LAW.legal_actions(table)
        hand, cols, c = expert.read(table)
        real = {_as_model(a) for a in legal}
        lone = {m for m in real if m[1] >= 0 and len(cols[m[0]]) == 1}
        assert set(expert.moves(hand, cols, c)) == real - lone
        if not legal:
            break
        ups = [a for a in legal if isinstance(a, MoveCards) and a.target in FOUNDATION_PILES]
        draws = [a for a in legal if isinstance(a, Draw)]
        action = rng.choice(ups if ups and rng.random() < 0.5 else draws or legal)
        into_spaces += _as_model(action)[1] >= 0
        table = search.step(SALIC_LAW, table, action, reveal)
        drawn = None
        if isinstance(action, Draw):
            last = TABLEAU_PILES[len(expert.read(table)[1]) - 1]
            drawn = RANK_OF[table.pile(last).up[-1]]
        expert.apply(cols, c, _as_model(action), drawn)
        assert expert.read(table) == (hand - isinstance(action, Draw), cols, c)
        assert SALIC_LAW.units(table) == sum(c[1:12])
    return into_spaces, table


@pytest.mark.parametrize("index", range(3))
def test_the_model_moves_as_the_rules_do_from_the_deal(index: int) -> None:
    deck = shuffle.derive_deck(simulate.deal_seed(GAME, index), None, SALIC_LAW.decks)
    table, sealed = seal(SALIC_LAW.deal(deck))
    reveal = knowledge.clear_secrets(sealed, _NO_SHUFFLE)
    _, end = _check_random_play(table, reveal, random.Random(index))
    assert not end.pile(HAND).cards  # the whole deal, and the endgame after it


def test_the_model_moves_as_the_rules_do_in_endgames() -> None:
    """The same from endgames with spaces (random play from a deal seldom leaves any)."""
    into_spaces = sum(
        _check_random_play(_endgame_table(random.Random(seed), 5), _OPEN, random.Random(seed))[0]
        for seed in range(12)
    )
    assert into_spaces


def _endgame_table(rng: random.Random, low: int) -> Table:
    """An endgame: every foundation at a random top from ``low`` up, the other cards (and a
    King on every column) dealt at random into the eight columns."""
    tops = [rng.randint(low, 11) for _ in FOUNDATION_PILES]
    deck = list(CANONICAL_DECK * 2)
    rng.shuffle(deck)
    by_rank: dict[int, list[Card]] = {}
    for card in deck:
        by_rank.setdefault(RANK_OF[card], []).append(card)
    piles = [Pile()] * len(LAYOUT.specs)
    piles[LAYOUT.index[QUEENS]] = Pile(tuple(by_rank[12]))
    for f, top in zip(FOUNDATION_PILES, tops, strict=True):
        piles[LAYOUT.index[f]] = Pile(tuple(by_rank[r].pop() for r in range(1, top + 1)))
    rest = [card for r in range(1, 12) for card in by_rank[r]]
    columns: list[list[Card]] = [[king] for king in by_rank[13]]
    for card in rest:
        columns[rng.randrange(len(columns))].append(card)
    for p, column in zip(TABLEAU_PILES, columns, strict=True):
        piles[LAYOUT.index[p]] = Pile(tuple(column))
    piles[LAYOUT.index[HAND]] = Pile()
    return Table(LAYOUT, tuple(piles), SALIC_LAW.passes, 0)


@pytest.mark.parametrize("index", [0, 6, 11, 28])
def test_the_endgame_search_is_exact_against_the_real_rules(index: int) -> None:
    """From the endgame the reference bot leaves (these deals: small enough for an exhaustive
    search through the real rules, and lost), the model's search finds as many units as that
    search, says it is exhaustive, and its line replays through the real rules to them."""
    deck = shuffle.derive_deck(simulate.deal_seed(GAME, index), None, SALIC_LAW.decks)
    table = SALIC_LAW.deal(deck)  # a table in clear: every card known
    while table.pile(HAND).cards:
        action = bot_choose(SALIC_LAW, table, SALIC_LAW.legal_actions(table))
        assert action is not None
        table = search.step(SALIC_LAW, table, action, _OPEN)
    _, cols, c = expert.read(table)
    units, line, exhaustive = expert._solve(cols, c, expert.ENDGAME_NODES, False)
    truth = search.best_line(SALIC_LAW, table, _OPEN, 20_000)
    assert exhaustive
    assert truth.exhaustive
    assert units == truth.units < SALIC_LAW.max_units
    for move in line:
        action = expert._action(move, SALIC_LAW.legal_actions(table))
        table = search.step(SALIC_LAW, table, action, _OPEN)
    assert SALIC_LAW.units(table) == units


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
    chooser = player.start(SALIC_LAW, rng, secrets if player.kind == "clairvoyant" else None)
    return _play_state(state, sealed, seed, chooser)[1]


def test_the_strong_player_is_fair_legal_and_deterministic() -> None:
    rules = game_named(GAME)
    start = expert.STRONG.start
    first, units = _play(
        4, start(rules, random.Random(7), None), start(rules, random.Random(7), None)
    )
    again, _ = _play(4, start(rules, random.Random(7), None))
    assert first == again
    assert first[-1] is None  # it stops by itself
    assert 0 < units <= SALIC_LAW.max_units


def test_the_clairvoyant_plays_its_line_to_the_units_it_claims() -> None:
    """Its line replays through the real decider to the units its plan claims; the strong
    player's line it replays in the model reaches what the strong player really reaches, so
    the bound is never below the strong player."""
    rules = game_named(GAME)
    index = 2
    state, sealed, seed = _start(index)
    assert state.table is not None
    secrets = knowledge.clear_secrets(sealed, shuffle.redealer(seed, None))
    rng = random.Random(simulate.player_seed(GAME, index))
    claimed, _ = expert._clairvoyant_plan(rules, state.table, secrets, rng)
    bound = _units(index, expert.CLAIRVOYANT)
    assert bound == claimed
    world = knowledge.clear_table(state.table, secrets)
    hand = [card for card in reversed(world.pile(HAND).cards) if isinstance(card, str)]
    _, cols, c = expert.read(world)
    expert._strong_line(hand, cols, c, random.Random(simulate.player_seed(GAME, index)))
    strong = _units(index, expert.STRONG)
    assert expert._solve(cols, c, expert.ENDGAME_NODES, False)[0] == strong <= bound
    assert bound >= _units(index, _BOT)
