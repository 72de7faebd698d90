"""Which player of each kind plays each game family (the one place that says so)."""

from __future__ import annotations

from service.rtp.bots import BOTS
from service.rtp.experts import generic
from service.rtp.players import Kind, Player, stateless
from service.rules.game import GameRules

#: family -> strong player; a family not named plays the generic one.
STRONG: dict[str, Player] = {}
#: family -> clairvoyant bound; likewise.
CLAIRVOYANT: dict[str, Player] = {}

_GENERIC_STRONG = generic.pimc_player("generic-pimc/1", samples=6, budget=200)
_GENERIC_BOUND = generic.solver_bound("generic-solver/1", budget=50_000)


def player_for(rules: GameRules, kind: Kind) -> Player:
    if kind == "bot":
        choose, version = BOTS[rules.family]
        return Player("bot", version, stateless(choose), "a documented greedy heuristic")
    if kind == "strong":
        return STRONG.get(rules.family, _GENERIC_STRONG)
    return CLAIRVOYANT.get(rules.family, _GENERIC_BOUND)
