"""The reference Pyramid bot: a deterministic greedy player that sees only what a player sees.

Heuristic, each turn:

1. If a removal is legal, make one, chosen by (best first):
   a. a King alone (it costs nothing: no other card pairs with a King);
   b. the most pyramid cards removed (the pyramid is what blocks a win; the stock's and the
      waste's cards come round anyway);
   c. the most pyramid cards it uncovers (cards whose last cover it takes away);
   d. a waste card rather than the stock's top card (the waste's top is buried by the next
      draw, while the stock's top card is still playable as the waste's top after a draw);
   e. the deepest pyramid card (the lower a card lies, the more cards it helps cover);
   f. the first in the order the rules list them.
2. With no removal, draw the stock's next card.
3. With neither, stop (collect).

It reads only face-up cards (the pyramid's and the stock's and waste's top cards) and never a
sealed slot's value, so given the sealed table it cannot cheat. It never stops while an action
remains: removed cards never come back, so playing on can only pay more.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games.pyramid import COVERED_BY, PYRAMID_CARDS, PYRAMID_NUMBER, WASTE, card_at
from service.rules.actions import Draw, PlayAction, Remove
from service.rules.building import is_king
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "pyramid"
BOT_VERSION = "pyramid-bot/1"


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    removals = [a for a in legal if isinstance(a, Remove)]
    if removals:
        # max() keeps the first of equal keys: ties go to the rules' order.
        return max(removals, key=lambda a: _score(table, a))
    return next((a for a in legal if isinstance(a, Draw)), None)


def _score(table: Table, action: Remove) -> tuple[bool, int, int, bool, int]:
    """What the bot prefers in a removal, as a key that sorts best last (rules a to e)."""
    removed = {PYRAMID_NUMBER[p] for p in action.piles if p in PYRAMID_NUMBER}
    king = len(action.piles) == 1 and is_king(_card(table, action.piles[0]))
    deepest = max(removed, default=-1)  # pyramid numbers grow row by row, apex first
    return king, len(removed), _uncovered(table, removed), WASTE in action.piles, deepest


def _card(table: Table, pile_id: str) -> str:
    top = table.pile(pile_id).top
    assert top is not None  # a legal removal names face-up cards only
    return top


def _uncovered(table: Table, removed: set[int]) -> int:
    """Pyramid cards still covered now whose every remaining cover is in ``removed``."""
    count = 0
    for n in range(PYRAMID_CARDS):
        if n in removed or card_at(table, n) is None:
            continue
        left = [c for c in COVERED_BY[n] if card_at(table, c) is not None]
        if left and all(c in removed for c in left):
            count += 1
    return count
