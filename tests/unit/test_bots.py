"""The reference bots' contract, once for every bot (service/rtp/bots/): on seeded deals of
every game a player deals alone, its family's bot chooses only listed actions, reads no sealed
card, stops, loses no card, plays the same deal the same way twice, reaches the foundations on
some deal, and names its family in its version. Each game's own tests say where its bot stops
and what it prefers (tests/unit/games/)."""

from __future__ import annotations

import pytest

from service.games import STANDALONE
from service.rtp.bots import BOTS, bot_for
from tests.unit.rtp_support import bot_play_out

SEEDS = (1, 2, 3)


@pytest.mark.parametrize("game_id", sorted(STANDALONE))
def test_the_bot_keeps_the_contract_on_seeded_deals(game_id: str) -> None:
    rules = STANDALONE[game_id]
    ends = [bot_play_out(rules, seed)[-1] for seed in SEEDS]
    assert any(rules.units(end) > 0 for end in ends)
    assert bot_play_out(rules, SEEDS[0])[-1] == ends[0]  # deterministic
    _choose, version = bot_for(rules)
    assert version.startswith(f"{rules.family}-bot/")


def test_every_family_a_player_deals_has_a_bot() -> None:
    assert {rules.family for rules in STANDALONE.values()} <= set(BOTS)
