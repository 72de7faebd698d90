"""Safer gambling: a player's limits, time-outs and self-exclusion, set by the player or an
operator and enforced in the same transaction as the money they guard
(service/core/safer_gambling.py holds the rules).

A change is a LimitChanged event on the player's stream (who and when in its metadata); the
database keeps each limit's state from those events (migrations/0017). A deal, a duel's join, a
duel seat's deal and a deposit call the checks here after locking the player's row
(ProjectionStore.player_locked, migrations/0036), as a change of a limit or an exclusion does,
so what they read cannot move before their own writes commit: N wagers racing against a limit
that allows k let exactly k through, with or without the writers' lock. Certification play (the
sandbox currency) is not real money and is not limited.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from events.catalog import PlayerEvent, RealityCheckAcknowledged
from events.records import NewEvent
from service.core import ledger
from service.core import safer_gambling as rules
from service.core.clock import Clock, instant, system_clock
from service.core.context import RequestContext, event_metadata
from service.core.paytable import Paytable, paytable_for
from service.core.safer_gambling import Exclusion, RealityCheck
from service.core.streams import player_stream
from service.errors import Excluded, LimitExceeded, NotFound, RealityCheckDue, WalletModeOnly
from service.runtime import metrics
from service.services.unit_of_work import UnitOfWork
from service.storage.projections import PlayerRow

log = logging.getLogger(__name__)
#: The significant events of refusals (finance's daily report counts them by what refused).
REFUSALS = "safer-gambling"


@dataclass(frozen=True, slots=True)
class LimitView:
    """One limit as the player's limits page shows it."""

    limit: str
    value: int | None  # in force now; None: no limit
    used: int  # this period's deposits or net loss (0 for the maximum stake)
    resets_at: datetime | None  # when the period ends (None: the maximum stake)
    pending: int | None  # a loosening waiting for its day: its value (None: no limit)
    pending_from: datetime | None  # from when it holds (None: nothing pending)


@dataclass(frozen=True, slots=True)
class Limits:
    player_id: uuid.UUID
    currency: str
    limits: tuple[LimitView, ...]
    replayed: bool = False


