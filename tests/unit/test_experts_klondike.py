"""The klondike family's strong player and clairvoyant bound: the search model agrees with the
rules move for move (the solver's moves replay through the real rules too), its bot plays as the
reference bot, the strong player plays fair, and the bound's line replays to the units it
claims."""

from __future__ import annotations

import random

import pytest

from service.core import game_decider as g
from service.core import shuffle
from service.core.game_verification import CHECKS, verify_game
from service.games import game_named
from service.games import klondike as kl
from service.rtp import knowledge, simulate
from service.rtp.experts import klondike as expert
from service.rtp.experts import klondike_model as km
from service.rtp.experts import klondike_strong as strong
from service.rtp.experts.cards import NUMBER
from service.rtp.players import Player
from service.rules.actions import Draw, PlayAction, Undo
from service.rules.cards import RANKS
from service.rules.game import GameRules, Secrets
from service.rules.table import Pile, Table
from tests.builders import GBP, postings_for, recorded
from tests.unit.rtp_support import blinded, deal, play_model_line, playable

GAMES = ("vegas-draw1", "vegas-draw3", "klondike")


def _step(rules: GameRules, table: Table, action: PlayAction, secrets: Secrets) -> Table:
    return g.apply_all(table, g.decide_on_table(rules, table, action, secrets))


@pytest.mark.parametrize("game_id", GAMES)
def test_the_model_agrees_with_the_rules_move_for_move(game_id: str) -> None:
    rules = game_named(game_id)
    model = km.Model(rules)
    solver = km.Solver(model)
    rng = random.Random(7)
    checked = 0
    for index in range(3):
        state, sealed, redeal = deal(game_id, index)
        secrets = knowledge.clear_secrets(sealed, redeal)
        for _ in range(150):
            if state.status != "in_progress":
                break
            assert state.table is not None
            table = state.table
            world = knowledge.clear_table(table, secrets)
            st = km.state_of(world)
            assert km.units(st) == rules.units(table)
            legal = playable(state)
            by_move: dict[km.Move, list[PlayAction]] = {}
            for action in legal:
                by_move.setdefault(model.move_of(world, action), []).append(action)
            assert sorted(model.legal(st)) == sorted(by_move)
            for m, actions in by_move.items():
                assert km.real_action(world, m) in actions
                after = knowledge.clear_table(_step(rules, table, actions[0], secrets), secrets)
                assert model.step(st, m) == km.state_of(after)
                checked += 1
            # The solver's moves (stock moves too) and its automatic ones replay as it says.
            auto: list[km.Move] = []
            settled = solver.settle(st, auto)
            real = play_model_line(rules, world, auto, secrets)
            assert km.state_of(real) == settled
            for seg, child in list(solver.moves(settled))[:6]:
                after_seg = play_model_line(rules, real, list(seg), secrets)
                assert km.state_of(after_seg) == model.automatic(child)
            if not legal:
                break
            # Wander: mostly moves, so the stock and the foundations both change.
            moves = [a for a in legal if not isinstance(a, g.Draw | g.Recycle)]
            action = rng.choice(moves if moves and rng.random() < 0.7 else legal)
            state = g.fold(g.decide(state, action, sealed, redeal), state)
    assert checked > 300


def test_auto_complete_is_the_model_s_too() -> None:
    """With nothing left to draw or turn, the rules play every card up: the model too."""
    rules = game_named("klondike")
    model = km.Model(rules)
    kc, qh, kh = NUMBER["KC"], NUMBER["QH"], NUMBER["KH"]
    founds = {"S": 13, "H": 11, "D": 13, "C": 12}
    piles = [Pile()] * len(kl.LAYOUT.specs)
    for f, (suit, height) in zip(kl.F, founds.items(), strict=True):
        piles[f] = Pile(tuple(r + suit for r in RANKS[:height]))
    piles[kl.T[0]] = Pile(("KC", "QH"))
    piles[kl.T[1]] = Pile(("KH",))
    table = Table(kl.LAYOUT, tuple(piles), None, 0)
    st = km.state_of(table)
    assert st[0][:2] == ((kc, qh), (kh,))
    assert km.units(st) == 49
    move = (km.COL_COL, 1, 2, 1)  # the King to an empty column: then nothing is left to do
    after = _step(rules, table, km.real_action(table, move), Secrets(lambda s: str(s)))
    assert rules.units(after) == 52
    assert model.step(st, move) == km.state_of(after)


def _play(
    game_id: str, index: int, player: Player, blind: bool, steps: int, undo: bool = False
) -> list[PlayAction | None]:
    """The player's choices on a lab deal (``undo``: offered an undo wherever the rules allow
    one, as a player at the table is)."""
    rules = game_named(game_id)
    state, sealed, redeal = deal(game_id, index)
    choose = player.start(rules, random.Random(simulate.player_seed(game_id, index)), None)
    chosen: list[PlayAction | None] = []
    for _ in range(steps):
        if state.status != "in_progress":
            break
        assert state.table is not None
        legal = playable(state) + ([Undo()] if undo and state.undo is not None else [])
        table = blinded(state.table) if blind else state.table
        action = choose(table, legal)
        chosen.append(action)
        if action is None:
            break
        assert action in legal
        state = g.fold(g.decide(state, action, sealed, redeal), state)
    return chosen


