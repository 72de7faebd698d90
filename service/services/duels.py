"""The duel service: what the API and the beat task call to join, deal, play, settle, cancel,
void and read classic duels (seed 003).

Each operation is one transaction: the duel's events, its seats' game events, the ledger
postings they cause and the read-model rows commit together or not at all. A duel settles (or
is cancelled) by appending to its stream at the version it was read at, so of two workers (or a
worker and a player) racing to settle it, one appends and the other finds it settled: the pot is
paid out exactly once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from events import chain
from events.catalog import Collected, DuelCancelled, DuelEvent, DuelOpened, DuelSettled
from events.codec import decode_duel
from events.records import ConcurrencyConflict, NewEvent, RecordedEvent
from service import errors
from service.core import duel_decider as d
from service.core import game_decider as g
from service.core import ledger, scoring
from service.core.clock import Clock, instant, parse_instant, system_clock
from service.core.context import SYSTEM, Actor, RequestContext, event_metadata
from service.core.dealing import CertificationDeal
from service.core.duel_verification import DuelVerification, SeatStream, verify_duel
from service.core.paytable import Paytable, paytable_for
from service.core.streams import duel_stream, game_stream
from service.errors import (
    CertificationDisabled,
    DuelNotOver,
    IntegrityBreach,
    NotFound,
    RuleViolation,
    TimeUp,
    WalletUnavailable,
)
from service.games import game_named
from service.games.klondike import KLONDIKE_DUEL
from service.runtime import metrics
from service.services import history_audits as audit
from service.services.controls import Controls
from service.services.games import (
    Games,
    LoadedGame,
    decode_records,
    new_deal,
    played_for,
)
from service.services.safer_gambling import SaferGambling
from service.services.seamless import Seamless
from service.services.seed_vault import SeedVault
from service.services.unit_of_work import UnitOfWork
from service.storage.duels import DuelRow, duel_rows
from service.storage.projections import PlayerRow

#: Who the clock's decisions are recorded as.
SWEEPER = Actor("duel-sweep", SYSTEM.role)
#: What of a seat's result staff see only once the duel has ended, and what they see instead.
SEALED_RESULT = ("points", "units", "reason")
MASKED = "hidden until the duel ends"


@dataclass(frozen=True, slots=True)
class LoadedDuel:
    """A duel's folded state, when it opened and ended (by the log), and the seat game of the
    player who asked, if they sit in it and dealt it."""

    state: d.Duel
    opened_at: datetime
    ended_at: datetime | None
    own_game: LoadedGame | None = None
    own_points: int | None = None  # the asking player's points so far
    replayed: bool = False


class Duels:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        games: Games,
        paytables: Mapping[str, d.DuelPaytable],
        game_paytables: Mapping[str, Paytable],
        vault: SeedVault,
        safer: SaferGambling,
        *,
        certification_mode: bool = False,
        big_win_threshold: int = 100_000,
        clock: Clock = system_clock,
        seamless: Seamless | None = None,
    ) -> None:
        self._uow = unit_of_work
        #: Seamless mode (issue 37): a seat's fee is a bet on the operator's wallet, its prize
        #: a win (0 for a loser), a cancellation's refund a rollback; None in transfer mode.
        self._seamless = seamless
        self._safer = safer
        self._big_win_threshold = big_win_threshold
        self._games = games
        self._paytables = dict(paytables)
        self._game_paytables = dict(game_paytables)
        self._vault = vault
        self._certification_mode = certification_mode
        #: The server's clock (tests move it; the seats' games read the games service's).
        self.clock = clock

    def paytable(self, currency: str) -> d.DuelPaytable:
        table = self._paytables.get(currency)
        if table is None:
            raise RuleViolation(errors.UNKNOWN_CURRENCY, f"no duels are offered in {currency}")
        return table

    def paytables(self) -> list[d.DuelPaytable]:
        return list(self._paytables.values())

    # --- joining --------------------------------------------------------------------------------

    def join(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        fee: int,
        seats: int = d.DEFAULT_SEATS,
        *,
        certification: CertificationDeal | None = None,
        certify: bool = False,
    ) -> LoadedDuel:
        """Seat the player in the oldest open duel of this fee, seat count and currency, or in
        a new one, and pay the fee into its pot. ``certify`` (certification mode, operators
        only) joins certification duels; a given ``certification`` seed or deck opens one."""
        if (certify or certification is not None) and not self._certification_mode:
            raise CertificationDisabled("certification duels need CERTIFICATION_MODE=1")
        certify = certify or certification is not None
        for attempt in (1, 2):
            try:
                with self._safer.refusals_recorded(request, player_id, "join"):
                    return self._join(request, player_id, fee, seats, certification, certify)
            except ConcurrencyConflict:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _join(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        fee: int,
        seats: int,
        certification: CertificationDeal | None,
        certify: bool,
    ) -> LoadedDuel:
        if self._seamless is not None and not certify:
            return self._join_seamless(request, player_id, fee, seats)
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                return self._replayed(uow, stored, player_id)
            _, table = self._admitted(uow, request, player_id, fee, seats, certify)
            found = None
            if certification is None:
                found = uow.duels.open_duel(
                    table.currency, fee, seats, player_id, self.clock(), certification=certify
                )
            loaded = self._take_seat(
                uow, request, player_id, table, fee, seats, certification, certify, found
            )
            uow.commit()
        if not certify:
            metrics.DUEL_FEES.labels(table.currency).inc(fee)
        return loaded

    def _join_seamless(
        self, request: RequestContext, player_id: uuid.UUID, fee: int, seats: int
    ) -> LoadedDuel:
        """A real-money join in seamless mode (issue 37), in three steps as a deal's: the
        guards, the duel chosen (an open one whose seats, taken or held by a fee on the wire,
        leave one; else a new one) and the fee's bet recorded as sent, holding the seat; the bet
        on the wire; its answer recorded and, only on RS_OK, the seat taken. A seat that can no
        longer be taken (the duel cancelled meanwhile) has its fee rolled back."""
        seamless = self._seamless
        assert seamless is not None
        with self._uow() as uow:
            stored = uow.stored_result(request)
            if stored is not None:
                return self._replayed(uow, stored, player_id)
            player, table = self._admitted(uow, request, player_id, fee, seats, False)
            held = uow.duels.open_duel(
                table.currency, fee, seats, player_id, self.clock(), False, held=True
            )
            duel_id = held or uuid.uuid4()
            pending = seamless.send_bet(
                uow,
                request,
                player_id,
                player.external_ref,
                str(uuid.uuid4()),
                fee,
                table.currency,
                KLONDIKE_DUEL.id,
                None,
                duel_id=str(duel_id),
            )
            uow.commit()
        exchange = seamless.call(pending)
        for attempt in (1, 2, 3):
            try:
                with self._uow() as uow:
                    outcome = seamless.answer_bet(uow, request, pending, exchange)
                    if outcome != "confirmed":
                        uow.commit()
                        if outcome == "unknown":
                            seamless.due_now()
                        raise seamless.not_confirmed(exchange, "the fee's bet", "no seat taken")
                    uow.claim(request)  # the key completes with the seat
                    loaded = self._held_seat(uow, request, player_id, table, fee, seats, duel_id)
                    if loaded is None:
                        seamless.unseated(uow, pending)
                        uow.commit()
                        seamless.due_now()
                        raise WalletUnavailable(
                            f"duel {duel_id} closed while the fee was being taken; no seat was "
                            "taken, and the fee is being returned"
                        )
                    uow.commit()
                metrics.DUEL_FEES.labels(table.currency).inc(fee)
                return loaded
            except ConcurrencyConflict as conflict:
                # Another seat of the duel was taken at once (nothing of this one committed),
                # or the bet's lease ran out and it is being rolled back.
                if attempt == 3 or conflict.stream_id != duel_stream(duel_id):
                    raise WalletUnavailable(
                        "the fee's bet could not be settled in time; no seat was taken, and "
                        "the fee is being returned"
                    ) from conflict
        raise AssertionError("unreachable")  # pragma: no cover

    def _held_seat(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        table: d.DuelPaytable,
        fee: int,
        seats: int,
        duel_id: uuid.UUID,
    ) -> LoadedDuel | None:
        """The seat a confirmed fee held, taken: in its duel if it is still open (a new duel
        of that id if it was one), else None."""
        if not uow.events.stream_version(duel_stream(duel_id)):
            return self._take_seat(
                uow, request, player_id, table, fee, seats, None, False, None, duel_id
            )
        state, _ = self._read(uow, duel_id)
        if state.status != "open" or (state.fill_by is not None and self.clock() >= state.fill_by):
            return None
        return self._take_seat(uow, request, player_id, table, fee, seats, None, False, duel_id)

    def _admitted(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        fee: int,
        seats: int,
        certify: bool,
    ) -> tuple[PlayerRow, d.DuelPaytable]:
        """Every guard a join passes: the player, the fee and seats the table allows, the
        switches, the player's own limits. The player and the table it is played for."""
        # The player's row locked before the checks read their limits (migrations/0036).
        # The seat itself needs no lock: it is appended at the duel's version read below,
        # so of two joins racing for one seat the second's append fails (the events'
        # primary key) and the join is tried again on the duel as it now is.
        player = uow.projections.player_locked(player_id)
        if player is None:
            raise NotFound("player", player_id)
        real = self.paytable(player.currency)
        # A certification duel is played for the sandbox: the same fees, in its currency.
        table = replace(real, currency=ledger.game_currency(real.currency, certify))
        table.check(fee, seats)
        # As a deal: the operator's switches first, then the player's own limits.
        Controls.check_open_in(uow, player_id, KLONDIKE_DUEL.id, KLONDIKE_DUEL.rules_version)
        self._safer.check_wager_in(uow, request, player_id, table.currency, fee)
        return player, table

    def _take_seat(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        table: d.DuelPaytable,
        fee: int,
        seats: int,
        certification: CertificationDeal | None,
        certify: bool,
        found: uuid.UUID | None,
        new_id: uuid.UUID | None = None,
    ) -> LoadedDuel:
        """The seat in duel ``found``, or in a new duel (``new_id``, or a fresh id), with its
        fee paid into the pot; remembered under the request's key."""
        now = self.clock()
        if found is None:
            duel_id = new_id or uuid.uuid4()
            dealt = new_deal(KLONDIKE_DUEL.decks, None, certification)
            opening = d.decide(
                d.INITIAL,
                d.OpenDuel(
                    str(duel_id),
                    table,
                    fee,
                    seats,
                    dealt.algorithm,
                    dealt.commitment,
                    now,
                    certification=certify,
                ),
            )
            if certification is not None:  # a known deal: on the auditors' log
                uow.significant.record(
                    "certification",
                    request.actor.id,
                    {"duel_id": str(duel_id), "given": dealt.kind, "fee": fee},
                    player_id=player_id,
                    currency=table.currency,
                )
            state, records = d.INITIAL, list[RecordedEvent]()
        else:
            duel_id = found
            state, records = self._read(uow, duel_id)
            opening = []
            dealt = None
        events = [
            *opening,
            *d.decide(d.fold(opening, state), d.TakeSeat(str(player_id), now)),
        ]
        loaded = self._append(uow, request, state, records, events, duel_id)
        if dealt is not None:  # kept at its deal, once recorded (migrations/0032)
            secret = self._vault.encrypt(dealt.secret)
            uow.seeds.add(duel_id, self._vault.key_id, secret, dealt.kind)
        uow.remember(request, {"duel_id": str(duel_id), "version": loaded.state.version})
        return loaded

    # --- dealing and playing a seat -------------------------------------------------------------

    def deal(self, request: RequestContext, duel_id: uuid.UUID, player_id: uuid.UUID) -> LoadedDuel:
        """Deal the player's seat its game: the duel's deck, and five minutes from now. Refused
        as the join would be (a switch, an exclusion, the session's time limit, a waiting
        reality check), the refusal recorded as the join's; a seat refused until its time to
        deal runs out forfeits, as any seat not dealt in time (the sweep)."""
        with self._safer.refusals_recorded(request, player_id, "deal"):
            return self._deal(request, duel_id, player_id)

    def _deal(
        self, request: RequestContext, duel_id: uuid.UUID, player_id: uuid.UUID
    ) -> LoadedDuel:
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                return self._replayed(uow, stored, player_id, duel_id)
            # The player's row locked before the checks read their exclusion and limits, as a
            # deal's (migrations/0036); a seat is one player's, so no one else waits on it.
            uow.projections.player_locked(player_id)
            state, records = self._read(uow, duel_id)
            seat = self._seat(state, duel_id, player_id)
            opened = state.opened
            assert opened is not None
            now = self.clock()
            game_id = uuid.uuid4()
            limit = d.KLONDIKE_DUEL_TIME
            events = d.decide(state, d.DealSeat(str(player_id), str(game_id), now + limit))
            # The duel's own rules first (a seat that may not deal anyway is no refusal), then
            # the join's guards: the switches, then the player's own. The fee was paid at the
            # join, so no money limit is checked again.
            seat_game = game_named(opened.variant)
            Controls.check_open_in(uow, player_id, seat_game.id, seat_game.rules_version)
            self._safer.check_may_play_in(uow, request, player_id)
            secret = self._games.secret_in(uow, duel_id, opened.seed_commitment)
            start = g.StartGame(
                game_id=str(game_id),
                player_id=str(player_id),
                variant=opened.variant,
                stake=opened.fee,
                paytable=self._seat_paytable(uow, opened, player_id),
                deck=secret.dealt(None, KLONDIKE_DUEL.decks) or (),
                shuffle_algorithm=opened.shuffle_algorithm,
                seed_commitment=opened.seed_commitment,
                certification=opened.certification,
                duel_id=opened.duel_id,
                now=now,
                duel_paytable=(opened.paytable_id, opened.paytable_version),
            )
            game = self._games.start_seat_in(uow, request, start)
            loaded = self._append(uow, request, state, records, events, duel_id)
            loaded = self._with_own(uow, loaded, loaded.state.seats[seat.seat])
            uow.remember(request, {"duel_id": str(duel_id), "version": loaded.state.version})
            uow.commit()
        self._games.cached(game)
        return loaded

    def play(
        self,
        request: RequestContext,
        duel_id: uuid.UUID,
        player_id: uuid.UUID,
        command: g.PlayAction | g.Collect,
    ) -> LoadedDuel:
        """One command of the player's seat game; the seat's result, and the settlement once
        every seat has finished, in the same transaction. After the deadline: TimeUp, and the
        game is ended as timed out."""
        try:
            return self._play(request, duel_id, player_id, command)
        except TimeUp:
            self.sweep_duel(duel_id)
            raise

    def _play(
        self,
        request: RequestContext,
        duel_id: uuid.UUID,
        player_id: uuid.UUID,
        command: g.PlayAction | g.Collect,
    ) -> LoadedDuel:
        for attempt in (1, 2):
            try:
                with self._uow() as uow:
                    stored = uow.claim(request)
                    if stored is not None:
                        return self._replayed(uow, stored, player_id, duel_id)
                    state, records = self._read(uow, duel_id)
                    seat = self._seat(state, duel_id, player_id)
                    if seat.game_id is None:
                        raise RuleViolation(errors.GAME_NOT_STARTED, "deal the seat's game first")
                    loaded_game = self._games.load_in(uow, uuid.UUID(seat.game_id))
                    game, _ = self._games.command_in(uow, request, loaded_game, lambda _: command)
                    events = self._seat_ended(uow, state, seat, game)
                    loaded = self._append(uow, request, state, records, events, duel_id)
                    loaded = self._with_own(uow, loaded, loaded.state.seats[seat.seat])
                    uow.remember(
                        request, {"duel_id": str(duel_id), "version": loaded.state.version}
                    )
                    uow.commit()
                self._games.cached(game)
                return loaded
            except ConcurrencyConflict as conflict:
                # Another command on this seat's game got there first: refused, as a game's
                # command is (trying again would apply both). Only a race on the duel's own
                # stream (another seat finishing, the clock settling) is tried again.
                if attempt == 2 or conflict.stream_id != duel_stream(duel_id):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _seat_ended(
        self, uow: UnitOfWork, state: d.Duel, seat: d.Seat, game: LoadedGame
    ) -> list[DuelEvent]:
        """If the seat's game has just ended: its result, and the settlement if it was the
        last seat playing."""
        if not game.state.is_over or seat.result is not None:
            return []
        assert seat.game_id is not None
        events = decode_records(uow.events.read_stream(game_stream(seat.game_id)))
        ending = events[-1]
        assert isinstance(ending, Collected)
        finished = d.FinishSeat(
            seat.seat,
            seat.game_id,
            scoring.points(events).total,
            ending.units,
            ending.reason,
            ending.ended_at or instant(self.clock()),
        )
        result = d.decide(state, finished)
        return result + self._settle_if_done(uow, d.fold(result, state))

    def _settle_if_done(self, uow: UnitOfWork, state: d.Duel) -> list[DuelEvent]:
        if not state.all_finished or state.is_over:
            return []
        secret = self._games.secret_in(uow, uuid.UUID(state.duel_id), _commitment(state))
        return d.decide(state, d.Settle(secret.seed_hex, secret.deck))

    # --- the clock: filling, timing out, settling -----------------------------------------------

    def sweep(self, limit: int = 100) -> list[uuid.UUID]:
        """Everything the clock decides for duels now: cancel the ones that did not fill in
        time (refunding every fee), time out seats whose five minutes ran out (or who never
        dealt), and settle the ones every seat has finished. Safe to run anywhere, any number
        of times at once: each duel changes at the version it was read at."""
        with self._uow() as uow:
            due = uow.duels.due(self.clock(), limit)
        done = []
        for duel_id in due:
            if self.sweep_duel(duel_id):
                done.append(duel_id)
        return done

    def sweep_duel(self, duel_id: uuid.UUID) -> bool:
        """What the clock decides for one duel now; True if anything was recorded."""
        request = RequestContext(SWEEPER)
        try:
            with self._uow() as uow:
                uow.lock_for_write()
                state, records = self._read(uow, duel_id)
                now = self.clock()
                events: list[DuelEvent] = []
                ended: list[LoadedGame] = []
                fill_by = state.fill_by
                if state.status == "open" and fill_by is not None and now >= fill_by:
                    secret = self._games.secret_in(uow, duel_id, _commitment(state))
                    events = d.decide(
                        state,
                        d.Cancel("not-filled", False, secret.seed_hex, secret.deck, now=now),
                    )
                elif state.status == "full":
                    events, ended = self._time_out_seats(uow, request, state, now)
                if not events:
                    return False
                self._append(uow, request, state, records, events, duel_id)
                uow.commit()
        except ConcurrencyConflict:
            return False  # someone else recorded it first
        for game in ended:
            self._games.cached(game)
        return True

    def _time_out_seats(
        self, uow: UnitOfWork, request: RequestContext, state: d.Duel, now: datetime
    ) -> tuple[list[DuelEvent], list[LoadedGame]]:
        events: list[DuelEvent] = []
        ended: list[LoadedGame] = []
        deal_by = state.deal_by
        for seat in state.seats:
            if seat.result is not None:
                continue
            if seat.game_id is None:
                if deal_by is not None and now >= deal_by:
                    forfeit = d.FinishSeat(seat.seat, None, 0, 0, "not-dealt", instant(deal_by))
                    events += d.decide(d.fold(events, state), forfeit)
                continue
            game = self._games.load_in(uow, uuid.UUID(seat.game_id))
            if not game.state.is_over:
                deadline = game.state.info.deadline if game.state.info else None
                if deadline is None or now <= deadline:
                    continue
                game, _ = self._games.command_in(
                    uow, request, game, lambda _: g.Collect(reason="timeout")
                )
                ended.append(game)
            current = d.fold(events, state)
            events += self._seat_ended(uow, current, current.seats[seat.seat], game)
        current = d.fold(events, state)
        if not any(isinstance(e, DuelSettled) for e in events):
            events += self._settle_if_done(uow, current)
        return events, ended

    # --- operators ------------------------------------------------------------------------------

    def void(self, request: RequestContext, duel_id: uuid.UUID, reason: str) -> LoadedDuel:
        """End the duel with every fee refunded; seats still playing are voided too."""
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                return self._replayed(uow, stored, None, duel_id)
            state, records = self._read(uow, duel_id)
            games = []
            for seat in state.seats:
                if seat.game_id is None or seat.result is not None:
                    continue
                game = self._games.load_in(uow, uuid.UUID(seat.game_id))
                if not game.state.is_over:
                    game, _ = self._games.command_in(uow, request, game, lambda _: g.Void(reason))
                    games.append(game)
            secret = self._games.secret_in(uow, duel_id, _commitment(state))
            events = d.decide(state, d.Cancel(reason, True, secret.seed_hex, secret.deck))
            loaded = self._append(uow, request, state, records, events, duel_id)
            refunded = sum(s.fee for s in state.seats)
            uow.significant.record(
                "void",
                request.actor.id,
                {"duel_id": str(duel_id), "reason": reason, "seats": len(state.seats)},
                amount=refunded,
                currency=state.opened.currency if state.opened else None,
            )
            uow.remember(request, {"duel_id": str(duel_id), "version": loaded.state.version})
            uow.commit()
        for game in games:
            self._games.cached(game)
        return loaded

    # --- reading --------------------------------------------------------------------------------

    def duel(self, duel_id: uuid.UUID, actor: Actor | None = None) -> LoadedDuel:
        """A duel as ``actor`` may see it (a player only one they sit in), after anything the
        clock has decided for it: a read ends a seat whose time ran out."""
        with self._uow() as uow:
            state, _ = self._read(uow, duel_id)
        if self._due(state):
            self.sweep_duel(duel_id)
        with self._uow() as uow:
            state, records = self._read(uow, duel_id)
            loaded = self._loaded(state, records, None)
            if actor is not None and actor.role == "player":
                seat = self._seat(state, duel_id, uuid.UUID(actor.id))
                loaded = self._with_own(uow, loaded, seat)
            return loaded

    def players(self, duel_id: uuid.UUID) -> set[str]:
        """Who sits in the duel (for the API's access check)."""
        with self._uow() as uow:
            return {str(s.player_id) for s in uow.duels.seats(duel_id)}

    def of_player(
        self,
        player_id: uuid.UUID,
        *,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 20,
    ) -> list[DuelRow]:
        with self._uow() as uow:
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            return uow.duels.of_player(player_id, before=before, limit=limit)

    def listed(
        self,
        *,
        status: str | None = None,
        player_id: uuid.UUID | None = None,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 50,
    ) -> list[DuelRow]:
        with self._uow() as uow:
            return uow.duels.listed(status=status, player_id=player_id, before=before, limit=limit)

    def verify(
        self, duel_id: uuid.UUID, actor: Actor
    ) -> tuple[list[RecordedEvent], DuelVerification]:
        """The duel's records and every check on it (service.core.duel_verification): auditors any
        duel; a player only one they sat in, once it has ended."""
        with self._uow() as uow:
            records = uow.events.read_stream(duel_stream(duel_id))
            if not records:
                raise NotFound("duel", duel_id)
            postings = audit.stream_postings(uow, duel_stream(duel_id))
            state = d.fold(_decode_duel(records))
            if actor.role == "player" and (state.seat_of(actor.id) is None or not state.is_over):
                raise NotFound("duel", duel_id)
            if not state.is_over:  # staff: every seat's game is in it (service.services.games)
                raise DuelNotOver(duel_id)
            seats = {
                s.game_id: SeatStream(
                    uow.events.read_stream(game_stream(s.game_id)),
                    audit.stream_postings(uow, game_stream(s.game_id)),
                )
                for s in state.seats
                if s.game_id is not None
            }
        return records, verify_duel(records, postings, seats, self._game_paytables)

    def records(self, duel_id: uuid.UUID) -> list[RecordedEvent]:
        with self._uow() as uow:
            records = uow.events.read_stream(duel_stream(duel_id))
        if not records:
            raise NotFound("duel", duel_id)
        return records

    def event_stream(self, duel_id: uuid.UUID) -> tuple[bool, list[RecordedEvent]]:
        """The raw stream as staff may see it, and whether its hash chain is intact (checked
        on the records as stored)."""
        records = self.records(duel_id)
        return chain.verify(records) is None, self.shown_records(records)

    @staticmethod
    def shown_records(records: Sequence[RecordedEvent]) -> list[RecordedEvent]:
        """The duel's stream as staff may see it: until the duel has ended, a seat's result
        (its points, cards up and how it ended) is masked, as the duel's view hides it, since
        a score tells how the deal plays; its seat, game and time stay."""
        if d.fold(_decode_duel(records)).is_over:
            return list(records)
        return [
            replace(r, data={**r.data, **dict.fromkeys(SEALED_RESULT, MASKED)})
            if r.type == "SeatFinished"
            else r
            for r in records
        ]

    # --- shared steps ---------------------------------------------------------------------------

    def _due(self, state: d.Duel) -> bool:
        """Has the clock something to decide for this duel?"""
        now = self.clock()
        fill_by, deal_by = state.fill_by, state.deal_by
        if state.status == "open":
            return fill_by is not None and now >= fill_by
        if state.status != "full":
            return False
        if deal_by is not None and now >= deal_by and any(s.game_id is None for s in state.seats):
            return True
        return (
            any(
                s.result is None and s.deadline is not None and now > parse_instant(s.deadline)
                for s in state.seats
            )
            or state.all_finished
        )

    def _seat_paytable(self, uow: UnitOfWork, opened: DuelOpened, player_id: uuid.UUID) -> Paytable:
        """A seat's game is played for its duel's money: the game paytable of the duel's
        currency, or of a sandbox duel (no table is configured in the sandbox currency) the
        player's own, in the duel's currency."""
        if not ledger.is_sandbox(opened.currency):
            return paytable_for(self._game_paytables, opened.currency)
        player = uow.projections.player(player_id)
        if player is None:
            raise NotFound("player", player_id)
        return played_for(paytable_for(self._game_paytables, player.currency), True)

    def _with_own(self, uow: UnitOfWork, loaded: LoadedDuel, seat: d.Seat) -> LoadedDuel:
        """The duel with the asking player's seat game and its points so far."""
        if seat.game_id is None:
            return loaded
        game = self._games.load_in(uow, uuid.UUID(seat.game_id))
        events = decode_records(uow.events.read_stream(game_stream(seat.game_id)))
        return replace(loaded, own_game=game, own_points=scoring.points(events).total)

    @staticmethod
    def _seat(state: d.Duel, duel_id: uuid.UUID, player_id: uuid.UUID) -> d.Seat:
        seat = state.seat_of(str(player_id))
        if seat is None:
            raise NotFound("duel", duel_id)
        return seat

    def _read(self, uow: UnitOfWork, duel_id: uuid.UUID) -> tuple[d.Duel, list[RecordedEvent]]:
        records = uow.events.read_stream(duel_stream(duel_id))
        if not records:
            raise NotFound("duel", duel_id)
        return d.fold(_decode_duel(records)), records

    def _append(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        state: d.Duel,
        records: Sequence[RecordedEvent],
        events: Sequence[DuelEvent],
        duel_id: uuid.UUID,
    ) -> LoadedDuel:
        """Append the duel's new events at the version it was read at, post the money they
        move, and refresh its rows."""
        stream = duel_stream(duel_id)
        after = d.fold(events, state)
        opened = after.opened
        assert opened is not None
        meta = event_metadata(
            request, opened.paytable_id, opened.paytable_version, opened.rules_version
        )
        recorded = uow.recorder.append(
            request.credential, stream, [NewEvent.of(e, meta) for e in events], state.version
        )
        uow.ledger.ensure_accounts(
            [ledger.duel_pot(opened.duel_id, opened.currency), ledger.house_rake(opened.currency)]
        )
        for offset, event in enumerate(events, start=1):
            entry = ledger.duel_entry_for(
                event, opened.duel_id, opened.currency, stream, state.version + offset
            )
            if entry is not None:
                uow.ledger.post(entry, request.request_id)
        if self._seamless is not None and not opened.certification:
            for event in events:  # the seat rounds' wins or rollbacks fall due (issue 37)
                if isinstance(event, DuelSettled):
                    prizes: dict[str, int] = {}
                    for payout in event.payouts:
                        prizes[payout.player_id] = prizes.get(payout.player_id, 0) + payout.amount
                    self._seamless.duel_settled(uow, opened.duel_id, prizes)
                elif isinstance(event, DuelCancelled):
                    self._seamless.duel_cancelled(uow, opened.duel_id)
        loaded = self._loaded(after, [*records, *recorded], None)
        row, seats = duel_rows(after, loaded.ended_at)
        uow.duels.save(row, seats)
        self._log_big_wins(uow, request, opened, events)
        return loaded

    def _log_big_wins(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        opened: DuelOpened,
        events: Sequence[DuelEvent],
    ) -> None:
        """A prize at or above the threshold goes to the significant-events log, as a game's
        big win does, in the same transaction."""
        for event in events:
            if not isinstance(event, DuelSettled):
                continue
            for payout in event.payouts:
                if payout.amount >= self._big_win_threshold:
                    uow.significant.record(
                        "big-win",
                        request.actor.id,
                        {
                            "duel_id": opened.duel_id,
                            "seat": payout.seat,
                            "fee": opened.fee,
                            "pot": event.pot,
                            "threshold": self._big_win_threshold,
                            "certification": opened.certification,
                        },
                        player_id=uuid.UUID(payout.player_id),
                        amount=payout.amount,
                        currency=opened.currency,
                    )

    @staticmethod
    def _loaded(
        state: d.Duel, records: Sequence[RecordedEvent], own: LoadedGame | None
    ) -> LoadedDuel:
        ended = records[-1].recorded_at if state.is_over else None
        return LoadedDuel(state, records[0].recorded_at, ended, own)

    def _replayed(
        self,
        uow: UnitOfWork,
        stored: dict[str, object],
        player_id: uuid.UUID | None,
        duel_id: uuid.UUID | None = None,
    ) -> LoadedDuel:
        """Answer an idempotent retry with the duel as the first request left it. The stored
        result is not authority (the service's login may write idempotency records): the duel
        it names must be the one the request names, and seat the player asking."""
        named = uuid.UUID(str(stored["duel_id"]))
        version = int(str(stored["version"]))
        records = uow.events.read_stream(duel_stream(named), to_version=version)
        state = d.fold(_decode_duel(records)) if len(records) == version else None
        if (
            state is None
            or (duel_id is not None and named != duel_id)
            or (player_id is not None and state.seat_of(str(player_id)) is None)
        ):
            raise IntegrityBreach(
                f"an idempotency record names duel {named} v{version}, which is not what its "
                "request names"
            )
        loaded = replace(self._loaded(state, records, None), replayed=True)
        seat = state.seat_of(str(player_id)) if player_id else None
        return self._with_own(uow, loaded, seat) if seat is not None else loaded


def _decode_duel(records: Sequence[RecordedEvent]) -> list[DuelEvent]:
    return [decode_duel(r.type, r.schema_version, r.data) for r in records]


def _commitment(state: d.Duel) -> str | None:
    """The commitment the duel's secret must match."""
    return state.opened.seed_commitment if state.opened is not None else None
