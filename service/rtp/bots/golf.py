"""The reference Golf bot: a deterministic greedy player that sees only what a player sees.

Heuristic, each turn:

1. For every legal column-to-waste move, count the longest chain of plays it starts: the move
   itself, then the most further column-to-waste moves that could follow one after another
   using only the visible columns (every Golf column card is face up), with no draw between.
   Play the move with the longest chain; on a tie, the leftmost column.
2. With no move, draw the stock's next card.
3. With neither, stop (collect).

It reads only face-up cards (the columns and the waste's top card) and never a sealed slot's
value, so given the sealed table it cannot cheat. It never stops while an action remains:
cleared cards never decrease, so playing on can only pay more.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games.golf import TABLEAU_PILES, WASTE, fits_waste
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import RANK_OF, Card
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "golf"
BOT_VERSION = "golf-bot/1"

Heights = tuple[int, ...]


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    columns = tuple(table.pile(p).up for p in TABLEAU_PILES)
    heights: Heights = tuple(len(c) for c in columns)
    memo: dict[tuple[Heights, int], int] = {}
    best: MoveCards | None = None
    best_chain = 0
    for action in legal:  # legal lists the columns left to right, so ties go leftmost
        if not isinstance(action, MoveCards) or action.target != WASTE:
            continue
        c = TABLEAU_PILES.index(action.source)
        card = columns[c][-1]
        after = _without_top(heights, c)
        chain = 1 + _longest_chain(columns, after, card, memo)
        if chain > best_chain:
            best, best_chain = action, chain
    if best is not None:
        return best
    return next((a for a in legal if isinstance(a, Draw)), None)


def _without_top(heights: Heights, c: int) -> Heights:
    return (*heights[:c], heights[c] - 1, *heights[c + 1 :])


def _longest_chain(
    columns: tuple[tuple[Card, ...], ...],
    heights: Heights,
    waste: Card,
    memo: dict[tuple[Heights, int], int],
) -> int:
    """The most column-to-waste moves that can follow one another from this position."""
    key = (heights, RANK_OF[waste])
    found = memo.get(key)
    if found is not None:
        return found
    best = 0
    for c, h in enumerate(heights):
        if h and fits_waste(card := columns[c][h - 1], waste):
            best = max(best, 1 + _longest_chain(columns, _without_top(heights, c), card, memo))
    memo[key] = best
    return best
