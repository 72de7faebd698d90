"""Piles and tables, and the sealed cards on them.

A pile is a sequence of slots, bottom first (the last is the top card), of which the first
``down`` lie face down. A slot is a card code once the player has seen that card, and a sealed
number (an ``int``) while the player has not: the fold of a game's events never knows a card
nobody has seen, and the decider asks the sealed deck for it the moment a draw or a turn shows
it. Face-up slots are always codes.

Sealed numbers are given in one canonical order, pile by pile as the layout lists them, bottom
to top: the deal's face-down cards become 0, 1, 2, ... That order says nothing about the deck
(it is the layout's), so an event may name a pile's shape without leaking where a card lay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from service.rules.cards import Card

#: A card the player has seen (its code) or one they have not (its sealed number).
Slot = Card | int


@dataclass(frozen=True, slots=True)
class Pile:
    cards: tuple[Slot, ...] = ()
    down: int = 0  # how many of the bottom cards lie face down

    @property
    def up(self) -> tuple[Card, ...]:
        """The face-up cards, bottom first (always codes)."""
        return cast(tuple[Card, ...], self.cards[self.down :])

    @property
    def top(self) -> Card | None:
        """The top card if it is face up, else None."""
        return cast(Card, self.cards[-1]) if len(self.cards) > self.down else None

    @property
    def face_down(self) -> tuple[Slot, ...]:
        return self.cards[: self.down]

    def __len__(self) -> int:
        return len(self.cards)


EMPTY = Pile()


@dataclass(frozen=True, slots=True)
class PileSpec:
    """A pile a game lays out: its id (``tableau:3``) and kind (``tableau``)."""

    id: str
    kind: str


class Layout:
    """The piles a game lays out, in a fixed order, with lookups by id and by kind."""

    __slots__ = ("by_kind", "ids", "index", "specs")

    def __init__(self, specs: Iterable[PileSpec]) -> None:
        self.specs: tuple[PileSpec, ...] = tuple(specs)
        self.ids: tuple[str, ...] = tuple(s.id for s in self.specs)
        self.index: dict[str, int] = {s.id: i for i, s in enumerate(self.specs)}
        if len(self.index) != len(self.specs):
            raise ValueError("pile ids must be unique")
        kinds: dict[str, list[int]] = {}
        for i, spec in enumerate(self.specs):
            kinds.setdefault(spec.kind, []).append(i)
        self.by_kind: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in kinds.items()}

    def of_kind(self, kind: str) -> tuple[int, ...]:
        return self.by_kind.get(kind, ())

    def kind(self, pile_id: str) -> str | None:
        i = self.index.get(pile_id)
        return self.specs[i].kind if i is not None else None


def numbered(kind: str, count: int) -> list[PileSpec]:
    """``kind:0`` .. ``kind:count-1``."""
    return [PileSpec(f"{kind}:{i}", kind) for i in range(count)]


@dataclass(frozen=True, slots=True)
class StockAndColumns:
    """The layout most games share: a stock, a waste, foundations and columns, in that order,
    with the indices the rules look each pile up by."""

    layout: Layout
    stock: int
    waste: int
    foundations: tuple[int, ...]
    tableau: tuple[int, ...]
    foundation_ids: tuple[str, ...]
    tableau_ids: tuple[str, ...]


def stock_and_columns(foundations: int, columns: int) -> StockAndColumns:
    """``stock``, ``waste``, ``foundation:0``.., ``tableau:0``.."""
    founds, columns_ = numbered("foundation", foundations), numbered("tableau", columns)
    layout = Layout([PileSpec("stock", "stock"), PileSpec("waste", "waste"), *founds, *columns_])
    return StockAndColumns(
        layout,
        layout.index["stock"],
        layout.index["waste"],
        tuple(layout.index[p.id] for p in founds),
        tuple(layout.index[p.id] for p in columns_),
        tuple(p.id for p in founds),
        tuple(p.id for p in columns_),
    )


@dataclass(frozen=True, slots=True)
class Table:
    """Every pile's cards, and the counters the stock keeps."""

    layout: Layout
    piles: tuple[Pile, ...]
    passes_left: int | None = None  # passes through the stock still allowed (None: unlimited)
    fan: int = 0  # cards of the latest draw still on the waste (draw three's visible fan)
    picks_left: int | None = None  # draws of a buried card still allowed (None: no such draw)

    def pile(self, pile_id: str) -> Pile:
        return self.piles[self.layout.index[pile_id]]

    def but(self, piles: tuple[Pile, ...] | None = None, fan: int | None = None) -> Table:
        """A copy with other piles or fan (faster than dataclasses.replace, which matters:
        this runs for every event folded)."""
        return Table(
            self.layout,
            self.piles if piles is None else piles,
            self.passes_left,
            self.fan if fan is None else fan,
            self.picks_left,
        )

    def with_passes(self, passes_left: int | None) -> Table:
        return Table(self.layout, self.piles, passes_left, self.fan, self.picks_left)

    def with_picks(self, picks_left: int | None) -> Table:
        return Table(self.layout, self.piles, self.passes_left, self.fan, picks_left)

    def with_piles(self, changed: Mapping[int, Pile]) -> Table:
        piles = list(self.piles)
        for i, pile in changed.items():
            piles[i] = pile
        return self.but(piles=tuple(piles))

    def slots(self) -> Iterator[Slot]:
        """Every slot on the table, pile by pile, bottom first."""
        for pile in self.piles:
            yield from pile.cards

    def count(self, kind: str) -> int:
        """Cards in the piles of one kind."""
        return sum(len(self.piles[i]) for i in self.layout.of_kind(kind))


