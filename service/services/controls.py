"""Disable on demand: the operator switches gaming off or on for everyone, a game, a game
version or a player (service/core/controls.py holds the rules). Each switch is a GamingSwitched
event on the gaming-controls stream (who and when in its metadata) and a significant event;
deals, duel joins and a seat's deal check the switches in their own transaction, each switch
that covers them locked shared until it ends (migrations/0038)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from events.records import NewEvent
from service.core import controls as rules
from service.core.context import RequestContext, event_metadata
from service.core.streams import CONTROLS
from service.errors import NotFound
from service.games import GAMES
from service.services.unit_of_work import UnitOfWork

#: Significant events of this kind record every switch.
KIND = "gaming-control"


@dataclass(frozen=True, slots=True)
class SwitchView:
    scope: str
    target: str
    enabled: bool
    reason: str
    changed_at: datetime


class Controls:
    def __init__(self, unit_of_work: Callable[[], UnitOfWork]) -> None:
        self._uow = unit_of_work

    def switch(
        self,
        request: RequestContext,
        scope: rules.Scope,
        target: str,
        enabled: bool,
        reason: str,
    ) -> SwitchView:
        """Turn one switch off or on, for a game, version or player that exists."""
        with self._uow() as uow:
            stored = uow.open_command(request)
            if stored is None:
                self._check_target(uow, scope, target)
                event = rules.switched(scope, target, enabled, reason)
                meta = event_metadata(request)
                version = uow.events.stream_version(CONTROLS)
                uow.recorder.append(
                    request.credential, CONTROLS, [NewEvent.of(event, meta)], version
                )
                player = uuid.UUID(target) if scope == "player" else None
                details = {"scope": scope, "target": event.target, "enabled": enabled}
                uow.significant.record(
                    KIND, request.actor.id, {**details, "reason": reason}, player_id=player
                )
                uow.remember(request, {"scope": scope, "target": event.target})
                target = event.target
            found = [s for s in self._views(uow) if (s.scope, s.target) == (scope, target)]
            uow.commit()
        return found[0]

    def switches(self) -> list[SwitchView]:
        """Every switch ever thrown, as it stands, newest change first."""
        with self._uow() as uow:
            return self._views(uow)

    def off(self) -> list[rules.Switch]:
        with self._uow() as uow:
            return uow.controls.off()

    @staticmethod
    def check_open_in(uow: UnitOfWork, player_id: object, game: str, rules_version: str) -> None:
        """Refuse (Disabled) a deal or join a switch that is off covers, in the caller's
        transaction. The switches covering it are locked shared until that transaction ends
        (migrations/0038), so a switch recorded meanwhile waits for it, and one being recorded
        is waited for and then read: no writers' lock needed."""
        player = str(player_id)
        off = uow.controls.off_for(player, game, rules_version)
        rules.check_open(off, player, game, rules_version)

    @staticmethod
    def _views(uow: UnitOfWork) -> list[SwitchView]:
        return [SwitchView(*row) for row in uow.controls.switches()]

    @staticmethod
    def _check_target(uow: UnitOfWork, scope: str, target: str) -> None:
        if scope == "game" and target not in GAMES:
            raise NotFound("game", target)
        if scope == "version" and target not in {g.rules_version for g in GAMES.values()}:
            raise NotFound("game version", target)
        if scope == "player" and uow.projections.player(uuid.UUID(target)) is None:
            raise NotFound("player", target)
