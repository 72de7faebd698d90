"""The operator's switches of gaming (service/core/controls.py holds what they mean), which the
database keeps from the GamingSwitched events (migrations/0019: the service may only read
them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from service.core.controls import Switch

# Every switch that is off now.
OFF_SQL = """
SELECT scope, target, reason FROM gaming_controls WHERE NOT enabled ORDER BY scope, target
"""

# Every switch that is off now, read after the shared locks of the switches that cover a deal of
# the game at the rules version for the player (migrations/0038): a switch covering it being
# recorded is waited for and then read, and one recorded after waits for this transaction.
OFF_FOR_SQL = """
SELECT scope, target, reason
  FROM switches_off_for(%(player)s, %(game)s, %(rules_version)s)
"""

# Every switch ever thrown, each as it stands, newest change first.
ALL_SQL = """
SELECT scope, target, enabled, reason, changed_at FROM gaming_controls ORDER BY changed_at DESC
"""


class ControlStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def off(self) -> list[Switch]:
        return [Switch(*row) for row in self._conn.execute(OFF_SQL).fetchall()]

    def off_for(self, player: str, game: str, rules_version: str) -> list[Switch]:
        """As ``off``, for a deal's check in its transaction: the switches covering the deal
        stay as read until it ends."""
        params = {"player": player, "game": game, "rules_version": rules_version}
        return [Switch(*row) for row in self._conn.execute(OFF_FOR_SQL, params).fetchall()]

    def switches(self) -> list[tuple[str, str, bool, str, datetime]]:
        return [(s, t, e, r, at) for s, t, e, r, at in self._conn.execute(ALL_SQL).fetchall()]
