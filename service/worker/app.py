"""The Celery app the worker and beat processes run:

celery -A service.worker.app worker
celery -A service.worker.app beat
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from celery.signals import setup_logging, task_postrun, task_prerun, worker_process_shutdown

from service.runtime import logs, metrics
from service.runtime.config import Settings
from service.worker.config import make_celery

settings = Settings.from_env()
app = make_celery(settings)
metrics.describe_build()

#: When each task running in this process began (by task id), for its duration.
_began: dict[str, float] = {}
#: One line a task (its name, id, outcome and duration).
task_log = logging.getLogger("service.tasks")


@setup_logging.connect
def _json_logs(**_: Any) -> None:
    """The worker's and beat's lines as JSON (Celery configures none of its own then)."""
    logs.configure()


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
    outcome = "succeeded" if state == "SUCCESS" else "failed"
    metrics.TASKS.labels(name, outcome).inc()
    took = None if started is None else time.perf_counter() - started
    if took is not None:
        metrics.TASK_LATENCY.labels(name).observe(took)
    task_log.info(
        "task",
        extra={
            "task": name,
            "task_id": task_id,
            "outcome": outcome,
            "duration_ms": None if took is None else round(took * 1000, 2),
        },
    )
