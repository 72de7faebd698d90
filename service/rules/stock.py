"""Drawing from the stock, and turning the waste back into it: the rules every game with a
stock and a waste shares."""

from __future__ import annotations

from events.catalog import CardDrawn, StockRecycled
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


def draw_with_passes(table: Table, count: int, reveal: Reveal) -> CardDrawn:
    """A draw in a game with passes through the stock: an empty stock's refusal says whether
    recycling the waste would help."""
    (w,) = table.layout.of_kind("waste")
    if passes_remain(table) and table.piles[w].cards:
        hint = "recycle the waste first"
    else:
        hint = "no passes through the stock are left"
    return draw(table, count, reveal, hint)


def passes_remain(table: Table) -> bool:
    """Is another pass through the stock allowed after this one (``passes_left`` None:
    unlimited)?"""
    return table.passes_left is None or table.passes_left > 1


def can_recycle(table: Table) -> bool:
    """The stock is empty, the waste is not, and another pass is allowed."""
    (s,) = table.layout.of_kind("stock")
    (w,) = table.layout.of_kind("waste")
    return not table.piles[s].cards and bool(table.piles[w].cards) and passes_remain(table)


def recycle(table: Table) -> StockRecycled:
    """Turn the waste over into the stock, order kept, one pass fewer left; refused while the
    stock holds cards, on the last pass, or with nothing on the waste (checked in that order)."""
    (s,) = table.layout.of_kind("stock")
    (w,) = table.layout.of_kind("waste")
    stock, waste = table.piles[s].cards, table.piles[w].cards
    if stock:
        raise RuleViolation(
            errors.STOCK_NOT_EMPTY,
            f"the stock still holds {len(stock)} cards; recycle only when it is empty",
        )
    if not passes_remain(table):
        raise RuleViolation(
            errors.NO_PASSES_LEFT, "no passes through the stock are left; the waste stays put"
        )
    if not waste:
        raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; there is nothing to recycle")
    passes = None if table.passes_left is None else table.passes_left - 1
    return StockRecycled(len(waste), passes)
