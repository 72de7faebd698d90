"""The game service: what the API calls to deal, play, collect, void and read games.

Every money and game rule is enforced here or in the decider, never in HTTP handlers. Each
operation is one transaction: its events, its ledger postings and its projection rows commit
together or not at all.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import overload

import orjson

from events import chain
from events.catalog import Collected, GameEvent, Voided
from events.codec import decode_game
from events.postgres import PendingAppend, conflicts
from events.records import ConcurrencyConflict, NewEvent, RecordedEvent
from service.core import game_decider as g
from service.core import ledger, shuffle, snapshots
from service.core.clock import Clock, system_clock
from service.core.context import Actor, RequestContext, event_metadata
from service.core.dealing import CertificationDeal
from service.core.game_views import ended, shown_data
from service.core.paytable import Paytable, Quote, paytable_for
from service.core.safer_gambling import Limit
from service.core.seamless import payout_status
from service.core.streams import game_stream
from service.errors import (
    CertificationDisabled,
    DuelNotOver,
    GameInProgress,
    IntegrityBreach,
    NotFound,
    VersionMismatch,
    WalletUnavailable,
)
from service.games import game_named
from service.rules.cards import Card
from service.rules.game import GameRules
from service.runtime import metrics
from service.services.controls import Controls
from service.services.safer_gambling import SaferGambling
from service.services.seamless import Seamless
from service.services.seed_vault import SeedVault
from service.services.unit_of_work import UnitOfWork
from service.storage.game_writes import second_open_game
from service.storage.projections import HistoryRow, PlayerRow
from service.storage.seeds import DECK, SEED


@dataclass(frozen=True, slots=True)
class LoadedGame:
    """A game's folded state and when its first, latest and ending events were recorded."""

    state: g.Game
    started_at: datetime
    last_event_at: datetime
    ended_at: datetime | None
    replayed: bool = False  # true when an idempotent retry is answered from the first result
    #: An ended game's payout (or a void's refund) as the player's wallet has it: credited,
    #: or in seamless mode pending (being sent to the operator's wallet) or review; None while
    #: the game is in play, or where not read (a state kept in the cache).
    payout_status: str | None = None


@dataclass(frozen=True, slots=True)
class Decided:
    """What a command causes: its events, and the game's state after them."""

    events: list[GameEvent]
    state: g.Game


def _times(records: Sequence[RecordedEvent]) -> list[datetime]:
    return [r.recorded_at for r in records]


def _version(cached: LoadedGame | None) -> int:
    """The version a load reads the stream after."""
    return cached.state.version if cached else 0


class _StateCache:
    """Recently used folded games, so a command reads only the events it has not seen.

    Events never change once stored, so a state folded from committed events stays true; only
    states read from the database or produced by a committed transaction go in."""

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, LoadedGame] = OrderedDict()
        # The server's secret of each cached game: its unseen cards in sealed order. Kept
        # apart from LoadedGame, which flows to the API, so no view can ever reach it.
        self._sealed: dict[str, tuple[Card, ...]] = {}

    def sealed(self, stream: str) -> tuple[Card, ...] | None:
        with self._lock:
            return self._sealed.get(stream)

    def keep_sealed(self, stream: str, cards: tuple[Card, ...]) -> None:
        with self._lock:
            if stream in self._items:
                self._sealed[stream] = cards

    def get(self, stream: str) -> LoadedGame | None:
        with self._lock:
            item = self._items.get(stream)
            if item is not None:
                self._items.move_to_end(stream)
            return item

    def put(self, stream: str, loaded: LoadedGame) -> None:
        with self._lock:
            current = self._items.get(stream)
            if current is None or current.state.version < loaded.state.version:
                self._items[stream] = replace(loaded, replayed=False)
                self._items.move_to_end(stream)
            while len(self._items) > self._size:
                gone, _ = self._items.popitem(last=False)
                self._sealed.pop(gone, None)


