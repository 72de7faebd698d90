"""Debian's Chromium and its ChromeDriver for the console's browser tests: installed with
apt-get when missing (as root, on Debian: the only browser this machine's registries offer),
then started headless through Selenium with no download of any other driver."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PACKAGES = ("chromium", "chromium-driver")
INSTALL_TIMEOUT = 900
LOCK = Path(tempfile.gettempdir()) / "vegas-chromium-install.lock"


class BrowserMissing(RuntimeError):
    pass


def ensure_installed() -> None:
    """Install Debian's chromium and chromium-driver unless both are already there (one test
    run at a time installs: two at once would trip over apt's own lock)."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
            _install()


def _install() -> None:
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise BrowserMissing(
            f"the browser tests need {CHROMIUM} and {CHROMEDRIVER}: install Debian's packages "
            f"{' '.join(PACKAGES)} (apt-get install {' '.join(PACKAGES)})"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        [apt, "-q", "update"],
        [apt, "-q", "-y", "install", "--no-install-recommends", *PACKAGES],
    ):
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
        if done.returncode != 0:
            raise BrowserMissing(
                f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )


def start(download_dir: Path) -> webdriver.Chrome:
    """A headless Chromium, with downloads saved to ``download_dir`` without asking."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container
        "--disable-dev-shm-usage",
        "--window-size=1400,1100",
        "--disable-gpu",
    ):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(download_dir),
            "download.prompt_for_download": False,
        },
    )
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
