"""The game facts every game stream is made of.

Each event is an immutable record with a stable type name (``TYPE``) and the schema version its
fields follow (``VERSION``). Events say what happened, with every card named, so a stream can be
folded and audited without re-running any rule. Money is integer minor units with a currency.

Renaming a type or changing a field's meaning needs a new version and an upcaster
(:mod:`events.codec`); old events are upcast on read, never rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

Card = str


@dataclass(frozen=True, slots=True)
class StakePlaced:
    """The player paid the stake; records the rules and paytable the game is played under."""

    TYPE: ClassVar[str] = "StakePlaced"
    VERSION: ClassVar[int] = 1

    game_id: str
    player_id: str
    variant: str
    draw_count: int
    passes: int
    stake: int
    currency: str
    win_rate: int
    paytable_id: str
    paytable_version: int
    rules_version: str
    certification: bool = False


@dataclass(frozen=True, slots=True)
class Dealt:
    """The deck in deal order, and the commitment to the seed it was derived from."""

    TYPE: ClassVar[str] = "Dealt"
    VERSION: ClassVar[int] = 1

    deck: tuple[Card, ...]
    shuffle_algorithm: str  # e.g. "hmac-sha256-fisher-yates/1", or "certification-deck"
    seed_commitment: str | None = None  # SHA-256 of the server seed, hex; None for a given deck
    client_seed: str | None = None


@dataclass(frozen=True, slots=True)
class CardDrawn:
    """One draw: min(draw count, cards left) cards, first drawn first, from stock to waste."""

    TYPE: ClassVar[str] = "CardDrawn"
    VERSION: ClassVar[int] = 2  # v1 named a single card; see events.codec

    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class StockRecycled:
    """The empty stock was refilled by turning the waste over, order kept."""

    TYPE: ClassVar[str] = "StockRecycled"
    VERSION: ClassVar[int] = 1

    cards: int
    passes_left: int


@dataclass(frozen=True, slots=True)
class CardMoved:
    """Cards (bottom card first) moved between concrete piles."""

    TYPE: ClassVar[str] = "CardMoved"
    VERSION: ClassVar[int] = 1

    source: str
    target: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardTurned:
    """A face-down top card of a column was turned face up."""

    TYPE: ClassVar[str] = "CardTurned"
    VERSION: ClassVar[int] = 1

    column: int
    card: Card


@dataclass(frozen=True, slots=True)
class Undone:
    """The last action was reversed; names exactly what went back where."""

    TYPE: ClassVar[str] = "Undone"
    VERSION: ClassVar[int] = 1

    action: str  # "draw" or "move"
    source: str  # where the cards had come from ("stock" for a draw)
    target: str  # where they had gone ("waste" for a draw)
    cards: tuple[Card, ...]
    waste_fan: int  # the waste fan as it was before the undone action


@dataclass(frozen=True, slots=True)
class AutoMove:
    source: str
    target: str
    card: Card


@dataclass(frozen=True, slots=True)
class AutoCompleted:
    """Stock and waste empty, all tableau cards face up: the server played the rest up."""

    TYPE: ClassVar[str] = "AutoCompleted"
    VERSION: ClassVar[int] = 1

    moves: tuple[AutoMove, ...]


@dataclass(frozen=True, slots=True)
class Collected:
    """The game ended and its winnings were paid; the server seed is revealed here."""

    TYPE: ClassVar[str] = "Collected"
    VERSION: ClassVar[int] = 1

    reason: str  # "player" or "timeout"
    winnings: int
    currency: str
    foundation_count: int
    server_seed: str | None = None  # hex; None only for a certification game given a deck


@dataclass(frozen=True, slots=True)
class Voided:
    """The operator voided the game; the stake is refunded and nothing is paid."""

    TYPE: ClassVar[str] = "Voided"
    VERSION: ClassVar[int] = 1

    reason: str
    refund: int
    currency: str
    server_seed: str | None = None


@dataclass(frozen=True, slots=True)
class PlayerRegistered:
    """An operator opened a player account (one wallet, in one currency)."""

    TYPE: ClassVar[str] = "PlayerRegistered"
    VERSION: ClassVar[int] = 1

    player_id: str
    external_ref: str  # the casino's own id for the player
    currency: str


@dataclass(frozen=True, slots=True)
class FundsDeposited:
    """The cashier paid money into the player's wallet."""

    TYPE: ClassVar[str] = "FundsDeposited"
    VERSION: ClassVar[int] = 1

    amount: int
    currency: str
    transaction_id: str  # the operator's id for this transfer, applied exactly once


@dataclass(frozen=True, slots=True)
class FundsWithdrawn:
    """The cashier paid money out of the player's wallet."""

    TYPE: ClassVar[str] = "FundsWithdrawn"
    VERSION: ClassVar[int] = 1

    amount: int
    currency: str
    transaction_id: str


@dataclass(frozen=True, slots=True)
class PreferencesChanged:
    """The player changed how the table looks and sounds."""

    TYPE: ClassVar[str] = "PreferencesChanged"
    VERSION: ClassVar[int] = 1

    sound: bool
    colour: str  # green, red or blue
    card_back: int  # one of the 12 card back designs


GameEvent = (
    StakePlaced
    | Dealt
    | CardDrawn
    | StockRecycled
    | CardMoved
    | CardTurned
    | Undone
    | AutoCompleted
    | Collected
    | Voided
)

GAME_EVENT_TYPES: tuple[type[GameEvent], ...] = (
    StakePlaced,
    Dealt,
    CardDrawn,
    StockRecycled,
    CardMoved,
    CardTurned,
    Undone,
    AutoCompleted,
    Collected,
    Voided,
)

PlayerEvent = PlayerRegistered | FundsDeposited | FundsWithdrawn | PreferencesChanged

PLAYER_EVENT_TYPES: tuple[type[PlayerEvent], ...] = (
    PlayerRegistered,
    FundsDeposited,
    FundsWithdrawn,
    PreferencesChanged,
)

AnyEvent = GameEvent | PlayerEvent
ALL_EVENT_TYPES: tuple[type[AnyEvent], ...] = GAME_EVENT_TYPES + PLAYER_EVENT_TYPES
