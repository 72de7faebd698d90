"""The Flask app factory: API v1 with its OpenAPI document, problem details for every error,
and the CLI. The services are built on first use (or eagerly by service.wsgi), so CLI
commands such as ``db upgrade`` run before the database is ready for them."""

from __future__ import annotations

import http
import logging
import threading
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, g, request, send_from_directory
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from werkzeug.exceptions import HTTPException

from service import cli, console
from service.api import (
    audits,
    checkpoints,
    controls,
    duels,
    games,
    metrics,
    players,
    public,
    reports,
    safer_gambling,
    wallet,
)
from service.api.hot_path import CommandHotPath
from service.api.metrics import Measured
from service.api.operation_ids import OperationIds
from service.api.problems import (
    MEDIA_TYPE,
    Problem,
    from_exception,
    from_http_exception,
    problem_response,
)
from service.api.rendering import FastJSON, stamped
from service.api.request_marks import REQUEST_ID
from service.api.requests import request_id
from service.api.schemas.common import ProblemSchema
from service.bootstrap import Container, build
from service.runtime.config import Settings

log = logging.getLogger(__name__)

API_TITLE = "Vegas Solitaire game server"
MAX_BODY = 16 * 1024  # a deal with a full certification deck is under 1 KiB


class VegasApi(Api):
    """flask-smorest's Api, answering and documenting every error as problem+json."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if status >= 400:
                response["schema"] = self.ERROR_SCHEMA
                prepare_response(response, self.spec, MEDIA_TYPE)
            self.spec.components.response(status.name, response, lazy=True)
        default = {"description": "A problem (RFC 9457)", "schema": self.ERROR_SCHEMA}
        prepare_response(default, self.spec, MEDIA_TYPE)
        self.spec.components.response("DEFAULT_ERROR", default, lazy=True)

    def handle_http_exception(self, error: HTTPException) -> Response:
        return problem_response(from_http_exception(error))


def create_app(
    container: Container | None = None,
    *,
    settings: Settings | None = None,
    factory: Callable[[], Container] | None = None,
) -> Flask:
    app = Flask(__name__)
    app.json = FastJSON(app)
    app.config.update(
        API_TITLE=API_TITLE,
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/v1",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL="/v1/docs/assets/",
        MAX_CONTENT_LENGTH=MAX_BODY,
        API_SPEC_OPTIONS={
            "info": {
                "description": "Vegas Klondike for a stake, paid per card on the foundations. "
                "Money is integer minor units. Errors are RFC 9457 problem details.",
            },
            "components": {
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                # The game's version, quoted (the routes' ETAG header refers to it).
                "headers": {
                    "ETAG": {
                        "description": "The game's version, quoted: send it back as If-Match "
                        "to act only on the game as seen.",
                        "schema": {"type": "string"},
                    }
                },
            },
        },
    )
    _install_services(app, container, settings, factory)

    api = VegasApi(app, spec_kwargs={"extra_plugins": [OperationIds()]})
    api.register_blueprint(public.blp)
    api.register_blueprint(players.blp)
    api.register_blueprint(safer_gambling.blp)
    api.register_blueprint(controls.blp)
    api.register_blueprint(games.blp)
    api.register_blueprint(duels.blp)
    api.register_blueprint(duels.player_duels)
    api.register_blueprint(audits.blp)
    api.register_blueprint(checkpoints.blp)
    api.register_blueprint(reports.blp)
    api.register_blueprint(wallet.blp)
    app.extensions["vegas_api"] = api
    app.register_blueprint(console.blp)  # HTML and static files, outside the API document
    metrics.install(app)  # GET /metrics, outside the API document too

    _install_docs_assets(app)
    _install_handlers(app)
    cli.register(app)
    # The body-less game commands are answered before Flask's dispatch (the hot path).
    app.wsgi_app = CommandHotPath(app, app.wsgi_app)  # type: ignore[method-assign]
    # Every request counted and timed, the hot path's too (outermost).
    app.wsgi_app = Measured(app.wsgi_app)  # type: ignore[method-assign]
    return app


def _install_services(
    app: Flask,
    container: Container | None,
    settings: Settings | None,
    factory: Callable[[], Container] | None,
) -> None:
    if container is not None:
        app.extensions["vegas"] = container
        return
    lock = threading.Lock()
    make = factory or (lambda: build(settings or Settings.from_env(), migrate=False))

    def services() -> Container:
        with lock:
            if "vegas" not in app.extensions:
                app.extensions["vegas"] = make()
        built: Container = app.extensions["vegas"]
        return built

    app.extensions["vegas_services"] = services

    @app.before_request
    def ensure_services() -> None:
        services()


def _install_docs_assets(app: Flask) -> None:
    """Swagger UI's files from the swagger-ui-bundle package: the docs page needs no CDN."""
    from swagger_ui_bundle import swagger_ui_path

    @app.get("/v1/docs/assets/<path:filename>")
    def docs_assets(filename: str) -> Response:
        return send_from_directory(str(swagger_ui_path), filename)


def _install_handlers(app: Flask) -> None:
    @app.before_request
    def remember_request_id() -> None:
        request.environ[REQUEST_ID] = request_id()  # for the request's log line

    @app.after_request
    def stamp(response: Response) -> Response:
        return stamped(response, g.get("request_id"))

    @app.errorhandler(Problem)
    def problem(error: Problem) -> Response:
        return problem_response(error)

    @app.errorhandler(Exception)
    def failure(error: Exception) -> Response:
        if isinstance(error, HTTPException):  # pragma: no cover - the Api handles these
            return problem_response(from_http_exception(error))
        return problem_response(from_exception(error))