def table(
    layout: Layout,
    piles: Mapping[str, Pile] | None = None,
    *,
    passes_left: int | None = None,
    fan: int = 0,
    picks_left: int | None = None,
) -> Table:
    """A table with the named piles filled and every other pile empty."""
    given = piles or {}
    unknown = set(given) - set(layout.ids)
    if unknown:
        raise ValueError(f"no such piles: {sorted(unknown)}")
    return Table(
        layout,
        tuple(given.get(i, EMPTY) for i in layout.ids),
        passes_left=passes_left,
        fan=fan,
        picks_left=picks_left,
    )


# --- sealing --------------------------------------------------------------------------------


def seal(dealt: Table) -> tuple[Table, tuple[Card, ...]]:
    """Turn every face-down card of a freshly dealt table into its sealed number; return the
    sealed table and the cards in sealed order (what only the server may know)."""
    hidden: list[Card] = []
    piles = []
    for pile in dealt.piles:
        if not pile.down:
            piles.append(pile)
            continue
        sealed: list[Slot] = []
        for slot in pile.cards[: pile.down]:
            sealed.append(len(hidden))
            hidden.append(cast(Card, slot))
        piles.append(Pile((*sealed, *pile.cards[pile.down :]), pile.down))
    return dealt.but(piles=tuple(piles)), tuple(hidden)


def unseal(sealed: Table, hidden: Sequence[Card]) -> Table:
    """The table with every sealed number replaced by its card (auditors, after the reveal)."""
    piles = tuple(
        Pile(tuple(hidden[s] if isinstance(s, int) else s for s in p.cards), p.down)
        if p.down
        else p
        for p in sealed.piles
    )
    return sealed.but(piles=piles)


@dataclass(frozen=True, slots=True)
class DealtPile:
    """What a deal shows of one pile: how many cards lie face down, and the face-up ones."""

    pile: str
    down: int
    up: tuple[Card, ...]


def dealt_piles(sealed: Table) -> tuple[DealtPile, ...]:
    """The deal as the player sees it: every pile that received cards, in layout order."""
    return tuple(
        DealtPile(spec.id, pile.down, pile.up)
        for spec, pile in zip(sealed.layout.specs, sealed.piles, strict=True)
        if pile.cards
    )


def from_dealt(
    layout: Layout,
    shown: Iterable[DealtPile],
    passes_left: int | None,
    fan: int = 0,
    picks_left: int | None = None,
) -> Table:
    """The sealed table a deal's record describes: its face-down cards numbered in the
    canonical order :func:`seal` uses."""
    by_id = {p.pile: p for p in shown}
    piles: list[Pile] = []
    next_sealed = 0
    for pile_id in layout.ids:
        p = by_id.get(pile_id)
        if p is None:
            piles.append(EMPTY)
            continue
        down = tuple(range(next_sealed, next_sealed + p.down))
        next_sealed += p.down
        piles.append(Pile((*down, *p.up), p.down))
    return Table(layout, tuple(piles), passes_left, fan, picks_left)


def card_of(slot: Slot, hidden: Sequence[Card]) -> Card:
    """A slot's card: its code, or the sealed deck's card for a sealed number."""
    return slot if isinstance(slot, str) else hidden[slot]