class Games:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        paytables: dict[str, Paytable],
        vault: SeedVault,
        safer: SaferGambling,
        *,
        certification_mode: bool = False,
        big_win_threshold: int = 100_000,
        clock: Clock = system_clock,
        seamless: Seamless | None = None,
    ) -> None:
        self._uow = unit_of_work
        #: Seamless mode's wallet calls (issue 37); None in transfer mode.
        self._seamless = seamless
        self._paytables = paytables
        self._vault = vault
        self._safer = safer
        self._certification_mode = certification_mode
        self._big_win_threshold = big_win_threshold
        self._cache = _StateCache()
        #: The server's clock timed games are decided on (tests move it).
        self.clock = clock

    # --- quotes ---------------------------------------------------------------------------------

    def quote(self, variant: str, stake: int, currency: str) -> Quote:
        rules = game_named(variant)
        table = paytable_for(self._paytables, currency)
        return table.quote(stake, table.multiplier_for(rules.id, rules.multiplier), rules.max_units)

    # --- dealing --------------------------------------------------------------------------------

    def start(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        variant: str,
        stake: int,
        *,
        client_seed: str | None = None,
        certification: CertificationDeal | None = None,
    ) -> LoadedGame:
        """Debit the stake and deal, in one transaction. Refused if the player has a game in
        progress, cannot cover the stake, or the stake or variant is not allowed."""
        with self._safer.refusals_recorded(request, player_id, "deal"):
            return self._start(request, player_id, variant, stake, client_seed, certification)

    def _start(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        variant: str,
        stake: int,
        client_seed: str | None,
        certification: CertificationDeal | None,
    ) -> LoadedGame:
        if certification is not None and not self._certification_mode:
            raise CertificationDisabled("certification deals need CERTIFICATION_MODE=1")
        if self._seamless is not None and certification is None:
            return self._start_seamless(request, player_id, variant, stake, client_seed)
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                return self._replayed(uow, stored, player_id=player_id)
            _, table, rules = self._admitted(uow, request, player_id, variant, stake, certification)
            game_id = uuid.uuid4()
            kind, secret, command = self._deal(
                game_id, player_id, variant, stake, table, client_seed, certification
            )
            loaded = self._record_deal(
                uow,
                request,
                player_id,
                game_id,
                table,
                rules,
                kind,
                secret,
                command,
                certification,
            )
            uow.commit()
        self._keep_dealt(game_id, rules, command, loaded)
        return loaded

    def _start_seamless(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        variant: str,
        stake: int,
        client_seed: str | None,
    ) -> LoadedGame:
        """A deal in seamless mode (issue 37), in three steps so that no transaction is open
        while the operator's wallet is called: every guard, the shuffle and its commitment and
        the bet recorded as sent; the bet on the wire; its answer recorded and, only on RS_OK,
        the cards dealt in the same transaction."""
        seamless = self._seamless
        assert seamless is not None
        with self._uow() as uow:
            stored = uow.stored_result(request)
            if stored is not None:
                return self._replayed(uow, stored, player_id=player_id)
            player, table, rules = self._admitted(uow, request, player_id, variant, stake, None)
            game_id = uuid.uuid4()
            kind, secret, command = self._deal(
                game_id, player_id, variant, stake, table, client_seed, None
            )
            assert command.seed_commitment is not None
            g.decide(g.INITIAL, command)  # the stake and the deal by the rules, before any bet
            pending = seamless.send_bet(
                uow,
                request,
                player_id,
                player.external_ref,
                str(game_id),
                stake,
                table.currency,
                rules.id,
                command.seed_commitment,
            )
            uow.commit()
        exchange = seamless.call(pending)
        with self._uow() as uow:
            try:
                outcome = seamless.answer_bet(uow, request, pending, exchange)
            except ConcurrencyConflict as late:  # its lease ran out: background work rolls it back
                raise WalletUnavailable(
                    "the operator's wallet answered the bet too late; nothing was dealt, and the "
                    "bet is being rolled back"
                ) from late
            if outcome != "confirmed":
                uow.commit()
                if outcome == "unknown":
                    seamless.due_now()  # its rollback
                raise seamless.not_confirmed(exchange, "the bet", "nothing was dealt")
            stored = uow.claim(request)
            if stored is not None:  # pragma: no cover - the bet's row admits one deal at a time
                return self._replayed(uow, stored, player_id=player_id)
            loaded = self._record_deal(
                uow, request, player_id, game_id, table, rules, kind, secret, command, None
            )
            uow.commit()
        self._keep_dealt(game_id, rules, command, loaded)
        return loaded

    def _admitted(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        variant: str,
        stake: int,
        certification: CertificationDeal | None,
    ) -> tuple[PlayerRow, Paytable, GameRules]:
        """Every guard a deal passes (the player, no open game, the switches, the safer-gambling
        limits): the player, the paytable it is played for and the game's rules."""
        # The player's row locked first: a deal of theirs racing this one waits here and
        # then sees its game and its stake (migrations/0036).
        player = uow.projections.player_locked(player_id)
        if player is None:
            raise NotFound("player", player_id)
        table = played_for(
            paytable_for(self._paytables, player.currency), certification is not None
        )
        open_game = uow.projections.open_game(player_id)
        if open_game is not None:
            raise GameInProgress(open_game.game_id)
        rules = game_named(variant)
        Controls.check_open_in(uow, player_id, rules.id, rules.rules_version)
        self._safer.check_wager_in(uow, request, player_id, table.currency, stake)
        return player, table, rules

    def _record_deal(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        game_id: uuid.UUID,
        table: Paytable,
        rules: GameRules,
        kind: str,
        secret: bytes,
        command: g.StartGame,
        certification: CertificationDeal | None,
    ) -> LoadedGame:
        """The deal's write: its events (the stake and the cards), its money, its sealed secret
        and, for a certification deal, its significant event; remembered under the key."""
        events = g.decide(g.INITIAL, command)
        stream = game_stream(game_id)
        meta = event_metadata(request, table.id, table.version, rules.rules_version)
        state = g.fold(events)
        try:
            recorded = uow.game_writes.send(
                request.credential,
                stream,
                [NewEvent.of(e, meta) for e in events],
                0,
                _history_of(state),
                self._snapshot(0, state),
            ).records()
        except ConcurrencyConflict as conflict:
            if not second_open_game(conflict):
                raise
            uow.conn.rollback()  # the open game's id, read after the refused write
            taken = uow.projections.open_game(player_id)
            raise GameInProgress(taken.game_id if taken else "another") from conflict
        self._post_money(uow, stream, 0, str(player_id), str(game_id), events)
        uow.seeds.add(game_id, self._vault.key_id, self._vault.encrypt(secret), kind)
        if certification is not None:  # a known deal: auditors see every one of them
            uow.significant.record(
                "certification",
                request.actor.id,
                {"variant": command.variant, "given": "deck" if kind == DECK else "seed"},
                game_id=game_id,
                player_id=player_id,
                amount=command.stake,
                currency=table.currency,
            )
        loaded = self._after(None, state, _times(recorded))
        uow.remember(request, {"game_id": str(game_id), "version": loaded.state.version})
        return loaded

    def _keep_dealt(
        self, game_id: uuid.UUID, rules: GameRules, command: g.StartGame, loaded: LoadedGame
    ) -> None:
        stream = game_stream(game_id)
        self._cache.put(stream, loaded)
        self._cache.keep_sealed(stream, g.hidden_cards(rules, command.deck))
        metrics.GAMES.labels(rules.id, "dealt").inc()
        if not command.certification:
            metrics.STAKES.labels(rules.id, command.paytable.currency).inc(command.stake)

    @staticmethod
    def _deal(
        game_id: uuid.UUID,
        player_id: uuid.UUID,
        variant: str,
        stake: int,
        table: Paytable,
        client_seed: str | None,
        certification: CertificationDeal | None,
    ) -> tuple[str, bytes, g.StartGame]:
        """The kind of secret (seed or given deck), the secret to keep encrypted until the game
        ends, and the StartGame command."""
        rules = game_named(variant)
        dealt = new_deal(rules.decks, client_seed, certification)
        command = g.StartGame(
            game_id=str(game_id),
            player_id=str(player_id),
            variant=variant,
            stake=stake,
            paytable=table,
            deck=dealt.deck,
            shuffle_algorithm=dealt.algorithm,
            seed_commitment=dealt.commitment,
            client_seed=client_seed,
            certification=certification is not None,
        )
        return dealt.kind, dealt.secret, command

    # --- playing --------------------------------------------------------------------------------

    def play(
        self,
        request: RequestContext,
        game_id: uuid.UUID,
        command: g.PlayAction,
        *,
        expected_version: int | None = None,
        retry_on_conflict: bool = True,
    ) -> LoadedGame:
        """Apply one play command. ``retry_on_conflict=False`` (the API's choice) makes a
        concurrent command on the same game a ConcurrencyConflict instead of applying both.
        Paused (RealityCheckDue) while a reality check of the player's session waits; collecting
        is not."""
        if request.session_started is None:  # staff and tasks have no reality check
            return self._command(
                request, game_id, lambda _: command, expected_version, retry=retry_on_conflict
            )
        with self._safer.refusals_recorded(request, uuid.UUID(request.actor.id), "play"):
            return self._command(
                request,
                game_id,
                lambda _: command,
                expected_version,
                retry=retry_on_conflict,
                paused_by_session_checks=True,
            )

    def collect(
        self,
        request: RequestContext,
        game_id: uuid.UUID,
        *,
        reason: str = "player",
        expected_version: int | None = None,
        retry_on_conflict: bool = True,
    ) -> LoadedGame:
        """End the game, pay its winnings and reveal its seed, in one transaction."""
        if reason not in ("player", "timeout"):
            raise ValueError("a game is collected by the player or by timeout")

        def command(secret: Secret) -> g.Command:
            return g.Collect(
                reason="timeout" if reason == "timeout" else "player",
                server_seed=secret.seed_hex,
                deck=secret.deck,
            )

        return self._command(
            request,
            game_id,
            command,
            expected_version,
            reveals_seed=True,
            retry=retry_on_conflict,
        )

    def void(self, request: RequestContext, game_id: uuid.UUID, reason: str) -> LoadedGame:
        """Operator: end the game without payout and refund the stake."""
        return self._command(
            request,
            game_id,
            lambda secret: g.Void(reason, secret.seed_hex, secret.deck),
            None,
            reveals_seed=True,
        )

    def _command(
        self,
        request: RequestContext,
        game_id: uuid.UUID,
        make: Callable[[Secret], g.Command],
        expected_version: int | None,
        *,
        reveals_seed: bool = False,
        retry: bool = True,
        paused_by_session_checks: bool = False,
    ) -> LoadedGame:
        """Load, decide, append at the loaded version; on a conflict reload and try once more.
        ``make`` builds the command, given the decrypted secret when the command reveals it;
        a play action (``paused_by_session_checks``) stops at the session's time limit and waits
        for a due reality check.

        Without an Idempotency-Key the reads run outside any transaction, and a command that
        moves no money is written by one statement that is its own transaction (the events,
        appended under the log's lock at the loaded version, and the history row). One that
        moves money sends that statement, the ledger's and the COMMIT in one pipeline
        (UnitOfWork.one_trip). With a key, the claim opens the transaction first, so a retry
        waits for the first attempt and answers as it did."""
        stream = game_stream(game_id)
        for attempt in (1, 2):
            try:
                with self._uow() as uow:
                    if request.idempotency_key is None:
                        uow.outside_transaction()
                    else:
                        stored = uow.claim(request)
                        if stored is not None:
                            return self.settled(self._replayed(uow, stored, game_id=game_id))
                    checked = (
                        self._safer.session_checked(request) if paused_by_session_checks else None
                    )
                    limits = None
                    if checked is None:
                        loaded = self._load(uow, game_id, None)
                    else:
                        loaded, limits = self._load_with_limits(uow, game_id, checked)
                    if loaded.state.info is not None and loaded.state.info.duel_id is not None:
                        raise NotFound("game", game_id)  # a seat's game plays through its duel
                    self._check_owner(uow, loaded.state, game_id, request.actor)
                    if limits is not None:
                        self._safer.check_session_in(uow, request, limits)
                    decided = self._decide(
                        uow, loaded, make, expected_version, reveals_seed=reveals_seed
                    )
                    if request.idempotency_key is None and not _moves_money(decided.events):
                        # One statement, outside any transaction: it commits by itself.
                        pending = self._write(uow, request, loaded, decided)
                    else:
                        with conflicts(stream, loaded.state.version), uow.one_trip():
                            uow.lock_for_write()  # money: one writer at a time, as deals
                            pending = self._write(uow, request, loaded, decided)
                            version = decided.state.version
                            uow.remember(request, {"game_id": str(game_id), "version": version})
                    after = self._after(loaded, decided.state, pending.times())
                self._cache.put(stream, after)
                if after.ended_at is not None and loaded.ended_at is None:
                    _count_ending(after)
                if self._seamless is not None and after.ended_at is not None:
                    self._seamless.due_now()  # its win, or a void's rollback
                return self.settled(after)
            except ConcurrencyConflict:
                if attempt == 2 or expected_version is not None or not retry:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def command_in(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        loaded: LoadedGame,
        make: Callable[[Secret], g.Command],
        expected_version: int | None = None,
        *,
        reveals_seed: bool = False,
    ) -> tuple[LoadedGame, list[GameEvent]]:
        """Decide one command on a loaded game and append what it causes, with its money and
        projections, in the caller's transaction (which commits, then calls ``remember``)."""
        decided = self._decide(uow, loaded, make, expected_version, reveals_seed=reveals_seed)
        uow.lock_for_write()
        pending = self._write(uow, request, loaded, decided)
        return self._after(loaded, decided.state, pending.times()), decided.events

    def _decide(
        self,
        uow: UnitOfWork,
        loaded: LoadedGame,
        make: Callable[[Secret], g.Command],
        expected_version: int | None,
        *,
        reveals_seed: bool,
    ) -> Decided:
        """What a command on the loaded game causes (reads only: the secret, if it needs it)."""
        state = loaded.state
        info = state.info
        assert info is not None
        if expected_version is not None and expected_version != state.version:
            raise VersionMismatch(expected_version, state.version)
        stream = game_stream(info.game_id)
        secret = (
            self.secret_in(uow, _secret_id(info), info.seed_commitment)
            if reveals_seed
            else NO_SECRET
        )
        sealed = _SealedCards(partial(self._sealed, uow, stream, state))
        redeal = partial(self._redeal_shuffle, uow, state)
        events = g.decide(state, make(secret), sealed, redeal, self.clock())
        return Decided(events, g.fold(events, state))

    def _write(
        self, uow: UnitOfWork, request: RequestContext, loaded: LoadedGame, decided: Decided
    ) -> PendingAppend:
        """Send a decided command's events (with the history row) and money, appended at the
        loaded version."""
        state = loaded.state
        info = state.info
        assert info is not None
        stream = game_stream(info.game_id)
        meta = event_metadata(request, *self._paytable_of(info), info.rules_version)
        # Append first: a concurrent writer that got in since the load is caught by the
        # expected version here, before any money is posted for its events.
        pending = uow.game_writes.send(
            request.credential,
            stream,
            [NewEvent.of(e, meta) for e in decided.events],
            state.version,
            _history_of(decided.state),
            self._snapshot(state.version, decided.state),
        )
        self._post_money(uow, stream, state.version, state.player_id, state.game_id, decided.events)
        self._log_significant(uow, request, decided.state, decided.events)
        if self._seamless is not None and not info.certification and info.duel_id is None:
            for event in decided.events:  # the round's win or rollback falls due (issue 37)
                if isinstance(event, Collected):
                    self._seamless.win_due(uow, info.game_id, event.winnings, info.currency)
                elif isinstance(event, Voided):
                    self._seamless.rollback_due(uow, info.game_id)
        return pending

    def load_in(self, uow: UnitOfWork, game_id: uuid.UUID) -> LoadedGame:
        """A game's state, read in the caller's transaction."""
        return self._load(uow, game_id, None)

    def cached(self, loaded: LoadedGame) -> None:
        """Keep a state the caller's transaction committed."""
        assert loaded.state.info is not None
        self._cache.put(game_stream(loaded.state.info.game_id), loaded)

    def start_seat_in(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        seat: g.StartGame,
    ) -> LoadedGame:
        """Deal a duel seat's game in the caller's transaction: the deck is the duel's (the
        caller derived it from the duel's secret), its money the duel's, so nothing is posted
        and no secret of its own is kept."""
        assert seat.duel_id is not None
        events = g.decide(g.INITIAL, seat)
        stream = game_stream(seat.game_id)
        rules = game_named(seat.variant)
        meta = event_metadata(request, seat.paytable.id, seat.paytable.version, rules.rules_version)
        recorded = uow.recorder.append(
            request.credential, stream, [NewEvent.of(e, meta) for e in events], 0
        )
        return self._after(None, g.fold(events), _times(recorded))

    def secret_in(self, uow: UnitOfWork, game_id: uuid.UUID, commitment: str | None) -> Secret:
        """The game's secret, decrypted: its server seed (hex) or its given deck. It must be
        the one the game (or duel) committed to: a secret another game's row held, moved here
        by someone writing around the service, is refused (IntegrityBreach) before it deals a
        card."""
        stored = uow.seeds.get(game_id)
        if stored is None:
            return NO_SECRET  # a v1 deal of a given deck: it was recorded in clear
        kind, token = stored
        plain = self._vault.decrypt(token)
        if kind == DECK:
            salt, deck = plain[: shuffle.SEED_BYTES], plain[shuffle.SEED_BYTES :]
            secret = Secret(salt.hex(), tuple(deck.decode("ascii").split()))
        else:
            secret = Secret(plain.hex(), None)
        if commitment is not None and not secret.matches(commitment):
            raise IntegrityBreach(
                f"the sealed secret stored for {game_id} is not the one it committed to"
            )
        return secret

    def _sealed(self, uow: UnitOfWork, stream: str, state: g.Game) -> tuple[Card, ...]:
        """The game's unseen cards in sealed order: from the cache, else re-derived from its
        decrypted secret (the deck, dealt again)."""
        cached = self._cache.sealed(stream)
        if cached is not None:
            return cached
        info = state.info
        assert info is not None
        secret = self.secret_in(uow, _secret_id(info), info.seed_commitment)
        deck = secret.dealt(info.client_seed, info.rules.decks) or info.legacy_deck or ()
        hidden = g.hidden_cards(info.rules, deck)
        self._cache.keep_sealed(stream, hidden)
        return hidden

    def _redeal_shuffle(
        self, uow: UnitOfWork, state: g.Game, label: str, cards: Sequence[Card]
    ) -> tuple[Card, ...]:
        """A redeal's shuffle, keyed by the game's decrypted seed (a certification deck's salt)
        and its client seed: asked for only when the player redeals."""
        info = state.info
        assert info is not None
        secret = self.secret_in(uow, _secret_id(info), info.seed_commitment)
        if secret.seed_hex is None:
            raise g.SealedCardMissing("a deal recorded before sealing has no seed to redeal with")
        return shuffle.redeal(bytes.fromhex(secret.seed_hex), info.client_seed, label, cards)

    # --- reading --------------------------------------------------------------------------------

    def game(
        self, game_id: uuid.UUID, *, actor: Actor | None = None, to_version: int | None = None
    ) -> LoadedGame:
        """A game's state, now or at ``to_version``. A player asking for another player's game
        gets NotFound, exactly as for a game that does not exist."""
        with self._uow() as uow:
            uow.outside_transaction()  # one stream's events: one statement
            if to_version is None:
                return self.settled(self._load(uow, game_id, actor))
            records = uow.events.read_stream(game_stream(game_id), to_version=to_version)
            if not records:
                raise NotFound("game", game_id)
            loaded = self._after(None, g.fold(decode_records(records)), _times(records))
            self._check_owner(uow, loaded.state, game_id, actor)
            return loaded

    def settled(self, loaded: LoadedGame) -> LoadedGame:
        """``loaded`` with its payout_status, once it has ended: credited at once in transfer
        mode (and for certification and duel seats' games, which send nothing), else as the
        round's win or rollback stands with the operator's wallet."""
        info = loaded.state.info
        if loaded.ended_at is None or info is None:
            return loaded
        state: str | None = None
        if self._seamless is not None and not info.certification and info.duel_id is None:
            with self._uow() as uow:
                uow.outside_transaction()
                rows = [
                    r for r in uow.wallet.of_round(uuid.UUID(info.game_id)) if r.method != "bet"
                ]
            state = rows[-1].state if rows else "due"
        return replace(loaded, payout_status=payout_status(state))

    def owner(self, game_id: uuid.UUID) -> uuid.UUID | None:
        """Whose game this is on the games routes (None if there is no such game): from a
        cached state (a game's player never changes), else from the history projection that
        every deal writes in its own transaction. Cheap enough to ask before anything else
        about a request. A duel seat's game is nobody's here, whichever worker answers: it is
        seen and played through its duel (and has no history row)."""
        cached = self._cache.get(game_stream(game_id))
        if cached is not None:
            info = cached.state.info
            if info is not None and info.duel_id is not None:
                return None
            return uuid.UUID(cached.state.player_id)
        with self._uow() as uow:
            uow.outside_transaction()
            row = uow.projections.game_row(game_id)
        return row.player_id if row is not None else None

    def records(self, game_id: uuid.UUID) -> list[RecordedEvent]:
        """The raw stream, with hashes, for auditors (the chain is checked on these); a duel
        seat's only once its duel has ended."""
        with self._uow() as uow:
            records = uow.events.read_stream(game_stream(game_id))
            if not records:
                raise NotFound("game", game_id)
            seal_seat_from_staff(uow, records[0].data.get("duel_id"))
        return records

    def event_stream(self, game_id: uuid.UUID) -> tuple[bool, list[RecordedEvent]]:
        """The raw stream as staff may see it, and whether its hash chain is intact (checked
        on the records as stored)."""
        records = self.records(game_id)
        return chain.verify(records) is None, self.shown_records(records)

    @staticmethod
    def shown_records(records: Sequence[RecordedEvent]) -> list[RecordedEvent]:
        """The stream as staff may see it: while the game is unfinished, a v1 deal's deck
        (recorded in clear before sealing) is masked, as the player's own view hides it."""
        hidden = not ended(r.type for r in records)
        return [replace(r, data=shown_data(r.type, r.data, hidden)) for r in records]

    def history(
        self,
        player_id: uuid.UUID,
        *,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 20,
    ) -> list[HistoryRow]:
        """Betting history, newest first; ``before`` is the last row's (started_at, game_id)."""
        with self._uow() as uow:
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            return uow.projections.history(player_id, before=before, limit=limit)

    def _load(self, uow: UnitOfWork, game_id: uuid.UUID, actor: Actor | None) -> LoadedGame:
        """A game's state: the cached one brought up to date, else its snapshot's and the events
        after it, else the fold of its whole stream."""
        stream = game_stream(game_id)
        cached = self._base(uow, stream)
        records = uow.events.read_stream(stream, after_version=_version(cached))
        return self._brought_up(uow, game_id, stream, cached, records, actor)

    def _load_with_limits(
        self, uow: UnitOfWork, game_id: uuid.UUID, player_id: str
    ) -> tuple[LoadedGame, Mapping[str, Limit]]:
        """``_load``, and the player's limits for a play action's session checks read with
        the game's events, in one statement."""
        stream = game_stream(game_id)
        cached = self._base(uow, stream)
        limits, records = uow.limits.limits_and_stream(player_id, stream, _version(cached))
        return self._brought_up(uow, game_id, stream, cached, records, None), limits

    def _base(self, uow: UnitOfWork, stream: str) -> LoadedGame | None:
        """What a load starts from: the cached state, else the snapshot's (None: nothing)."""
        return self._cache.get(stream) or self._from_snapshot(uow, stream)

    def _brought_up(
        self,
        uow: UnitOfWork,
        game_id: uuid.UUID,
        stream: str,
        cached: LoadedGame | None,
        records: list[RecordedEvent],
        actor: Actor | None,
    ) -> LoadedGame:
        """The game ``cached`` left, with the events read after it folded in (and cached)."""
        if cached is None and not records:
            raise NotFound("game", game_id)
        base = cached.state if cached else g.INITIAL
        loaded = (
            self._after(cached, g.fold(decode_records(records), base), _times(records))
            if records
            else cached
        )
        assert loaded is not None
        self._check_owner(uow, loaded.state, game_id, actor)
        self._cache.put(stream, loaded)
        return loaded

    def _from_snapshot(self, uow: UnitOfWork, stream: str) -> LoadedGame | None:
        """The game as its snapshot row left it, if it has one this service wrote for this
        game in the state's present shape (else None: the stream is folded instead)."""
        row = uow.game_writes.snapshot(stream)
        if row is None or not self._vault.check_mac(row.state.encode(), row.mac):
            return None
        state = snapshots.decode(orjson.loads(row.state))
        if state is None or state.version != row.version or game_stream(state.game_id) != stream:
            return None
        ended = row.last_event_at if state.is_over else None
        return LoadedGame(state, row.started_at, row.last_event_at, ended)

    def _snapshot(self, before: int, state: g.Game) -> tuple[str, str] | None:
        """The new state's snapshot and its MAC, when the command is due to write one."""
        if not snapshots.due(before, state.version):
            return None
        text = orjson.dumps(snapshots.encode(state)).decode()
        return text, self._vault.mac(text.encode())

    @staticmethod
    def _check_owner(
        uow: UnitOfWork, state: g.Game, game_id: uuid.UUID, actor: Actor | None
    ) -> None:
        if actor is None:
            return
        if actor.role == "player":
            if actor.id != state.player_id:
                raise NotFound("game", game_id)
        elif state.info is not None:
            seal_seat_from_staff(uow, state.info.duel_id)

    def _replayed(
        self,
        uow: UnitOfWork,
        stored: dict[str, object],
        *,
        game_id: uuid.UUID | None = None,
        player_id: uuid.UUID | None = None,
    ) -> LoadedGame:
        """Answer an idempotent retry with the game as the first request left it. The stored
        result is not authority (the service's login may write idempotency records): the game
        it names must be the one the request names, or the deal's player's."""
        named = uuid.UUID(str(stored["game_id"]))
        version = int(str(stored["version"]))
        records = uow.events.read_stream(game_stream(named), to_version=version)
        owner = records[0].data.get("player_id") if records else None
        if (
            len(records) != version
            or (game_id is not None and named != game_id)
            or (player_id is not None and owner != str(player_id))
        ):
            raise IntegrityBreach(
                f"an idempotency record names game {named} v{version}, which is not what its "
                "request names"
            )
        loaded = self._after(None, g.fold(decode_records(records)), _times(records))
        return replace(loaded, replayed=True)

    # --- shared steps ---------------------------------------------------------------------------

    def _paytable_of(self, info: g.GameInfo) -> tuple[str, int]:
        """The paytable (id, version) a game's later events record: the one configured for its
        currency, or for a sandbox game (no table is configured in the sandbox currency) the
        one its deal recorded."""
        if ledger.is_sandbox(info.currency):
            return info.paytable_id, info.paytable_version
        table = paytable_for(self._paytables, info.currency)
        return table.id, table.version

    @staticmethod
    def _after(before: LoadedGame | None, state: g.Game, times: Sequence[datetime]) -> LoadedGame:
        """The game ``before`` left, now at ``state`` after events recorded at ``times`` (all a
        LoadedGame needs of them)."""
        started = before.started_at if before else times[0]
        last = times[-1] if times else (before.last_event_at if before else started)
        ended = before.ended_at if before else None
        if state.is_over and ended is None:
            ended = last
        return LoadedGame(state, started, last, ended)

    @staticmethod
    def _post_money(
        uow: UnitOfWork,
        stream: str,
        version: int,
        player_id: str,
        game_id: str,
        events: Sequence[GameEvent],
    ) -> None:
        """Post what the new events owe (stake, winnings, refund), naming each event."""
        for offset, event in enumerate(events, start=1):
            entry = ledger.entry_for(event, stream, version + offset, player_id, game_id)
            if entry is not None:
                uow.ledger.post(entry)

    def _log_significant(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        state: g.Game,
        events: Sequence[GameEvent],
    ) -> None:
        """Voids and big wins go to the significant-events log, in the same transaction."""
        for event in events:
            if isinstance(event, Voided):
                kind, amount = "void", event.refund
                details: dict[str, object] = {"reason": event.reason}
            elif isinstance(event, Collected) and event.winnings >= self._big_win_threshold:
                kind, amount = "big-win", event.winnings
                details = {
                    "reason": event.reason,
                    "stake": state.stake,
                    "units": event.units,
                    "foundation_count": event.units,  # the name the first game gave its units
                    "threshold": self._big_win_threshold,
                }
            else:
                continue
            details["certification"] = state.certification
            uow.significant.record(
                kind,
                request.actor.id,
                details,
                game_id=uuid.UUID(state.game_id),
                player_id=uuid.UUID(state.player_id),
                amount=amount,
                currency=event.currency,
            )


