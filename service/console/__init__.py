"""The web console: one page for players (a playable table), auditors (a replay viewer) and
finance (charts), served under /console/ by the app itself.

It is a client of the public API only (plain HTML, CSS and JavaScript in ``static/``, no build
step, nothing fetched from elsewhere), so it is also the reference client front-ends can read.
The bearer token stays in the browser's session storage and goes only in Authorization
headers, never in a URL (so never in an access log).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, redirect

STATIC = Path(__file__).parent / "static"

# The page runs only its own files; charts are SVG images made from fetched blobs.
POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)

# Flask's own static route for the blueprint: /console/static/<path:filename>.
blp = Blueprint(
    "console", __name__, url_prefix="/console", static_folder="static", static_url_path="/static"
)


@blp.get("")
def bare() -> Response:
    return redirect("/console/", code=308)  # type: ignore[return-value]


@blp.get("/")
def index() -> Response:
    return blp.send_static_file("index.html")


@blp.after_request
def headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
