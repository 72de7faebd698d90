"""Real credentials for tests and benchmarks that call the services directly: the database
checks who asks (migrations/0030-0031), so a context acting for someone carries that someone's
key or session token as presented, made the way production makes them (a staff key with the
owner's login, a session minted with an operator's key)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from service.bootstrap import Container, build
from service.core.context import Actor, RequestContext
from service.core.log_verification import StoredCheckpoint
from service.services.access import key_actor
from tests.dbtools import TEST_OPERATOR_ID, TEST_OPERATOR_KEY

#: An operator through the services: every scratch database's own operator key (tests/dbtools.py).
OPERATOR = RequestContext(
    Actor(key_actor(TEST_OPERATOR_ID), "operator"), credential=TEST_OPERATOR_KEY
)

# A day's session (the most the database mints), idle for as long.
MINT_SQL = "SELECT FROM mint_session(%s, %s, %s, interval '24 hours', interval '24 hours')"


def player_token(player_id: uuid.UUID) -> str:
    """The session token mint_test_session mints for a player (a test's convention: the
    database holds only its hash, as it does a real one's)."""
    return f"vsp_test-{player_id}"


def as_player(
    player_id: uuid.UUID, key: str | None = None, fingerprint: str = ""
) -> RequestContext:
    """The player, in the session mint_test_session minted for them."""
    return RequestContext(
        Actor(str(player_id), "player"),
        idempotency_key=key,
        fingerprint=fingerprint,
        credential=player_token(player_id),
    )


def mint_test_session(container: Container, player_id: uuid.UUID) -> None:
    """The session as_player presents, minted with the scratch database's operator key."""
    digest = hashlib.sha256(player_token(player_id).encode()).hexdigest()
    with container.unit_of_work() as uow:
        uow.conn.execute(MINT_SQL, (TEST_OPERATOR_KEY, player_id, digest))
        uow.commit()


def staff(container: Container, role: str = "operator") -> RequestContext:
    """A context for a new live staff key of ``role`` (the container needs the owner's URL)."""
    key = container.access.create_key(f"test-{role}-{uuid.uuid4().hex[:12]}", role)
    principal = container.access.authenticate(key)
    assert principal is not None
    return RequestContext(principal.actor, credential=key)


@contextmanager
def as_background(container: Container) -> Iterator[Container]:
    """``container``'s services on background work's own login, as the worker builds them
    (migrations/0039: it alone signs checkpoints without a staff key)."""
    built = build(container.settings, migrate=False, background=True)
    try:
        yield built
    finally:
        built.close()


def sign_checkpoint(container: Container, requested_by: str) -> tuple[StoredCheckpoint, bool]:
    """Sign a checkpoint of ``container``'s log as beat does, on background work's login."""
    with as_background(container) as worker:
        return worker.anchors.checkpoint(requested_by)