def _count_ending(ended: LoadedGame) -> None:
    """A game just ended, for the metrics: how, and what it paid (real money only)."""
    state, info = ended.state, ended.state.info
    if info is None:
        return
    if state.status == "voided":
        event = "voided"
    elif state.end_reason == "timeout":
        event = "timed_out"
    else:
        event = "collected"
    metrics.GAMES.labels(info.rules.id, event).inc()
    if not info.certification and state.payout:
        metrics.PAYOUTS.labels(info.rules.id, info.currency).inc(state.payout)


def played_for(table: Paytable, certification: bool) -> Paytable:
    """The player's paytable, in the money the game is played for (ledger.game_currency): the
    same stakes and limits, in the sandbox currency for a certification deal."""
    return replace(table, currency=ledger.game_currency(table.currency, certification))


@dataclass(frozen=True, slots=True)
class NewDeal:
    """A fresh deal's secret (kept encrypted until the end), its deck and its commitment."""

    kind: str  # SEED or DECK
    secret: bytes
    algorithm: str
    commitment: str
    deck: tuple[Card, ...]


def new_deal(
    decks: int, client_seed: str | None, certification: CertificationDeal | None
) -> NewDeal:
    """A seed from the CSPRNG (or certification's seed or deck) and the deck it deals."""
    if certification is not None and certification.deck is not None:
        deck = tuple(certification.deck)
        salt = shuffle.new_server_seed()  # keeps the commitment from being searched
        return NewDeal(
            DECK,
            salt + " ".join(deck).encode("ascii"),
            shuffle.CERTIFICATION_DECK,
            shuffle.deck_commitment(deck, salt),
            deck,
        )
    if certification is not None and certification.seed_hex is not None:
        seed = bytes.fromhex(certification.seed_hex)
    else:
        seed = shuffle.new_server_seed()
    deck = shuffle.derive_deck(seed, client_seed, decks)
    return NewDeal(SEED, seed, shuffle.ALGORITHM, shuffle.commitment(seed), deck)


