"""Run a command that dies with its supervisor: ``python -m service.runtime.supervised CMD ...``
(``--json-lines CMD ...``: and every line it writes a JSON object).

supervisord (service/runtime/supervisord.conf) starts every process of `make run` through this. It
asks Linux to send the process SIGTERM when its parent dies (PR_SET_PDEATHSIG), then becomes the
command (exec, so the setting and the pid carry over). A supervisor killed with -9 therefore takes
gunicorn, the Celery worker and beat down with it instead of leaving them holding the port;
gunicorn's own workers and Celery's pool already watch their parent.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from datetime import UTC, datetime
from typing import BinaryIO

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


def json_lines(name: str) -> None:
    """From here on, whatever this process (and what it execs) writes to standard output and
    error goes through a pipe to a small filter process, which writes each line out as it is if
    it is a JSON object already, else wrapped in one (Celery prints a few lines of its own, such
    as its shutdown's, past any logging configuration). The filter ignores the stop signals a
    process group gets and ends when the pipe closes: with the command, after its last line."""
    read, write = os.pipe()
    if os.fork() == 0:  # the filter
        os.close(write)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)
        _filter(name, os.fdopen(read, "rb"), sys.stdout.buffer)
        os._exit(0)
    os.close(read)
    os.dup2(write, 1)
    os.dup2(write, 2)
    os.close(write)


def _filter(name: str, lines: BinaryIO, out: BinaryIO) -> None:
    for raw in lines:
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            continue
        if line.startswith(b"{"):
            try:
                if isinstance(json.loads(line), dict):
                    out.write(line + b"\n")
                    out.flush()
                    continue
            except ValueError:
                pass
        wrapped = {
            "time": datetime.now(UTC).isoformat(),
            "level": "INFO",
            "logger": f"{name}.output",
            "process": os.getppid(),
            "message": line.decode("utf-8", errors="replace"),
        }
        out.write(json.dumps(wrapped).encode() + b"\n")
        out.flush()


def main(argv: list[str]) -> None:
    if argv[:1] == ["--json-lines"]:
        argv = argv[1:]
        if argv:
            json_lines(os.path.basename(argv[0]))
    if not argv:
        sys.exit("usage: python -m service.runtime.supervised [--json-lines] COMMAND [ARGS...]")
    die_with_parent()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
