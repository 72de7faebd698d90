"""How a request reaches the services: the container the app factory stored on the app."""

from __future__ import annotations

from flask import current_app

from service.bootstrap import Container


def services() -> Container:
    container: Container = current_app.extensions["vegas"]
    return container
