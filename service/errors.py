"""The one exception the rules raise, and the stable codes it carries.

A code is part of the public contract (it reaches API clients in problem details), so codes are
only ever added, never renamed. The sentence is for humans and may be reworded.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


class RuleViolation(Exception):
    """A command broke a rule of the game, the paytable or the deal."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class TimeUp(RuleViolation):
    """A timed game's clock ran out: no command is accepted after its deadline."""

    def __init__(self, deadline: str) -> None:
        super().__init__(TIME_UP, f"the game's time ran out at {deadline}; it is over")
        self.deadline = deadline


# Game lifecycle
TIME_UP = "time-up"
GAME_NOT_STARTED = "game-not-started"
GAME_ALREADY_STARTED = "game-already-started"
GAME_OVER = "game-over"
GAME_COMPLETE = "game-complete"

# Stock and waste
STOCK_EMPTY = "stock-empty"
STOCK_NOT_EMPTY = "stock-not-empty"
NO_PASSES_LEFT = "no-passes-left"
WASTE_EMPTY = "waste-empty"

# Piles and moves
UNKNOWN_PILE = "unknown-pile"
INVALID_SOURCE = "invalid-source"
INVALID_DESTINATION = "invalid-destination"
SAME_PILE = "same-pile"
SOURCE_EMPTY = "source-empty"
SOURCE_FACE_DOWN = "source-face-down"
INVALID_COUNT = "invalid-count"
NOT_ONE_RANK_LOWER = "not-one-rank-lower"
NOT_OPPOSITE_COLOUR = "not-opposite-colour"
ONLY_KING_TO_EMPTY_COLUMN = "only-king-to-empty-column"
DESTINATION_FACE_DOWN = "destination-face-down"
FOUNDATION_NEEDS_ACE = "foundation-needs-ace"
FOUNDATION_WRONG_SUIT = "foundation-wrong-suit"
FOUNDATION_WRONG_RANK = "foundation-wrong-rank"
NO_FOUNDATION_FITS = "no-foundation-fits"

ACTION_NOT_ALLOWED = "action-not-allowed"  # the game has no such action
NOT_ONE_RANK_APART = "not-one-rank-apart"  # golf: one rank above or below the waste's top
NOTHING_ON_A_KING = "nothing-on-a-king"  # golf: no card goes on a King
CARD_COVERED = "card-covered"  # pyramid: a card still covered by one it is not paired with
PAIR_NOT_THIRTEEN = "pair-not-thirteen"  # pyramid: two cards whose ranks do not total 13
ONLY_KING_ALONE = "only-king-alone"  # pyramid: a single card removed that is not a King

# Forty Thieves (it also refuses with not-same-suit, below)
NOT_A_RUN = "not-a-run"  # forty thieves: cards moved together that are not a same-suit run

# Scorpion and Super Scorpion
NOTHING_ON_AN_ACE = "nothing-on-an-ace"  # scorpion: no card goes on an Ace
NOT_SAME_SUIT = "not-same-suit"  # scorpion: a card goes only on a card of its own suit

# Upside-Down Pyramid
CANNOT_SPLIT_RUN = "cannot-split-run"  # upside-down pyramid: a column's built run moves whole

# Salic Law (it also refuses with stock-not-empty: a move between columns before the hand is out)
KING_NEVER_MOVES = "king-never-moves"  # salic law: a King is its column's base
NOT_A_SPACE = "not-a-space"  # salic law: a column takes a card only while it holds its King alone

# La Nivernaise (foundations 4-7 build down, King to Ace; each suit has one up and one down)
FOUNDATION_NEEDS_KING = "foundation-needs-king"  # an empty down foundation takes only a King
FOUNDATION_SUIT_TAKEN = "foundation-suit-taken"  # the suit already has that direction's foundation

# Three Shuffles and a Draw
EMPTY_FAN = "empty-fan"  # three shuffles: an empty fan stays empty
NO_PICKS_LEFT = "no-picks-left"  # three shuffles: the Draw of a buried card is used
CARD_NOT_IN_PILE = "card-not-in-pile"  # the Draw names a card its pile does not hold
NOT_BURIED = "not-buried"  # the Draw is of a buried card; a top card is moved

