"""gunicorn settings for `make run` (override with the environment variables named here)."""

import multiprocessing
import os
from typing import Any

from service.runtime import balanced_worker, logs, metrics

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Threaded workers keep client connections alive; each thread takes a pooled connection (one
# at a time: DB_POOL_MAX, 10 by default, leaves room). One worker a core, 4 threads each, was
# chosen on the 2-core machine by interleaved runs of `make bench SUITES=http`'s /healthz and
# plays at 32 connections (November 2026, workers x threads: plays/s, p99): 2x4 1,227-1,241/s,
# 37-43 ms; 2x3 1,136-1,208/s, 38-46 ms; 2x6 1,291/s, 41 ms; 2x8 1,137-1,227/s, 48-52 ms;
# 3x4 1,166-1,196/s, 55-57 ms; 4x4 900-1,162/s, 57-80 ms. A worker runs Python one thread at a
# time, so more workers than cores only add switching. The workers share the kept-alive
# connections out evenly (service/runtime/balanced_worker.py): gthread's own leave them where
# they happen to land.
worker_class = "service.runtime.balanced_worker.BalancedThreadWorker"
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count()))
threads = int(os.environ.get("WEB_THREADS", "4"))
timeout = 30
graceful_timeout = 20
keepalive = 5
# One JSON line a request is the app's own (service/api/metrics.py Measured, with its request
# id, who asked, the route and the problem); gunicorn's own lines are JSON too.
accesslog = None
loglevel = os.environ.get("LOG_LEVEL", "info")
logconfig_dict = logs.gunicorn_config()


def child_exit(server: Any, worker: Any) -> None:
    """In the master, as a worker exits: its slot in the connection table is free again, and
    its live figures (the pool's) no longer count."""
    balanced_worker.release(worker.pid)
    metrics.process_exited(worker.pid)
