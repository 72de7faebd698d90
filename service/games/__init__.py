"""Every game the server offers, registered by id. Adding a game is adding its module here:
nothing in the store, ledger, API, replay or audit names a game."""

from __future__ import annotations

from service import errors
from service.errors import RuleViolation
from service.games.forty_thieves import FORTY_THIEVES
from service.games.golf import GOLF
from service.games.klondike import KLONDIKE, KLONDIKE_DUEL, VEGAS_DRAW1, VEGAS_DRAW3
from service.games.la_nivernaise import LA_NIVERNAISE
from service.games.pyramid import PYRAMID
from service.games.salic_law import SALIC_LAW
from service.games.scorpion import SCORPION, SUPER_SCORPION
from service.games.three_shuffles import THREE_SHUFFLES
from service.games.upside_down_pyramid import UPSIDE_DOWN_PYRAMID
from service.rules.game import GameRules

__all__ = [
    "FORTY_THIEVES",
    "GAMES",
    "GOLF",
    "KLONDIKE",
    "KLONDIKE_DUEL",
    "LA_NIVERNAISE",
    "PYRAMID",
    "SALIC_LAW",
    "SCORPION",
    "STANDALONE",
    "SUPER_SCORPION",
    "THREE_SHUFFLES",
    "UPSIDE_DOWN_PYRAMID",
    "VEGAS_DRAW1",
    "VEGAS_DRAW3",
    "game_named",
]

GAMES: dict[str, GameRules] = {
    game.id: game
    for game in (
        VEGAS_DRAW1,
        VEGAS_DRAW3,
        KLONDIKE,
        GOLF,
        PYRAMID,
        SCORPION,
        SUPER_SCORPION,
        FORTY_THIEVES,
        UPSIDE_DOWN_PYRAMID,
        THREE_SHUFFLES,
        SALIC_LAW,
        LA_NIVERNAISE,
        KLONDIKE_DUEL,
    )
}


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
