"""The game aggregate as a decider, generic over every registered game.

``decide(state, command, sealed)`` validates a command against the state and returns the events
it causes (or raises :class:`RuleViolation`); ``evolve(state, event)`` applies one event with no
validation at all, so recorded history always replays. The state is the fold of the stream;
``sealed`` is the server's secret: the cards the player has not seen, in sealed order, from
which a draw or a turn takes the card it shows. The fold never holds an unseen card.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import reduce
from typing import Literal

from events.catalog import (
    CardMoved,
    ClockStarted,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    Undone,
    UndoneMove,
    Voided,
)
from events.catalog import DealtPile as DealtPileEvent
from service import errors
from service.core import shuffle
from service.core.clock import instant, parse_instant
from service.core.paytable import Paytable, winnings
from service.errors import RuleViolation, TimeUp
from service.games import game_named
from service.rules import fold as table_fold
from service.rules.actions import (
    ACTIONS,
    Draw,
    MoveCards,
    Pick,
    PlayAction,
    Recycle,
    Redeal,
    Remove,
    Turn,
    Undo,
)
from service.rules.cards import Card
from service.rules.game import (
    GameRules,
    Reveal,
    SealedCardMissing,
    Secrets,
    Shuffle,
    check_deck,
)
from service.rules.table import DealtPile, Slot, Table, dealt_piles, from_dealt, seal

__all__ = [
    "INITIAL",
    "Collect",
    "Command",
    "Draw",
    "Game",
    "MoveCards",
    "Pick",
    "PlayAction",
    "Recycle",
    "Redeal",
    "Remove",
    "SealedCardMissing",
    "Shuffle",
    "StartGame",
    "Turn",
    "Undo",
    "Void",
    "decide",
    "evolve",
    "fold",
    "legal_commands",
]

Status = Literal["new", "in_progress", "complete", "collected", "voided"]

# --- commands -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartGame:
    game_id: str
    player_id: str
    variant: str  # the game's id
    stake: int
    paytable: Paytable
    deck: tuple[Card, ...]
    shuffle_algorithm: str
    seed_commitment: str
    client_seed: str | None = None
    certification: bool = False
    duel_id: str | None = None  # a duel seat's game: its money is the duel's
    now: datetime | None = None  # the server's clock at the deal (a timed game's start)
    duel_paytable: tuple[str, int] | None = None  # a seat's: its duel paytable's id, version


@dataclass(frozen=True, slots=True)
class Collect:
    reason: Literal["player", "timeout", "finished"] = "player"  # finished: a timed game won
    server_seed: str | None = None  # hex; must match the commitment of a seeded game
    deck: tuple[Card, ...] | None = None  # a given deck, revealed; must match its commitment
    NAME = "collect"


@dataclass(frozen=True, slots=True)
class Void:
    reason: str
    server_seed: str | None = None
    deck: tuple[Card, ...] | None = None


Command = StartGame | PlayAction | Collect | Void
PlayCommand = PlayAction | Collect

# --- state --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UndoRecord:
    """The last action, if it may be undone, and the table it left (restored by the undo)."""

    event: GameEvent  # a play event whose spec says how it is undone
    before: Table

    @property
    def action(self) -> str:
        return _spec(self.event).action

    @property
    def moves(self) -> tuple[UndoneMove, ...]:
        """What goes back where: each card's source and where it had gone."""
        undo = _spec(self.event).undo
        assert undo is not None
        return undo(self.event)


