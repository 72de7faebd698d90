"""The game aggregate as a decider.

``decide(state, command)`` validates a command against the state and returns the events it
causes (or raises :class:`RuleViolation`); ``evolve(state, event)`` applies one event with no
validation at all, so recorded history always replays. The state is the fold of the stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import reduce
from typing import Literal

from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    StockRecycled,
    Undone,
    Voided,
)
from service import errors, klondike, shuffle
from service.cards import Card, is_full_deck
from service.errors import RuleViolation
from service.klondike import Layout, Move
from service.paytable import CARDS_IN_DECK, Paytable
from service.variants import RULES_VERSION, VARIANTS, Variant, variant_named

Status = Literal["new", "in_progress", "complete", "collected", "voided"]
LastAction = Literal[
    "none", "deal", "draw", "recycle", "move", "turn", "undo", "auto-complete", "end"
]

# --- commands -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartGame:
    game_id: str
    player_id: str
    variant: str
    stake: int
    paytable: Paytable
    deck: tuple[Card, ...]
    shuffle_algorithm: str
    seed_commitment: str | None
    client_seed: str | None = None
    certification: bool = False


@dataclass(frozen=True, slots=True)
class Draw:
    pass


@dataclass(frozen=True, slots=True)
class Recycle:
    pass


@dataclass(frozen=True, slots=True)
class MoveCards:
    source: str
    target: str
    count: int | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    column: int


@dataclass(frozen=True, slots=True)
class Undo:
    pass


@dataclass(frozen=True, slots=True)
class Collect:
    reason: Literal["player", "timeout"] = "player"
    server_seed: str | None = None  # hex; must match the commitment when the game has one


@dataclass(frozen=True, slots=True)
class Void:
    reason: str
    server_seed: str | None = None


Command = StartGame | Draw | Recycle | MoveCards | Turn | Undo | Collect | Void
PlayCommand = Draw | Recycle | MoveCards | Turn | Undo | Collect

# --- state --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UndoRecord:
    """What the last action did, if it may be undone."""

    action: Literal["draw", "move"]
    source: str
    target: str
    cards: tuple[Card, ...]
    waste_fan: int  # the fan before the action


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What the deal fixed: who plays, for what stake, under which rules, with which deck."""

    game_id: str
    player_id: str
    variant: Variant
    stake: int
    currency: str
    win_rate: int
    paytable_id: str
    paytable_version: int
    rules_version: str
    certification: bool
    deck: tuple[Card, ...] = ()
    shuffle_algorithm: str = ""
    seed_commitment: str | None = None
    client_seed: str | None = None


@dataclass(frozen=True, slots=True)
class Ending:
    """How the game ended: paid out (collected) or refunded (voided)."""

    payout: int
    refund: int
    reason: str
    server_seed: str | None


@dataclass(frozen=True, slots=True)
class Game:
    """The state of one game. Few fields on purpose: evolve builds a new one per event."""

    status: Status = "new"
    version: int = 0  # events folded so far; equals the stream version
    info: GameInfo | None = None
    layout: Layout | None = None
    undo: UndoRecord | None = None
    last_action: LastAction = "none"
    ending: Ending | None = None

    @property
    def foundation_count(self) -> int:
        return self.layout.foundation_count if self.layout else 0

    @property
    def winnings(self) -> int:
        """What collecting now would pay: cards on the foundations times the win rate."""
        return self.foundation_count * self.win_rate

    @property
    def is_over(self) -> bool:
        return self.status in ("collected", "voided")

    # Shorthands for the fixed facts, empty before the deal.
    @property
    def game_id(self) -> str:
        return self.info.game_id if self.info else ""

    @property
    def player_id(self) -> str:
        return self.info.player_id if self.info else ""

    @property
    def variant(self) -> Variant | None:
        return self.info.variant if self.info else None

    @property
    def stake(self) -> int:
        return self.info.stake if self.info else 0

    @property
    def currency(self) -> str:
        return self.info.currency if self.info else ""

    @property
    def win_rate(self) -> int:
        return self.info.win_rate if self.info else 0

    @property
    def certification(self) -> bool:
        return self.info.certification if self.info else False

    @property
    def deck(self) -> tuple[Card, ...]:
        return self.info.deck if self.info else ()

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


INITIAL = Game()
MAX_REASON = 500

# --- decide -------------------------------------------------------------------------------------

_CANNOT_UNDO: dict[str, str] = {
    "none": "nothing has been played yet",
    "deal": "the deal cannot be undone",
    "recycle": "recycling the stock cannot be undone",
    "move": "a move between columns cannot be undone",
    "turn": "turning a card face up cannot be undone",
    "undo": "an undo cannot itself be undone, and only the last action can be",
    "auto-complete": "auto-complete cannot be undone",
}


