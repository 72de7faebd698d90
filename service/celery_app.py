"""The Celery app the worker and beat processes run:

celery -A service.celery_app worker
celery -A service.celery_app beat
"""

from __future__ import annotations

from typing import Any

from celery.signals import worker_process_shutdown

from service.config import Settings
from service.worker import make_celery

settings = Settings.from_env()
app = make_celery(settings)


@worker_process_shutdown.connect
def _close_services(**_: Any) -> None:
    from service.tasks import close_services

    close_services()
