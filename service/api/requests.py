"""Turning an HTTP request into the service's RequestContext: who, which request, and what an
Idempotency-Key retry must match."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from flask import g, request

from events.json_text import canonical_json
from service.api.auth import require_principal
from service.api.problems import Problem
from service.core.context import RequestContext
from service.services.access import Principal

_VISIBLE = re.compile(r"[\x21-\x7e]{1,200}")
#: An X-Request-Id the service keeps (it goes into events' immutable metadata and every log
#: line): anything else is replaced by a new id.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")

IDEMPOTENCY_KEY_HEADER: dict[str, Any] = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "description": "Retrying with the same key returns the first response and changes nothing; "
    "the same key with a different request is refused (422).",
    "schema": {"type": "string", "pattern": r"^[\x21-\x7e]{1,200}$"},
}

IF_MATCH_HEADER: dict[str, Any] = {
    "in": "header",
    "name": "If-Match",
    "required": False,
    "description": "The game's ETag (its version): the command applies only at that version, "
    "else 412.",
    "schema": {"type": "string", "pattern": r'^"?[0-9]{1,9}"?$'},
}


def request_id() -> str:
    """The caller's X-Request-Id when it is sane, else a new one; echoed on the response."""
    if "request_id" not in g:
        g.request_id = request_id_from(request.headers.get("X-Request-Id", ""))
    found: str = g.request_id
    return found


def request_id_from(given: str) -> str:
    """An X-Request-Id header's value when it is sane, else a new id."""
    return given if _REQUEST_ID.fullmatch(given) else str(uuid.uuid4())


#: What ``json_body`` answers for a request that sent no body at all.
NO_BODY: Any = object()


def json_body() -> Any:
    """The request's body, decoded once and kept for the request: the same bytes whether they
    came with a Content-Length or chunked (the size cap applies either way: 413). A body that
    is not JSON, nests too deep for the decoder or holds an integer too long to convert is a
    400, never a crash."""
    if "json_body" not in g:
        raw = request.get_data(cache=True)  # RequestEntityTooLarge (413) past the cap
        cap = request.max_content_length
        if cap is not None and request.content_length is None and len(raw) >= cap:
            # A chunked body is read up to the cap and no further: reaching it means it
            # did not fit, whatever followed.
            raise Problem("payload-too-large", f"the request body is over {cap} bytes")
        if not raw:
            g.json_body = NO_BODY
        else:
            try:
                g.json_body = json.loads(raw)
            except (ValueError, RecursionError, UnicodeDecodeError):
                # ValueError covers bad JSON and integers past Python's digit limit;
                # RecursionError, nesting deeper than the decoder goes.
                raise Problem("malformed-request", "the request body is not valid JSON") from None
    return g.json_body


def request_context() -> RequestContext:
    return context_for(
        require_principal(),
        request_id(),
        request.headers.get("Idempotency-Key"),
        request.method,
        request.path,
        json_body,
    )


def context_for(
    principal: Principal,
    request_id: str,
    idempotency_key: str | None,
    method: str,
    path: str,
    body: Callable[[], Any],
) -> RequestContext:
    """The service's view of a request: who, which request, and (with an Idempotency-Key)
    what a retry must match. ``body`` reads the decoded body (NO_BODY if none was sent), only
    when a key needs its fingerprint."""
    key = idempotency_key
    if key is not None and not _VISIBLE.fullmatch(key):
        raise Problem("malformed-request", "Idempotency-Key must be 1-200 visible ASCII characters")
    fingerprint = ""
    if key is not None:
        # The fingerprint covers the decoded body, so a retry matches its original whatever its
        # framing or spacing, and any other body under the same key is a different request.
        sent = body()
        shown = None if sent is NO_BODY else sent
        described = f"{method} {path}\n{canonical_json(shown)}"
        fingerprint = hashlib.sha256(described.encode()).hexdigest()
    return RequestContext(
        actor=principal.actor,
        request_id=request_id,
        idempotency_key=key,
        fingerprint=fingerprint,
        session_started=principal.session_started,
        credential=principal.credential,
    )


def expected_version() -> int | None:
    """The version an If-Match header names (ETags here are the quoted stream version)."""
    return version_from(request.headers.get("If-Match"))


def version_from(if_match: str | None) -> int | None:
    """The version an If-Match header's value names (None: no header)."""
    if if_match is None:
        return None
    digits = if_match.strip().removeprefix("W/").strip('"')
    if not digits.isdigit() or len(digits) > 9:
        raise Problem("malformed-request", 'If-Match must be a game ETag such as "7"')
    return int(digits)


def time_cursor(at: datetime, ident: uuid.UUID) -> str:
    """A page cursor for lists ordered by (time, id), newest first: opaque to clients."""
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{ident}".encode()).decode()


def parse_time_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        at, _, ident = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(at), uuid.UUID(ident)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise Problem(
            "validation-error", "bad cursor", errors={"before": ["not a cursor"]}
        ) from None


T = TypeVar("T")


def page(
    rows: Sequence[T],
    limit: int,
    cursor: Callable[[T], object],
    render: Callable[[T], object] = lambda row: row,
) -> dict[str, Any]:
    """One page of a newest-first list read with ``limit + 1`` rows (the extra one only says
    that more follow): the first ``limit`` rendered, and the last one's cursor when more do.
    The one way every paged route answers."""
    shown = list(rows[:limit])
    more = len(rows) > limit and bool(shown)
    return {"items": [render(r) for r in shown], "next": cursor(shown[-1]) if more else None}
