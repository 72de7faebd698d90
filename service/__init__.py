"""Vegas Solitaire game server: what the system does (rules, deciders, wallet, HTTP, tasks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(*args: Any, **kwargs: Any) -> Flask:
    """The Flask app factory (``flask --app service ...``); see service.app."""
    from service.app import create_app as factory

    return factory(*args, **kwargs)
