"""Disable on demand (pure; GLI-19 s2.4.1, s4.15.1, A.6.3): the operator switches gaming off or
on for everyone, one game, one game version (a rules_version) or one player, with a reason.

A switch's state is its last change (a GamingSwitched on the gaming-controls stream). A deal or
a duel's join is refused while any switch that covers it is off: ``gaming-disabled`` for
everyone's or the player's, ``game-disabled`` for the game's or its version's. Games already
dealt play on and are collected as ever; deposits and withdrawals are not gaming.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from events.catalog import GamingSwitched
from service.errors import Disabled, InvalidArgument

Scope = Literal["all", "game", "version", "player"]
SCOPES: tuple[Scope, ...] = ("all", "game", "version", "player")
#: The target of the switch for everyone.
EVERYONE = "*"
MAX_REASON = 500


@dataclass(frozen=True, slots=True)
class Switch:
    """One switch that is off: what it covers and why."""

    scope: Scope
    target: str
    reason: str


def switched(scope: Scope, target: str, enabled: bool, reason: str) -> GamingSwitched:
    """The event turning one switch off or on; the reason is required either way."""
    if scope not in SCOPES:
        raise ValueError(f"no scope {scope!r}")
    if not _reason_given(reason):
        # A request's field (422), not a bug: blank by Python's reckoning (a no-break space is
        # blank too), which a schema's length check alone does not see.
        raise InvalidArgument("reason", f"a switch needs a reason of 1 to {MAX_REASON} characters")
    return GamingSwitched(scope, EVERYONE if scope == "all" else target, enabled, reason)


def _reason_given(reason: str) -> bool:
    return bool(reason.strip()) and len(reason) <= MAX_REASON


def fault_of(event: GamingSwitched) -> str | None:
    """What :func:`switched` would not have made of a recorded switch, if anything: a scope
    there is none of, everyone's switch for anything but everyone, no reason."""
    if event.scope not in SCOPES:
        return f"no scope {event.scope!r}"
    if (event.scope == "all") != (event.target == EVERYONE):
        return f"scope {event.scope} with target {event.target!r}"
    if not _reason_given(event.reason):
        return f"a reason of 1 to {MAX_REASON} characters, not {event.reason!r}"
    return None


def _covering(off: Iterable[Switch], game: str, rules_version: str, player_id: str) -> list[Switch]:
    covers = {("all", EVERYONE), ("player", player_id), ("game", game), ("version", rules_version)}
    return [switch for switch in off if (switch.scope, switch.target) in covers]


def check_open(off: Iterable[Switch], player_id: str, game: str, rules_version: str) -> None:
    """Refuse (Disabled) a deal or a join that a switch which is off covers."""
    for switch in _covering(off, game, rules_version, player_id):
        raise Disabled(switch.scope, switch.target, switch.reason)


def gaming_open(off: Iterable[Switch]) -> bool:
    """Whether gaming is on for everyone (GET /v1/variants shows it)."""
    return not any(switch.scope == "all" for switch in off)


def game_open(off: Iterable[Switch], game: str, rules_version: str) -> bool:
    """Whether anyone may be dealt ``game`` now (GET /v1/variants shows it)."""
    return not _covering(off, game, rules_version, "")
