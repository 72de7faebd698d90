"""Which player of each kind plays each game family (the one place that says so)."""

from __future__ import annotations

import importlib
import pkgutil

from service.errors import InvalidArgument
from service.rtp.bots import BOTS
from service.rtp.experts import klondike_strong
from service.rtp.players import Kind, Player, stateless
from service.rules.game import GameRules


def _experts(name: str) -> dict[str, Player]:
    """family -> the player named ``name`` (STRONG, CLAIRVOYANT) of every expert module that
    names its FAMILY (the search models beside them name none)."""
    found: dict[str, Player] = {}
    experts = importlib.import_module("service.rtp.experts")
    for module_info in pkgutil.iter_modules(experts.__path__):
        module = importlib.import_module(f"service.rtp.experts.{module_info.name}")
        if hasattr(module, "FAMILY") and hasattr(module, name):
            found[module.FAMILY] = getattr(module, name)
    return found


#: family -> strong player (sees only what a player sees, searches). A family without one has
#: none yet (its games show the reference bot's figure).
STRONG: dict[str, Player] = _experts("STRONG")
#: game -> its own strong player, where the family's plays it with another budget (the Klondike
#: family's: a shorter search over as many worlds in Vegas draw one and Klondike; RTP.md).
STRONG_FOR_GAME: dict[str, Player] = dict(klondike_strong.FOR_GAME)
#: family -> clairvoyant bound (knows every card).
CLAIRVOYANT: dict[str, Player] = _experts("CLAIRVOYANT")


def player_for(rules: GameRules, kind: Kind) -> Player:
    if kind == "bot":
        choose, version = BOTS[rules.family]
        return Player("bot", version, stateless(choose), "a documented greedy heuristic")
    if kind == "strong" and rules.id in STRONG_FOR_GAME:
        return STRONG_FOR_GAME[rules.id]
    found = (STRONG if kind == "strong" else CLAIRVOYANT).get(rules.family)
    if found is None:
        raise InvalidArgument("player", f"{rules.id} has no {kind} player yet")
    return found
