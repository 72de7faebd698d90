"""Drawing from the stock: the one rule every game with a stock and a waste shares."""

from __future__ import annotations

from events.catalog import CardDrawn
from service import errors
from service.errors import RuleViolation
from service.rules.game import Reveal
from service.rules.table import Table


def draw(table: Table, count: int, reveal: Reveal, when_empty: str) -> CardDrawn:
    """Draw min(``count``, cards left) from the stock onto the waste, the next card first,
    showing each; an empty stock is refused with ``when_empty`` as the hint."""
    (s,) = table.layout.of_kind("stock")
    (w,) = table.layout.of_kind("waste")
    stock = table.piles[s].cards
    if not stock:
        raise RuleViolation(errors.STOCK_EMPTY, f"the stock is empty; {when_empty}")
    shown = tuple(reveal(slot) for slot in stock[::-1][:count])
    return CardDrawn(table.layout.ids[s], table.layout.ids[w], shown)
