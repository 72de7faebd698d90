"""Seamless mode (issue 37): the operator's own wallet holds the players' money, and each round
calls it: a **bet** when it is dealt, a **win** when it is collected (0 too), a **rollback** of a
bet whose outcome is unknown or whose game is voided.

The round's calls are recorded on its wallet stream (``wallet-<game id>``; the database checks
who records what, migrations/0044) and every call's exact bodies and signatures beside it
(``wallet_calls``); a confirmed movement is mirrored in the ledger against the player's
``operator-wallet`` account (service/core/ledger.py wallet_entry_for). No transaction, lock or
pooled connection is held while a call is on the wire: each call is recorded as sent in one
transaction, made, and answered in the next.

- The bet is sent by the deal itself (service/services/games.py): the deal is shuffled and its
  commitment recorded with the bet, and the cards are dealt only in the transaction that records
  the wallet's RS_OK. A definite refusal ends the round owing nothing; an unknown outcome is
  never sent again as a bet: its rollback falls due.
- Wins and rollbacks are sent by background work (``settle_due``, the worker's own login) from
  the queue in ``wallet_transactions``: one sender a movement at a time (a lease, not a lock),
  the same ``transaction_uuid`` on every retry, with capped backoff, flagged at each threshold
  and left for review after the last. A win is first sent only once the audit has verified the
  player's history through the round (the database refuses it otherwise).
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg

from events.catalog import (
    WalletCallAnswered,
    WalletCallSent,
    WalletPendingFlagged,
    WalletReviewMarked,
    WalletReviewResolved,
)
from events.records import NewEvent
from service.core import ledger, seamless
from service.core.clock import Clock, system_clock
from service.core.context import Actor, RequestContext, event_metadata
from service.core.streams import wallet_stream
from service.errors import (
    InvalidArgument,
    NotFound,
    WalletModeOnly,
    WalletNotUnderReview,
    WalletRefused,
    WalletUnavailable,
    WalletUnsettled,
)
from service.gateways.operator_wallet import Call, Exchange, OperatorWallet, Prepared
from service.services.unit_of_work import UnitOfWork
from service.storage.wallet import WalletTransaction

log = logging.getLogger(__name__)

#: Background work's name for itself in what it records.
SETTLER = Actor("wallet-settler", "system")
#: How much longer than the call's timeout its sender keeps a movement (then another may).
LEASE_MARGIN_MS = 2_000
#: Wins and rollbacks one sweep takes on, and for how long it claims more.
SWEEP_BATCH = 50
SWEEP_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class WalletPolicy:
    timeout_ms: int = 3_000
    retry_max_seconds: float = 30.0
    flag_after: tuple[timedelta, ...] = (timedelta(hours=1), timedelta(hours=24))
    give_up_after: timedelta = timedelta(hours=72)

    @property
    def lease_ms(self) -> int:
        return self.timeout_ms + LEASE_MARGIN_MS


@dataclass(frozen=True, slots=True)
class PendingBet:
    """A bet recorded as sent, to be put on the wire and answered."""

    transaction_uuid: str
    round_id: str
    player_id: uuid.UUID
    amount: int
    currency: str
    prepared: Prepared
    credential: str | None = field(repr=False)


@dataclass(frozen=True, slots=True)
class Settled:
    """What one sweep did with one movement."""

    transaction_uuid: str
    method: str
    outcome: str  # confirmed, refused, unknown, review, or skipped


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Seamless:
    def __init__(
        self,
        wallet: OperatorWallet,
        policy: WalletPolicy,
        clock: Clock = system_clock,
        notify: Callable[[], object] = lambda: None,
    ) -> None:
        self._wallet = wallet
        self._policy = policy
        self.clock = clock
        #: Ask background work to sweep now (a win or rollback fell due); beat sweeps anyway.
        self._notify = notify

    def due_now(self) -> None:
        """A win or rollback fell due (its transaction committed): sweep soon."""
        try:
            self._notify()
        except Exception:  # the broker down: beat's sweep sends it all the same
            log.warning("could not ask for a wallet sweep now; beat's will send it", exc_info=True)

    @property
    def policy(self) -> WalletPolicy:
        return self._policy

    # --- balances and sessions ------------------------------------------------------------------

    def balance(self, external_ref: str, token: str, currency: str) -> int:
        """The player's balance at the operator, in minor units; WalletRefused for a definite
        refusal (an invalid or expired token, a disabled user, another currency),
        WalletUnavailable for no definite answer."""
        exchange = self._wallet.call(
            "balance", {"user": external_ref, "token": token, "currency": currency}
        )
        if exchange.outcome == "confirmed" and exchange.balance is not None:
            return seamless.from_wire(exchange.balance, currency)
        if exchange.outcome == "refused" and exchange.status is not None:
            raise WalletRefused(
                exchange.status, f"the operator's wallet refused: {exchange.status}"
            )
        raise WalletUnavailable(
            f"the operator's wallet gave no balance ({exchange.problem or exchange.status})"
        )

    @staticmethod
    def keep_session_token(
        uow: UnitOfWork, session_token: str, player_id: uuid.UUID, wallet_token: str
    ) -> None:
        """The operator's token a player session was opened with, for its bets."""
        uow.wallet.add_session(_hash(session_token), player_id, wallet_token)

    @staticmethod
    def session_token(uow: UnitOfWork, credential: str | None) -> str | None:
        return None if credential is None else uow.wallet.session_token(_hash(credential))

    @staticmethod
    def check_settled(uow: UnitOfWork, player_id: uuid.UUID) -> None:
        """WalletUnsettled while the player's last round has a win or rollback unsettled."""
        open_one = uow.wallet.unsettled(player_id)
        if open_one is not None:
            raise WalletUnsettled(open_one.round_id, open_one.method)

    # --- the bet (the deal's three steps) ------------------------------------------------------

    def send_bet(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        player_id: uuid.UUID,
        external_ref: str,
        round_id: str,
        amount: int,
        currency: str,
        game_code: str,
        commitment: str | None,
        duel_id: str | None = None,
    ) -> PendingBet:
        """Record the round's bet as sent (in the caller's transaction, which commits it before
        the call): its row, its exact body and its WalletCallSent, the deal's commitment in it.
        ``duel_id``: a duel seat's round (its fee), the seat held while the bet is out."""
        token = self.session_token(uow, request.credential)
        if token is None:
            raise WalletRefused(
                seamless.Status.INVALID_TOKEN,
                "this session was opened without the operator's wallet_token: open a session "
                "with one to play",
            )
        self.check_settled(uow, player_id)
        tx = seamless.transaction_id(round_id, "bet")
        wire = seamless.to_wire(amount, currency)
        prepared = self._wallet.prepare(
            "bet",
            {
                "user": external_ref,
                "token": token,
                "transaction_uuid": tx,
                "round": round_id,
                "round_closed": False,
                "game_code": game_code,
                "currency": currency,
                "amount": wire,
            },
        )
        try:
            uow.wallet.add(
                transaction_uuid=tx,
                round_id=round_id,
                player_id=player_id,
                external_ref=external_ref,
                method="bet",
                reference=None,
                amount=amount,
                wire_amount=wire,
                currency=currency,
                game_code=game_code,
                duel_id=duel_id,
                token=token,
                state="sent",
                lease=f"{self._policy.lease_ms} milliseconds",
            )
        except psycopg.errors.UniqueViolation as taken:  # another deal of theirs got in first
            uow.conn.rollback()
            other = uow.wallet.unsettled(player_id)
            raise WalletUnsettled(other.round_id if other else round_id, "bet") from taken
        uow.wallet.add_call(prepared.request_uuid, uuid.UUID(tx), prepared.body, prepared.signature)
        sent = self._sent_event(
            round_id,
            str(player_id),
            "bet",
            tx,
            None,
            amount,
            currency,
            game_code,
            False,
            prepared,
            1,
            commitment,
            duel_id,
        )
        uow.recorder.append(
            request.credential,
            wallet_stream(round_id),
            [NewEvent.of(sent, event_metadata(request))],
            0,
        )
        return PendingBet(tx, round_id, player_id, amount, currency, prepared, request.credential)

    def call(self, pending: PendingBet) -> Exchange:
        """Put the bet on the wire (no transaction is open: the caller's has committed)."""
        return self._wallet.send(pending.prepared)

    def answer_bet(
        self, uow: UnitOfWork, request: RequestContext, pending: PendingBet, exchange: Exchange
    ) -> str:
        """Record the bet's answer in the caller's transaction (the one that deals on RS_OK):
        its mirror posting when confirmed, its rollback due when unknown. The outcome."""
        uow.lock_for_write()
        stream = wallet_stream(pending.round_id)
        meta = event_metadata(request)
        self._record_answer(
            uow,
            request.credential,
            stream,
            1,
            meta,
            pending.transaction_uuid,
            "bet",
            pending.amount,
            pending.currency,
            str(pending.player_id),
            exchange,
            bet_confirmed=False,
        )
        outcome = exchange.outcome
        _settle_answered(uow, uuid.UUID(pending.transaction_uuid), exchange)
        if outcome == "unknown":
            self._due(uow, pending.round_id, "rollback", pending.transaction_uuid, None)
        return outcome

    def unseated(self, uow: UnitOfWork, pending: PendingBet) -> None:
        """A duel fee's bet confirmed for a seat that could no longer be taken: rolled back."""
        self._due(uow, pending.round_id, "rollback", pending.transaction_uuid, None)

    @staticmethod
    def not_confirmed(exchange: Exchange, what: str, consequence: str) -> Exception:
        """The problem for a bet the wallet did not confirm (``what``: the bet, the fee's
        bet; ``consequence``: what did not happen): a definite refusal, or no definite answer
        (then the bet is being rolled back)."""
        if exchange.outcome == "refused" and exchange.status is not None:
            return WalletRefused(
                exchange.status,
                f"the operator's wallet refused {what} ({exchange.status}); {consequence} and "
                "nothing is owed",
            )
        if exchange.outcome == "review":
            return WalletUnavailable(
                f"the operator's wallet answered {what} with {exchange.status}, against the "
                f"server's record; {consequence}, and it is left for the operator to review"
            )
        return WalletUnavailable(
            f"the operator's wallet gave no definite answer to {what} "
            f"({exchange.problem or exchange.status}); {consequence}, and it is being rolled back"
        )

    # --- wins and rollbacks falling due (in the collect's or void's own write) ------------------

    def win_due(self, uow: UnitOfWork, round_id: str, amount: int, currency: str) -> None:
        """The round's win (its winnings, 0 too) falls due: sent by background work."""
        self._due(
            uow,
            round_id,
            "win",
            seamless.transaction_id(round_id, "bet"),
            (amount, seamless.to_wire(amount, currency)),
        )

    def rollback_due(self, uow: UnitOfWork, round_id: str) -> None:
        """A voided round's bet is to be rolled back: sent by background work."""
        self._due(uow, round_id, "rollback", seamless.transaction_id(round_id, "bet"), None)

    def duel_settled(self, uow: UnitOfWork, duel_id: str, prizes: dict[str, int]) -> None:
        """A duel settled: every seat round's win falls due, its prize (0 for a loser)."""
        for bet in uow.wallet.seat_bets(uuid.UUID(duel_id)):
            prize = prizes.get(str(bet.player_id), 0)
            self._due(
                uow,
                str(bet.round_id),
                "win",
                str(bet.transaction_uuid),
                (prize, seamless.to_wire(prize, bet.currency)),
            )

    def duel_cancelled(self, uow: UnitOfWork, duel_id: str) -> None:
        """A duel cancelled (unfilled, or voided): every seat's fee is rolled back."""
        for bet in uow.wallet.seat_bets(uuid.UUID(duel_id)):
            self._due(uow, str(bet.round_id), "rollback", str(bet.transaction_uuid), None)

    @staticmethod
    def _due(
        uow: UnitOfWork,
        round_id: str,
        method: seamless.Method,
        bet: str,
        amounts: tuple[int, int] | None,
    ) -> None:
        uow.wallet.add_due(
            transaction_uuid=seamless.transaction_id(round_id, method),
            method=method,
            bet=bet,
            amount=None if amounts is None else amounts[0],
            wire_amount=None if amounts is None else amounts[1],
        )

    # --- an operator's resolution ------------------------------------------------------------

    def resolve(
        self,
        uow: UnitOfWork,
        request: RequestContext,
        transaction_uuid: uuid.UUID,
        action: str,
        reason: str,
    ) -> WalletTransaction:
        """An operator's resolution of a movement under review (in the caller's transaction):
        ``retry`` a win or rollback (sent again from now), ``settled`` (the operator's wallet
        applied it by other means: mirrored as confirmed; a bet settled so has no game, so its
        rollback falls due) or ``not-applied`` (a bet it never applied: nothing owed). Recorded
        on the round's stream with the operator's key, and as a significant event."""
        row = uow.wallet.one(transaction_uuid)
        if row is None:
            raise NotFound("wallet transaction", transaction_uuid)
        if row.state != "review":
            raise WalletNotUnderReview(transaction_uuid, row.state)
        allowed = ("settled", "not-applied") if row.method == "bet" else ("retry", "settled")
        if action not in allowed:
            raise InvalidArgument(
                "action", f"a {row.method} under review is resolved by {' or '.join(allowed)}"
            )
        if action == "settled" and row.attempts == 0:
            raise InvalidArgument(
                "action",
                "a movement never sent cannot have been applied: retry it once its cause is fixed",
            )
        uow.lock_for_write()
        stream = wallet_stream(row.round_id)
        event = WalletReviewResolved(
            str(transaction_uuid), row.method, action, row.amount, row.currency, reason
        )
        records = uow.events.read_stream(stream)
        bet = str(row.reference or transaction_uuid)
        bet_applied = any(
            r.data.get("transaction_uuid") == bet and ledger.wallet_applied(r.decode())
            for r in records
            if r.type in (WalletCallAnswered.TYPE, WalletReviewResolved.TYPE)
        )
        meta = event_metadata(request)
        recorded = uow.recorder.append(
            request.credential, stream, [NewEvent.of(event, meta)], len(records)
        )
        entry = ledger.wallet_entry_for(
            event, str(row.player_id), row.currency, bet_applied, (stream, recorded[0].version)
        )
        if entry is not None:
            uow.ledger.post(entry, request.request_id)
        if action == "retry":
            uow.wallet.resume(transaction_uuid)
        else:
            uow.wallet.settle(
                transaction_uuid, "confirmed" if action == "settled" else "refused", None
            )
            if row.method == "bet" and action == "settled":
                self._due(uow, str(row.round_id), "rollback", str(transaction_uuid), None)
        self._significant(uow, row, action, reason, request.actor.id)
        found = uow.wallet.one(transaction_uuid)
        assert found is not None
        return found

    # --- background work: the sweep -------------------------------------------------------------

    def settle_due(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        verify: Callable[[uuid.UUID], bool],
        limit: int = SWEEP_BATCH,
        only: uuid.UUID | None = None,
        stopping: Callable[[], bool] = lambda: False,
    ) -> list[Settled]:
        """Send every win and rollback due (and settle every bet whose sender died mid-call), as
        background work. ``verify(player)``: the audit verified the player's history through
        their wallet's head (False: it found something, and recorded its hold)."""
        # One movement claimed at a time, each lease covering its own call; no new claim after
        # the sweep's time or once the process is stopping (a stop waits for one call at most;
        # the rest is the next sweep's, after the restart).
        deadline = time.monotonic() + SWEEP_SECONDS
        done: list[Settled] = []
        while len(done) < limit and time.monotonic() < deadline and not stopping():
            with unit_of_work() as uow:
                claimed = uow.wallet.claim(self._policy.lease_ms, 1, only)
                uow.commit()
            if not claimed:
                break
            row = claimed[0]
            try:
                done.append(self._settle_one(unit_of_work, verify, row))
            except Exception:  # one movement's trouble stops no other; its lease lapses
                log.exception("wallet transaction %s not settled now", row.transaction_uuid)
                done.append(Settled(str(row.transaction_uuid), row.method, "skipped"))
        return done

    def _settle_one(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        verify: Callable[[uuid.UUID], bool],
        row: WalletTransaction,
    ) -> Settled:
        tx = str(row.transaction_uuid)
        stream = wallet_stream(row.round_id)
        request = RequestContext(SETTLER)
        meta = event_metadata(request)
        if row.method == "bet":
            return self._orphaned_bet(unit_of_work, row)
        with unit_of_work() as uow:
            records = uow.events.read_stream(stream)
            bet = uow.wallet.one(row.reference) if row.reference is not None else None
        bet_confirmed = bet is not None and bet.state == "confirmed"
        sent_before = any(
            r.type == WalletCallSent.TYPE and r.data.get("transaction_uuid") == tx for r in records
        )
        if row.method == "win" and not sent_before and not verify(row.player_id):
            with unit_of_work() as uow:
                uow.lock_for_write()
                head = uow.events.stream_version(stream)
                self._review(
                    uow,
                    stream,
                    head,
                    meta,
                    row,
                    "the round's history failed the audit's verification before its win was sent",
                )
                uow.commit()
            return Settled(tx, row.method, "review")
        fields: dict[str, Any] = {
            "user": row.external_ref,
            "token": row.token,
            "transaction_uuid": tx,
            "reference_transaction_uuid": str(row.reference),
            "round": str(row.round_id),
            "round_closed": True,
            "game_code": row.game_code,
            "currency": row.currency,
            "amount": row.wire_amount,
        }
        call: Call = "win" if row.method == "win" else "rollback"
        prepared = self._wallet.prepare(call, fields)
        with unit_of_work() as uow:
            if not uow.wallet.extend(row.transaction_uuid, row.lease_owner, self._policy.lease_ms):
                return Settled(tx, row.method, "skipped")  # another sweep holds it now
            head = uow.events.stream_version(stream)
            sent = self._sent_event(
                str(row.round_id),
                str(row.player_id),
                row.method,
                tx,
                str(row.reference),
                row.amount,
                row.currency,
                row.game_code,
                True,
                prepared,
                row.attempts + 1,
                None,
                None if row.duel_id is None else str(row.duel_id),
            )
            uow.recorder.append(None, stream, [NewEvent.of(sent, meta)], head)
            uow.wallet.add_call(
                prepared.request_uuid, row.transaction_uuid, prepared.body, prepared.signature
            )
            uow.commit()
        exchange = self._wallet.send(prepared, bet_confirmed=bet_confirmed)
        with unit_of_work() as uow:
            uow.lock_for_write()
            self._record_answer(
                uow,
                None,
                stream,
                head + 1,
                meta,
                tx,
                row.method,
                row.amount,
                row.currency,
                str(row.player_id),
                exchange,
                bet_confirmed=bet_confirmed,
            )
            outcome = exchange.outcome
            if outcome == "unknown":
                self._retry_later(uow, stream, head + 2, meta, row, exchange)
            else:
                reason = _settle_answered(uow, row.transaction_uuid, exchange)
                if reason is not None:
                    self._significant(uow, row, "review", reason)
            uow.commit()
        return Settled(tx, row.method, outcome)

    def _orphaned_bet(
        self, unit_of_work: Callable[[], UnitOfWork], row: WalletTransaction
    ) -> Settled:
        """A bet whose sender's lease ran out (it died mid-call, or its answer's write failed):
        its recorded answer settles it; with none it is an unknown outcome, rolled back."""
        tx = str(row.transaction_uuid)
        with unit_of_work() as uow:
            uow.lock_for_write()
            records = uow.events.read_stream(wallet_stream(row.round_id))
            answers = [
                r
                for r in records
                if r.type == WalletCallAnswered.TYPE and r.data.get("transaction_uuid") == tx
            ]
            outcome = str(answers[-1].data["outcome"]) if answers else "unknown"
            uow.wallet.settle(row.transaction_uuid, outcome, None)
            if outcome == "unknown":
                self._due(uow, str(row.round_id), "rollback", tx, None)
            uow.commit()
        return Settled(tx, "bet", outcome)

    def _retry_later(
        self,
        uow: UnitOfWork,
        stream: str,
        head: int,
        meta: dict[str, Any],
        row: WalletTransaction,
        exchange: Exchange,
    ) -> None:
        """An unknown outcome of a win or rollback: sent again after a capped backoff; flagged
        at each threshold, left for review after the last."""
        now = self.clock()
        first = row.resumed_at or row.first_sent_at or now
        waited = now - first
        if waited >= self._policy.give_up_after:
            reason = (
                f"unacknowledged after {int(waited.total_seconds())} s "
                f"(last: {exchange.problem or exchange.status})"
            )
            self._review(uow, stream, head, meta, row, reason)
            return
        flagged = row.flagged_seconds
        for threshold in self._policy.flag_after:
            seconds = int(threshold.total_seconds())
            if waited >= threshold and seconds > flagged:
                event = WalletPendingFlagged(str(row.transaction_uuid), seconds)
                uow.recorder.append(None, stream, [NewEvent.of(event, meta)], head)
                head += 1
                uow.wallet.flagged(row.transaction_uuid, seconds)
                self._significant(uow, row, "pending", f"unacknowledged after {seconds} s")
                flagged = seconds
        delay = seamless.retry_delay(row.attempts + 1, self._policy.retry_max_seconds)
        uow.wallet.settle(
            row.transaction_uuid, "due", exchange.status, now + timedelta(seconds=delay)
        )

    def _review(
        self,
        uow: UnitOfWork,
        stream: str,
        head: int,
        meta: dict[str, Any],
        row: WalletTransaction,
        reason: str,
    ) -> None:
        event = WalletReviewMarked(str(row.transaction_uuid), reason)
        uow.recorder.append(None, stream, [NewEvent.of(event, meta)], head)
        uow.wallet.settle(row.transaction_uuid, "review", None, review_reason=reason)
        self._significant(uow, row, "review", reason)

    @staticmethod
    def _significant(
        uow: UnitOfWork, row: WalletTransaction, state: str, reason: str, actor: str = SETTLER.id
    ) -> None:
        """A movement flagged, left for review or resolved: shown to operators and finance."""
        uow.significant.record(
            "wallet",
            actor,
            {
                "transaction_uuid": str(row.transaction_uuid),
                "method": row.method,
                "state": state,
                "reason": reason,
            },
            game_id=row.round_id,
            player_id=row.player_id,
            amount=row.amount,
            currency=row.currency,
        )

    # --- the record ---------------------------------------------------------------------------

    @staticmethod
    def _sent_event(
        round_id: str,
        player_id: str,
        method: str,
        tx: str,
        reference: str | None,
        amount: int,
        currency: str,
        game_code: str,
        round_closed: bool,
        prepared: Prepared,
        attempt: int,
        commitment: str | None,
        duel_id: str | None = None,
    ) -> WalletCallSent:
        return WalletCallSent(
            round_id=round_id,
            player_id=player_id,
            method=method,
            transaction_uuid=tx,
            reference=reference,
            amount=amount,
            wire_amount=seamless.to_wire(amount, currency),
            currency=currency,
            game_code=game_code,
            round_closed=round_closed,
            request_uuid=prepared.request_uuid,
            request_sha256=hashlib.sha256(prepared.body).hexdigest(),
            attempt=attempt,
            commitment=commitment,
            duel_id=duel_id,
        )

    @staticmethod
    def _record_answer(
        uow: UnitOfWork,
        credential: str | None,
        stream: str,
        expected: int,
        meta: dict[str, Any],
        tx: str,
        method: str,
        amount: int,
        currency: str,
        player_id: str,
        exchange: Exchange,
        *,
        bet_confirmed: bool,
    ) -> None:
        answer = WalletCallAnswered(
            transaction_uuid=tx,
            method=method,
            request_uuid=exchange.request_uuid,
            amount=amount,
            currency=currency,
            outcome=exchange.outcome,
            status=exchange.status,
            balance=exchange.balance,
            http_status=exchange.http_status,
            problem=exchange.problem,
            answer=(
                None
                if exchange.answer_body is None
                else exchange.answer_body.decode("utf-8", errors="replace")[:20_000]
            ),
            answer_signature=(exchange.answer_signature or None)
            if exchange.answer_signature is None or len(exchange.answer_signature) <= 2_000
            else None,
        )
        recorded = uow.recorder.append(credential, stream, [NewEvent.of(answer, meta)], expected)
        entry = ledger.wallet_entry_for(
            answer, player_id, currency, bet_confirmed, (stream, recorded[0].version)
        )
        if entry is not None:
            uow.ledger.post(entry)
        uow.wallet.answer_call(
            request_uuid=exchange.request_uuid,
            http_status=exchange.http_status,
            answer_body=exchange.answer_body,
            answer_signature=exchange.answer_signature,
            status=exchange.status,
            outcome=exchange.outcome,
            problem=exchange.problem,
        )


