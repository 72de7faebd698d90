"""The reference Forty Thieves bot: a deterministic greedy player that sees only what a player
sees.

Heuristic, each turn, the first that applies:

1. A move to a foundation, the whole run that fits (cards on foundations are what pay): from a
   column first (it uncovers a card), then the waste's top, then the stock's top.
2. A column's whole run onto another column's top card, when it leaves a card beneath (it
   uncovers that card) or empties its column; best first: one that empties its column, then
   one whose uncovered card goes to a foundation, then the fewest cards left beneath; then the
   rules' order.
3. The waste's top card, then the stock's top card, onto a column's top card.
4. With an empty column: a column's whole run into it when the card it uncovers then plays
   (to a foundation or onto a column); else the waste's top card into it.
5. Draw the stock's top card onto the waste.
6. With an empty column and the stock spent: a column's whole run into it from the column
   with the fewest cards beneath (digging towards another empty column).
7. Otherwise stop (collect).

Every move it makes leaves the table strictly better by one measure, taken in this order:
more cards on the foundations; fewer cards in the stock and the waste; fewer in the stock;
fewer places in the columns where a card does not lie on its suit's next rank; more empty
columns. No move undoes another's gain, so it never loops and always ends. It reads only
face-up cards (the columns, the waste's top and the stock's face-up top) and never a sealed
slot's value, so given the sealed table it cannot cheat.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games.forty_thieves import (
    FOUNDATION_PILES,
    STOCK,
    TABLEAU_PILES,
    WASTE,
    fitting_foundation,
    movable_run,
)
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import same_suit_down
from service.rules.cards import Card
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "forty-thieves"
BOT_VERSION = "forty-thieves-bot/1"


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    moves = [a for a in legal if isinstance(a, MoveCards)]
    return (
        _to_foundation(moves)
        or _column_to_column(table, moves)
        or _open_card_to_column(table, moves)
        or _fill_empty_column(table, moves, digging=False)
        or next((a for a in legal if isinstance(a, Draw)), None)
        or _fill_empty_column(table, moves, digging=True)
    )


def _to_foundation(moves: Sequence[MoveCards]) -> MoveCards | None:
    found = [m for m in moves if m.target in FOUNDATION_PILES]
    for source_kind in (TABLEAU_PILES, (WASTE,), (STOCK,)):
        mine = [m for m in found if m.source in source_kind]
        if mine:
            # The whole run: max() keeps the first of equal counts (the rules' order).
            return max(mine, key=lambda m: m.count or 0)
    return None


def _run_of(table: Table, pile: str) -> tuple[Card, ...]:
    up = table.pile(pile).up
    return up[-movable_run(up) :]


def _beneath(table: Table, pile: str, count: int) -> Card | None:
    """The card a move of ``count`` cards off ``pile`` uncovers (every column card is up)."""
    up = table.pile(pile).up
    return up[-count - 1] if len(up) > count else None


def _plays(table: Table, card: Card, source: str) -> bool:
    """Could ``card`` go to a foundation, or onto another column's top card, now?"""
    if fitting_foundation(table, card) is not None:
        return True
    for pile in TABLEAU_PILES:
        top = table.pile(pile).top
        if pile != source and top is not None and same_suit_down(card, top):
            return True
    return False


def _whole_runs(table: Table, moves: Sequence[MoveCards], *, to_empty: bool) -> list[MoveCards]:
    """Moves of a column's whole run onto a column (an empty one, or one with cards)."""
    found = []
    for m in moves:
        if m.source not in TABLEAU_PILES or m.target not in TABLEAU_PILES:
            continue
        if bool(table.pile(m.target).cards) == to_empty:
            continue
        if m.count == len(_run_of(table, m.source)):
            found.append(m)
    return found


def _column_to_column(table: Table, moves: Sequence[MoveCards]) -> MoveCards | None:
    best: MoveCards | None = None
    best_key: tuple[bool, bool, int] | None = None
    for m in _whole_runs(table, moves, to_empty=False):
        count = m.count or 0
        beneath = _beneath(table, m.source, count)
        left = len(table.pile(m.source).up) - count
        key = (
            beneath is None,
            beneath is not None and fitting_foundation(table, beneath) is not None,
            -left,
        )
        if best_key is None or key > best_key:
            best, best_key = m, key
    return best


def _open_card_to_column(table: Table, moves: Sequence[MoveCards]) -> MoveCards | None:
    for source in (WASTE, STOCK):
        for m in moves:
            if m.source == source and m.target in TABLEAU_PILES and table.pile(m.target).cards:
                return m
    return None


def _fill_empty_column(
    table: Table, moves: Sequence[MoveCards], *, digging: bool
) -> MoveCards | None:
    # Only a run that leaves a card beneath: moving a whole column to an empty one gains nothing.
    runs = [
        m
        for m in _whole_runs(table, moves, to_empty=True)
        if _beneath(table, m.source, m.count or 0) is not None
    ]
    if digging:
        return min(runs, key=lambda m: len(table.pile(m.source).up), default=None)
    for m in runs:
        beneath = _beneath(table, m.source, m.count or 0)
        if beneath is not None and _plays(table, beneath, m.source):
            return m
    return next(
        (
            m
            for m in moves
            if m.source == WASTE and m.target in TABLEAU_PILES and not table.pile(m.target).cards
        ),
        None,
    )
