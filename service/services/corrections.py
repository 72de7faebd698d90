"""An operator's correction of a found forgery (issue 36; migrations/0041).

The audit's verification holds a withdrawal when it finds something behind the player's wallet
(service/services/verification.py), and the log is append-only, so what was found stays found.
An operator answers the hold: a BalanceCorrected event on the player's stream naming the hold
and the findings it answers (all of the hold's, unless some are named) and why, and, when money
must move, the ledger transaction it causes (core/ledger.py correction; the database maps it
again, ledger_entry_of): a debit takes forged money out of the wallet to the house account it
came from, a credit restores money into it. The player's next verification no longer holds on
what the correction names, so the held withdrawal, asked again, pays.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from events.catalog import BalanceCorrected, FindingNamed
from events.records import NewEvent
from service.core import ledger
from service.core.context import RequestContext, event_metadata
from service.core.paytable import Paytable, paytable_for
from service.core.streams import player_stream
from service.errors import IntegrityBreach, InvalidArgument, NotFound
from service.services.unit_of_work import UnitOfWork
from service.storage.ledger import Posted
from service.storage.verification import VerificationStore

#: Largest correction, in minor units (the cashier's sanity bound).
MAX_CORRECTION = 10**12


@dataclass(frozen=True, slots=True)
class Correction:
    """A correction as recorded: its event's cause and, if money moved, its transaction."""

    correction_id: str
    player_id: uuid.UUID
    event: BalanceCorrected
    cause: str  # stream/version of its event
    transaction: Posted | None
    replayed: bool = False


class Corrections:
    def __init__(
        self, unit_of_work: Callable[[], UnitOfWork], paytables: Mapping[str, Paytable]
    ) -> None:
        self._uow = unit_of_work
        self._paytables = paytables

    def correct(
        self,
        request: RequestContext,
        player_id: uuid.UUID,
        hold: int,
        reason: str,
        *,
        amount: int = 0,
        direction: str = "debit",
        account: str = "house-payouts",
        findings: list[dict[str, str]] | None = None,
    ) -> Correction:
        """Record an operator's correction of ``hold`` (a withdrawal-held significant event of
        this player's). NotFound for no such hold; InvalidArgument for a finding the hold does
        not name; InsufficientFunds if a debit is more than the wallet holds."""
        if not 0 <= amount <= MAX_CORRECTION:
            raise InvalidArgument("amount", f"0 to {MAX_CORRECTION} minor units")
        if direction not in ("debit", "credit"):
            raise InvalidArgument("direction", "debit (out of the wallet) or credit (into it)")
        if findings is not None and not findings:
            raise InvalidArgument("findings", "name at least one, or leave out for all the hold's")
        if account not in ledger.CORRECTION_ACCOUNTS:
            raise InvalidArgument("account", f"one of {sorted(ledger.CORRECTION_ACCOUNTS)}")
        with self._uow() as uow:
            stream = player_stream(player_id)
            stored = uow.open_command(request)
            if stored is not None:
                return self._replayed(uow, player_id, stream, stored)
            # The player's row locked, as a transfer's: a correction racing one waits (0036).
            player = uow.projections.player_locked(player_id)
            if player is None:
                raise NotFound("player", player_id)
            held = VerificationStore(uow.conn).hold(player_id, hold)
            if held is None:
                raise NotFound("hold", hold)
            named = _named(held.get("findings", []), findings)
            version = uow.events.stream_version(stream)
            event = BalanceCorrected(
                str(uuid.uuid4()),
                hold,
                named,
                reason,
                amount,
                player.currency,
                direction,
                account,
            )
            table = paytable_for(self._paytables, player.currency)
            meta = event_metadata(request, table.id, table.version)
            # The event first: the database posts only what a recorded cause moves (0028).
            uow.recorder.append(request.credential, stream, [NewEvent.of(event, meta)], version)
            entry = ledger.correction(str(player_id), event, (stream, version + 1))
            posted = uow.ledger.post(entry, request.request_id) if entry is not None else None
            uow.remember(request, {"correction_id": event.correction_id})
            uow.commit()
            return Correction(
                event.correction_id, player_id, event, f"{stream}/{version + 1}", posted
            )

    def _replayed(
        self, uow: UnitOfWork, player_id: uuid.UUID, stream: str, stored: dict[str, Any]
    ) -> Correction:
        """The first answer again. Not authority (the service's login may write idempotency
        records): it must name a correction recorded on this player's stream."""
        for record in uow.events.read_stream(stream):
            if record.type != BalanceCorrected.TYPE:
                continue
            event = record.decode()
            assert isinstance(event, BalanceCorrected)
            if event.correction_id == stored.get("correction_id"):
                found = uow.ledger.posted(f"correction:{event.correction_id}")
                return Correction(
                    event.correction_id,
                    player_id,
                    event,
                    f"{stream}/{record.version}",
                    found[0] if found else None,
                    replayed=True,
                )
        raise IntegrityBreach("an idempotency record names no correction of this player's")


def _named(
    in_hold: list[dict[str, str]], asked: list[dict[str, str]] | None
) -> tuple[FindingNamed, ...]:
    """The findings a correction answers: those asked for, each one the hold names; or all."""
    if not in_hold:
        raise InvalidArgument("hold", "this hold names no findings to answer")
    chosen = in_hold if asked is None else asked
    for finding in chosen:
        if finding not in in_hold:
            raise InvalidArgument("findings", f"the hold does not name {finding}")
    return tuple(FindingNamed(f["check"], f["location"], f["expected"], f["found"]) for f in chosen)
