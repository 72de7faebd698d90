"""PostgreSQL servers of a test's or a drill's own, from pgserver's binaries (the embedded
database's): a primary and its streaming replica for the replica tests, the database host of the
host drill. Started by pg_ctl, as the system user pgserver runs PostgreSQL as when the tests
run as root (PostgreSQL refuses root)."""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
    import pgserver
    from pgserver.utils import ensure_user_exists

PG_BIN = Path(pgserver.__file__).parent / "pginstall" / "bin"
#: The system user pgserver itself runs PostgreSQL as under root.
PG_USER = "pgserver"


def system_user() -> str | None:
    """Whom to run PostgreSQL's programs as: pgserver's user under root, else ourselves."""
    if os.geteuid() != 0:
        return None
    ensure_user_exists(PG_USER)
    return PG_USER


def pg(program: str, *args: str) -> None:
    """One of PostgreSQL's programs, as system_user()."""
    subprocess.run(
        [str(PG_BIN / program), *args],
        check=True,
        capture_output=True,
        timeout=120,
        user=system_user(),
    )


def shared_folder(folder: Path) -> Path:
    """``folder`` made, and open to PostgreSQL's user (it runs as another user under root)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o777)
    return folder


def init_cluster(pgdata: Path, *trusted: str) -> None:
    """A new cluster in ``pgdata``: trust for local sockets (and replication over them), and for
    each network in ``trusted`` (CIDR), as the development servers trust their logins."""
    pg("initdb", "-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    with (pgdata / "pg_hba.conf").open("a") as hba:
        for network in trusted:
            hba.write(f"host all all {network} trust\nhost replication all {network} trust\n")


class LocalServer:
    """A cluster listening on a socket folder of its own only (no TCP), started and stopped
    with pg_ctl."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self.socket_dir = pgdata.parent / f"{pgdata.name}-socket"

    def url(self, dbname: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@/{dbname}?host={self.socket_dir}"

    def start(self) -> None:
        shared_folder(self.socket_dir)
        options = f"-h '' -k {self.socket_dir} -c max_connections=100"
        pg("pg_ctl", "-D", str(self.pgdata), "-w", "-o", options, "-l", str(self.log), "start")

    @property
    def log(self) -> Path:
        return self.pgdata.parent / f"{self.pgdata.name}.log"

    def stop(self) -> None:
        pg("pg_ctl", "-D", str(self.pgdata), "-w", "-m", "fast", "stop")

    def running(self) -> bool:
        done = subprocess.run(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.pgdata), "status"],
            capture_output=True,
            check=False,
            user=system_user(),
        )
        return done.returncode == 0

    def replica(self, pgdata: Path) -> LocalServer:
        """A streaming replica of this server in ``pgdata``, copied by pg_basebackup (which
        writes its primary_conninfo and standby.signal), not yet started."""
        pg("pg_basebackup", "-d", self.url(), "-D", str(pgdata), "-R", "-X", "stream", "-c", "fast")
        return LocalServer(pgdata)
