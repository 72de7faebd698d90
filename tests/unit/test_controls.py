"""Disable on demand's rules (service/core/controls.py): which switches cover a deal."""

from __future__ import annotations

import pytest

from service.core import controls
from service.core.controls import Switch
from service.errors import Disabled, InvalidArgument


def test_a_deal_is_refused_by_any_switch_that_covers_it_and_only_those() -> None:
    off = [Switch("game", "golf", "fault"), Switch("player", "p-1", "review")]
    controls.check_open(off, "p-2", "pyramid", "pyramid/2")
    with pytest.raises(Disabled) as game:
        controls.check_open(off, "p-2", "golf", "golf/3")
    assert (game.value.scope, game.value.target, game.value.reason) == ("game", "golf", "fault")
    with pytest.raises(Disabled) as player:
        controls.check_open(off, "p-1", "pyramid", "pyramid/2")
    assert player.value.scope == "player"
    version = [Switch("version", "vegas-klondike/1", "audit")]
    assert not controls.game_open(version, "vegas-draw3", "vegas-klondike/1")
    assert controls.game_open(version, "klondike", "klondike/3")
    everyone = [Switch("all", controls.EVERYONE, "incident")]
    assert not controls.game_open(everyone, "klondike", "klondike/3")


def test_a_switch_names_its_scope_and_gives_a_reason() -> None:
    assert controls.switched("all", "ignored", False, "incident").target == controls.EVERYONE
    with pytest.raises(InvalidArgument, match="reason"):
        controls.switched("game", "golf", False, "  ")
    with pytest.raises(InvalidArgument, match="reason"):
        controls.switched("player", "p", False, "\u00a0")
    with pytest.raises(ValueError, match="scope"):
        controls.switched("table", "golf", False, "x")  # type: ignore[arg-type]