def decide(state: Game, command: Command) -> list[GameEvent]:
    """The events ``command`` causes in ``state``; raises RuleViolation if it breaks a rule."""
    if isinstance(command, StartGame):
        return _start(state, command)
    if state.status == "new":
        raise RuleViolation(errors.GAME_NOT_STARTED, "this game has not been dealt")
    if state.is_over:
        raise RuleViolation(
            errors.GAME_OVER, f"the game is {state.status}; it accepts no more commands"
        )
    if isinstance(command, Collect):
        return [_collect(state, command)]
    if isinstance(command, Void):
        return [_void(state, command)]
    if state.status == "complete":
        raise RuleViolation(
            errors.GAME_COMPLETE, "all 52 cards are on the foundations; collect the winnings"
        )
    layout = state.layout
    assert layout is not None
    events: list[GameEvent]
    if isinstance(command, Draw):
        events = [CardDrawn(klondike.check_draw(layout))]
    elif isinstance(command, Recycle):
        klondike.check_recycle(layout)
        events = [StockRecycled(len(layout.waste), layout.passes_left - 1)]
    elif isinstance(command, MoveCards):
        move = klondike.resolve_move(layout, command.source, command.target, command.count)
        events = [CardMoved(move.source, move.target, move.cards)]
    elif isinstance(command, Turn):
        events = [CardTurned(command.column, klondike.check_turn(layout, command.column))]
    elif isinstance(command, Undo):
        events = [_undo(state)]
    else:
        raise TypeError(f"not a game command: {command!r}")
    return _with_auto_complete(state, events)


def _start(state: Game, command: StartGame) -> list[GameEvent]:
    if state.status != "new":
        raise RuleViolation(errors.GAME_ALREADY_STARTED, "this game has already been dealt")
    variant = variant_named(command.variant)
    win_rate = command.paytable.win_rate(command.stake)
    if not is_full_deck(command.deck):
        raise RuleViolation(
            errors.INVALID_DECK, "a deck is 52 distinct card codes (e.g. AS, TH, KC) in deal order"
        )
    return [
        StakePlaced(
            game_id=command.game_id,
            player_id=command.player_id,
            variant=variant.name,
            draw_count=variant.draw_count,
            passes=variant.passes,
            stake=command.stake,
            currency=command.paytable.currency,
            win_rate=win_rate,
            paytable_id=command.paytable.id,
            paytable_version=command.paytable.version,
            rules_version=RULES_VERSION,
            certification=command.certification,
        ),
        Dealt(
            deck=tuple(command.deck),
            shuffle_algorithm=command.shuffle_algorithm,
            seed_commitment=command.seed_commitment,
            client_seed=command.client_seed,
        ),
    ]


def _check_reveal(state: Game, server_seed: str | None) -> None:
    """A game with a commitment ends only by revealing the seed that matches it."""
    if state.seed_commitment is None:
        if server_seed is not None:
            raise RuleViolation(errors.SEED_MISMATCH, "this game was dealt from a given deck")
        return
    if server_seed is None:
        raise RuleViolation(errors.SEED_REQUIRED, "ending this game must reveal its server seed")
    if not shuffle.seed_matches(server_seed, state.seed_commitment):
        raise RuleViolation(errors.SEED_MISMATCH, "the seed does not match the game's commitment")


def _collect(state: Game, command: Collect) -> Collected:
    if command.reason not in ("player", "timeout"):
        raise RuleViolation(
            errors.INVALID_REASON, "a game is collected by the player or by timeout"
        )
    _check_reveal(state, command.server_seed)
    return Collected(
        reason=command.reason,
        winnings=state.winnings,
        currency=state.currency,
        foundation_count=state.foundation_count,
        server_seed=command.server_seed,
    )


def _void(state: Game, command: Void) -> Voided:
    if not command.reason.strip() or len(command.reason) > MAX_REASON:
        raise RuleViolation(
            errors.INVALID_REASON, f"a void needs a reason of 1 to {MAX_REASON} characters"
        )
    _check_reveal(state, command.server_seed)
    return Voided(
        reason=command.reason,
        refund=state.stake,
        currency=state.currency,
        server_seed=command.server_seed,
    )


def _undo(state: Game) -> Undone:
    record = state.undo
    if record is None:
        reason = _CANNOT_UNDO.get(state.last_action, "that action cannot be undone")
        raise RuleViolation(
            errors.UNDO_NOT_ALLOWED,
            f"{reason}; undo reverses only the last draw, move from the waste, or move between "
            "a foundation and a column",
        )
    return Undone(record.action, record.source, record.target, record.cards, record.waste_fan)