# Duels
FEE_NOT_OFFERED = "fee-not-offered"
SEATS_OUT_OF_RANGE = "seats-out-of-range"
DUEL_NOT_OPEN = "duel-not-open"
DUEL_ALREADY_OPEN = "duel-already-open"
DUEL_OVER = "duel-over"
DUEL_FULL = "duel-full"
DUEL_EXPIRED = "duel-expired"  # its time to fill ran out
DUEL_NOT_EXPIRED = "duel-not-expired"
DUEL_NOT_FULL = "duel-not-full"
DUEL_NOT_FINISHED = "duel-not-finished"
ALREADY_SEATED = "already-seated"
NOT_SEATED = "not-seated"
SEAT_ALREADY_DEALT = "seat-already-dealt"
SEAT_FINISHED = "seat-finished"
DEAL_EXPIRED = "deal-expired"  # a seat's time to deal its game ran out

# Turning and undo
NOTHING_TO_TURN = "nothing-to-turn"
TOP_CARD_FACE_UP = "top-card-face-up"
UNDO_NOT_ALLOWED = "undo-not-allowed"

# Deal, seed, stake
UNKNOWN_VARIANT = "unknown-variant"
INVALID_DECK = "invalid-deck"
SEED_MISMATCH = "seed-mismatch"
SEED_REQUIRED = "seed-required"
INVALID_REASON = "invalid-reason"
UNKNOWN_CURRENCY = "unknown-currency"
STAKE_NOT_MULTIPLE = "stake-not-multiple"
STAKE_OUT_OF_RANGE = "stake-out-of-range"


class NotFound(Exception):
    """No such player or game (or not one this caller may see: the same answer on purpose)."""

    def __init__(self, what: str, ident: object) -> None:
        super().__init__(f"no {what} {ident}")
        self.what = what
        self.ident = ident


class GameInProgress(Exception):
    """A player has an unfinished game and asked for another."""

    def __init__(self, game_id: object) -> None:
        super().__init__(f"game {game_id} is still in progress; collect it first")
        self.game_id = game_id


class CommitmentTaken(Exception):
    """A deal's seed commitment is already another game's or duel's: the database keeps a
    secret only for a commitment no other real deal has (migrations/0032, 0036: a certification
    deal may share one only with other certification deals), so a certification deal given the
    seed of a real game, or a deal racing another on one seed, is refused. Nothing is applied."""

    def __init__(self) -> None:
        super().__init__(
            "the deal's seed commitment is another game's or duel's already: a seed deals one "
            "real game or duel; deal another seed"
        )


