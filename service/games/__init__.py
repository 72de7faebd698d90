"""Every game the server offers, registered by id. Adding a game is adding its module here:
nothing in the store, ledger, API, replay or audit names a game, and nothing here lists one.

Each module of this package offers its games as ``OFFERED`` (a tuple of GameRules) and says
where its family stands in the catalogue with ``SHELF`` (GET /v1/variants lists the games in
that order, a duel's games after every game a player deals alone); a module without a shelf
goes last. The registry finds the modules itself.
"""

from __future__ import annotations

import importlib
import pkgutil

from service import errors
from service.errors import RuleViolation
from service.rules.game import GameRules

__all__ = ["GAMES", "STANDALONE", "game_named"]

#: Where a family without a SHELF of its own stands: after every other.
LAST_SHELF = 1_000


def _offered() -> list[GameRules]:
    """Every game of every module of this package, in catalogue order."""
    found: list[tuple[bool, int, int, GameRules]] = []
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        shelf = getattr(module, "SHELF", LAST_SHELF)
        for position, game in enumerate(getattr(module, "OFFERED", ())):
            found.append((game.duel, shelf, position, game))
    found.sort(key=lambda entry: entry[:3])
    return [game for *_, game in found]


GAMES: dict[str, GameRules] = {game.id: game for game in _offered()}


#: The games a player deals on their own for a stake: every game but a duel's seat game.
STANDALONE: dict[str, GameRules] = {k: v for k, v in GAMES.items() if not v.duel}


def game_named(game_id: str) -> GameRules:
    try:
        return GAMES[game_id]
    except KeyError:
        known = ", ".join(GAMES)
        raise RuleViolation(
            errors.UNKNOWN_VARIANT, f"unknown game {game_id!r}; choose one of {known}"
        ) from None
