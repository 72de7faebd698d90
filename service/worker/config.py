"""The Celery configuration; ``service.worker.app`` is the app the worker and beat run
(``celery -A service.worker.app worker`` / ``beat``), and the composition root builds one from
the same settings to send tasks.

The broker is CELERY_BROKER_URL (Redis in CI and production). Without one, kombu's filesystem
transport keeps the queues in the data folder, so `make run` starts a real worker and a real
beat with no server to install. Tasks are acknowledged late (after they finish), so a task
interrupted by a crash runs again: every task here is safe to run twice.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from celery import Celery
from celery.schedules import crontab

from service.runtime.config import Settings


def _filesystem_transport(data_dir: Path) -> tuple[str, dict[str, Any], str]:
    root = data_dir / "celery"
    queues, processed, control = root / "queue", root / "processed", root / "control"
    for folder in (queues, processed, control):
        folder.mkdir(parents=True, exist_ok=True)
    options = {
        "data_folder_in": str(queues),
        "data_folder_out": str(queues),
        "processed_folder": str(processed),
        "control_folder": str(control),
        "store_processed": False,
        # The folder is polled (kombu's default: once a second, which left a worker idle for
        # half a second on average between two tasks of an audit); Redis pushes instead.
        "polling_interval": 0.1,
    }
    return "filesystem://", options, f"file://{root / 'results'}"


#: kombu's filesystem transport with messages renamed into the queue whole
#: (service.worker.broker_files).
FILESYSTEM_TRANSPORT = "service.worker.broker_files:Transport"


def make_celery(settings: Settings) -> Celery:
    app = Celery("vegas", include=["service.worker.tasks"])
    if settings.celery_broker_url:
        broker = settings.celery_broker_url
        options: dict[str, Any] = {}
        backend = settings.celery_result_backend or settings.celery_broker_url
        transport = None
    else:
        broker, options, backend = _filesystem_transport(settings.data_dir)
        transport = FILESYSTEM_TRANSPORT
        if settings.celery_result_backend:
            backend = settings.celery_result_backend
    if backend.startswith("file://"):
        Path(backend.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
    app.conf.update(
        broker_url=broker,
        broker_transport=transport,
        broker_transport_options=options,
        result_backend=backend,
        result_expires=timedelta(days=1),
        task_default_queue=settings.celery_queue,
        task_acks_late=True,  # at least once: a crash mid-task means it runs again
        task_reject_on_worker_lost=True,
        # A stop (supervisord's SIGQUIT) gives the tasks running 2 s, then hands them back to
        # the broker unacknowledged (they run again after the restart): stops take seconds.
        worker_soft_shutdown_timeout=2.0,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        timezone="UTC",
        enable_utc=True,
        broker_connection_retry_on_startup=True,
        # No task runs for ever: a stuck one is stopped and its work sent again by a sweeper.
        task_soft_time_limit=settings.task_time_limit_s - 30,
        task_time_limit=settings.task_time_limit_s,
        # Only the beat that leads sends (service/worker/single_beat.py): run as many as you
        # like, on any host, and one schedule takes effect.
        beat_scheduler="service.worker.single_beat:SingleBeat",
        beat_schedule={
            "collect-idle-games": {
                "task": "vegas.collect_idle_games",
                "schedule": timedelta(seconds=settings.idle_check_every),
            },
            "project-daily-totals": {
                "task": "vegas.project_daily_totals",
                "schedule": timedelta(seconds=settings.projector_every),
            },
            "sweep-duels": {
                "task": "vegas.sweep_duels",
                "schedule": timedelta(seconds=settings.duel_sweep_every),
            },
            "checkpoint-log": {
                "task": "vegas.checkpoint_log",
                "schedule": timedelta(seconds=settings.checkpoint_every),
            },
            "watch-log-horizon": {
                "task": "vegas.watch_log_horizon",
                "schedule": timedelta(seconds=settings.horizon_check_every),
            },
            "resume-audits": {
                "task": "vegas.resume_audits",
                "schedule": timedelta(seconds=60),
            },
            "verify-players": {
                "task": "vegas.verify_players",
                "schedule": timedelta(seconds=settings.verify_players_every),
            },
            "watch-advantage-play": {
                "task": "vegas.watch_advantage_play",
                "schedule": timedelta(seconds=settings.advantage_watch_every),
            },
            "reconcile-yesterday": {
                "task": "vegas.reconcile_day",
                "schedule": crontab(hour=0, minute=15),
            },
        },
    )
    if settings.wallet_mode == "seamless":
        # Wins and rollbacks due to the operator's wallet (service/services/seamless.py).
        app.conf.beat_schedule["settle-wallet"] = {
            "task": "vegas.settle_wallet",
            "schedule": timedelta(seconds=settings.wallet_sweep_every),
        }
    return app
