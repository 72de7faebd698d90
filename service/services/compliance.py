"""What auditors ask of the service: the regulatory replay of one game, whole-history audits
fanned out over the workers, and the significant-events log. Reads only, but for recording an
audit and queueing its work."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from service.core.context import Actor
from service.core.game_views import ended
from service.core.paytable import Paytable, PaytableBook
from service.core.replay import Replay, build_replay
from service.core.streams import game_stream
from service.errors import GameNotFinished, InvalidArgument, NotFound
from service.services import history_audits as audit
from service.services.games import seal_seat_from_staff
from service.services.staff_reads import StaffReads
from service.services.unit_of_work import UnitOfWork
from service.storage.significant import SignificantEvent

SendTask = Callable[..., Any]

#: The events that end a game: nothing may follow them in its stream.


class Audits:
    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        paytables: Mapping[str, Paytable],
        send_task: SendTask,
        reads: StaffReads,
        plan_wait: float = 5.0,
    ) -> None:
        self._uow = unit_of_work
        #: How long asking for an audit waits for the audit's worker to plan it (its total).
        self._plan_wait = plan_wait
        self._paytables = paytables
        self._send_task = send_task
        #: Staff's reads: the replica when there is one (service/services/staff_reads.py).
        self._reads = reads

    def replay(self, game_id: uuid.UUID, actor: Actor, *, to_version: int | None = None) -> Replay:
        """The replay of a game as ``actor`` may see it: auditors any game, in progress too;
        a player only their own finished games, masked as in play."""
        stream = game_stream(game_id)
        masked = actor.role != "auditor"
        # A player's own replay reads the primary, as every player's request does.
        with (self._uow if masked else self._reads)() as uow:
            records = uow.events.read_stream(stream)
            postings = audit.stream_postings(uow, stream)
            paytables = PaytableBook(self._paytables, uow.significant.logged_paytables())
            if records and not masked:
                seal_seat_from_staff(uow, records[0].data.get("duel_id"))
        if not records:
            raise NotFound("game", game_id)
        if masked:
            if records[0].data.get("player_id") != actor.id:
                raise NotFound("game", game_id)
            if not ended(r.type for r in records):
                raise GameNotFinished(game_id)
        if to_version is not None and to_version > len(records):
            raise InvalidArgument(
                "to_version", f"the game has {len(records)} versions; ask for 1 to {len(records)}"
            )
        return build_replay(records, postings, paytables, to_version=to_version, masked=masked)

    def start_audit(self, scope: audit.Scope, credential: str) -> audit.AuditStatus:
        """Ask for an audit of ``scope`` as the auditor whose key is ``credential``, and queue
        its planning for the audit's workers (who alone write its plan, units and findings)."""
        with self._uow() as uow:
            audit_id = audit.request(uow, scope, credential)
        self._send_task("vegas.plan_audit", str(audit_id))
        # Answer with its plan (total) as before, once the worker has made it: planning is a
        # few reads. Workers busy or down: the audit as asked for (total 0 until planned).
        # Read back where it was written: a replica would only be waited for.
        deadline = time.monotonic() + self._plan_wait
        pause = 0.01
        while True:
            found = _status(self._uow, audit_id)
            if found.planned or time.monotonic() > deadline:
                return found
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def audit(self, audit_id: uuid.UUID, *, findings_limit: int = 1000) -> audit.AuditStatus:
        return _status(self._reads, audit_id, findings_limit)

    def significant_events(
        self, *, kind: str | None = None, before: int | None = None, limit: int = 50
    ) -> list[SignificantEvent]:
        with self._reads() as uow:
            return uow.significant.page(kind=kind, before=before, limit=limit)


def _status(
    reading: Callable[[], AbstractContextManager[UnitOfWork]],
    audit_id: uuid.UUID,
    findings_limit: int = 1000,
) -> audit.AuditStatus:
    with reading() as uow:
        found = audit.status(uow, audit_id, findings_limit=findings_limit)
    if found is None:
        raise NotFound("audit", audit_id)
    return found
