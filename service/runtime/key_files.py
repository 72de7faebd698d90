"""Keys the development set-up generates into the data folder on first use (production is
given its keys by configuration)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def generated_once(path: Path, make: Callable[[], bytes]) -> bytes:
    """The key in ``path``, made with ``make`` and written (readable by this user only) if
    missing. Processes that race (gunicorn's workers booting together) all end with the one
    key that was linked in first: the key is written whole to a file of its own and then linked
    to ``path``, which never exists half-written."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, written = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(make())
                out.flush()
                os.fsync(out.fileno())
            os.link(written, path)  # atomic, and never over a key already there
        except FileExistsError:
            pass  # another process's key is in place: that one is read below
        finally:
            os.unlink(written)
    return path.read_bytes()
