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
    """The player paid the stake; records the game, rules and paytable it is played under.

    A full win reaches ``max_units`` and pays ``multiplier`` x stake; any moment's winnings are
    floor(units x stake x multiplier / max_units)."""

    TYPE: ClassVar[str] = "StakePlaced"
    VERSION: ClassVar[int] = 3  # v1 recorded Vegas's draw count, passes and win rate; v2 no duel

    game_id: str
    player_id: str
    variant: str  # the game's id, e.g. "vegas-draw3", "golf"
    stake: int
    currency: str
    multiplier: str  # M, a decimal of at most two places: "5", "1.3"
    max_units: int
    paytable_id: str
    paytable_version: int
    rules_version: str
    certification: bool = False
    #: A duel seat's game: the stake is the duel's entry fee, paid into the duel's pot by the
    #: duel's stream, so this game moves no money itself. None for every other game.
    duel_id: str | None = None


@dataclass(frozen=True, slots=True)
class DealtPile:
    """One pile as the deal left it: how many cards lie face down, and the face-up ones."""

    pile: str
    down: int
    up: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """The deal as the player sees it, and the commitment to the seed (or given deck) it came
    from. Face-down cards are counted, never named: they are sealed until seen."""

    TYPE: ClassVar[str] = "Dealt"
    VERSION: ClassVar[int] = 2  # v1 recorded the whole deck in clear

    shuffle_algorithm: str  # e.g. "hmac-sha256-fisher-yates/1", or "certification-deck"
    seed_commitment: str | None = None  # SHA-256 of the seed or given deck; None only in v1
    client_seed: str | None = None
    piles: tuple[DealtPile, ...] | None = None  # None only for a v1 deal, which has ``deck``
    deck: tuple[Card, ...] | None = None  # only v1 deals recorded it (before sealing)


@dataclass(frozen=True, slots=True)
class ClockStarted:
    """A timed game's clock started at its deal, by the server's clock: no command is accepted
    after ``deadline`` (ISO 8601, UTC)."""

    TYPE: ClassVar[str] = "ClockStarted"
    VERSION: ClassVar[int] = 1

    started_at: str
    deadline: str


@dataclass(frozen=True, slots=True)
class CardDrawn:
    """One draw: cards taken from the top of a face-down pile, shown, and put face up on
    another, first drawn first (Klondike: min(draw count, cards left), stock to waste)."""

    TYPE: ClassVar[str] = "CardDrawn"
    VERSION: ClassVar[int] = 3  # v1 named a single card; v2 had no piles (always stock->waste)

    source: str
    target: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class StockRecycled:
    """The empty stock was refilled by turning the waste over, order kept."""

    TYPE: ClassVar[str] = "StockRecycled"
    VERSION: ClassVar[int] = 1

    cards: int
    passes_left: int | None  # None: passes are unlimited


@dataclass(frozen=True, slots=True)
class PilesGathered:
    """A redeal without a shuffle (La Nivernaise): the ``sources`` were gathered up in the order
    listed, each bottom to top, and laid face down as the empty ``target`` (a stock), the first
    card gathered the next one drawn. The cards were all face up, so naming them shows
    nothing new."""

    TYPE: ClassVar[str] = "PilesGathered"
    VERSION: ClassVar[int] = 1

    sources: tuple[str, ...]
    target: str
    cards: tuple[Card, ...]  # in the order gathered
    passes_left: int | None  # passes through the stock still allowed, this one included


@dataclass(frozen=True, slots=True)
class Reshuffled:
    """A redeal with a shuffle (Three Shuffles and a Draw): the ``sources`` were gathered up in
    the order listed, each bottom to top, shuffled with the game's seed and ``label`` (the
    published redeal shuffle, re-derived by the audit once the seed is revealed) and dealt out
    again face up as ``piles``."""

    TYPE: ClassVar[str] = "Reshuffled"
    VERSION: ClassVar[int] = 1

    label: str  # "redeal-1", "redeal-2", ...
    sources: tuple[str, ...]
    piles: tuple[DealtPile, ...]  # every pile the deal filled; face up (down is 0)
    passes_left: int | None  # deals still allowed, this one included


