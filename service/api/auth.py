"""Bearer authentication and per-route role checks.

Every route names who may call it. A caller with no valid token gets 401; a staff role the route
does not list gets 403; a player reaching for another player's resource gets 404, exactly as if
it did not exist, so player ids cannot be probed. ``allow`` sits outside the request parsing, so
a caller who may not use a route learns that before anything about its body.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from flask import g, request

from service.api.problems import Problem
from service.api.request_marks import ACTOR
from service.api.wiring import services
from service.bootstrap import Container
from service.services.access import Access, Principal

F = TypeVar("F", bound=Callable[..., Any])
PlayerAccess = Literal["self", "owner", "seated", "any"] | None

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="vegas-solitaire"'}


def current_principal() -> Principal | None:
    """The caller, from ``Authorization: Bearer <key or token>``, looked up once a request."""
    if "principal" not in g:
        g.principal = authenticate(request.headers.get("Authorization", ""), services().access)
        if g.principal is not None:  # for the request's log line
            request.environ[ACTOR] = g.principal.actor
    found: Principal | None = g.principal
    return found


def authenticate(header: str, access: Access) -> Principal | None:
    """Who an Authorization header's bearer key or token stands for (None: nobody)."""
    scheme, _, secret = header.partition(" ")
    if scheme.lower() == "bearer" and secret.strip():
        return access.authenticate(secret.strip())
    return None


def allow(*staff: str, player: PlayerAccess = None) -> Callable[[F], F]:
    """Let the listed staff roles call the route, and players when ``player`` says how:
    "self" (the route's ``player_id`` must be theirs), "owner" (the service checks that the
    game is theirs), "seated" (they sit in the route's duel) or "any" (about themselves)."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            admit(
                current_principal(),
                services(),
                staff,
                player,
                kwargs,
                request.headers.get("Authorization", ""),
            )
            _require_json_body()
            return view(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate


def admit(
    principal: Principal | None,
    container: Container,
    staff: Sequence[str],
    player: PlayerAccess,
    route: Mapping[str, Any],
    header: str = "",
) -> None:
    """Refuse a caller the route does not let in (``allow``'s rule; ``route`` holds the URL's
    variables): 401 with no valid token (saying why, of the ``header`` presented), 403 for a
    staff role not listed or a player where players may not go, 404 for a player reaching for
    another's player, game or duel."""
    if principal is None:
        raise unauthorized(container.access.refusal(header))
    if principal.role == "player":
        if player is None:
            raise Problem("forbidden", "players may not do this")
        if player == "self" and route.get("player_id") != principal.player_id:
            raise Problem("not-found", f"no player {route.get('player_id')}")
        game_id = route.get("game_id")
        if (
            player == "owner"
            and game_id is not None
            and container.games.owner(game_id) != principal.player_id
        ):
            raise Problem("not-found", f"no game {game_id}")
        duel_id = route.get("duel_id")
        if (
            player == "seated"
            and duel_id is not None
            and str(principal.player_id) not in container.duels.players(duel_id)
        ):
            raise Problem("not-found", f"no duel {duel_id}")
    elif principal.role not in staff:
        raise Problem("forbidden", f"the {principal.role} role may not do this")


#: Why a credential lets nobody in: the problem type and what it says (of that credential only).
REFUSALS = {
    "missing": ("unauthorized", "send Authorization: Bearer <token>"),
    "malformed": (
        "unauthorized-malformed",
        "the Authorization header is not Bearer <key or token> as this service issues them",
    ),
    "unknown": (
        "unauthorized-unknown",
        "the key or token presented is not one this service issued",
    ),
    "expired": (
        "unauthorized-expired",
        "the session presented has expired (idle past its timeout, or past its hard maximum): "
        "the operator opens a new one",
    ),
    "revoked": ("unauthorized-revoked", "the key or session presented was revoked"),
}


def unauthorized(reason: str) -> Problem:
    slug, detail = REFUSALS[reason]
    extra = {} if reason == "missing" else {"reason": reason}
    return Problem(slug, detail, headers=CHALLENGE, **extra)


def _require_json_body() -> None:
    """A body must be JSON: the request parser would otherwise ignore it, and a command such as
    draw would go ahead as if nothing had been sent."""
    sent = request.content_length or "chunked" in request.headers.get("Transfer-Encoding", "")
    if sent and not request.is_json:
        raise Problem(
            "unsupported-media-type",
            f"send the body as application/json, not {request.mimetype or 'untyped'}",
        )


def require_principal() -> Principal:
    principal = current_principal()
    assert principal is not None  # routes call this only behind @allow
    return principal