class VersionMismatch(Exception):
    """The caller's expected game version (If-Match) is not the game's version."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"the game is at version {actual}, not {expected}")
        self.expected = expected
        self.actual = actual


class CertificationDisabled(Exception):
    """A certification deal (given seed or deck) was asked for with certification mode off."""


class PlayerConflict(Exception):
    """An external reference already names a player with other details."""


class GameNotFinished(Exception):
    """Something only a finished game has (a player's replay) was asked of one in progress."""

    def __init__(self, game_id: object) -> None:
        super().__init__(f"game {game_id} is still in progress; its replay opens when it ends")
        self.game_id = game_id


class InvalidArgument(Exception):
    """A well-formed request whose value the data rules out (a version past the stream's end,
    a date range backwards): the field and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class IntegrityBreach(Exception):
    """Stored data failed a check no legitimate write can fail (a sealed secret that is not the
    game's, a balance its postings do not explain): someone wrote around the service. Nothing
    is applied, and it is logged for the operator."""


class DuelNotOver(Exception):
    """Staff asked for a duel seat's game (its view, events or replay) or a duel's replay
    before the duel settled: every seat plays the same deck, so one seat's cards are the
    others' sealed cards, and a score tells how the deal plays."""

    def __init__(self, duel_id: object) -> None:
        super().__init__(
            f"duel {duel_id} has not ended: its seats' games are sealed until it settles"
        )
        self.duel_id = duel_id


class KeyReused(Exception):
    """An idempotency key was used before for a request with other content."""


class LogEmpty(Exception):
    """A checkpoint was asked of an event log that holds no event yet: there is nothing to sign
    (the first checkpoint covers the first event)."""

    def __init__(self) -> None:
        super().__init__("the event log holds no event yet: there is nothing to sign")


class LimitExceeded(Exception):
    """A wager, a deposit or (past its session's time limit) a play would break one of the
    player's safer-gambling limits: which, what is left of it (for the maximum stake: the
    maximum), and when it resets (None: never, or with a new session); ``detail`` says it in
    words when the generic sentence would not."""

    def __init__(
        self, limit: str, remaining: int, resets_at: datetime | None, detail: str | None = None
    ) -> None:
        when = f"; it resets at {resets_at.isoformat()}" if resets_at is not None else ""
        super().__init__(detail or f"the player's {limit} limit allows {remaining} more{when}")
        self.limit = limit
        self.remaining = remaining
        self.resets_at = resets_at


class Excluded(Exception):
    """The player is in a time-out or a self-exclusion: no deal, duel or deposit until it
    ends."""

    def __init__(self, kind: str, until: datetime) -> None:
        super().__init__(f"the player is in a {kind} until {until.isoformat()}")
        self.kind = kind
        self.until = until


class Disabled(Exception):
    """An operator switched off what a deal or a join needs: gaming for everyone or for this
    player (``gaming-disabled``), or this game or game version (``game-disabled``)."""

    def __init__(self, scope: str, target: str, reason: str) -> None:
        what = {"all": "all gaming", "player": "gaming for this player"}.get(
            scope, f"{scope} {target}"
        )
        super().__init__(f"{what} is disabled: {reason}")
        self.scope = scope
        self.target = target
        self.reason = reason


class RealityCheckDue(Exception):
    """A reality check is due in the player's session: play pauses until the player
    acknowledges it. ``check`` is the prompt (service.core.safer_gambling.RealityCheck)."""

    def __init__(self, check: Any) -> None:
        super().__init__(
            "a reality check is due: acknowledge it (POST /v1/players/{id}/reality-check) to "
            "play on"
        )
        self.check = check


class WithdrawalHeld(Exception):
    """The audit's verification of the player's history since their last verified point found
    something (a forged or altered game, duel or transaction): the withdrawal waits for an
    operator; nothing moved and nothing was stored under the request's key, so a retry after
    the finding is corrected pays. ``hold`` is the significant event naming it."""

    def __init__(self, player_id: object, hold: int, checks: list[str]) -> None:
        named = ", ".join(sorted(set(checks))) or "the verification"
        super().__init__(
            f"player {player_id}'s withdrawal is held: {named} found a fault in their history "
            f"since their last verified point (significant event {hold})"
        )
        self.player_id = player_id
        self.hold = hold
        self.checks = checks


class VerificationUnavailable(Exception):
    """The audit's worker did not verify the player's history in time (it is busy or down):
    the withdrawal is not paid unverified; nothing moved. Retry later."""


class ProjectionUnavailable(Exception):
    """Background work did not fold the log into the finance projections in time (its workers
    are busy or down): no report is answered from figures behind the log. Retry later."""


class WithdrawalUnverified(Exception):
    """The database refused a withdrawal's transaction: the player is not verified up to their
    wallet's head (migrations/0037), money having moved on it since the service's verification.
    The service verifies again; never answered to a client as such."""


class WalletModeOnly(Exception):
    """What the deployment's wallet mode does not do (issue 37): in seamless mode the operator's
    own wallet holds the players' money, so the server's cashier (deposits, withdrawals) and
    deposit limits are the operator's."""


class WalletRefused(Exception):
    """The operator's wallet definitely refused a bet (or a session's balance read): ``status``
    is its answer (service.core.seamless.Status). Nothing is owed; no card was dealt."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status


class WalletUnavailable(Exception):
    """The operator's wallet gave no definite answer to a bet (a timeout, an error, an answer
    that did not verify): the bet is being rolled back and nothing was dealt. Retry once the
    rollback has settled."""


class WalletUnsettled(Exception):
    """The player's last round still has a win or a rollback unsettled with the operator's
    wallet: no new deal until it settles."""

    def __init__(self, round_id: object, method: str) -> None:
        super().__init__(
            f"round {round_id}'s {method} is still being settled with the operator's wallet; "
            "deal again once it has"
        )
        self.round_id = round_id
        self.method = method


class WalletNotUnderReview(Exception):
    """An operator's resolution of a wallet movement that is not under review (its state)."""

    def __init__(self, transaction_uuid: object, state: str) -> None:
        super().__init__(f"wallet transaction {transaction_uuid} is {state}, not under review")
        self.transaction_uuid = transaction_uuid
        self.state = state