@dataclass(frozen=True, slots=True)
class CardPicked:
    """A card taken from inside a pile (not its top) and put on top of another: Three Shuffles'
    once-per-game Draw. ``index`` counts from the pile's bottom card, 0."""

    TYPE: ClassVar[str] = "CardPicked"
    VERSION: ClassVar[int] = 1

    source: str
    index: int
    card: Card
    target: str
    picks_left: int  # such draws still allowed after this one


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
    """A face-down top card of a pile was turned face up (by the player or by the rules)."""

    TYPE: ClassVar[str] = "CardTurned"
    VERSION: ClassVar[int] = 2  # v1 named a column number

    pile: str
    card: Card


@dataclass(frozen=True, slots=True)
class RemovedCard:
    source: str
    card: Card


@dataclass(frozen=True, slots=True)
class PairRemoved:
    """Two cards whose ranks total 13, or a King alone, taken off the table onto ``target``."""

    TYPE: ClassVar[str] = "PairRemoved"
    VERSION: ClassVar[int] = 1

    cards: tuple[RemovedCard, ...]
    target: str


@dataclass(frozen=True, slots=True)
class UndoneMove:
    source: str  # where the cards had come from
    target: str  # where they had gone
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Undone:
    """The last action was reversed; names exactly what went back where."""

    TYPE: ClassVar[str] = "Undone"
    VERSION: ClassVar[int] = 2  # v1 had one move and Klondike's waste fan

    action: str  # "draw", "move" or "remove"
    moves: tuple[UndoneMove, ...]


@dataclass(frozen=True, slots=True)
class AutoMove:
    source: str
    target: str
    card: Card


@dataclass(frozen=True, slots=True)
class AutoCompleted:
    """The rules played cards by themselves (Klondike: stock and waste empty and every tableau
    card face up, so the server played the rest up)."""

    TYPE: ClassVar[str] = "AutoCompleted"
    VERSION: ClassVar[int] = 1

    moves: tuple[AutoMove, ...]


@dataclass(frozen=True, slots=True)
class Collected:
    """The game ended and its winnings were paid; the seed (or given deck) is revealed here."""

    TYPE: ClassVar[str] = "Collected"
    VERSION: ClassVar[int] = 3  # v1 counted foundation cards; v2 had no server-clock time

    reason: str  # "player", "timeout", or (a timed game won) "finished"
    winnings: int
    currency: str
    units: int
    server_seed: str | None = None  # hex; None for a certification game given a deck
    deck: tuple[Card, ...] | None = None  # the given deck, revealed; None for a seed
    #: A timed game: when it ended by the server's clock (ISO 8601, UTC); None otherwise.
    ended_at: str | None = None


@dataclass(frozen=True, slots=True)
class Voided:
    """The operator voided the game; the stake is refunded and nothing is paid."""

    TYPE: ClassVar[str] = "Voided"
    VERSION: ClassVar[int] = 2  # v1 could not reveal a given deck

    reason: str
    refund: int
    currency: str
    server_seed: str | None = None
    deck: tuple[Card, ...] | None = None


@dataclass(frozen=True, slots=True)
class DuelOpened:
    """A classic duel (seed 003) opened for ``seats`` players at one entry fee, under a
    published duel paytable. Every seat plays the deck of one server seed, committed here and
    revealed when the duel settles or is cancelled."""

    TYPE: ClassVar[str] = "DuelOpened"
    VERSION: ClassVar[int] = 1

    duel_id: str
    variant: str  # the seats' game, e.g. "klondike-duel"
    rules_version: str
    currency: str
    fee: int
    seats: int
    rake: str  # the operator's share of the pot, a decimal fraction: "0.1"
    paytable_id: str
    paytable_version: int
    shuffle_algorithm: str
    seed_commitment: str
    opened_at: str  # server clock, ISO 8601 UTC
    fill_by: str  # cancelled and refunded if not full by then
    certification: bool = False


