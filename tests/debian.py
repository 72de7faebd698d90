"""Programs from Debian's packages that a benchmark or a drill needs (wrk, haproxy, redis-server,
iproute2's ip): installed with apt-get when missing and this runs as root on Debian, the only
source this machine's registries offer for them. (The browser tests install Chromium their own
way, under a lock, with apt's output in their error: tests/browser/chromium.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping


def missing_after_install(programs: Mapping[str, str], *, recommends: bool = True) -> list[str]:
    """The Debian packages (``programs`` maps each program to its package) whose program is
    still not on the PATH after apt-get tried to install the missing ones (``recommends``:
    with the packages Debian recommends beside them)."""

    def missing() -> list[str]:
        return [package for program, package in programs.items() if not shutil.which(program)]

    packages = missing()
    if packages and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True, env=env)
        extra = [] if recommends else ["--no-install-recommends"]
        subprocess.run(["apt-get", "install", "-y", "-qq", *extra, *packages], check=False, env=env)
        packages = missing()
    return packages
