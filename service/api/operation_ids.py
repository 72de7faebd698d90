"""Every operation of the API document named (``operationId``), so a client generated from it
gets short, stable method names: ``<blueprint>_<view>`` from the route's Flask endpoint (a
game command's ``command_`` prefix dropped; the two class views named for what they do). An
apispec plugin, on the document flask-smorest builds."""

from __future__ import annotations

import re
from typing import Any

from apispec import BasePlugin

#: The class-based views, by what they do.
RENAMED = {"games.Games": "games_deal", "games.Game": "games_game"}


def operation_id(endpoint: str) -> str:
    if endpoint in RENAMED:
        return RENAMED[endpoint]
    blueprint, _, view = endpoint.rpartition(".")
    view = view.removeprefix("command_")
    name = f"{blueprint}_{view}" if blueprint else view
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


class OperationIds(BasePlugin):
    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        rule = kwargs.get("rule")
        if rule is None or operations is None:
            return
        for operation in operations.values():
            if isinstance(operation, dict):
                operation.setdefault("operationId", operation_id(rule.endpoint))