class SaferGambling:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        paytables: Mapping[str, Paytable],
        clock: Clock = system_clock,
        *,
        deposit_limits: bool = True,
    ) -> None:
        self._uow = unit_of_work
        self._paytables = dict(paytables)
        #: False in seamless mode: deposits are the operator's, and so are their limits.
        self._deposit_limits = deposit_limits
        #: The server's clock limits take effect and periods reset on (tests move it).
        self.clock = clock

    def limits(self, player_id: uuid.UUID) -> Limits:
        with self._uow() as uow:
            return self._view(uow, player_id)

    def set_limit(
        self, request: RequestContext, player_id: uuid.UUID, limit: str, value: int | None
    ) -> Limits:
        """Set one limit: at once if stricter, a day later if looser (the old value holds until
        then). A retry under the same Idempotency-Key answers the limits as they are."""
        if limit.startswith("deposit") and not self._deposit_limits:
            raise WalletModeOnly(
                "in seamless mode deposits are the operator's own wallet's, and so are their "
                "limits: set them there"
            )
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                return self._view(uow, player_id, replayed=True)
            player = uow.projections.player_locked(player_id)  # as a deal, which reads it
            if player is None:
                raise NotFound("player", player_id)
            now = self._decided_at(uow)
            state = uow.limits.limits(player_id).get(limit, rules.NO_LIMIT)
            event = rules.change(limit, state, value, now)
            self._append(uow, request, player, event)
            uow.remember(request, {"player_id": str(player_id), "limit": limit})
            view = self._view(uow, player_id)
            uow.commit()
            return view

    def _decided_at(self, uow: UnitOfWork) -> datetime:
        """When a limit or exclusion is set: the server's clock, and never before the database's,
        whose rules check that a loosening waits 24 hours and an exclusion only extends
        (migrations/0031)."""
        return max(self.clock(), uow.limits.db_clock())

    def exclusion(self, player_id: uuid.UUID) -> Exclusion | None:
        """The player's time-out or self-exclusion in force, if any."""
        with self._uow() as uow:
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            found = uow.limits.exclusion(player_id)
        return found if found is not None and found.active(self.clock()) else None

    def exclude(self, request: RequestContext, player_id: uuid.UUID, length: str) -> Exclusion:
        """Start a time-out or self-exclusion of ``length`` at once (or keep the one in force
        if it ends later); a retry under the same Idempotency-Key answers the one in force."""
        with self._uow() as uow:
            stored = uow.open_command(request)
            player = uow.projections.player_locked(player_id)  # as a deal, which reads it
            if player is None:
                raise NotFound("player", player_id)
            now = self._decided_at(uow)
            current = uow.limits.exclusion(player_id)
            if stored is not None:
                assert current is not None  # the first attempt recorded one
                return current
            event = rules.exclude(current, length, now)
            self._append(uow, request, player, event)
            uow.remember(request, {"player_id": str(player_id), "length": length})
            uow.commit()
            return rules.excluded(event)

    # --- refusals ---------------------------------------------------------------------------

    @contextmanager
    def refusals_recorded(
        self, request: RequestContext, player_id: uuid.UUID, action: str
    ) -> Iterator[None]:
        """Record a deal, join, deposit or play action refused by a limit, an exclusion or a
        waiting reality check as a significant event (finance's daily report counts them),
        once the refused transaction has rolled back; the refusal then goes on up."""
        try:
            yield
        except (LimitExceeded, Excluded, RealityCheckDue) as refused:
            self._record_refusal(request, player_id, action, refused)
            raise

    def _record_refusal(
        self, request: RequestContext, player_id: uuid.UUID, action: str, refused: Exception
    ) -> None:
        details: dict[str, object] = {"action": action}
        if isinstance(refused, LimitExceeded):
            details |= {"refused": "limit", "limit": refused.limit}
        elif isinstance(refused, Excluded):
            details |= {"refused": "excluded", "exclusion": refused.kind}
        else:
            details |= {"refused": "reality-check"}
        metrics.SAFER_GAMBLING_REFUSALS.labels(str(details["refused"])).inc()
        try:
            with self._uow() as uow:
                player = uow.projections.player(player_id)
                currency = player.currency if player is not None else None
                uow.significant.record(
                    REFUSALS, request.actor.id, details, player_id=player_id, currency=currency
                )
                uow.commit()
        except Exception:  # the count is the report's; the refusal itself must still answer
            log.exception("recording a safer-gambling refusal failed")

    # --- reality checks ---------------------------------------------------------------------

    def reality_check(self, request: RequestContext, player_id: uuid.UUID) -> RealityCheck | None:
        """The reality check due in the caller's player session, if any (None for staff)."""
        with self._uow() as uow:
            uow.outside_transaction()
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            return self._due(uow, request, player_id)

    @staticmethod
    def session_checked(request: RequestContext) -> str | None:
        """The player whose session a play action's checks are for (None: staff, no checks)."""
        if request.session_started is None or request.actor.role != "player":
            return None
        return request.actor.id

    def check_session_in(
        self, uow: UnitOfWork, request: RequestContext, limits: Mapping[str, rules.Limit]
    ) -> None:
        """A play action's checks in the player session ``session_checked`` named, on the
        command's own connection, with the player's ``limits`` (read with the game's events):
        refuse it once the session has lasted its session-time limit (LimitExceeded), and pause
        it while a reality check of the session waits (RealityCheckDue)."""
        started = request.session_started
        assert started is not None  # a player session: session_checked named its player
        rules.check_session_time(limits, started, self.clock())
        rules.check_no_reality_check_due(self._due(uow, request, request.actor.id, limits))

    def acknowledge(self, request: RequestContext, player_id: uuid.UUID) -> RealityCheck | None:
        """Record that the player saw their session's figures; play goes on until the next
        check. Returns the check acknowledged (None if none was due: nothing is recorded)."""
        with self._uow() as uow:
            stored = uow.open_command(request)
            if uow.projections.player_locked(player_id) is None:  # as a deal, which reads it
                raise NotFound("player", player_id)
            if stored is not None or request.session_started is None:
                return None
            due = self._due(uow, request, player_id)
            if due is None:
                return None
            now = self.clock()
            event = RealityCheckAcknowledged(
                instant(due.session_started),
                instant(now),
                due.session_seconds,
                due.stakes,
                due.payouts,
                due.net,
            )
            player = uow.projections.player(player_id)
            assert player is not None
            self._append(uow, request, player, event)
            uow.remember(request, {"player_id": str(player_id)})
            uow.commit()
            return due

    def _append(
        self, uow: UnitOfWork, request: RequestContext, player: PlayerRow, event: PlayerEvent
    ) -> None:
        """Append one event to the player's stream: who asked, and the player's paytable."""
        table = paytable_for(self._paytables, player.currency)
        stream = player_stream(player.player_id)
        meta = event_metadata(request, table.id, table.version)
        version = uow.events.stream_version(stream)
        uow.recorder.append(request.credential, stream, [NewEvent.of(event, meta)], version)

    def _due(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: object,
        limits: Mapping[str, rules.Limit] | None = None,
    ) -> RealityCheck | None:
        """The check due in the caller's session (``limits``: the player's, when already read)."""
        started = request.session_started
        if started is None:
            return None
        now = self.clock()
        if limits is None:
            limits = uow.limits.limits(player_id)
        interval = limits.get(rules.REALITY_CHECK, rules.NO_LIMIT).at(now)
        if interval is None:  # most players: one read per play action, not two
            return None
        last = uow.limits.last_reality_check(player_id, started)
        due_at = rules.reality_check_due(interval, started, last, now)
        if due_at is None:
            return None
        player = uow.projections.player(player_id)  # type: ignore[arg-type]
        assert player is not None
        account = ledger.player_account(str(player_id), player.currency).account_id
        return rules.prompt(started, due_at, uow.limits.session_money(account, started), now)

    def check_may_play_in(
        self, uow: UnitOfWork, request: RequestContext, player_id: object
    ) -> dict[str, rules.Limit]:
        """Refuse starting play (a deal, a duel's join, a duel seat's deal) to an excluded
        player (Excluded, whatever the money), in a session past its session-time limit
        (LimitExceeded) or whose reality check waits (RealityCheckDue), in the caller's
        transaction, after it locked the player's row. Returns the player's limits, read once."""
        now = self.clock()
        rules.check_not_excluded(uow.limits.exclusion(player_id), now)
        limits = uow.limits.limits(player_id)
        rules.check_session_time(limits, request.session_started, now)
        rules.check_no_reality_check_due(self._due(uow, request, player_id, limits))
        return limits

    def check_wager_in(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: object,
        currency: str,
        amount: int,
    ) -> None:
        """Refuse a stake or entry fee (a deal, a duel's join) that may not start play
        (``check_may_play_in``), or one the player's limits do not allow (LimitExceeded, real
        money only), in the caller's transaction, after it locked the player's row."""
        limits = self.check_may_play_in(uow, request, player_id)
        if ledger.is_sandbox(currency):
            return
        now = self.clock()
        usage = uow.limits.usage(ledger.player_account(str(player_id), currency).account_id, now)
        rules.check_wager(limits, usage, amount, now)

    def check_deposit_in(
        self, uow: UnitOfWork, player_id: object, currency: str, amount: int
    ) -> None:
        """Refuse a deposit of an excluded player (Excluded) or one the player's deposit limits
        do not allow (LimitExceeded), in the caller's transaction, after it locked the player's
        row."""
        now = self.clock()
        rules.check_not_excluded(uow.limits.exclusion(player_id), now)
        usage = uow.limits.usage(ledger.player_account(str(player_id), currency).account_id, now)
        rules.check_deposit(uow.limits.limits(player_id), usage, amount, now)

    def _view(self, uow: UnitOfWork, player_id: uuid.UUID, *, replayed: bool = False) -> Limits:
        player = uow.projections.player(player_id)
        if player is None:
            raise NotFound("player", player_id)
        now = self.clock()
        account = ledger.player_account(str(player_id), player.currency).account_id
        states = uow.limits.limits(player_id)
        shown = rules.remaining(states, uow.limits.usage(account, now), now)
        views = []
        for name, (value, used, resets_at) in shown.items():
            pending = states.get(name, rules.NO_LIMIT).pending(now)
            views.append(
                LimitView(
                    name,
                    value,
                    used,
                    resets_at,
                    pending[0] if pending else None,
                    pending[1] if pending else None,
                )
            )
        return Limits(player_id, player.currency, tuple(views), replayed)
