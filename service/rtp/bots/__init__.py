"""Reference bots: deterministic players that see only what a player sees.

Each bot is ``choose(rules, table, legal) -> action or None`` (None: stop and collect), given the
sealed table (unseen cards are numbers it never reads) and the legal actions; one module per
family, found by the FAMILY it names (a new family's bot is its module and nothing else)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence

from service.rules.actions import PlayAction
from service.rules.game import GameRules
from service.rules.table import Table

Bot = Callable[[GameRules, Table, Sequence[PlayAction]], PlayAction | None]


def _found() -> dict[str, tuple[Bot, str]]:
    """Every module of this package that names its FAMILY: its choose and BOT_VERSION."""
    bots: dict[str, tuple[Bot, str]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        if hasattr(module, "FAMILY"):
            bots[module.FAMILY] = (module.choose, module.BOT_VERSION)
    return bots


#: family -> (choose, bot version), one module each.
BOTS: dict[str, tuple[Bot, str]] = _found()


def bot_for(rules: GameRules) -> tuple[Bot, str]:
    return BOTS[rules.family]
