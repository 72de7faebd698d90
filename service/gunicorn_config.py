"""gunicorn settings for `make run` (override with the environment variables named here)."""

import multiprocessing
import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Threaded workers keep client connections alive; each thread takes a pooled connection.
worker_class = "gthread"
workers = int(os.environ.get("WEB_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
threads = int(os.environ.get("WEB_THREADS", "4"))
timeout = 30
graceful_timeout = 20
keepalive = 5
accesslog = "-" if os.environ.get("ACCESS_LOG") else None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
