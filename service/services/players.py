"""Player accounts and their wallets: open an account, deposit, withdraw, balance, statement.

Every cashier movement is an event in the player's stream (so balances can be rebuilt from the
log) and a ledger transaction naming that event, written in one transaction."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from events.catalog import FundsDeposited, FundsWithdrawn, PlayerRegistered, PreferencesChanged
from events.records import NewEvent
from service import errors
from service.core import ledger
from service.core.context import RequestContext, event_metadata
from service.core.paytable import Paytable, paytable_for
from service.core.streams import player_stream
from service.errors import (
    IntegrityBreach,
    NotFound,
    PlayerConflict,
    RuleViolation,
    VerificationUnavailable,
    WalletModeOnly,
    WalletRefused,
    WithdrawalUnverified,
)
from service.services.safer_gambling import SaferGambling
from service.services.seamless import Seamless
from service.services.unit_of_work import UnitOfWork
from service.services.verification import WithdrawalGate
from service.storage.ledger import Posted as Posted
from service.storage.ledger import StatementLine
from service.storage.projections import PlayerRow
from service.storage.projections import Preferences as Preferences

#: Largest single deposit or withdrawal, in minor units (sanity bound, not a business limit).
MAX_TRANSFER = 10**12
#: How many times a withdrawal verifies the player's history again when their wallet moved
#: between the verification and the withdrawal (their game collected meanwhile, say).
VERIFY_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class SandboxWallet:
    """The player's certification money (ledger.SANDBOX): what their certification games
    staked and won, kept apart from the real wallet. Never funded, so it may be below zero."""

    currency: str
    balance: int
    held: int  # staked in an unfinished certification game


@dataclass(frozen=True, slots=True)
class Wallet:
    player_id: uuid.UUID
    currency: str
    balance: int
    held: int  # staked in an unfinished game, of real money
    open_game_id: uuid.UUID | None
    sandbox: SandboxWallet
    #: transfer (the server's own wallet) or seamless (the operator's: ``balance`` is its).
    wallet_mode: str = "transfer"
    #: Seamless: what the server holds still owed back to the operator's wallet (wins not yet
    #: acknowledged); 0 in transfer mode.
    unsettled: int = 0


@dataclass(frozen=True, slots=True)
class Opened:
    """An account as opening it left it: new or already there, and whether this answer
    repeats an earlier request with the same Idempotency-Key."""

    row: PlayerRow
    created: bool
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class SavedPreferences:
    preferences: Preferences
    replayed: bool = False


class Players:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        paytables: dict[str, Paytable],
        safer: SaferGambling,
        gate: WithdrawalGate,
        seamless: Seamless | None = None,
    ) -> None:
        #: Seamless mode (issue 37): the operator's wallet holds the money; None: transfer.
        self._seamless = seamless
        self._safer = safer
        self._gate = gate
        self._uow = unit_of_work
        self._paytables = paytables

    def open_account(self, request: RequestContext, external_ref: str, currency: str) -> Opened:
        """Open a player account with an empty wallet. Opening the same external reference
        again in the same currency returns the existing account."""
        if ledger.is_sandbox(currency):
            raise RuleViolation(
                errors.UNKNOWN_CURRENCY,
                f"{currency} is the certification sandbox's money, never a player's currency",
            )
        table = paytable_for(self._paytables, currency)
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                row = self._player(uow, uuid.UUID(stored["player_id"]))
                if (row.external_ref, row.currency) != (external_ref, currency):
                    raise IntegrityBreach(
                        f"an idempotency record names player {row.player_id}, not the one "
                        "its request opens"
                    )
                return Opened(row, bool(stored["created"]), replayed=True)
            # The reference locked first: an opening of it racing this one waits here and
            # then finds its player, as a later opening does.
            uow.projections.lock_external_ref(external_ref)
            existing = uow.projections.player_by_ref(external_ref)
            if existing is not None:
                if existing.currency != currency:
                    raise PlayerConflict(
                        f"external_ref {external_ref!r} is already a {existing.currency} player"
                    )
                uow.remember(request, {"player_id": str(existing.player_id), "created": False})
                uow.commit()
                return Opened(existing, created=False)
            player_id = uuid.uuid4()
            event = PlayerRegistered(str(player_id), external_ref, currency)
            meta = event_metadata(request, table.id, table.version)
            (recorded,) = uow.recorder.append(
                request.credential, player_stream(player_id), [NewEvent.of(event, meta)], 0
            )
            uow.ledger.ensure_accounts(
                [ledger.player_account(str(player_id), currency), *ledger.house_accounts(currency)]
            )
            # Its players row is the database's, from the event (migrations/0033).
            row = PlayerRow(player_id, external_ref, currency, recorded.recorded_at)
            uow.remember(request, {"player_id": str(player_id), "created": True})
            uow.commit()
            return Opened(row, created=True)

    def player(self, player_id: uuid.UUID) -> PlayerRow:
        with self._uow() as uow:
            return self._player(uow, player_id)

    @staticmethod
    def _player(uow: UnitOfWork, player_id: uuid.UUID) -> PlayerRow:
        row = uow.projections.player(player_id)
        if row is None:
            raise NotFound("player", player_id)
        return row

    def deposit(
        self, request: RequestContext, player_id: uuid.UUID, amount: int, transaction_id: str
    ) -> Posted:
        self._transfer_mode_only("deposits")
        with self._safer.refusals_recorded(request, player_id, "deposit"):
            return self._transfer(request, player_id, amount, transaction_id, deposit=True)

    def withdraw(
        self, request: RequestContext, player_id: uuid.UUID, amount: int, transaction_id: str
    ) -> Posted:
        """Refused with InsufficientFunds if the balance does not cover it, held with
        WithdrawalHeld if the audit's verification of the player's history since their last
        verified point finds something (service/services/verification.py); nothing moves.
        Verification runs first, outside any transaction; if money moves on the wallet before
        the withdrawal's own transaction, the database refuses it (migrations/0037) and the
        history is verified again."""
        self._transfer_mode_only("withdrawals")
        player = self.player(player_id)
        wallet = ledger.player_account(str(player_id), player.currency).account_id
        for _ in range(VERIFY_ATTEMPTS - 1):
            self._gate.ensure_verified(player_id, wallet)
            try:
                return self._transfer(request, player_id, amount, transaction_id, deposit=False)
            except WithdrawalUnverified:
                continue
        self._gate.ensure_verified(player_id, wallet)
        try:
            return self._transfer(request, player_id, amount, transaction_id, deposit=False)
        except WithdrawalUnverified as exc:
            raise VerificationUnavailable(
                f"player {player_id}'s wallet kept moving while their history was verified; "
                "nothing moved, retry"
            ) from exc

    def _transfer(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        amount: int,
        transaction_id: str,
        *,
        deposit: bool,
    ) -> Posted:
        if not 0 < amount <= MAX_TRANSFER:
            raise ValueError(f"amount must be 1 to {MAX_TRANSFER} minor units")
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                found = uow.ledger.posted(str(stored.get("client_transaction_id")))
                # Not authority (the service's login may write idempotency records): it must
                # name this player's transfer of this kind, posted with it.
                kind = "deposit" if deposit else "withdrawal"
                if found is None or (found[0].kind, found[0].cause_stream) != (
                    kind,
                    player_stream(player_id),
                ):
                    raise IntegrityBreach(
                        "an idempotency record names no transfer of this request's kind and player"
                    )
                return found[0]
            # The player's row locked before the deposit limits and the stream's head are read:
            # a transfer racing this one waits, then reads both as it left them (0036).
            player = uow.projections.player_locked(player_id)
            if player is None:
                raise NotFound("player", player_id)
            stream = player_stream(player_id)
            version = uow.events.stream_version(stream)
            cause = (stream, version + 1)
            make = ledger.deposit if deposit else ledger.withdrawal
            entry = make(str(player_id), player.currency, amount, transaction_id, cause)
            earlier = uow.ledger.find(entry)  # the same transfer again: answer, don't repeat
            if earlier is not None:
                uow.remember(request, {"client_transaction_id": entry.client_transaction_id})
                uow.commit()
                return earlier
            if deposit:
                self._safer.check_deposit_in(uow, player_id, player.currency, amount)
            event: Any = (FundsDeposited if deposit else FundsWithdrawn)(
                amount, player.currency, transaction_id
            )
            table = paytable_for(self._paytables, player.currency)
            meta = event_metadata(request, table.id, table.version)
            # The event first: the database posts only what a recorded cause moves
            # (migrations/0028, ledger_entry_of).
            uow.recorder.append(request.credential, stream, [NewEvent.of(event, meta)], version)
            posted = uow.ledger.post(entry, request.request_id)
            uow.remember(request, {"client_transaction_id": entry.client_transaction_id})
            uow.commit()
            return posted

    def wallet(self, player_id: uuid.UUID, credential: str | None = None) -> Wallet:
        """The real wallet and the sandbox one; the open game (at most one, of either money)
        holds its stake in the one it was played for. In seamless mode the balance is the
        operator's wallet's, read with the session's token (``credential``: the player's own
        session; staff's read uses the player's latest), and ``unsettled`` what the server
        still owes it (wins not yet acknowledged)."""
        token: str | None = None
        with self._uow() as uow:
            player = self._player(uow, player_id)
            real = ledger.player_account(str(player_id), player.currency)
            sandbox = ledger.player_account(str(player_id), ledger.SANDBOX)
            balance = uow.ledger.balance(real.account_id) or 0
            sandbox_balance = uow.ledger.balance(sandbox.account_id) or 0
            open_game = uow.projections.open_game(player_id)
            if self._seamless is not None:
                token = self._seamless.session_token(uow, credential) or uow.wallet.latest_token(
                    player_id
                )
        unsettled = 0
        if self._seamless is not None:
            if token is None:
                raise WalletRefused(
                    "RS_ERROR_INVALID_TOKEN",
                    "no session of this player was opened with the operator's wallet_token",
                )
            unsettled = balance  # the mirror holds only what is owed back to the operator
            balance = self._seamless.balance(player.external_ref, token, player.currency)

        def held(currency: str) -> int:
            return open_game.stake if open_game and open_game.currency == currency else 0

        return Wallet(
            player_id,
            player.currency,
            balance,
            held(player.currency),
            open_game.game_id if open_game else None,
            SandboxWallet(ledger.SANDBOX, sandbox_balance, held(ledger.SANDBOX)),
            "seamless" if self._seamless is not None else "transfer",
            unsettled,
        )

    def _transfer_mode_only(self, what: str) -> None:
        if self._seamless is not None:
            raise WalletModeOnly(
                f"in seamless mode the operator's own wallet holds the players' money: {what} "
                "are the operator's"
            )

    def statement(
        self,
        player_id: uuid.UUID,
        *,
        before: int | None = None,
        limit: int = 50,
        sandbox: bool = False,
    ) -> list[StatementLine]:
        """The wallet's postings (``sandbox``: the sandbox wallet's), newest first; ``before``
        is the last posting id seen."""
        with self._uow() as uow:
            player = self._player(uow, player_id)
            currency = ledger.SANDBOX if sandbox else player.currency
            account = ledger.player_account(str(player_id), currency)
            return uow.ledger.statement(account.account_id, before=before, limit=limit)

    def preferences(self, player_id: uuid.UUID) -> Preferences:
        with self._uow() as uow:
            self._player(uow, player_id)
            return uow.projections.preferences(player_id) or Preferences()

    def set_preferences(
        self, request: RequestContext, player_id: uuid.UUID, preferences: Preferences
    ) -> SavedPreferences:
        """Record a PreferencesChanged event and update the projection with it. A retry under
        the same Idempotency-Key answers what the first request saved, even if the player has
        changed them since."""
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                saved = stored.get("preferences")
                if saved is None:  # recorded before results carried the preferences
                    now = uow.projections.preferences(player_id) or Preferences()
                    return SavedPreferences(now, replayed=True)
                first = Preferences(saved["sound"], saved["colour"], saved["card_back"])
                return SavedPreferences(first, replayed=True)
            player = self._player(uow, player_id)
            stream = player_stream(player_id)
            version = uow.events.stream_version(stream)
            event = PreferencesChanged(preferences.sound, preferences.colour, preferences.card_back)
            table = paytable_for(self._paytables, player.currency)
            meta = event_metadata(request, table.id, table.version)
            (recorded,) = uow.recorder.append(
                request.credential, stream, [NewEvent.of(event, meta)], version
            )
            uow.projections.save_preferences(player_id, preferences, recorded.recorded_at)
            uow.remember(
                request,
                {
                    "player_id": str(player_id),
                    "preferences": {
                        "sound": preferences.sound,
                        "colour": preferences.colour,
                        "card_back": preferences.card_back,
                    },
                },
            )
            uow.commit()
            return SavedPreferences(preferences)
