"""The Celery app the worker and beat processes run:

celery -A service.worker.app worker
celery -A service.worker.app beat
"""

from __future__ import annotations

import os
import time
from typing import Any

from celery.signals import task_postrun, task_prerun, worker_process_shutdown

from service.runtime import metrics
from service.runtime.config import Settings
from service.worker.config import make_celery

settings = Settings.from_env()
app = make_celery(settings)
metrics.describe_build()

#: When each task running in this process began (by task id), for its duration.
_began: dict[str, float] = {}


@worker_process_shutdown.connect
def _close_services(**_: Any) -> None:
    from service.worker.tasks import close_services

    close_services()
    metrics.process_exited(os.getpid())


@task_prerun.connect
def _task_began(task_id: str | None = None, **_: Any) -> None:
    if task_id is not None:
        _began[task_id] = time.perf_counter()


@task_postrun.connect
def _task_ended(
    task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any
) -> None:
    """Each task counted by name and outcome, and timed (for the metrics)."""
    name = getattr(task, "name", None) or "unknown"
    started = _began.pop(task_id or "", None)
    metrics.TASKS.labels(name, "succeeded" if state == "SUCCESS" else "failed").inc()
    if started is not None:
        metrics.TASK_LATENCY.labels(name).observe(time.perf_counter() - started)
