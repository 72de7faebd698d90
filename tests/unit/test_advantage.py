"""Advantage play judged (service/rtp/advantage.py): the return of a window of games and its
interval, and when a player's or a game's return is significantly above the price."""

from __future__ import annotations

from decimal import Decimal

import pytest

from service.rtp.advantage import MIN_GAMES, actual_return, judge_game, judge_player
from service.rtp.published import publication


def test_a_return_is_payouts_over_stakes_with_an_interval_weighted_by_stake() -> None:
    found = actual_return([(100, 0), (100, 200), (300, 300)])
    assert (found.games, found.staked, found.paid) == (3, 500, 500)
    assert found.rtp == Decimal("1.0000")
    assert found.low < found.rtp < found.high
    assert actual_return([(520, 676)] * 5).low == Decimal("1.3000")  # no spread: no width
    with pytest.raises(ValueError, match="no games"):
        actual_return([])


def test_a_player_is_flagged_only_when_the_whole_interval_beats_the_strong_player() -> None:
    golf = publication("golf")
    assert golf is not None
    assert golf.strong is not None
    strong = Decimal(golf.strong.rtp)
    winner = actual_return([(520, 676)] * MIN_GAMES)
    flag = judge_player("golf", winner, golf)
    assert flag is not None
    assert flag.subject == "player"
    assert flag.strong_rtp == strong
    assert "above the strong player's" in flag.reason
    # Fewer games than the minimum: not evidence.
    assert judge_player("golf", actual_return([(520, 676)] * (MIN_GAMES - 1)), golf) is None
    # Lucky but not significantly so: half the games won outright, half lost.
    mixed = actual_return([(520, 676), (520, 0)] * MIN_GAMES)
    assert mixed.low <= strong
    assert judge_player("golf", mixed, golf) is None
    # No published figures: nothing to judge against.
    assert judge_player("golf", winner, None) is None


def test_a_game_is_flagged_when_its_return_is_above_its_whole_band() -> None:
    golf = publication("golf")
    assert golf is not None
    assert golf.strong is not None
    high = Decimal(golf.strong.high)
    above = actual_return([(1000, int(high * 1000) + 50)] * MIN_GAMES)
    flag = judge_game("golf", above, golf)
    assert flag is not None
    assert flag.subject == "game"
    assert flag.band_high == high
    within = actual_return([(1000, int(high * 1000))] * MIN_GAMES)
    assert judge_game("golf", within, golf) is None
