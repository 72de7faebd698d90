"""Real Celery processes for tests: a worker (and, when asked, beat) started as the README's
`make run` starts them, consuming from the real broker: TEST_CELERY_BROKER_URL (CI: the
machine's Redis), else kombu's filesystem transport in a folder of the test run's own.

Each test run (and each worker a test starts for a database of its own) uses a queue of its own,
so runs sharing one broker never take each other's tasks; the queue is deleted afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from service.runtime.config import PROJECT_ROOT, Settings
from service.worker.config import make_celery

#: The broker the tests use; None for the filesystem transport.
BROKER_URL = os.environ.get("TEST_CELERY_BROKER_URL") or None


def with_broker(settings: Settings, data_dir: Path) -> Settings:
    """``settings`` on the test broker, with a queue of their own."""
    return replace(
        settings,
        celery_broker_url=BROKER_URL,
        celery_result_backend=None,
        celery_queue=f"vegas-test-{uuid.uuid4().hex[:12]}",
        data_dir=data_dir,
    )


def new_data_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="vegas-test-"))


def worker_environment(settings: Settings, **extra: str) -> dict[str, str]:
    """What `make run`'s processes would read, pointed at these settings."""
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": settings.database_url or "",
        "AUDIT_DATABASE_URL": settings.audit_database_url or "",
        "BACKGROUND_DATABASE_URL": settings.background_database_url or "",
        "DATA_DIR": str(settings.data_dir),
        "SEED_ENCRYPTION_KEYS": ",".join(settings.seed_keys),
        "CELERY_QUEUE": settings.celery_queue,
        "BIG_WIN_THRESHOLD": str(settings.big_win_threshold),
        **extra,
    }
    if settings.anchor_key_file is not None:
        env["ANCHOR_SIGNING_KEY_FILE"] = str(settings.anchor_key_file)
    if settings.celery_broker_url:
        env["CELERY_BROKER_URL"] = settings.celery_broker_url
    else:
        env.pop("CELERY_BROKER_URL", None)
    env.pop("CELERY_RESULT_BACKEND", None)
    return env


@contextmanager
def celery_processes(settings: Settings, *, beat: bool = False, **extra: str) -> Iterator[None]:
    """A worker (and beat) for ``settings``, stopped (and its queue deleted) on the way out."""
    env = worker_environment(settings, **extra)
    celery = [sys.executable, "-m", "celery", "-A", "service.worker.app"]
    log_dir = settings.data_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    commands = [
        [
            *celery,
            "worker",
            "--pool=solo",
            "-Q",
            settings.celery_queue,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
            f"--logfile={log_dir / 'worker.log'}",
        ]
    ]
    if beat:
        commands.append(
            [
                *celery,
                "beat",
                f"--schedule={settings.data_dir / 'beat-schedule'}",
                "--loglevel=INFO",
                f"--logfile={log_dir / 'beat.log'}",
            ]
        )
    processes = [
        subprocess.Popen(command, env=env, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL)
        for command in commands
    ]
    try:
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        delete_queue(settings)


def delete_queue(settings: Settings) -> None:
    """Drop the run's queue from the broker (the filesystem transport's folder goes with the
    data folder)."""
    if not settings.celery_broker_url:
        return
    app = make_celery(settings)
    with app.connection_for_write() as conn:
        conn.default_channel.queue_delete(settings.celery_queue)


def logs(settings: Settings) -> str:
    """The processes' logs, for a failing test's message."""
    found = []
    for path in sorted((settings.data_dir / "logs").glob("*.log")):
        found.append(f"--- {path.name}\n{path.read_text()[-4000:]}")
    return "\n".join(found)


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, every: float = 0.2) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()