def _spec(event: GameEvent) -> table_fold.PlaySpec[GameEvent]:
    play = table_fold.spec(event)
    assert play is not None
    return play


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What the deal fixed: who plays which game, for what stake, under which rules."""

    game_id: str
    player_id: str
    rules: GameRules
    stake: int
    currency: str
    multiplier: str
    max_units: int
    paytable_id: str
    paytable_version: int
    rules_version: str
    certification: bool
    shuffle_algorithm: str = ""
    seed_commitment: str | None = None
    client_seed: str | None = None
    legacy_deck: tuple[Card, ...] | None = None  # recorded in clear by v1 deals only
    duel_id: str | None = None
    deadline: datetime | None = None  # a timed game: no command after this


@dataclass(frozen=True, slots=True)
class Ending:
    """How the game ended: paid out (collected) or refunded (voided), and what it revealed."""

    payout: int
    refund: int
    reason: str
    server_seed: str | None
    deck: tuple[Card, ...] | None


@dataclass(frozen=True, slots=True)
class Game:
    """The state of one game. Few fields on purpose: evolve builds a new one per event."""

    status: Status = "new"
    version: int = 0  # events folded so far; equals the stream version
    info: GameInfo | None = None
    table: Table | None = None
    undo: UndoRecord | None = None
    last_action: str = "none"
    ending: Ending | None = None
    units: int = 0

    @property
    def winnings(self) -> int:
        """What collecting now would pay: floor(units x stake x M / max_units)."""
        info = self.info
        if info is None or info.duel_id is not None:  # a duel pays from its pot, not per card
            return 0
        return winnings(self.units, info.stake, info.multiplier, info.max_units)

    @property
    def win_rate(self) -> int:
        """One unit's worth at this stake, rounded down (exact for Vegas's 52-pence grid)."""
        info = self.info
        if info is None or info.duel_id is not None:
            return 0
        return winnings(1, info.stake, info.multiplier, info.max_units)

    @property
    def is_over(self) -> bool:
        return self.status in ("collected", "voided")

    @property
    def rules(self) -> GameRules | None:
        return self.info.rules if self.info else None

    # Shorthands for the fixed facts, empty before the deal.
    @property
    def game_id(self) -> str:
        return self.info.game_id if self.info else ""

    @property
    def player_id(self) -> str:
        return self.info.player_id if self.info else ""

    @property
    def variant(self) -> str:
        return self.info.rules.id if self.info else ""

    @property
    def stake(self) -> int:
        return self.info.stake if self.info else 0

    @property
    def currency(self) -> str:
        return self.info.currency if self.info else ""

    @property
    def max_units(self) -> int:
        return self.info.max_units if self.info else 0

    @property
    def certification(self) -> bool:
        return self.info.certification if self.info else False

    @property
    def seed_commitment(self) -> str | None:
        return self.info.seed_commitment if self.info else None

    @property
    def client_seed(self) -> str | None:
        return self.info.client_seed if self.info else None

    @property
    def payout(self) -> int | None:
        return self.ending.payout if self.ending else None

    @property
    def refund(self) -> int | None:
        return self.ending.refund if self.ending else None

    @property
    def end_reason(self) -> str | None:
        return self.ending.reason if self.ending else None

    @property
    def server_seed(self) -> str | None:
        """The server seed, revealed only once the game has ended."""
        return self.ending.server_seed if self.ending else None

    @property
    def revealed_deck(self) -> tuple[Card, ...] | None:
        """A certification game's given deck, revealed only once the game has ended."""
        return self.ending.deck if self.ending else None


INITIAL = Game()
MAX_REASON = 500

# --- decide -------------------------------------------------------------------------------------

#: Why the last action cannot be undone: each play action says so itself (its codec); the
#: deal, the rules' own play and the start are not actions.
_CANNOT_UNDO: dict[str, str] = {
    "none": "nothing has been played yet",
    "deal": "the deal cannot be undone",
    "auto-complete": "auto-complete cannot be undone",
    **{name: action.CANNOT_UNDO for name, action in ACTIONS.items()},
}


#: The cards the player has not seen, by sealed number: the server's whole list, or (an
#: unfinished game re-decided by an auditor) only those the stream showed.
Sealed = Sequence[Card] | Mapping[int, Card]


def revealer(sealed: Sealed, shuffle: Shuffle | None = None) -> Secrets:
    """The card in a slot (its code, or the sealed deck's card for a sealed number), and the
    redeal shuffle of the game's seed when there is one."""

    def reveal(slot: Slot) -> Card:
        if isinstance(slot, str):
            return slot
        try:
            return sealed[slot]
        except (IndexError, KeyError) as exc:
            raise SealedCardMissing(f"sealed card {slot} is not known here") from exc

    return Secrets(reveal, shuffle)


