"""Which player of each kind plays each game family (the one place that says so)."""

from __future__ import annotations

from service.rtp.bots import BOTS
from service.rtp.experts import (
    forty_thieves,
    golf,
    klondike,
    la_nivernaise,
    pyramid,
    salic_law,
    scorpion,
    three_shuffles,
    upside_down_pyramid,
)
from service.rtp.players import Kind, Player, stateless
from service.rules.game import GameRules

_EXPERTS = {
    "klondike": klondike,
    "golf": golf,
    "three-shuffles": three_shuffles,
    "forty-thieves": forty_thieves,
    "pyramid": pyramid,
    "scorpion": scorpion,
    "upside-down-pyramid": upside_down_pyramid,
    "salic-law": salic_law,
    "la-nivernaise": la_nivernaise,
}
#: family -> strong player (sees only what a player sees, searches).
STRONG: dict[str, Player] = {f: m.STRONG for f, m in _EXPERTS.items()}
#: family -> clairvoyant bound (knows every card).
CLAIRVOYANT: dict[str, Player] = {f: m.CLAIRVOYANT for f, m in _EXPERTS.items()}


def player_for(rules: GameRules, kind: Kind) -> Player:
    if kind == "bot":
        choose, version = BOTS[rules.family]
        return Player("bot", version, stateless(choose), "a documented greedy heuristic")
    if kind == "strong":
        return STRONG[rules.family]
    return CLAIRVOYANT[rules.family]
