"""The server's clock, as the rules read it and the records write it.

Timed play (duels) is decided by the server's clock, injected wherever it is read so tests can
move it; every time that decides something is recorded in an event as an instant: ISO 8601 in
UTC to the microsecond, e.g. ``2026-11-23T20:10:00.000000Z``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def instant(moment: datetime) -> str:
    """How an event records a moment."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_instant(text: str) -> datetime:
    """The moment an event recorded."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
