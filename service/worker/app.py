"""The Celery app the worker and beat processes run:

celery -A service.worker.app worker
celery -A service.worker.app beat
"""

from __future__ import annotations

from typing import Any

from celery.signals import worker_process_shutdown

from service.runtime.config import Settings
from service.worker.config import make_celery

settings = Settings.from_env()
app = make_celery(settings)


@worker_process_shutdown.connect
def _close_services(**_: Any) -> None:
    from service.worker.tasks import close_services

    close_services()
