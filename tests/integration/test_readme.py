"""The README's quickstart ("Play one game with curl"), taken from README.md itself and run
with bash against the service as `make run` starts it: every command answers, on any deal."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from service.runtime.config import PROJECT_ROOT, Settings
from tests.integration.test_supervision import _environment, supervised

BIN = Path(sys.executable).parent


def quickstart() -> str:
    readme = (PROJECT_ROOT / "README.md").read_text()
    section = readme[readme.index("## Play one game with curl") :]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_the_readme_s_quickstart_plays_a_game_through(settings: Settings, tmp_path: Path) -> None:
    env = _environment(settings, tmp_path, embedded=False)
    with supervised(env, tmp_path) as service:
        script = (
            quickstart()
            .replace(".venv/bin/", f"{BIN}/")
            .replace("API=http://127.0.0.1:8000", f"API=http://127.0.0.1:{service.port}")
        )
        assert "export APP_ENV=development" in script
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            env=env | {"MIGRATION_DATABASE_URL": settings.migration_database_url or ""},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=PROJECT_ROOT,
        )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "/problems/" not in ran.stdout, ran.stdout[-2000:]
    assert '"balance"' in ran.stdout
    assert '"status":"collected"' in ran.stdout.replace(" ", "")  # the history's line
