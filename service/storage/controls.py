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

# Every switch ever thrown, each as it stands, newest change first.
ALL_SQL = """
SELECT scope, target, enabled, reason, changed_at FROM gaming_controls ORDER BY changed_at DESC
"""


class ControlStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def off(self) -> list[Switch]:
        return [Switch(*row) for row in self._conn.execute(OFF_SQL).fetchall()]

    def switches(self) -> list[tuple[str, str, bool, str, datetime]]:
        return [(s, t, e, r, at) for s, t, e, r, at in self._conn.execute(ALL_SQL).fetchall()]
