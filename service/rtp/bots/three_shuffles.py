"""The reference Three Shuffles and a Draw bot: deterministic, seeing only what a player sees
(every card of this game lies face up, so that is the whole table).

Heuristic, each turn:

1. Play a fan's top card to its foundation (the first such fan).
2. Else move a fan's top card onto another fan (the first such move). With one deck this never
   loses anything: the card goes onto the one card of its suit a rank higher, which cannot reach
   its foundation before it anyway, and it uncovers the card beneath. No move can be undone by
   another, so this never loops.
3. Stuck: if some Draw of a buried card lets steps 1-2 finish the game, make it; else redeal
   while a redeal is left; else make the Draw after which steps 1-2 put the most cards up.
4. With nothing left, stop (collect).
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved, CardPicked
from service.games.three_shuffles import legal_moves
from service.rules import fold
from service.rules.actions import MoveCards, Pick, PlayAction, Redeal
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "three-shuffles"
BOT_VERSION = "three-shuffles-bot/1"


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    moves = [a for a in legal if isinstance(a, MoveCards)]
    to_foundation = [m for m in moves if m.target.startswith("foundation")]
    if to_foundation or moves:
        return (to_foundation or moves)[0]
    picks = [a for a in legal if isinstance(a, Pick)]
    scored = [(_after_greedy(rules, _picked(table, p)), -i, p) for i, p in enumerate(picks)]
    best = max(scored, default=None, key=lambda s: (s[0], s[1]))
    if best is not None and best[0] == rules.max_units:
        return best[2]
    redeal = next((a for a in legal if isinstance(a, Redeal)), None)
    if redeal is not None:
        return redeal
    return best[2] if best is not None else None


def _picked(table: Table, pick: Pick) -> Table:
    cards = table.pile(pick.source).cards
    index = cards.index(pick.card)
    return fold.apply(table, CardPicked(pick.source, index, pick.card, pick.target, 0))


def _after_greedy(rules: GameRules, table: Table) -> int:
    """The units steps 1-2 reach from ``table`` with no redeal or Draw."""
    while True:
        moves = legal_moves(table)
        if not moves:
            return rules.units(table)
        source, target = next((m for m in moves if m[1].startswith("foundation")), moves[0])
        card = table.pile(source).cards[-1]
        assert isinstance(card, str)
        table = fold.apply(table, CardMoved(source, target, (card,)))