@dataclass(frozen=True, slots=True)
class SeatTaken:
    """A player took a seat and paid the entry fee into the duel's pot."""

    TYPE: ClassVar[str] = "SeatTaken"
    VERSION: ClassVar[int] = 1

    seat: int  # 0-based, in the order seats were taken
    player_id: str
    fee: int
    taken_at: str  # server clock, ISO 8601 UTC


@dataclass(frozen=True, slots=True)
class SeatDealt:
    """A seat's game was dealt: its own stream, its own five minutes."""

    TYPE: ClassVar[str] = "SeatDealt"
    VERSION: ClassVar[int] = 1

    seat: int
    game_id: str
    deadline: str  # server clock, ISO 8601 UTC


@dataclass(frozen=True, slots=True)
class SeatFinished:
    """A seat's game ended (won, stopped by its player, or out of time) with its points, worked
    out from the game's events by seed 003's table."""

    TYPE: ClassVar[str] = "SeatFinished"
    VERSION: ClassVar[int] = 1

    seat: int
    game_id: str | None  # None: the seat never dealt its game in time, and scores nothing
    points: int
    units: int  # cards on the foundations
    reason: str  # "finished", "player", "timeout", or "not-dealt"
    ended_at: str  # server clock, ISO 8601 UTC


@dataclass(frozen=True, slots=True)
class Payout:
    seat: int
    player_id: str
    amount: int


@dataclass(frozen=True, slots=True)
class DuelSettled:
    """Every seat finished: the pot less the rake went to the best score (split on a tie), and
    the seed is revealed."""

    TYPE: ClassVar[str] = "DuelSettled"
    VERSION: ClassVar[int] = 1

    pot: int
    rake: int
    payouts: tuple[Payout, ...]
    server_seed: str | None  # hex; None for a certification duel given a deck
    deck: tuple[Card, ...] | None = None  # a certification duel's given deck, revealed


@dataclass(frozen=True, slots=True)
class DuelCancelled:
    """The duel did not fill in time (or an operator voided it): every fee went back to its
    player, and the seed is revealed."""

    TYPE: ClassVar[str] = "DuelCancelled"
    VERSION: ClassVar[int] = 1

    reason: str  # "not-filled", or the operator's reason for a void
    refunds: tuple[Payout, ...]
    voided: bool
    server_seed: str | None
    deck: tuple[Card, ...] | None = None


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


@dataclass(frozen=True, slots=True)
class LimitChanged:
    """A safer-gambling limit of the player set (by the player or an operator): what it was,
    what it is now, and from when the new value holds (at once when stricter, a day later
    when looser). ``None`` is no limit. The state of a limit is its last change."""

    TYPE: ClassVar[str] = "LimitChanged"
    VERSION: ClassVar[int] = 1

    limit: str  # service.core.safer_gambling.LIMITS
    previous: int | None  # the value in force when it was changed
    value: int | None
    effective_from: str  # instant: from when ``value`` holds


@dataclass(frozen=True, slots=True)
class PlayerExcluded:
    """The player took (or an operator set) a time-out or a self-exclusion of ``length``,
    applied at once: no deal, duel or deposit until ``until``. ``kind`` and ``until`` are the
    exclusion in force after it (an exclusion only ever extends: one already ending later
    stands)."""

    TYPE: ClassVar[str] = "PlayerExcluded"
    VERSION: ClassVar[int] = 1

    length: str  # service.core.safer_gambling.LENGTHS
    kind: str  # "time-out" or "self-exclusion"
    until: str  # instant


@dataclass(frozen=True, slots=True)
class RealityCheckAcknowledged:
    """The player acknowledged a reality check of the session that began at
    ``session_started``, having been shown its time, stakes, payouts and net."""

    TYPE: ClassVar[str] = "RealityCheckAcknowledged"
    VERSION: ClassVar[int] = 1

    session_started: str  # instant
    acknowledged_at: str  # instant, on the server's clock the checks fall due on
    session_seconds: int
    stakes: int
    payouts: int
    net: int