def decide(
    state: Game,
    command: Command,
    sealed: Sealed = (),
    shuffle: Shuffle | None = None,
    now: datetime | None = None,
) -> list[GameEvent]:
    """The events ``command`` causes in ``state``; raises RuleViolation if it breaks a rule.
    ``sealed`` holds the cards the player has not seen, for a command that shows one;
    ``shuffle`` is the game's redeal shuffle (service.core.shuffle.redealer), for a redeal; ``now``
    is the server's clock, which a timed game needs for every command (TimeUp after its
    deadline) and records when it ends."""
    if isinstance(command, StartGame):
        return _start(state, command)
    if state.status == "new":
        raise RuleViolation(errors.GAME_NOT_STARTED, "this game has not been dealt")
    if state.is_over:
        raise RuleViolation(
            errors.GAME_OVER, f"the game is {state.status}; it accepts no more commands"
        )
    info, table = state.info, state.table
    assert info is not None
    if info.deadline is not None and not isinstance(command, Void):
        if now is None:
            raise ValueError("a timed game is decided on the server's clock")
        timeout = isinstance(command, Collect) and command.reason == "timeout"
        if now > info.deadline and not timeout:
            raise TimeUp(instant(info.deadline))
    if isinstance(command, Collect):
        return [_collect(state, command, now)]
    if isinstance(command, Void):
        if state.status == "complete":  # won: the player is owed the win, not the stake back
            raise RuleViolation(
                errors.GAME_COMPLETE,
                f"the game is won ({state.units} of {info.max_units}); it is collected, not voided",
            )
        return [_void(state, command)]
    assert table is not None
    if state.status == "complete":
        raise RuleViolation(
            errors.GAME_COMPLETE,
            f"the game is won ({state.units} of {info.max_units}); collect the winnings",
        )
    if isinstance(command, Undo):
        return [_undo(state)]
    events = decide_on_table(info.rules, table, command, revealer(sealed, shuffle))
    if info.deadline is not None and now is not None:
        after = fold(events, state)
        if after.status == "complete":  # a timed game ends the moment it is won
            events.append(_collect(after, Collect("finished"), now))
    return events


def decide_on_table(
    rules: GameRules, table: Table, action: PlayAction, reveal: Reveal
) -> list[GameEvent]:
    """The events a play action causes on a table, what the rules then play by themselves
    included: the rules' part of every decision."""
    events = rules.decide(table, action, reveal)
    return events + _automatic(rules, apply_all(table, events), reveal)


def apply_all(table: Table, events: Iterable[GameEvent]) -> Table:
    for event in events:
        table = table_fold.apply(table, event)
    return table


def _automatic(rules: GameRules, table: Table, reveal: Reveal) -> list[GameEvent]:
    """What the rules then play by themselves, until nothing is left."""
    played: list[GameEvent] = []
    while more := rules.automatic(table, reveal):
        played.extend(more)
        table = apply_all(table, more)
    return played


def hidden_cards(rules: GameRules, deck: Sequence[Card]) -> tuple[Card, ...]:
    """The deal's face-down cards in sealed order: what the server keeps secret."""
    return seal(rules.deal(deck))[1]


def stake_placed(command: StartGame) -> StakePlaced:
    """The first event of every game: the stake and the rules it is played under."""
    rules = game_named(command.variant)
    paytable_id, paytable_version = command.paytable.id, command.paytable.version
    if command.duel_paytable is not None:  # a seat's fee is the duel paytable's
        paytable_id, paytable_version = command.duel_paytable
    elif command.duel_id is None:
        command.paytable.check_stake(command.stake)
    return StakePlaced(
        game_id=command.game_id,
        player_id=command.player_id,
        variant=rules.id,
        stake=command.stake,
        currency=command.paytable.currency,
        # The operator's rate for this game, if its paytable names one (a seat's game pays
        # nothing itself: its duel's paytable prices the seat).
        multiplier=rules.multiplier
        if command.duel_id is not None
        else command.paytable.multiplier_for(rules.id, rules.multiplier),
        max_units=rules.max_units,
        paytable_id=paytable_id,
        paytable_version=paytable_version,
        rules_version=rules.rules_version,
        certification=command.certification,
        duel_id=command.duel_id,
    )


def _start(state: Game, command: StartGame) -> list[GameEvent]:
    if state.status != "new":
        raise RuleViolation(errors.GAME_ALREADY_STARTED, "this game has already been dealt")
    placed = stake_placed(command)
    rules = game_named(command.variant)
    if rules.duel != (command.duel_id is not None):
        raise RuleViolation(
            errors.ACTION_NOT_ALLOWED,
            f"{rules.title} is dealt only to a duel's seat"
            if rules.duel
            else f"{rules.title} is not a duel game",
        )
    if command.shuffle_algorithm == shuffle.CERTIFICATION_DECK and not command.certification:
        raise RuleViolation(errors.INVALID_DECK, "only a certification game is dealt a given deck")
    check_deck(command.deck, rules.decks)
    sealed_table, hidden = seal(rules.deal(command.deck))
    dealt = Dealt(
        shuffle_algorithm=command.shuffle_algorithm,
        seed_commitment=command.seed_commitment,
        client_seed=command.client_seed,
        piles=tuple(DealtPileEvent(p.pile, p.down, p.up) for p in dealt_piles(sealed_table)),
    )
    clock: list[GameEvent] = []
    if rules.time_limit is not None:
        if command.now is None:
            raise ValueError("a timed game is dealt on the server's clock")
        deadline = command.now + timedelta(seconds=rules.time_limit)
        clock.append(ClockStarted(instant(command.now), instant(deadline)))
    return [placed, dealt, *clock, *_automatic(rules, sealed_table, revealer(hidden))]