@pytest.mark.parametrize("game_id", GAMES)
def test_the_determinized_player_is_legal_repeatable_and_never_reads_a_sealed_card(
    game_id: str,
) -> None:
    """klondike-strong/3, offered undos or not: where it may, it peeks at a draw and takes it
    back; where it is not offered one, it never undoes."""
    player = strong.determinized_player("klondike-strong/test", worlds=3, budget=150)
    peeks = {False: 0, True: 0}
    for index in (0, 1):
        for undo in (False, True):
            plain = _play(game_id, index, player, blind=False, steps=70, undo=undo)
            assert _play(game_id, index, player, blind=False, steps=70, undo=undo) == plain
            assert _play(game_id, index, player, blind=True, steps=70, undo=undo) == plain
            peeks[undo] += sum(isinstance(a, Undo) for a in plain)
    assert peeks[False] == 0
    # Klondike draws its whole stock through first: nothing is left to peek at.
    assert (peeks[True] > 0) == (game_id != "klondike")


def test_a_peek_shows_the_next_draw_and_is_remembered_by_slot() -> None:
    """Draw, remember, undo: the player's view of the stock then holds the three cards the
    draw showed, in their slots (the rest stay unknown), until they are drawn for real."""
    state, sealed, redeal = deal("vegas-draw3", 0)
    before = state.table
    assert before is not None
    secrets = knowledge.clear_secrets(sealed, redeal)
    true_stock = km.state_of(knowledge.clear_table(before, secrets))[3]
    peeked: dict[int, int] = {}
    drawn = g.fold(g.decide(state, Draw(), sealed, redeal), state)
    assert drawn.table is not None
    strong._remember(drawn.table, len(true_stock), peeked)
    undone = g.fold(g.decide(drawn, Undo(), sealed, redeal), drawn)
    assert undone.table == before
    stock = strong._view(before, peeked)[3]
    assert stock[-3:] == true_stock[-3:]
    assert set(stock[:-3]) == {km.UNKNOWN}
    again = g.fold(g.decide(undone, Draw(), sealed, redeal), undone)
    assert again.table is not None
    assert km.UNKNOWN in strong._view(again.table, peeked)[3]
    assert not peeked  # drawn for real: the table shows them now


@pytest.mark.parametrize("game_id", GAMES)
def test_the_clairvoyant_line_replays_to_the_units_it_claims(game_id: str) -> None:
    rules = game_named(game_id)
    for index in (0, 1, 2):
        state, sealed, redeal = deal(game_id, index)
        assert state.table is not None
        secrets = knowledge.clear_secrets(sealed, redeal)
        world = km.state_of(knowledge.clear_table(state.table, secrets))
        claimed, line = expert.plan(rules, world, 2_000, 50, 2_000)
        bound = expert.clairvoyant_player("klondike-clairvoyant/test", 2_000, 50, 2_000)
        choose = bound.start(rules, random.Random(0), secrets)
        for _ in range(len(line) + 1):
            if state.status != "in_progress":
                break
            assert state.table is not None
            action = choose(state.table, playable(state))
            if action is None:
                break
            state = g.fold(g.decide(state, action, sealed, redeal), state)
        assert state.units == claimed


@pytest.mark.parametrize("game_id", ["vegas-draw3", "vegas-draw1"])
def test_the_strong_player_s_game_with_its_peeks_verifies_as_the_audit_checks_it(
    game_id: str,
) -> None:
    """A whole game the strong player plays at the table (offered an undo, so it peeks and
    takes its draws back), recorded and collected as the server records it, passes every check
    of the server's own verification (every command legal under the rules, every card the one
    the revealed seed dealt, the payout at the recorded M)."""
    rules = game_named(game_id)
    seed = bytes([7]) * 32
    deck = shuffle.derive_deck(seed, None, rules.decks)
    sealed = g.hidden_cards(rules, deck)
    redeals = shuffle.redealer(seed, None)
    start = g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant=game_id,
        stake=520,
        paytable=GBP,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(seed),
    )
    events = g.decide(g.INITIAL, start, sealed)
    state = g.fold(events)
    player = strong.determinized_player("klondike-strong/test", worlds=4, budget=60, widen=0)
    choose = player.start(rules, random.Random(1), None)
    undos = 0
    for _ in range(400):
        if state.status != "in_progress":
            break
        assert state.table is not None
        legal = playable(state) + ([Undo()] if state.undo is not None else [])
        action = choose(state.table, legal)
        if action is None:
            break
        undos += isinstance(action, Undo)
        new = g.decide(state, action, sealed, redeals)
        events += new
        state = g.fold(new, state)
    events += g.decide(state, g.Collect(server_seed=seed.hex()), sealed, redeals)
    assert undos > 0  # it peeked
    result = verify_game(recorded("game-1", events), postings_for("game-1", events), {"GBP": GBP})
    assert result.findings == []
    assert result.checks == dict.fromkeys(CHECKS, "pass")