@dataclass(frozen=True, slots=True)
class FindingNamed:
    """One finding of a withdrawal's hold, exactly as the audit's verification recorded it."""

    check: str
    location: str
    expected: str
    found: str


@dataclass(frozen=True, slots=True)
class BalanceCorrected:
    """An operator's correction of a found forgery (issue 36): it names the hold
    (``hold``, the withdrawal-held significant event) and the findings it answers, says why,
    and moves ``amount`` between the player's wallet and a house account (``debit``: out of the
    wallet, as forged money is taken back; ``credit``: into it; 0 moves nothing). A later
    verification of the player no longer holds a withdrawal on the findings it names."""

    TYPE: ClassVar[str] = "BalanceCorrected"
    VERSION: ClassVar[int] = 1

    correction_id: str  # the ledger transaction's id is correction:<correction_id>
    hold: int
    findings: tuple[FindingNamed, ...]
    reason: str
    amount: int  # minor units, 0 or more
    currency: str  # the player's wallet's
    direction: str  # debit or credit (the player's wallet's side)
    account: str  # house-payouts, house-stakes or cashier (of the currency)


@dataclass(frozen=True, slots=True)
class GamingSwitched:
    """An operator switched gaming off or back on (GLI-19 s2.4.1, s4.15.1, A.6.3): for
    everyone (scope "all", target "*"), one game (its id), one game version (its
    rules_version) or one player (their id), and why. Games already dealt play on."""

    TYPE: ClassVar[str] = "GamingSwitched"
    VERSION: ClassVar[int] = 1

    scope: str  # all, game, version or player
    target: str
    enabled: bool
    reason: str


@dataclass(frozen=True, slots=True)
class WalletCallSent:
    """A call to the operator's wallet about to go on the wire (seamless mode, issue 37), on
    the stream of the round's wallet transactions (``wallet-<round id>``): which movement
    (``method`` bet, win or rollback, its ``transaction_uuid``, the same on every retry), of
    what, for whom, and this HTTP call's ``request_uuid`` with the SHA-256 of its exact body
    (the body itself, which carries the operator's session token, is kept beside the round,
    never in the log). Recorded before the call, so a crash mid-call leaves it unanswered."""

    TYPE: ClassVar[str] = "WalletCallSent"
    VERSION: ClassVar[int] = 1

    round_id: str  # the game's id (a duel seat's game's)
    player_id: str
    method: str  # bet, win or rollback
    transaction_uuid: str
    reference: str | None  # a win's or rollback's bet (its transaction_uuid)
    amount: int  # minor units of ``currency``
    wire_amount: int  # the same in the wire's 1/100,000 units
    currency: str
    game_code: str  # the variant id
    round_closed: bool
    request_uuid: str
    request_sha256: str
    attempt: int  # 1 for the first call of the movement
    #: A bet's deal: the commitment to the shuffle made before the bet is sent (the cards stay
    #: sealed until the bet is confirmed); None for a win or a rollback.
    commitment: str | None = None
    #: A duel seat's round: the duel its fee is for (None: a game's round).
    duel_id: str | None = None


@dataclass(frozen=True, slots=True)
class WalletCallAnswered:
    """What came back for the call just sent (``request_uuid``), and what it means for the
    movement (``outcome``: confirmed, refused, unknown or review; service.core.seamless). The
    answer's exact body and the operator's signature over it are kept, so the audit re-verifies
    it; a confirmed movement moves the server's mirror of the operator's wallet."""

    TYPE: ClassVar[str] = "WalletCallAnswered"
    VERSION: ClassVar[int] = 1

    transaction_uuid: str
    method: str
    request_uuid: str
    amount: int
    currency: str
    outcome: str
    status: str | None  # the answer's status, when it was readable and verified
    balance: int | None  # the balance the answer carried (wire units)
    http_status: int | None
    problem: str | None  # why the outcome is unknown
    answer: str | None  # the answer's exact body (UTF-8)
    answer_signature: str | None


