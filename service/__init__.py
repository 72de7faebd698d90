"""Patience games server. A functional core (``rules``, ``games``, ``core``: pure) inside an
imperative shell (``services`` over ``storage``; ``api`` and ``worker`` calling the services;
``runtime`` for configuration, the database and the processes). ``bootstrap`` is the one
composition root; ``app``, ``wsgi`` and ``cli`` are the entry points; ``errors`` are shared by
every layer; ``rtp`` is the RTP lab and ``console`` the web console. README's Layout says what
each holds, and the import contracts in pyproject.toml keep it so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(*args: Any, **kwargs: Any) -> Flask:
    """The Flask app factory (``flask --app service ...``); see service.app."""
    from service.app import create_app as factory

    return factory(*args, **kwargs)
