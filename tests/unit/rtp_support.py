"""What the RTP lab's player tests share: a simulated deal as the lab deals it, the actions a
player may choose, and a table blinded by renumbering its sealed slots."""

from __future__ import annotations

from dataclasses import replace

from service.core import game_decider as g
from service.core import shuffle
from service.games import game_named
from service.rtp import simulate
from service.rules.actions import PlayAction
from service.rules.game import Shuffle
from service.rules.table import Pile, Table


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
    """The actions a simulated player chooses among (the lab never undoes, and collects by
    stopping)."""
    return [c for c in g.legal_commands(state) if not isinstance(c, g.Collect | g.Undo)]


def blinded(table: Table) -> Table:
    """The table with every sealed number changed: a fair player cannot tell the difference."""
    piles = tuple(
        Pile(tuple(s + 1000 if isinstance(s, int) else s for s in p.cards), p.down)
        for p in table.piles
    )
    return replace(table, piles=piles)
