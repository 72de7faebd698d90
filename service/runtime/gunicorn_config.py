"""gunicorn settings for `make run` (override with the environment variables named here)."""

import multiprocessing
import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Threaded workers keep client connections alive; each thread takes a pooled connection (one
# at a time: DB_POOL_MAX, 10 by default, leaves room). 4 workers x 4 threads was chosen on the
# 2-core machine by `make bench SUITES=http`-style runs of game commands at 32 connections
# (November 2026): 4x4 709/s, 3x6 563/s, 2x8 487/s, 8x1 473/s, 12x1 469/s.
worker_class = "gthread"
workers = int(os.environ.get("WEB_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
threads = int(os.environ.get("WEB_THREADS", "4"))
timeout = 30
graceful_timeout = 20
keepalive = 5
accesslog = "-" if os.environ.get("ACCESS_LOG") else None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
