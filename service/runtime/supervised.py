"""Run a command that dies with its supervisor: ``python -m service.runtime.supervised CMD ...``.

supervisord (service/runtime/supervisord.conf) starts every process of `make run` through this. It
asks Linux to send the process SIGTERM when its parent dies (PR_SET_PDEATHSIG), then becomes the
command (exec, so the setting and the pid carry over). A supervisor killed with -9 therefore takes
gunicorn, the Celery worker and beat down with it instead of leaving them holding the port;
gunicorn's own workers and Celery's pool already watch their parent.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: signal.Signals = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` when the parent process dies (Linux; elsewhere nothing).
    Exits at once if the parent is already gone, which the setting cannot catch."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        sys.exit(f"{sys.argv[1:]}: the supervisor died before it started")


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m service.runtime.supervised COMMAND [ARGS...]")
    die_with_parent()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
