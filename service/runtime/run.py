"""What `make run` execs: supervisord with service/runtime/supervisord.conf, in the foreground, with
the environment the configuration reads filled in (the data folder made absolute, so every
process finds the same embedded database, keys and broker whatever its directory)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from service.runtime import metrics
from service.runtime.config import PROJECT_ROOT

CONFIG = Path(__file__).resolve().parent / "supervisord.conf"


def environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` with what the supervisord configuration reads, defaults filled in."""
    data_dir = Path(env.get("DATA_DIR") or PROJECT_ROOT / ".data").resolve()
    bin_dir = Path(sys.executable).parent
    return env | {
        "DATA_DIR": str(data_dir),
        "PROJECT_ROOT": str(PROJECT_ROOT),
        "PYTHON": sys.executable,
        "BIN": str(bin_dir),
        "WORKER_CONCURRENCY": env.get("WORKER_CONCURRENCY") or "2",
        "CELERY_QUEUE": env.get("CELERY_QUEUE") or "vegas",
        # Every process's metrics in one folder, served by the web's GET /metrics.
        metrics.MULTIPROC_ENV: str(data_dir / "metrics"),
    }


def port_taken(host: str, port: int) -> bool:
    """Whether another program listens on host:port (bound as gunicorn binds it)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    """Start everything (``--check``: only say whether it could: the port free)."""
    argv = sys.argv[1:] if argv is None else argv
    env = environment(dict(os.environ))
    host, port = env.get("HOST") or "127.0.0.1", int(env.get("PORT") or "8000")
    if port_taken(host, port):
        sys.exit(
            f"make run: {host}:{port} is in use (another instance of the service, or another "
            "program): nothing was started. Stop it, or set PORT to a free port."
        )
    if "--check" in argv:
        return
    Path(env["DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    metrics.prepare_directory(Path(env[metrics.MULTIPROC_ENV]))  # a start's figures are its own
    supervisord = str(Path(sys.executable).parent / "supervisord")
    os.execve(supervisord, [supervisord, "--nodaemon", "--configuration", str(CONFIG)], env)


if __name__ == "__main__":
    main()
