"""Who is asking, and the metadata every recorded event carries about it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from service.core.clock import instant

Role = Literal["player", "operator", "auditor", "finance", "system"]


@dataclass(frozen=True, slots=True)
class Actor:
    id: str  # a player id, a staff key's name, or a system task's name
    role: Role


SYSTEM = Actor("system", "system")


@dataclass(frozen=True, slots=True)
class RequestContext:
    actor: Actor
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    #: With an idempotency key, a retry returns the first result instead of running again. The
    #: fingerprint describes what was asked; the same key with another fingerprint is refused.
    idempotency_key: str | None = None
    fingerprint: str = ""
    #: A player session's start: the session a reality check counts (None: staff, a task).
    session_started: datetime | None = None
    #: The credential as presented (a staff key or a session token), for the database's
    #: functions that act for someone and check who asks (migrations/0030); None for the
    #: service's own tasks. Never shown: no repr, no log, no event.
    credential: str | None = field(default=None, repr=False, compare=False)


def event_metadata(
    request: RequestContext,
    paytable_id: str | None = None,
    paytable_version: int = 0,
    rules_version: str | None = None,
) -> dict[str, Any]:
    """Who (in a player session, which one: its start), which request, and the rules (of a
    game's stream) and paytable in force (none for the operator's switches). When is the
    database's clock, recorded by the store."""
    meta: dict[str, Any] = {
        "actor": request.actor.id,
        "role": request.actor.role,
        "request_id": request.request_id,
    }
    if request.session_started is not None:  # a reality check counts the stakes of its session
        meta["session_started"] = instant(request.session_started)
    if paytable_id is not None:
        meta["paytable"] = {"id": paytable_id, "version": paytable_version}
    if rules_version is not None:
        meta["rules_version"] = rules_version
    return meta
