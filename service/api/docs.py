"""Documenting problem responses on routes, by status code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.api.blueprint import Blueprint

# The response components (registered by service.app.VegasApi) for each problem status.
RESPONSES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    412: "PRECONDITION_FAILED",
    413: "REQUEST_ENTITY_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "UNPROCESSABLE_ENTITY",
    503: "SERVICE_UNAVAILABLE",
}

#: Every route may answer these: a database that is busy or away.
ALWAYS = (503,)
#: And every route with a JSON body these.
WITH_BODY = (400, 413, 415, 422)
#: And every route behind a bearer token these.
AUTHENTICATED = (401, 403)

BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def problems(blp: Blueprint, *codes: int) -> Callable[[Any], Any]:
    """Document the problem responses a route can give (each as application/problem+json)."""

    def decorate(view: Any) -> Any:
        for code in sorted(set(codes) | set(ALWAYS)):
            view = blp.alt_response(code, response=RESPONSES[code])(view)
        return view

    return decorate