def _history_of(state: g.Game) -> g.Game | None:
    """The game whose betting-history row a write refreshes: none for a duel seat's game (no
    bet of its own: its duel's rows tell its story)."""
    info = state.info
    return None if info is not None and info.duel_id is not None else state


def _moves_money(events: Sequence[GameEvent]) -> bool:
    """Whether the events end the game (a payout, a refund, perhaps a significant event): then
    the write is a transaction with the ledger's statements, not a statement alone."""
    return any(isinstance(e, Collected | Voided) for e in events)


def seal_seat_from_staff(uow: UnitOfWork, duel_id: str | None) -> None:
    """The one rule for staff and a duel seat's game (its view, events, replay, a command's
    answer): sealed until the duel has ended (DuelNotOver), because every seat plays the same
    deck, so one seat's cards are every other seat's sealed cards."""
    if duel_id is not None and not uow.duels.is_over(duel_id):
        raise DuelNotOver(duel_id)


def _secret_id(info: g.GameInfo) -> uuid.UUID:
    """Whose secret a game is dealt from: its own, or for a duel seat's game its duel's."""
    return uuid.UUID(info.duel_id or info.game_id)


def decode_records(records: Sequence[RecordedEvent]) -> list[GameEvent]:
    """A game stream's records as its events (upcast, validated)."""
    return [decode_game(r.type, r.schema_version, r.data) for r in records]


