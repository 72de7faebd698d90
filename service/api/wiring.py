"""How a request reaches the services: the container the app factory stored on the app."""

from __future__ import annotations

from flask import Flask, current_app

from service.bootstrap import Container


def services() -> Container:
    return container_of(current_app)


def container_of(app: Flask) -> Container:
    """The app's container; an app that builds its services on first use builds them now."""
    built: Container | None = app.extensions.get("vegas")
    if built is None:
        built = app.extensions["vegas_services"]()
    return built
