"""The game commands' hot path (issue 25): ``POST /v1/games/{game_id}/{command}`` for the
commands that take no body (draw, recycle, undo, collect), sent without one, is answered in
front of Flask's dispatch. Measured in one process, four threads playing through the WSGI app,
interleaved with the full dispatch: 1.07 CPU-ms a play through Flask's URL map, request
context, flask-smorest's and webargs's wrappers; 0.83 here.

Nothing is decided here that the Flask route decides elsewhere: the same functions
authenticate the caller, admit them (``auth.admit``, the route's ``allow(player="owner")``),
build the request's context and expected version, run the command and render it
(``games.command_answer``), turn errors into problems and stamp the answer. What Flask would
add does not arise: no body to read, cap or validate (the commands' schema is empty), no URL
variable but the game's id. Everything else (another route or method, any body, a chunked
one) goes on to Flask unchanged. The OpenAPI document still comes from the Flask routes,
which stay registered and answer the same requests when sent a body of ``{}``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flask import Flask, Response
from werkzeug.routing import UUIDConverter
from werkzeug.wsgi import get_path_info

from service.api.auth import admit, authenticate
from service.api.games import BODYLESS_COMMANDS, command_answer
from service.api.problems import from_exception, problem_answer
from service.api.rendering import stamped
from service.api.request_marks import ACTOR, PROBLEM, REQUEST_ID, ROUTE
from service.api.requests import NO_BODY, context_for, request_id_from, version_from
from service.api.wiring import container_of

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

#: The body-less command routes' path, the game's id as the routes' uuid converter matches it.
PATH = re.compile(rf"/v1/games/({UUIDConverter.regex})/({'|'.join(BODYLESS_COMMANDS)})")


class CommandHotPath:
    """WSGI middleware in front of the Flask app (``flask``: its dispatch, for the rest)."""

    def __init__(self, app: Flask, flask: WSGIApplication) -> None:
        self.app = app
        self.flask = flask

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        match = _command(environ)
        if match is None:
            return self.flask(environ, start_response)
        path, game_id, name = match
        environ[ROUTE] = f"/v1/games/<uuid:game_id>/{name}"
        response = self._answer(environ, path, game_id, name)
        return response(environ, start_response)

    def _answer(
        self, environ: WSGIEnvironment, path: str, game_id: uuid.UUID, name: str
    ) -> Response:
        request_id = request_id_from(environ.get("HTTP_X_REQUEST_ID", ""))
        environ[REQUEST_ID] = request_id
        try:
            container = container_of(self.app)
            principal = authenticate(environ.get("HTTP_AUTHORIZATION", ""), container.access)
            if principal is not None:
                environ[ACTOR] = principal.actor
            admit(
                principal,
                container,
                (),
                "owner",
                {"game_id": game_id},
                environ.get("HTTP_AUTHORIZATION", ""),
            )
            assert principal is not None
            context = context_for(
                principal,
                request_id,
                environ.get("HTTP_IDEMPOTENCY_KEY"),
                "POST",
                path,
                lambda: NO_BODY,
            )
            version = version_from(environ.get("HTTP_IF_MATCH"))
            response = command_answer(container, principal, context, name, {}, game_id, version)
        except Exception as error:  # as the app's error handlers answer it
            problem = from_exception(error)
            environ[PROBLEM] = problem.type.slug
            response = problem_answer(problem, path, request_id)
        return stamped(response, request_id)


def _command(environ: WSGIEnvironment) -> tuple[str, uuid.UUID, str] | None:
    """(path, game id, command) of a body-less command this path answers, else None."""
    if environ.get("REQUEST_METHOD") != "POST" or _has_body(environ):
        return None
    path = get_path_info(environ)
    found = PATH.fullmatch(path)
    if found is None:
        return None
    return path, uuid.UUID(found.group(1)), found.group(2)


def _has_body(environ: dict[str, Any]) -> bool:
    length = environ.get("CONTENT_LENGTH") or "0"
    return length != "0" or "HTTP_TRANSFER_ENCODING" in environ
