"""How every game's play events change a table, written once for all games: one spec each.

Events speak of piles and cards (drawn, moved, turned, recycled, removed as a pair, played
automatically, gathered or reshuffled in a redeal, picked from inside a pile), so folding needs
nothing of any game's rules. Each play event has one :class:`PlaySpec` in :data:`SPECS` saying
everything the service knows of it: how it folds onto a table, which piles it names, why a
recorded one cannot have happened, which sealed cards it shows, which action it is (the game's
``last_action``), which command makes it (what an auditor re-decides) and what its undo puts
back. The decider, the fold and the verifier read these; a new play event is its record in
``events`` and its spec here. Folding never validates: recorded history must always fold. (Undo
restores the table the decider kept, so it is not a play event.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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
    UndoneMove,
)
from service.rules.actions import Draw, MoveCards, Pick, PlayAction, Recycle, Redeal, Remove, Turn
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


def _no_misfit(table: Table, event: Any) -> None:
    return None


def _no_reveals(table: Table, event: Any) -> list[tuple[int, Card]]:
    return []


def _misfit_moved(table: Table, event: CardMoved) -> str | None:
    # The cards are listed as they land: a run goes as it lay, or (to a foundation, one by
    # one) lowest first, the reverse of how it lay.
    n, up = len(event.cards), table.pile(event.source).up
    taken = up[len(up) - n :] if n <= len(up) else None
    if taken is None or event.cards not in (taken, taken[::-1]):
        return f"{' '.join(event.cards)} are not the face-up top of {event.source}"
    return None


def _misfit_drawn(table: Table, event: CardDrawn) -> str | None:
    slots = table.pile(event.source).cards[::-1][: len(event.cards)]
    if len(slots) != len(event.cards) or any(
        isinstance(s, str) and s != c for s, c in zip(slots, event.cards, strict=True)
    ):
        return f"{event.source} does not hold {' '.join(event.cards)} on top"
    return None


def _misfit_turned(table: Table, event: CardTurned) -> str | None:
    pile = table.pile(event.pile)
    slot = pile.cards[-1] if pile.cards else None
    if (
        pile.down != len(pile.cards)
        or slot is None
        or (isinstance(slot, str) and slot != event.card)
    ):
        return f"the top card of {event.pile} is not a face-down {event.card}"
    return None


def _misfit_recycled(table: Table, event: StockRecycled) -> str | None:
    layout = table.layout
    if len(layout.of_kind(WASTE_KIND)) != 1 or len(layout.of_kind(STOCK_KIND)) != 1:
        return "this game has no stock and waste to recycle"
    return None


def _misfit_picked(table: Table, event: CardPicked) -> str | None:
    picked = table.pile(event.source)
    if not (
        picked.down <= event.index < len(picked.cards) and picked.cards[event.index] == event.card
    ):
        return f"{event.source} holds no face-up {event.card} at {event.index}"
    return None


def _misfit_tops(table: Table, moves: list[tuple[str, str, Card]]) -> str | None:
    """Cards played one by one, each the face-up top of its pile when it goes."""
    for source, target, card in moves:
        if table.pile(source).top != card:
            return f"{card} is not the face-up top of {source}"
        table = _move(table, source, target, (card,))
    return None


def _drawn_reveals(table: Table, event: CardDrawn) -> list[tuple[int, Card]]:
    pile = table.pile(event.source)
    drawn: tuple[Slot, ...] = pile.cards[::-1][: len(event.cards)]
    return [(s, c) for s, c in zip(drawn, event.cards, strict=False) if isinstance(s, int)]


def _turned_reveals(table: Table, event: CardTurned) -> list[tuple[int, Card]]:
    pile = table.pile(event.pile)
    if pile.down == 0:
        return []
    slot = pile.cards[pile.down - 1]
    return [(slot, event.card)] if isinstance(slot, int) else []


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


E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class PlaySpec(Generic[E]):
    """Everything said about one play event, in one place."""

    #: The action it is: the game's last action, and what a view of the game says was played.
    action: str
    #: The table after it.
    apply: Callable[[Table, E], Table]
    #: Every pile it names (one its game lacks means the record cannot be folded).
    piles: Callable[[E], set[str]]
    #: Why it cannot have happened on a table (None when it fits); its piles are the game's.
    misfit: Callable[[Table, E], str | None] = _no_misfit
    #: The sealed cards it shows, as (sealed number, card).
    reveals: Callable[[Table, E], list[tuple[int, Card]]] = _no_reveals
    #: The command whose first event it is (None: only ever a command's consequence), which an
    #: auditor re-decides to check it.
    command: Callable[[E], PlayAction] | None = None
    #: What its undo puts back, each card's source and where it had gone (None: no undo).
    undo: Callable[[E], tuple[UndoneMove, ...]] | None = None


def _redeal_piles(event: PilesGathered | Reshuffled) -> set[str]:
    if isinstance(event, PilesGathered):
        return {*event.sources, event.target}
    return {*event.sources, *(p.pile for p in event.piles)}


def _moves_piles(event: AutoCompleted | Undone) -> set[str]:
    return {p for m in event.moves for p in (m.source, m.target)}


def _card_moves(event: CardMoved | CardDrawn) -> tuple[UndoneMove, ...]:
    return (UndoneMove(event.source, event.target, event.cards),)


#: Every play event's spec, by its record's class.
SPECS: dict[type, PlaySpec[Any]] = {
    CardMoved: PlaySpec(
        "move",
        _moved,
        lambda e: {e.source, e.target},
        _misfit_moved,
        command=lambda e: MoveCards(e.source, e.target, len(e.cards)),
        undo=_card_moves,
    ),
    CardDrawn: PlaySpec(
        "draw",
        _drawn,
        lambda e: {e.source, e.target},
        _misfit_drawn,
        _drawn_reveals,
        command=lambda e: Draw(),
        undo=_card_moves,
    ),
    CardTurned: PlaySpec(
        "turn",
        _turned,
        lambda e: {e.pile},
        _misfit_turned,
        _turned_reveals,
        command=lambda e: Turn(e.pile),
    ),
    StockRecycled: PlaySpec(
        "recycle", _recycled, lambda e: set(), _misfit_recycled, command=lambda e: Recycle()
    ),
    PilesGathered: PlaySpec(
        "redeal",
        _gathered,
        _redeal_piles,
        _misfit_redeal,
        command=lambda e: Redeal(),
    ),
    Reshuffled: PlaySpec(
        "redeal",
        _reshuffled,
        _redeal_piles,
        _misfit_redeal,
        command=lambda e: Redeal(),
    ),
    CardPicked: PlaySpec(
        "pick",
        _picked,
        lambda e: {e.source, e.target},
        _misfit_picked,
        command=lambda e: Pick(e.source, e.card, e.target),
    ),
    PairRemoved: PlaySpec(
        "remove",
        _removed,
        lambda e: {e.target, *(c.source for c in e.cards)},
        lambda t, e: _misfit_tops(t, [(c.source, e.target, c.card) for c in e.cards]),
        command=lambda e: Remove(tuple(c.source for c in e.cards)),
        undo=lambda e: tuple(UndoneMove(c.source, e.target, (c.card,)) for c in e.cards),
    ),
    AutoCompleted: PlaySpec(
        "auto-complete",
        _auto_played,
        _moves_piles,
        lambda t, e: _misfit_tops(t, [(m.source, m.target, m.card) for m in e.moves]),
    ),
}


def spec(event: GameEvent) -> PlaySpec[Any] | None:
    """The event's play spec; None for an event that is not play (the deal, an ending...)."""
    return SPECS.get(type(event))


