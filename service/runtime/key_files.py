"""Keys the development set-up generates into the data folder on first use (production is
given its keys by configuration)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def generated_once(path: Path, make: Callable[[], bytes]) -> bytes:
    """The key in ``path``, made with ``make`` and written (readable by this user only) if
    missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL: if two processes race, one writes and the other reads what it wrote.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(make())
    return path.read_bytes()
