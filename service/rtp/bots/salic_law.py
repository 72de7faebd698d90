"""The reference Salic Law bot: a deterministic greedy player that sees only what a player sees.

Heuristic, each turn, the first that applies:

1. A column's top card to a foundation (cards on foundations are what pay; foundations ignore
   suit, so every foundation a card fits is as good as another). Best first: one that uncovers
   a card which then goes to a foundation too, then one from the column with the most cards
   (it buries the most); then the rules' order.
2. Draw the hand's next card.
3. With the hand empty: dig towards the card nearest a column's top that fits a foundation
   now, when the spaces can hold every card above it: move that column's top card into the
   first space. Nearest first; then the rules' order.
4. Otherwise stop (collect).

Every move either puts a card on a foundation or fills a space without emptying its column
(it digs only in columns holding at least two cards on their King), so the foundations grow or
the spaces shrink at each step: it never loops and always ends. It reads only face-up cards (the
columns and the foundations' tops) and the hand's size, never a sealed slot's value, so given
the sealed table it cannot cheat.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games.salic_law import (
    FOUNDATION_PILES,
    TABLEAU_PILES,
    builds_up_to_jack,
    fitting_foundation,
    is_space,
)
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.cards import Card
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "salic-law"
BOT_VERSION = "salic-law-bot/1"


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    moves = [a for a in legal if isinstance(a, MoveCards)]
    return (
        _to_foundation(table, moves)
        or next((a for a in legal if isinstance(a, Draw)), None)
        or _dig(table, moves)
    )


def _to_foundation(table: Table, moves: Sequence[MoveCards]) -> MoveCards | None:
    best: MoveCards | None = None
    best_key: tuple[bool, int] | None = None
    for m in moves:
        if m.target not in FOUNDATION_PILES:
            continue
        column = table.pile(m.source).up
        beneath = column[-2] if len(column) > 1 else None
        key = (beneath is not None and _fits_after(table, beneath, m), len(column))
        if best_key is None or key > best_key:  # the first of equal keys: the rules' order
            best, best_key = m, key
    return best


def _fits_after(table: Table, card: Card, move: MoveCards) -> bool:
    """Does ``card`` fit a foundation once ``move`` has put its column's top card up?"""
    placed = table.pile(move.source).top
    for pile in FOUNDATION_PILES:
        top = placed if pile == move.target else table.pile(pile).top
        if builds_up_to_jack(card, top):
            return True
    return False


def _dig(table: Table, moves: Sequence[MoveCards]) -> MoveCards | None:
    spaces = sum(is_space(table.pile(p)) for p in TABLEAU_PILES)
    best: MoveCards | None = None
    best_depth = spaces + 1
    for m in moves:
        if m.target not in TABLEAU_PILES or m.target != _first_space(table, m.source):
            continue
        depth = _depth_of_next_play(table, m.source, min(spaces, best_depth - 1))
        if depth is not None:
            best, best_depth = m, depth
    return best


def _first_space(table: Table, source: str) -> str | None:
    return next((p for p in TABLEAU_PILES if p != source and is_space(table.pile(p))), None)


def _depth_of_next_play(table: Table, source: str, most: int) -> int | None:
    """How many cards lie above the card of ``source`` nearest its top that fits a foundation
    now (at least 1, at most ``most``, never counting the King at the bottom), or None."""
    up = table.pile(source).up
    for depth in range(1, min(most, len(up) - 2) + 1):
        if fitting_foundation(table, up[-1 - depth]) is not None:
            return depth
    return None
