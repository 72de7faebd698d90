"""Which player of each kind plays each game family (the one place that says so)."""

from __future__ import annotations

import importlib
import pkgutil

from service.errors import InvalidArgument
from service.rtp.bots import BOTS
from service.rtp.experts import klondike
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
#: game -> its own strong player, where the family's is not the strongest we know there. In
#: Vegas draw one, one pass, klondike-strong/1 took 9.18 cards a deal to the bot's 9.70 on the
#: same 2,000 deals (a sampled world's solver plans on a stock order no player can know), so
#: that game is played by the bot improved by play-outs (RTP.md). Vegas draw one and Klondike
#: keep those players: klondike-strong/2 (the family's, issue 42) is weaker there so far
#: (draw one 8.79 cards a deal to the rollout's 9.09, Klondike 21.79 to /1's 24.37; RTP.md).
STRONG_FOR_GAME: dict[str, Player] = {
    "vegas-draw1": klondike.ROLLOUT,
    "klondike": klondike.STRONG_V1,
}
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
