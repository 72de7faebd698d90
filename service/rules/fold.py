"""How every game's play events change a table, written once for all games.

Events speak of piles and cards (drawn, moved, turned, recycled, removed as a pair, played
automatically, gathered or reshuffled in a redeal, picked from inside a pile), so folding needs
nothing of any game's rules. Nothing here validates: recorded
history must always fold. (Undo restores the table the decider kept, so it is not here.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from events.catalog import (
    AutoCompleted,
    CardDrawn,
    CardMoved,
    CardPicked,
    CardTurned,
    Dealt,
    GameEvent,
    PairRemoved,
    PilesGathered,
    Reshuffled,
    StockRecycled,
    Undone,
)
from service.rules.cards import Card
from service.rules.table import Pile, Slot, Table

WASTE_KIND = "waste"
STOCK_KIND = "stock"


def _take(pile: Pile, n: int) -> Pile:
    """The pile less its top ``n`` cards (face-down ones stay face down)."""
    left = len(pile.cards) - n
    return Pile(pile.cards[:left], min(pile.down, left))


def _move(table: Table, source: str, target: str, cards: tuple[Card, ...]) -> Table:
    index = table.layout.index
    i, j = index[source], index[target]
    piles = list(table.piles)
    piles[i] = _take(piles[i], len(cards))
    dst = piles[j]
    piles[j] = Pile(dst.cards + cards, dst.down)
    fan = table.fan
    if fan and table.layout.specs[i].kind == WASTE_KIND:
        fan -= 1
    return table.but(piles=tuple(piles), fan=fan)


def _moved(table: Table, event: CardMoved) -> Table:
    return _move(table, event.source, event.target, event.cards)


def _drawn(table: Table, event: CardDrawn) -> Table:
    index = table.layout.index
    i, j = index[event.source], index[event.target]
    piles = list(table.piles)
    piles[i] = _take(piles[i], len(event.cards))
    dst = piles[j]
    piles[j] = Pile(dst.cards + event.cards, dst.down)
    fan = len(event.cards) if table.layout.specs[j].kind == WASTE_KIND else table.fan
    return table.but(piles=tuple(piles), fan=fan)


def _turned(table: Table, event: CardTurned) -> Table:
    i = table.layout.index[event.pile]
    pile = table.piles[i]
    down = pile.down - 1
    piles = list(table.piles)
    piles[i] = Pile((*pile.cards[:down], event.card, *pile.cards[down + 1 :]), down)
    return table.but(piles=tuple(piles))


def _recycled(table: Table, event: StockRecycled) -> Table:
    # Turning the waste over keeps its order: the first card drawn is drawn first again.
    (w,) = table.layout.of_kind(WASTE_KIND)
    (s,) = table.layout.of_kind(STOCK_KIND)
    piles = list(table.piles)
    stock = piles[w].cards[::-1] + piles[s].cards
    piles[s] = Pile(stock, len(stock))
    piles[w] = Pile()
    return Table(table.layout, tuple(piles), event.passes_left, 0, table.picks_left)


def _gathered(table: Table, event: PilesGathered) -> Table:
    # The first card gathered is the next one drawn: it goes on top, face down.
    index = table.layout.index
    piles = list(table.piles)
    for source in event.sources:
        piles[index[source]] = Pile()
    piles[index[event.target]] = Pile(event.cards[::-1], len(event.cards))
    return Table(table.layout, tuple(piles), event.passes_left, 0, table.picks_left)


def _reshuffled(table: Table, event: Reshuffled) -> Table:
    index = table.layout.index
    piles = list(table.piles)
    for source in event.sources:
        piles[index[source]] = Pile()
    for dealt in event.piles:
        piles[index[dealt.pile]] = Pile(dealt.up)
    return Table(table.layout, tuple(piles), event.passes_left, 0, table.picks_left)


def _picked(table: Table, event: CardPicked) -> Table:
    index = table.layout.index
    i, j = index[event.source], index[event.target]
    piles = list(table.piles)
    src = piles[i]
    piles[i] = Pile(src.cards[: event.index] + src.cards[event.index + 1 :], src.down)
    dst = piles[j]
    piles[j] = Pile((*dst.cards, event.card), dst.down)
    return Table(table.layout, tuple(piles), table.passes_left, table.fan, event.picks_left)


def _removed(table: Table, event: PairRemoved) -> Table:
    for removed in event.cards:
        table = _move(table, removed.source, event.target, (removed.card,))
    return table


def _auto_played(table: Table, event: AutoCompleted) -> Table:
    for m in event.moves:
        table = _move(table, m.source, m.target, (m.card,))
    return table


_APPLY: dict[type, Callable[[Table, Any], Table]] = {
    CardMoved: _moved,
    CardDrawn: _drawn,
    CardTurned: _turned,
    StockRecycled: _recycled,
    PilesGathered: _gathered,
    Reshuffled: _reshuffled,
    CardPicked: _picked,
    PairRemoved: _removed,
    AutoCompleted: _auto_played,
}


def apply(table: Table, event: GameEvent) -> Table:
    """The table after one play event."""
    step = _APPLY.get(type(event))
    if step is None:
        raise TypeError(f"not a play event: {event!r}")
    return step(table, event)


def piles_named(event: GameEvent) -> set[str]:
    """Every pile an event names (a recorded event naming a pile its game lacks cannot be
    folded: verification reports it instead)."""
    if isinstance(event, CardMoved | CardDrawn):
        return {event.source, event.target}
    if isinstance(event, CardTurned):
        return {event.pile}
    if isinstance(event, PairRemoved):
        return {event.target, *(c.source for c in event.cards)}
    if isinstance(event, AutoCompleted):
        return {p for m in event.moves for p in (m.source, m.target)}
    if isinstance(event, Undone):
        return {p for m in event.moves for p in (m.source, m.target)}
    if isinstance(event, Dealt) and event.piles is not None:
        return {p.pile for p in event.piles}
    if isinstance(event, PilesGathered):
        return {*event.sources, event.target}
    if isinstance(event, Reshuffled):
        return {*event.sources, *(p.pile for p in event.piles)}
    if isinstance(event, CardPicked):
        return {event.source, event.target}
    return set()


def misfit(table: Table, event: GameEvent) -> str | None:
    """Why a recorded play event cannot have happened on this table (None when it fits): the
    cards it names are not where it says. The decider never writes such an event; an auditor
    reading an edited record is told instead of folding nonsense."""
    layout = table.layout
    if piles_named(event) - set(layout.ids):
        return f"piles {sorted(piles_named(event) - set(layout.ids))} are not this game's"
    if isinstance(event, CardMoved):
        # The cards are listed as they land: a run goes as it lay, or (to a foundation, one by
        # one) lowest first, the reverse of how it lay.
        n, up = len(event.cards), table.pile(event.source).up
        taken = up[len(up) - n :] if n <= len(up) else None
        if taken is None or event.cards not in (taken, taken[::-1]):
            return f"{' '.join(event.cards)} are not the face-up top of {event.source}"
    elif isinstance(event, CardDrawn):
        slots = table.pile(event.source).cards[::-1][: len(event.cards)]
        if len(slots) != len(event.cards) or any(
            isinstance(s, str) and s != c for s, c in zip(slots, event.cards, strict=True)
        ):
            return f"{event.source} does not hold {' '.join(event.cards)} on top"
    elif isinstance(event, CardTurned):
        pile = table.pile(event.pile)
        slot = pile.cards[-1] if pile.cards else None
        if (
            pile.down != len(pile.cards)
            or slot is None
            or (isinstance(slot, str) and slot != event.card)
        ):
            return f"the top card of {event.pile} is not a face-down {event.card}"
    elif isinstance(event, StockRecycled):
        if len(layout.of_kind(WASTE_KIND)) != 1 or len(layout.of_kind(STOCK_KIND)) != 1:
            return "this game has no stock and waste to recycle"
    elif isinstance(event, PilesGathered | Reshuffled):
        return _misfit_redeal(table, event)
    elif isinstance(event, CardPicked):
        picked = table.pile(event.source)
        if not (
            picked.down <= event.index < len(picked.cards)
            and picked.cards[event.index] == event.card
        ):
            return f"{event.source} holds no face-up {event.card} at {event.index}"
    elif isinstance(event, PairRemoved | AutoCompleted):
        moves = (
            [(c.source, event.target, c.card) for c in event.cards]
            if isinstance(event, PairRemoved)
            else [(m.source, m.target, m.card) for m in event.moves]
        )
        for source, target, card in moves:
            if table.pile(source).top != card:
                return f"{card} is not the face-up top of {source}"
            table = _move(table, source, target, (card,))
    return None


def _misfit_redeal(table: Table, event: PilesGathered | Reshuffled) -> str | None:
    """A redeal gathers distinct face-up piles; a gathering lays exactly their cards, in
    order, on an empty pile of its own; a reshuffle deals exactly their cards, face up, back
    onto them."""
    sources = event.sources
    if len(set(sources)) != len(sources):
        return "a redeal gathers each pile once"
    gathered: list[Card] = []
    for source in sources:
        pile = table.pile(source)
        if pile.down:
            return f"{source} holds face-down cards; a redeal gathers face-up piles"
        gathered.extend(pile.up)
    if isinstance(event, PilesGathered):
        if event.target in sources or table.pile(event.target).cards:
            return f"the gathered cards go onto an empty pile other than {' '.join(sources)}"
        if tuple(gathered) != event.cards:
            return f"{' '.join(sources)} do not hold {' '.join(event.cards)} in that order"
        return None
    targets = [p.pile for p in event.piles]
    if len(set(targets)) != len(targets) or not set(targets) <= set(sources):
        return "a reshuffle deals each card back onto the piles it gathered, each pile once"
    if any(p.down for p in event.piles):
        return "a reshuffle deals face up"
    dealt = Counter(c for p in event.piles for c in p.up)
    if dealt != Counter(gathered):
        return f"the cards dealt are not the cards gathered from {' '.join(sources)}"
    return None


def reveals(table: Table, event: GameEvent) -> list[tuple[int, Card]]:
    """The sealed cards ``event`` shows, as (sealed number, card): an auditor checks each one
    against the revealed deck, and an unfinished game is re-decided with what it showed."""
    if isinstance(event, CardDrawn):
        pile = table.pile(event.source)
        drawn: tuple[Slot, ...] = pile.cards[::-1][: len(event.cards)]
        return [(s, c) for s, c in zip(drawn, event.cards, strict=False) if isinstance(s, int)]
    if isinstance(event, CardTurned):
        pile = table.pile(event.pile)
        if pile.down == 0:
            return []
        slot = pile.cards[pile.down - 1]
        return [(slot, event.card)] if isinstance(slot, int) else []
    return []
