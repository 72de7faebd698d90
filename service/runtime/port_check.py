"""Whether `make run`'s port is free, before anything is installed or started (the standard
library only: `make run` runs it with the machine's Python first).

    python service/runtime/port_check.py      # exit 2 and say so if HOST:PORT is taken
"""

from __future__ import annotations

import os
import socket
import sys


def port_taken(host: str, port: int) -> bool:
    """Whether another program listens on host:port (bound as gunicorn binds it)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def check(env: dict[str, str]) -> None:
    """Exit 2, naming the port, if HOST:PORT (127.0.0.1:8000) is in use."""
    host, port = env.get("HOST") or "127.0.0.1", int(env.get("PORT") or "8000")
    if port_taken(host, port):
        sys.exit(
            f"make run: {host}:{port} is in use (another instance of the service, or another "
            "program): nothing was started. Stop it, or set PORT to a free port."
        )


if __name__ == "__main__":
    check(dict(os.environ))