def _with_auto_complete(state: Game, events: list[GameEvent]) -> list[GameEvent]:
    after = fold(events, state)
    assert after.layout is not None
    if klondike.can_auto_complete(after.layout):
        moves = klondike.auto_complete_moves(after.layout)
        events.append(AutoCompleted(tuple(AutoMove(m.source, m.target, m.cards[0]) for m in moves)))
    return events


# --- evolve -------------------------------------------------------------------------------------


def _undoable(move: Move) -> bool:
    """Undo covers waste->column/foundation and foundation<->column, never column->column."""
    if move.source == klondike.WASTE:
        return True
    return move.source.startswith("foundation") != move.target.startswith("foundation")


def evolve(state: Game, event: GameEvent) -> Game:
    """The state after ``event``. Never validates: recorded history must always replay."""
    version = state.version + 1
    layout = state.layout
    if isinstance(event, StakePlaced):
        info = GameInfo(
            game_id=event.game_id,
            player_id=event.player_id,
            variant=_variant(event),
            stake=event.stake,
            currency=event.currency,
            win_rate=event.win_rate,
            paytable_id=event.paytable_id,
            paytable_version=event.paytable_version,
            rules_version=event.rules_version,
            certification=event.certification,
        )
        return Game("new", version, info, None, None, "none", None)
    if isinstance(event, Dealt):
        assert state.info is not None  # StakePlaced comes first
        info = replace(
            state.info,
            deck=event.deck,
            shuffle_algorithm=event.shuffle_algorithm,
            seed_commitment=event.seed_commitment,
            client_seed=event.client_seed,
        )
        layout = klondike.deal(event.deck, info.variant.draw_count, info.variant.passes)
        return Game("in_progress", version, info, layout, None, "deal", None)
    if isinstance(event, Collected):
        ending = Ending(event.winnings, 0, event.reason, event.server_seed)
        return Game("collected", version, state.info, layout, None, "end", ending)
    if isinstance(event, Voided):
        ending = Ending(0, event.refund, event.reason, event.server_seed)
        return Game("voided", version, state.info, layout, None, "end", ending)
    assert layout is not None  # play events follow the deal
    undo: UndoRecord | None = None
    action: LastAction
    if isinstance(event, CardDrawn):
        undo = UndoRecord("draw", klondike.STOCK, klondike.WASTE, event.cards, layout.waste_fan)
        layout, action = klondike.apply_draw(layout, event.cards), "draw"
    elif isinstance(event, StockRecycled):
        layout, action = klondike.apply_recycle(layout), "recycle"
    elif isinstance(event, CardMoved):
        move = Move(event.source, event.target, event.cards)
        if _undoable(move):
            undo = UndoRecord("move", move.source, move.target, move.cards, layout.waste_fan)
        layout, action = klondike.apply_move(layout, move), "move"
    elif isinstance(event, CardTurned):
        layout, action = klondike.apply_turn(layout, event.column), "turn"
    elif isinstance(event, Undone):
        if event.action == "draw":
            layout = klondike.undo_draw(layout, event.cards, event.waste_fan)
        else:
            move = Move(event.source, event.target, event.cards)
            layout = klondike.undo_move(layout, move, event.waste_fan)
        action = "undo"
    elif isinstance(event, AutoCompleted):
        for m in event.moves:
            layout = klondike.apply_move(layout, Move(m.source, m.target, (m.card,)))
        action = "auto-complete"
    else:
        raise TypeError(f"not a game event: {event!r}")
    status: Status = "complete" if layout.foundation_count == CARDS_IN_DECK else "in_progress"
    return Game(status, version, state.info, layout, undo, action, None)


def _variant(event: StakePlaced) -> Variant:
    # The event records the draw count and passes played, so replay never depends on today's
    # variant table.
    known = VARIANTS.get(event.variant)
    title = known.title if known else event.variant
    return Variant(event.variant, event.draw_count, event.passes, title)


def fold(events: Iterable[GameEvent], state: Game = INITIAL) -> Game:
    """Replay events onto a state (by default from the very beginning)."""
    return reduce(evolve, events, state)


# --- what the player may do ---------------------------------------------------------------------


def legal_commands(state: Game) -> list[PlayCommand]:
    """Every play command the rules accept now (collect included; void is the operator's)."""
    if state.status not in ("in_progress", "complete"):
        return []
    commands: list[PlayCommand] = []
    layout = state.layout
    if state.status == "in_progress" and layout is not None:
        if layout.stock:
            commands.append(Draw())
        if klondike.can_recycle(layout):
            commands.append(Recycle())
        commands.extend(
            MoveCards(m.source, m.target, len(m.cards)) for m in klondike.legal_moves(layout)
        )
        commands.extend(Turn(c) for c in klondike.turnable_columns(layout))
        if state.undo is not None:
            commands.append(Undo())
    commands.append(Collect())
    return commands