@dataclass(frozen=True, slots=True)
class WalletReviewMarked:
    """A round's wallet transaction left for a person (``reason``): a win refused or still
    unacknowledged after the last threshold, a round whose history failed verification before
    its win, a void's rollback the wallet says it never had. Retries of it stop."""

    TYPE: ClassVar[str] = "WalletReviewMarked"
    VERSION: ClassVar[int] = 1

    transaction_uuid: str
    reason: str


@dataclass(frozen=True, slots=True)
class WalletReviewResolved:
    """An operator's resolution of a movement under review, with an operator's key: ``retry``
    (a win or rollback sent again, the cause fixed at the operator), ``settled`` (the operator's
    wallet did apply it, by other means: mirrored as a confirmed one) or ``not-applied`` (a bet
    it never applied: nothing owed); ``reason`` says why."""

    TYPE: ClassVar[str] = "WalletReviewResolved"
    VERSION: ClassVar[int] = 1

    transaction_uuid: str
    method: str
    action: str
    amount: int  # minor units, as the movement was sent
    currency: str
    reason: str


@dataclass(frozen=True, slots=True)
class WalletPendingFlagged:
    """A win or rollback still unacknowledged after a threshold (``after_seconds``: by default
    an hour, then a day): retries go on; recorded once a threshold."""

    TYPE: ClassVar[str] = "WalletPendingFlagged"
    VERSION: ClassVar[int] = 1

    transaction_uuid: str
    after_seconds: int


GameEvent = (
    StakePlaced
    | Dealt
    | ClockStarted
    | CardDrawn
    | StockRecycled
    | PilesGathered
    | Reshuffled
    | CardPicked
    | CardMoved
    | CardTurned
    | PairRemoved
    | Undone
    | AutoCompleted
    | Collected
    | Voided
)

GAME_EVENT_TYPES: tuple[type[GameEvent], ...] = (
    StakePlaced,
    Dealt,
    ClockStarted,
    CardDrawn,
    StockRecycled,
    PilesGathered,
    Reshuffled,
    CardPicked,
    CardMoved,
    CardTurned,
    PairRemoved,
    Undone,
    AutoCompleted,
    Collected,
    Voided,
)

PlayerEvent = (
    PlayerRegistered
    | FundsDeposited
    | FundsWithdrawn
    | PreferencesChanged
    | LimitChanged
    | PlayerExcluded
    | RealityCheckAcknowledged
    | BalanceCorrected
)

DuelEvent = DuelOpened | SeatTaken | SeatDealt | SeatFinished | DuelSettled | DuelCancelled

DUEL_EVENT_TYPES: tuple[type[DuelEvent], ...] = (
    DuelOpened,
    SeatTaken,
    SeatDealt,
    SeatFinished,
    DuelSettled,
    DuelCancelled,
)

PLAYER_EVENT_TYPES: tuple[type[PlayerEvent], ...] = (
    PlayerRegistered,
    FundsDeposited,
    FundsWithdrawn,
    PreferencesChanged,
    LimitChanged,
    PlayerExcluded,
    RealityCheckAcknowledged,
    BalanceCorrected,
)

#: The operator's switches: the gaming-controls stream.
ControlEvent = GamingSwitched
CONTROL_EVENT_TYPES: tuple[type[ControlEvent], ...] = (GamingSwitched,)

#: A round's wallet transactions in seamless mode: the wallet-<round id> stream.
WalletEvent = (
    WalletCallSent
    | WalletCallAnswered
    | WalletPendingFlagged
    | WalletReviewMarked
    | WalletReviewResolved
)
WALLET_EVENT_TYPES: tuple[type[WalletEvent], ...] = (
    WalletCallSent,
    WalletCallAnswered,
    WalletPendingFlagged,
    WalletReviewMarked,
    WalletReviewResolved,
)

AnyEvent = GameEvent | PlayerEvent | DuelEvent | ControlEvent | WalletEvent
ALL_EVENT_TYPES: tuple[type[AnyEvent], ...] = (
    GAME_EVENT_TYPES
    + PLAYER_EVENT_TYPES
    + DUEL_EVENT_TYPES
    + CONTROL_EVENT_TYPES
    + WALLET_EVENT_TYPES
)
