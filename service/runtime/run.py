"""What `make run` execs: supervisord with service/runtime/supervisord.conf, in the foreground, with
the environment the configuration reads filled in (the data folder made absolute, so every
process finds the same embedded database, keys and broker whatever its directory)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from service.runtime import metrics, port_check
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


def main(argv: list[str] | None = None) -> None:
    """Start everything (``--check``: only say whether it could: the port free)."""
    argv = sys.argv[1:] if argv is None else argv
    env = environment(dict(os.environ))
    port_check.check(env)  # (make run checked first; a direct start checks too)
    if "--check" in argv:
        return
    Path(env["DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    metrics.prepare_directory(Path(env[metrics.MULTIPROC_ENV]))  # a start's figures are its own
    supervisord = str(Path(sys.executable).parent / "supervisord")
    os.execve(supervisord, [supervisord, "--nodaemon", "--configuration", str(CONFIG)], env)


if __name__ == "__main__":
    main()