def apply(table: Table, event: GameEvent) -> Table:
    """The table after one play event."""
    found = SPECS.get(type(event))
    if found is None:
        raise TypeError(f"not a play event: {event!r}")
    return found.apply(table, event)


def piles_named(event: GameEvent) -> set[str]:
    """Every pile an event names (a recorded event naming a pile its game lacks cannot be
    folded: verification reports it instead)."""
    found = SPECS.get(type(event))
    if found is not None:
        return found.piles(event)
    if isinstance(event, Undone):
        return _moves_piles(event)
    if isinstance(event, Dealt) and event.piles is not None:
        return {p.pile for p in event.piles}
    return set()


def misfit(table: Table, event: GameEvent) -> str | None:
    """Why a recorded play event cannot have happened on this table (None when it fits): the
    cards it names are not where it says. The decider never writes such an event; an auditor
    reading an edited record is told instead of folding nonsense."""
    if piles_named(event) - set(table.layout.ids):
        return f"piles {sorted(piles_named(event) - set(table.layout.ids))} are not this game's"
    found = SPECS.get(type(event))
    return found.misfit(table, event) if found is not None else None


def reveals(table: Table, event: GameEvent) -> list[tuple[int, Card]]:
    """The sealed cards ``event`` shows, as (sealed number, card): an auditor checks each one
    against the revealed deck, and an unfinished game is re-decided with what it showed."""
    found = SPECS.get(type(event))
    return found.reveals(table, event) if found is not None else []