def _check_reveal(state: Game, server_seed: str | None, deck: tuple[Card, ...] | None) -> None:
    """A game ends only by revealing the seed (or given deck) that matches its commitment."""
    info = state.info
    assert info is not None
    commitment = info.seed_commitment
    if info.duel_id is not None:  # every seat plays the duel's deck: the duel reveals it
        if server_seed is not None or deck is not None:
            raise RuleViolation(
                errors.SEED_MISMATCH, "a duel's seed is revealed when the duel settles"
            )
        return
    if commitment is None:  # a v1 deal from a given deck: recorded in clear, nothing to reveal
        if server_seed is not None or deck is not None:
            raise RuleViolation(errors.SEED_MISMATCH, "this game was dealt from a given deck")
        return
    if info.shuffle_algorithm == shuffle.CERTIFICATION_DECK:
        if deck is None or server_seed is None:
            raise RuleViolation(
                errors.SEED_REQUIRED, "ending this game must reveal its deck and its salt (seed)"
            )
        if not shuffle.deck_matches(deck, server_seed, commitment):
            raise RuleViolation(errors.SEED_MISMATCH, "the deck does not match the commitment")
        return
    if server_seed is None:
        raise RuleViolation(errors.SEED_REQUIRED, "ending this game must reveal its server seed")
    if deck is not None or not shuffle.seed_matches(server_seed, commitment):
        raise RuleViolation(errors.SEED_MISMATCH, "the seed does not match the game's commitment")


def _collect(state: Game, command: Collect, now: datetime | None = None) -> Collected:
    info = state.info
    assert info is not None
    timed = info.deadline is not None
    if command.reason not in ("player", "timeout", *(("finished",) if timed else ())):
        raise RuleViolation(
            errors.INVALID_REASON, "a game is collected by the player or by timeout"
        )
    if command.reason == "finished" and state.status != "complete":
        raise RuleViolation(errors.INVALID_REASON, "a timed game ends as finished only when won")
    ended_at = None
    if info.deadline is not None:
        assert now is not None
        if command.reason == "timeout":
            if now < info.deadline:
                raise RuleViolation(
                    errors.INVALID_REASON, f"the game's time runs until {instant(info.deadline)}"
                )
            ended_at = instant(info.deadline)  # it ended when the time ran out
        else:
            ended_at = instant(now)
    _check_reveal(state, command.server_seed, command.deck)
    return Collected(
        reason=command.reason,
        winnings=state.winnings,
        currency=state.currency,
        units=state.units,
        server_seed=command.server_seed,
        deck=command.deck,
        ended_at=ended_at,
    )


def _void(state: Game, command: Void) -> Voided:
    if not command.reason.strip() or len(command.reason) > MAX_REASON:
        raise RuleViolation(
            errors.INVALID_REASON, f"a void needs a reason of 1 to {MAX_REASON} characters"
        )
    _check_reveal(state, command.server_seed, command.deck)
    info = state.info
    assert info is not None
    return Voided(
        reason=command.reason,
        refund=0 if info.duel_id is not None else state.stake,  # the duel refunds its fees
        currency=state.currency,
        server_seed=command.server_seed,
        deck=command.deck,
    )


def _undo(state: Game) -> Undone:
    record = state.undo
    if record is None:
        rules = state.rules
        assert rules is not None
        reason = _CANNOT_UNDO.get(state.last_action, "that action cannot be undone")
        raise RuleViolation(errors.UNDO_NOT_ALLOWED, f"{reason}; {rules.undo_rule}")
    return Undone(record.action, record.moves)


# --- evolve -------------------------------------------------------------------------------------


def _reversed(table: Table, event: Undone) -> Table:
    """Put an undone action's cards back where they came from (only for a stream whose state
    kept no undo record, which the decider never writes: the fold must still not fail)."""
    for move in reversed(event.moves):
        table = table_fold.apply(table, CardMoved(move.target, move.source, move.cards))
    return table


