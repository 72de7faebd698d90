"""The interface every game implements: a few declarations and pure functions.

A game says which piles it lays out, how a deck in deal order fills them, which actions are
legal and what events each causes, what undo may take back, what it plays by itself, how many
units the table holds, and when it is won. Everything else (folding, sealing, undo, masking,
views, replay, verification, money) is the engine's and exists once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from events.catalog import GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules.actions import PlayAction
from service.rules.cards import Card, is_deck
from service.rules.table import Layout, Slot, Table

#: Gives the card in a slot: a seen card's code, or the sealed deck's card for a sealed number.
Reveal = Callable[[Slot], Card]
#: A redeal's shuffle: (label, cards in the order gathered) -> the cards shuffled with the
#: game's seed and that label (service.core.shuffle.redeal).
Shuffle = Callable[[str, Sequence[Card]], tuple[Card, ...]]


class SealedCardMissing(LookupError):
    """The decider needed a secret the caller does not hold: a card the player has not seen,
    or a redeal's shuffle (a bug in the caller, or a verification with the seed still
    secret)."""


class Secrets:
    """What the engine hands a game's ``decide`` as ``reveal``: called with a slot, the card in
    it; asked for a redeal, the shuffle of the game's seed. A game that never redeals treats it
    as a plain :data:`Reveal`."""

    __slots__ = ("_card", "_shuffle")

    def __init__(self, card: Reveal, shuffle: Shuffle | None = None) -> None:
        self._card = card
        self._shuffle = shuffle

    def __call__(self, slot: Slot) -> Card:
        return self._card(slot)

    def shuffled(self, label: str, cards: Sequence[Card]) -> tuple[Card, ...]:
        if self._shuffle is None:
            raise SealedCardMissing(f"the shuffle of {label} needs the game's seed")
        return self._shuffle(label, cards)


def shuffled(reveal: Reveal, label: str, cards: Sequence[Card]) -> tuple[Card, ...]:
    """``cards`` shuffled with the game's seed and ``label``, from the secrets the engine gave."""
    if not isinstance(reveal, Secrets):
        raise SealedCardMissing(f"the shuffle of {label} needs the game's seed")
    return reveal.shuffled(label, cards)


class GameRules(ABC):
    """One game (or one variant of a game family). Instances are immutable and shared."""

    #: The id a deal names and every record carries, e.g. "vegas-draw3".
    id: str
    title: str
    family: str
    #: Recorded in every StakePlaced; a new version whenever a rule's behaviour changes.
    rules_version: str
    decks: int = 1
    #: Units a full win reaches, and the multiple of the stake it pays.
    max_units: int
    #: M, a decimal of at most two places ("5", "1.3"). It is part of the rules: a new M is a
    #: new rules_version, so games dealt under the old one still verify and settle under it
    #: (a game's StakePlaced records its M). Its measured RTP: service/rtp/published.py.
    multiplier: str
    #: The (rules_version, M) of each earlier version that differed from this one only in its
    #: price (a version whose M changed before it was replaced lists each): a game dealt under
    #: one still verifies and settles at the M it recorded, and a recorded version and M this
    #: history does not hold is a finding.
    earlier_prices: tuple[tuple[str, str], ...] = ()
    layout: Layout
    #: The rules in a few sentences, for GET /v1/variants.
    summary: tuple[str, ...]
    #: What undo may take back, in words (refusals quote it).
    undo_rule: str = "this game has no undo"
    #: The play actions it accepts, by name (collect is every game's).
    actions: tuple[str, ...] = ()
    #: What its units are, in words.
    units_are: str = "cards on the foundations"
    #: Passes through the stock at the deal (None: unlimited; golf and pyramid have one).
    passes: int | None = 1
    #: Draw three's fan shows in views; games that draw one show only the top card.
    draw_count: int = 1
    #: Draws of a buried card allowed per game (None: the game has no such draw).
    picks: int | None = None
    #: Seconds on the server's clock from the deal (None: untimed); no command after that.
    time_limit: int | None = None
    #: Dealt only to a duel's seat (its money is the duel's), never on its own.
    duel: bool = False

    def prices_at(self, rules_version: str) -> tuple[str, ...]:
        """The Ms this game had at ``rules_version`` (today's, or an earlier price's); none for
        a version it never had."""
        every = ((self.rules_version, self.multiplier), *self.earlier_prices)
        return tuple(m for version, m in every if version == rules_version)

    @abstractmethod
    def deal(self, deck: Sequence[Card]) -> Table:
        """The table a deck in deal order makes: every slot a card code, ``down`` face down."""

    @abstractmethod
    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        """The events ``action`` causes (undo excepted: the engine does it); RuleViolation if
        a rule forbids it."""

    @abstractmethod
    def legal_actions(self, table: Table) -> list[PlayAction]:
        """Every action the rules accept now (undo and collect excepted)."""

    @abstractmethod
    def units(self, table: Table) -> int:
        """What the paytable pays for, now."""

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """May the player take ``event`` back (as the last action, single level)?"""
        return False

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """What the rules play by themselves on this table (auto-turn, auto-complete); the
        engine applies it and asks again until nothing is left."""
        return []

    def is_won(self, table: Table) -> bool:
        """Won when every unit is reached: the one definition, for every game."""
        return self.units(table) == self.max_units

    # --- helpers every game uses ---------------------------------------------------------------

    def pile_index(self, pile_id: str) -> int:
        """The pile's index, or a RuleViolation naming the piles this game has."""
        index = self.layout.index.get(pile_id)
        if index is None:
            raise RuleViolation(
                errors.UNKNOWN_PILE,
                f"unknown pile {pile_id!r}; {self.title} has {self.pile_names()}",
            )
        return index

    def pile_names(self) -> str:
        """``stock, waste, tableau:0..tableau:6, ...`` for messages."""
        names: list[str] = []
        for indices in self.layout.by_kind.values():
            ids = [self.layout.ids[i] for i in indices]
            names.append(ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]}")
        return ", ".join(names)

    def __repr__(self) -> str:
        return f"<game {self.id}>"


def check_deck(deck: Sequence[Card], decks: int) -> None:
    if not is_deck(deck, decks):
        raise RuleViolation(
            errors.INVALID_DECK,
            f"a deck is {decks} x 52 card codes (e.g. AS, TH, KC), each exactly {decks} "
            "time(s), in deal order",
        )
