"""Who is calling: staff API keys and player session tokens.

Secrets are 256-bit random tokens shown once; only their SHA-256 is stored (they are random, so
a slow password hash would add nothing). Keys start ``vsk_`` and tokens ``vsp_`` so a leaked
secret is recognisable in logs and scanners.

Every request authenticates, so a process keeps what it verified for ``verified_for`` (2 s): a
key or session found valid is taken as valid that long without asking the database, and a
session's use is written (its idle clock restarted) at most once every ``touch_every`` (60 s).
A revocation through this process takes effect at once in it (its cache is emptied) and in every
other process within ``verified_for``; a session's idle timeout counts from its last write, so it
may lapse up to a minute early, never late.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

from service.core.context import Actor, RequestContext, Role
from service.errors import InvalidArgument, NotFound
from service.services.seamless import Seamless
from service.services.unit_of_work import UnitOfWork
from service.storage.access import OWNER_ONLY, KeyRow

STAFF_ROLES = ("operator", "auditor", "finance")
KEY_PREFIX = "vsk_"
TOKEN_PREFIX = "vsp_"
#: A key or token as this service makes them: its prefix, then 32 random bytes in URL-safe base64.
CREDENTIAL = re.compile(r"vs[kp]_[A-Za-z0-9_-]{43}")


def key_actor(key_id: uuid.UUID) -> str:
    """How a staff key is named in events, metadata and logs."""
    return f"key:{key_id}"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    actor: Actor
    player_id: uuid.UUID | None = None  # set for a player session
    session_started: datetime | None = None  # a player session's start (reality checks)
    #: The secret as presented: the database's functions check it again (migrations/0030).
    credential: str | None = field(default=None, repr=False, compare=False)

    @property
    def role(self) -> str:
        return self.actor.role


@dataclass(frozen=True, slots=True)
class Session:
    token: str
    player_id: uuid.UUID
    created_at: datetime
    expires_at: datetime
    idle_timeout: timedelta
    #: Seamless mode: the player's balance at the operator when the session opened.
    wallet_balance: int | None = None


@dataclass(frozen=True, slots=True)
class _Verified:
    """A secret this process found valid: when (its clock), and until when at the latest."""

    principal: Principal
    verified_at: float
    touched_at: float  # a session's last write of its use (a key's: its verification)
    expires_at: datetime | None  # a session's hard expiry


class Access:
    #: How many verified secrets a process keeps before starting afresh.
    CACHE_SIZE = 100_000

    def __init__(
        self,
        unit_of_work: Callable[[], UnitOfWork],
        *,
        owner_unit_of_work: Callable[[], UnitOfWork] | None = None,
        session_idle: timedelta = timedelta(minutes=30),
        session_max_age: timedelta = timedelta(hours=8),
        verified_for: float = 2.0,
        touch_every: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        seamless: Seamless | None = None,
    ) -> None:
        self._uow = unit_of_work
        #: Seamless mode: sessions carry the operator's wallet token (issue 37).
        self._seamless = seamless
        # Staff keys are written with the owner's login only (migrations/0030): the CLI's.
        self._owner_uow = owner_unit_of_work
        self.session_idle = session_idle
        self.session_max_age = session_max_age
        self.verified_for = verified_for
        self.touch_every = touch_every
        self._clock = clock
        self._lock = threading.Lock()
        self._verified: dict[str, _Verified] = {}

    def forget(self) -> None:
        """Drop every cached verification: the next use of each secret asks the database."""
        with self._lock:
            self._verified.clear()

    def create_key(self, name: str, role: str) -> str:
        """A new staff key; the secret is returned once and never stored."""
        if role not in STAFF_ROLES:
            raise ValueError(f"role must be one of {', '.join(STAFF_ROLES)}")
        if not name.strip():
            raise ValueError("a key needs a name")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        with self._owner() as uow:
            uow.access.add_key(uuid.uuid4(), name, role, _digest(secret))
            uow.commit()
        return secret

    def revoke_key(self, name: str, *, sessions: bool = False) -> bool:
        """Revoke the live key of this name; with ``sessions``, every player session it minted
        too (recorded for auditors)."""
        with self._owner() as uow:
            key_id = uow.access.revoke_key(name)
            if key_id is not None and sessions:
                minted_by = key_actor(key_id)
                count = uow.access.revoke_minted(minted_by)
                uow.significant.record(
                    "session",
                    minted_by,
                    {"action": "revoke-minted", "key": name, "sessions": count},
                )
            uow.commit()
        self.forget()
        return key_id is not None

    def revoke_session(self, request: RequestContext, token: str) -> bool:
        """A player logging out: their bearer token stops working at once."""
        with self._uow() as uow:
            player_id = uow.access.revoke_session(token)
            if player_id is not None:
                uow.significant.record(
                    "session",
                    request.actor.id,
                    {"action": "logout"},
                    player_id=player_id,
                )
            uow.commit()
        self.forget()
        return player_id is not None

    def revoke_player_sessions(self, request: RequestContext, player_id: uuid.UUID) -> int:
        """An operator revokes every live session of a player; how many there were."""
        with self._uow() as uow:
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            count = uow.access.revoke_player_sessions(request.credential, player_id)
            uow.significant.record(
                "session",
                request.actor.id,
                {"action": "revoke", "sessions": count},
                player_id=player_id,
            )
            uow.commit()
        self.forget()
        return count

    def list_keys(self) -> list[KeyRow]:
        with self._uow() as uow:
            return uow.access.keys()

    def open_session(
        self, request: RequestContext, player_id: uuid.UUID, wallet_token: str | None = None
    ) -> Session:
        """A bearer token for one player, minted by an operator. In seamless mode with the
        operator's game-session ``wallet_token`` (required), checked first by a balance read
        (an invalid or expired token refuses the session: WalletRefused); its bets go with it."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        balance: int | None = None
        if self._seamless is not None:
            if not wallet_token:
                raise InvalidArgument(
                    "wallet_token",
                    "required in seamless mode: the operator's game-session token for this player",
                )
            with self._uow() as uow:
                player = uow.projections.player(player_id)
            if player is None:
                raise NotFound("player", player_id)
            balance = self._seamless.balance(player.external_ref, wallet_token, player.currency)
        with self._uow() as uow:
            if uow.projections.player(player_id) is None:
                raise NotFound("player", player_id)
            created, expires = uow.access.add_session(
                request.credential,
                _digest(token),
                player_id,
                self.session_max_age,
                self.session_idle,
            )
            uow.significant.record(
                "session",
                request.actor.id,
                {"action": "mint", "expires_at": expires.isoformat()},
                player_id=player_id,
            )
            if self._seamless is not None and wallet_token:
                self._seamless.keep_session_token(uow, token, player_id, wallet_token)
            uow.commit()
        return Session(token, player_id, created, expires, self.session_idle, balance)

    def authenticate(self, secret: str) -> Principal | None:
        """The principal a bearer secret stands for, or None if it is unknown, revoked or
        expired. Using a session keeps it alive for another idle period."""
        digest = _digest(secret)
        now = self._clock()
        known = self._verified.get(digest)
        if (
            known is not None
            and now - known.verified_at < self.verified_for
            and (known.expires_at is None or datetime.now(UTC) < known.expires_at)
        ):
            return known.principal
        if secret.startswith(KEY_PREFIX):
            return self._remember(digest, self._find_key(digest, secret), now, now, None)
        if secret.startswith(TOKEN_PREFIX):
            touch = known is None or now - known.touched_at >= self.touch_every
            with self._uow() as uow:
                uow.outside_transaction()  # one statement: its own transaction
                if touch:
                    found = uow.access.touch_session(secret)
                else:
                    found = uow.access.check_session(digest)
            if found is None:
                self._remember(digest, None, now, now, None)
                return None
            player_id, expires_at, started = found
            touched = now if touch or known is None else known.touched_at
            principal = Principal(Actor(str(player_id), "player"), player_id, started, secret)
            return self._remember(digest, principal, now, touched, expires_at)
        return None

    def refusal(self, header: str) -> str:
        """Why an Authorization header lets nobody in (only when it did not): ``missing``,
        ``malformed`` (not ``Bearer <key or token>`` as this service makes them), or, for the
        credential presented and nothing else, ``unknown``, ``expired`` or ``revoked``."""
        if not header.strip():
            return "missing"
        scheme, _, secret = header.partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret.startswith((KEY_PREFIX, TOKEN_PREFIX)):
            return "malformed"
        if not CREDENTIAL.fullmatch(secret):
            return "malformed"
        with self._uow() as uow:
            uow.outside_transaction()
            return uow.access.refusal(_digest(secret), secret.startswith(TOKEN_PREFIX))

    def _find_key(self, digest: str, secret: str) -> Principal | None:
        with self._uow() as uow:
            uow.outside_transaction()
            found = uow.access.find_key(digest)
        if found is None:
            return None
        key_id, _, role = found
        if role not in STAFF_ROLES:
            return None
        # The key's own id, never its name: a name can be reused by a later key.
        return Principal(Actor(key_actor(key_id), cast(Role, role)), credential=secret)

    def _owner(self) -> UnitOfWork:
        if self._owner_uow is None:
            raise PermissionError(OWNER_ONLY)
        return self._owner_uow()

    def _remember(
        self,
        digest: str,
        principal: Principal | None,
        now: float,
        touched_at: float,
        expires_at: datetime | None,
    ) -> Principal | None:
        """Keep a valid secret's verification; forget an invalid one (never cached: a refused
        secret is asked about again, so a new key or session is never refused from memory)."""
        with self._lock:
            if principal is None:
                self._verified.pop(digest, None)
                return None
            if len(self._verified) >= self.CACHE_SIZE:
                self._verified.clear()
            self._verified[digest] = _Verified(principal, now, touched_at, expires_at)
        return principal
