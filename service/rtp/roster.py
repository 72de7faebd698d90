"""Which player of each kind plays each game family (the one place that says so)."""

from __future__ import annotations

from service.errors import InvalidArgument
from service.rtp.bots import BOTS
from service.rtp.experts import golf, la_nivernaise, salic_law
from service.rtp.players import Kind, Player, stateless
from service.rules.game import GameRules

#: family -> strong player (sees only what a player sees, searches). A family not listed has
#: none yet (RTP.md: the games still measured by the reference bot alone).
STRONG: dict[str, Player] = {
    "golf": golf.STRONG,
    "salic-law": salic_law.STRONG,
    "la-nivernaise": la_nivernaise.STRONG,
}
#: family -> clairvoyant bound (knows every card).
CLAIRVOYANT: dict[str, Player] = {
    "golf": golf.CLAIRVOYANT,
    "salic-law": salic_law.CLAIRVOYANT,
    "la-nivernaise": la_nivernaise.CLAIRVOYANT,
}


def player_for(rules: GameRules, kind: Kind) -> Player:
    if kind == "bot":
        choose, version = BOTS[rules.family]
        return Player("bot", version, stateless(choose), "a documented greedy heuristic")
    found = (STRONG if kind == "strong" else CLAIRVOYANT).get(rules.family)
    if found is None:
        raise InvalidArgument("player", f"{rules.id} has no {kind} player yet")
    return found
