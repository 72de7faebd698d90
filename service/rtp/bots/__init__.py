"""Reference bots: deterministic players that see only what a player sees.

Each bot is ``choose(rules, table, legal) -> action or None`` (None: stop and collect), given the
sealed table (unseen cards are numbers it never reads) and the legal actions; one per family."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service.rtp.bots import (
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
from service.rules.actions import PlayAction
from service.rules.game import GameRules
from service.rules.table import Table

Bot = Callable[[GameRules, Table, Sequence[PlayAction]], PlayAction | None]

#: family -> (choose, bot version)
BOTS: dict[str, tuple[Bot, str]] = {
    "klondike": (klondike.choose, klondike.BOT_VERSION),
    "golf": (golf.choose, golf.BOT_VERSION),
    "three-shuffles": (three_shuffles.choose, three_shuffles.BOT_VERSION),
    "forty-thieves": (forty_thieves.choose, forty_thieves.BOT_VERSION),
    "pyramid": (pyramid.choose, pyramid.BOT_VERSION),
    "scorpion": (scorpion.choose, scorpion.BOT_VERSION),
    "upside-down-pyramid": (upside_down_pyramid.choose, upside_down_pyramid.BOT_VERSION),
    "salic-law": (salic_law.choose, salic_law.BOT_VERSION),
    "la-nivernaise": (la_nivernaise.choose, la_nivernaise.BOT_VERSION),
}


def bot_for(rules: GameRules) -> tuple[Bot, str]:
    return BOTS[rules.family]
