"""One beat's schedule at a time, however many beat processes run on however many hosts.

Celery beat sends each periodic task (idle collection, duel sweeps, checkpoints, projections,
reconciliation, audit resumption, the advantage-play watch) from every beat process that runs.
This scheduler sends only while its process leads the ``vegas-beat`` role
(service/storage/leadership.py: a PostgreSQL session advisory lock), so the others wait
and one of them takes over within a few seconds of the leader's end. Every task is also safe to
run twice (service/worker/tasks.py), which covers the moment of a takeover.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.beat import PersistentScheduler

from service.runtime.config import Settings
from service.runtime.database import database_url
from service.storage.leadership import Leadership

log = logging.getLogger(__name__)

ROLE = "vegas-beat"


class SingleBeat(PersistentScheduler):  # type: ignore[misc]
    #: How long a beat that does not lead waits before it asks again (seconds).
    follower_wait = 5.0

    def __init__(self, *args: Any, leadership: Leadership | None = None, **kwargs: Any) -> None:
        self._leadership = leadership
        super().__init__(*args, **kwargs)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if self._leadership is None:
            self._leadership = Leadership(database_url(Settings.from_env()), ROLE)
        if not self._leadership.lead():
            return self.follower_wait
        return float(super().tick(*args, **kwargs))

    def close(self) -> None:
        if self._leadership is not None:
            self._leadership.release()
        super().close()