@dataclass(frozen=True, slots=True)
class Secret:
    """What a game keeps encrypted until it ends: its server seed (hex), and for a certification
    game given its deck, that deck (the seed then salts the deck's commitment)."""

    seed_hex: str | None
    deck: tuple[Card, ...] | None

    def dealt(self, client_seed: str | None, decks: int) -> tuple[Card, ...] | None:
        """The deck this secret deals: the given one, or the one its seed derives (None for a
        v1 deal, whose deck was recorded in clear)."""
        if self.deck is not None:
            return self.deck
        if self.seed_hex is None:
            return None
        return shuffle.derive_deck(bytes.fromhex(self.seed_hex), client_seed, decks)

    def matches(self, commitment: str) -> bool:
        """Is this the secret ``commitment`` names?"""
        if self.seed_hex is None:
            return False
        if self.deck is not None:
            return shuffle.deck_matches(self.deck, self.seed_hex, commitment)
        return shuffle.seed_matches(self.seed_hex, commitment)


NO_SECRET = Secret(None, None)


class _SealedCards(Sequence[Card]):
    """A game's unseen cards, decrypted and derived only if a command shows one (a move needs
    none, so most commands never touch the secret)."""

    def __init__(self, load: Callable[[], tuple[Card, ...]]) -> None:
        self._load = load
        self._cards: tuple[Card, ...] | None = None

    def _all(self) -> tuple[Card, ...]:
        if self._cards is None:
            self._cards = self._load()
        return self._cards

    @overload
    def __getitem__(self, index: int) -> Card: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Card]: ...
    def __getitem__(self, index: int | slice) -> Card | Sequence[Card]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Card]:
        return iter(self._all())