def _settle_answered(
    uow: UnitOfWork, transaction_uuid: uuid.UUID, exchange: Exchange
) -> str | None:
    """A movement's row as its answer leaves it (its outcome its state); the review's reason
    when the answer contradicts the server's record."""
    reason = f"the wallet answered {exchange.status}" if exchange.outcome == "review" else None
    uow.wallet.settle(transaction_uuid, exchange.outcome, exchange.status, review_reason=reason)
    return reason


class WalletReviews:
    """What operators do with movements under review (seamless mode): list them, resolve one."""

    def __init__(self, unit_of_work: Callable[[], UnitOfWork], seamless: Seamless | None) -> None:
        self._uow = unit_of_work
        self._seamless = seamless

    def _mode(self) -> Seamless:
        if self._seamless is None:
            raise WalletModeOnly(
                "in transfer mode there is no operator's wallet: nothing to review"
            )
        return self._seamless

    def under_review(self, limit: int = 200) -> list[WalletTransaction]:
        self._mode()
        with self._uow() as uow:
            return uow.wallet.under_review(limit)

    def resolve(
        self, request: RequestContext, transaction_uuid: uuid.UUID, action: str, reason: str
    ) -> WalletTransaction:
        """Resolve a movement under review, once (a retry under the same Idempotency-Key
        answers the movement as it now stands)."""
        seamless = self._mode()
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is not None:
                row = uow.wallet.one(transaction_uuid)
                if row is None:
                    raise NotFound("wallet transaction", transaction_uuid)
                return row
            row = seamless.resolve(uow, request, transaction_uuid, action, reason)
            uow.remember(request, {"transaction_uuid": str(transaction_uuid), "action": action})
            uow.commit()
        if row.state == "due" or action == "settled":
            seamless.due_now()
        return row