def evolve(state: Game, event: GameEvent) -> Game:
    """The state after ``event``. Never validates: recorded history must always replay."""
    info = state.info
    table = state.table
    play = table_fold.spec(event)
    if play is not None and info is not None and table is not None:
        # The hot path: one play event. Won means every unit reached, for every game.
        rules = info.rules
        after = play.apply(table, event)
        undoable = play.undo is not None and rules.undoable(event, table)
        undo = UndoRecord(event, table) if undoable else None
        units = rules.units(after)
        status: Status = "complete" if units == rules.max_units else "in_progress"
        return Game(status, state.version + 1, info, after, undo, play.action, None, units)
    version = state.version + 1
    if isinstance(event, StakePlaced):
        info = GameInfo(
            game_id=event.game_id,
            player_id=event.player_id,
            rules=game_named(event.variant),
            stake=event.stake,
            currency=event.currency,
            multiplier=event.multiplier,
            max_units=event.max_units,
            paytable_id=event.paytable_id,
            paytable_version=event.paytable_version,
            rules_version=event.rules_version,
            certification=event.certification,
            duel_id=event.duel_id,
        )
        return Game("new", version, info, None, None, "none", None, 0)
    assert info is not None  # StakePlaced comes first
    if isinstance(event, Dealt):
        rules = info.rules
        info = replace(
            info,
            shuffle_algorithm=event.shuffle_algorithm,
            seed_commitment=event.seed_commitment,
            client_seed=event.client_seed,
            legacy_deck=event.deck,
        )
        if event.piles is not None:
            shown = (DealtPile(p.pile, p.down, p.up) for p in event.piles)
            table = from_dealt(rules.layout, shown, rules.passes, picks_left=rules.picks)
        else:
            table = rules.deal(event.deck or ())  # v1: the deck was recorded in clear
        return _in_play(version, info, table, None, "deal")
    if isinstance(event, ClockStarted):
        info = replace(info, deadline=parse_instant(event.deadline))
        return replace(state, version=version, info=info)
    if isinstance(event, Collected):
        ending = Ending(event.winnings, 0, event.reason, event.server_seed, event.deck)
        return Game("collected", version, info, table, None, "end", ending, state.units)
    if isinstance(event, Voided):
        ending = Ending(0, event.refund, event.reason, event.server_seed, event.deck)
        return Game("voided", version, info, table, None, "end", ending, state.units)
    assert table is not None  # play events follow the deal
    if isinstance(event, Undone):
        record = state.undo
        table = record.before if record is not None else _reversed(table, event)
        return _in_play(version, info, table, None, "undo")
    raise TypeError(f"not a game event: {event!r}")


def _in_play(
    version: int, info: GameInfo, table: Table, undo: UndoRecord | None, action: str
) -> Game:
    units = info.rules.units(table)
    status: Status = "complete" if units == info.rules.max_units else "in_progress"
    return Game(status, version, info, table, undo, action, None, units)


def fold(events: Iterable[GameEvent], state: Game = INITIAL) -> Game:
    """Replay events onto a state (by default from the very beginning)."""
    return reduce(evolve, events, state)


# --- what the player may do ---------------------------------------------------------------------


def legal_commands(state: Game) -> list[PlayCommand]:
    """Every play command the rules accept now (collect included; void is the operator's)."""
    if state.status not in ("in_progress", "complete"):
        return []
    commands: list[PlayCommand] = []
    info, table = state.info, state.table
    if state.status == "in_progress" and info is not None and table is not None:
        commands.extend(info.rules.legal_actions(table))
        if state.undo is not None:
            commands.append(Undo())
    commands.append(Collect())
    return commands


def shown_cards(events: Sequence[GameEvent]) -> list[tuple[int, int, Card]]:
    """Every sealed card a recorded stream showed: (version, sealed number, card). How an
    unfinished game is re-decided without its secret, and what the revealed deck is checked
    against."""
    shown: list[tuple[int, int, Card]] = []
    state = INITIAL
    for version, event in enumerate(events, start=1):
        if state.table is not None:
            shown.extend((version, n, c) for n, c in table_fold.reveals(state.table, event))
        state = evolve(state, event)
    return shown


def sealed_from_stream(events: Sequence[GameEvent]) -> dict[int, Card]:
    """The sealed cards a recorded stream showed, by sealed number."""
    return {number: card for _, number, card in shown_cards(events)}
