"""What the RTP lab's player tests share: a simulated deal as the lab deals it, the actions a
player may choose, a table blinded by renumbering its sealed slots, a deal played out by
its reference bot with the bots' contract checked on the way, and a Klondike search model's
line played through the real rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.rtp import simulate
from service.rtp.bots import bot_for
from service.rtp.experts import klondike_model as km
from service.rules.actions import PlayAction
from service.rules.game import GameRules, Secrets, Shuffle
from service.rules.table import Pile, Table, seal, unseal


def deal(game_id: str, index: int) -> tuple[g.Game, tuple[str, ...], Shuffle]:
    """The lab's deal ``index`` of the game, started: the game, its sealed cards and its
    redeals' shuffle."""
    rules = game_named(game_id)
    seed = simulate.deal_seed(game_id, index)
    deck = shuffle.derive_deck(seed, None, rules.decks)
    start = g.StartGame("sim", "x", game_id, 520, simulate._TABLE, deck, "x", "", None, False)
    return (
        g.fold(g.decide(g.INITIAL, start)),
        g.hidden_cards(rules, deck),
        shuffle.redealer(seed, None),
    )


def playable(state: g.Game) -> list[PlayAction]:
    """The actions a simulated player chooses among (undo aside: the lab offers it only to a
    player that takes it; every player collects by stopping)."""
    return [c for c in g.legal_commands(state) if not isinstance(c, g.Collect | g.Undo)]


def blinded(table: Table) -> Table:
    """The table with every sealed number changed: a fair player cannot tell the difference."""
    piles = tuple(
        Pile(tuple(s + 1000 if isinstance(s, int) else s for s in p.cards), p.down)
        for p in table.piles
    )
    return replace(table, piles=piles)


def bot_play_out(rules: GameRules, seed: int) -> list[Table]:
    """Deal ``seed`` (the deck of ``bytes([seed]) * 32``) played to the end by its family's
    reference bot: every table from the deal to where the bot stops. The bot contract is checked
    at every step, once for every bot: it chooses a listed action or stops, chooses the same on
    the table with its sealed numbers changed (it reads no card a player has not seen), and
    stops within the lab's limit of actions (a game of unlimited passes may be stopped there, as
    the lab stops it); no card is created or lost on the way."""
    choose, _version = bot_for(rules)
    deck = shuffle.derive_deck(bytes([seed]) * 32, None, rules.decks)
    table, hidden = seal(rules.deal(deck))
    reveal = g.revealer(hidden, shuffle.redealer(bytes([seed]) * 32, None))
    tables = [table]
    for _ in range(simulate.MAX_ACTIONS):
        legal = rules.legal_actions(table)
        action = choose(rules, table, legal)
        assert choose(rules, blinded(table), legal) == action, "the bot read a sealed card"
        if action is None:
            break
        assert action in legal, action
        table = g.apply_all(table, g.decide_on_table(rules, table, action, reveal))
        tables.append(table)
    else:
        assert rules.passes is None, f"{rules.id}: the bot did not stop in time"
    assert Counter(unseal(table, hidden).slots()) == Counter(deck)
    return tables


def play_model_line(
    rules: GameRules, table: Table, moves: Sequence[km.Move], secrets: Secrets
) -> Table:
    """Play a Klondike search model's moves through the real rules, each one legal where it is
    played."""
    for m in moves:
        action = km.real_action(table, m)
        assert action in rules.legal_actions(table), (m, action)
        table = g.apply_all(table, g.decide_on_table(rules, table, action, secrets))
    return table
