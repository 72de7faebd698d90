"""The API's blueprints: flask-smorest's, with a request parser that reads the JSON body
through the one reader every route shares (``service.api.requests.json_body``), so a body is
read and decoded once, however it is framed, and anything it cannot decode is a clear 400."""

from __future__ import annotations

from typing import Any

import flask
import flask_smorest
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

from service.api.requests import NO_BODY, json_body


class BodyParser(FlaskParser):
    def _raw_load_json(self, req: flask.Request) -> Any:
        if not is_json_request(req):
            return core.missing
        body = json_body()
        return core.missing if body is NO_BODY else body


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = BodyParser()
