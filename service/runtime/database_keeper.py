"""The embedded PostgreSQL's keeper of `make run`: ``python -m service.runtime.database_keeper``.

Every process joins the embedded server in the data folder (service/runtime/database.py), and
pgserver stops it when the last of them exits normally; a process killed with -9 never says it left,
so the server would run on for ever. The keeper is supervised like the others: it starts (or joins)
the server, and when the supervisor stops it (Ctrl-C, SIGTERM, or the supervisor's death) it stops
the server with a fast shutdown, which ends every session cleanly, once the service's other
processes (stopped at the same moment, in the same supervisor group) have closed their sessions,
or after STOP_WAIT seconds at most. Killed alone, it is restarted and
joins the still-running server, so the API never notices. With DATABASE_URL set there is nothing to
keep: it exits at once, and the supervisor leaves it stopped.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time

import psycopg

from service.runtime import logs
from service.runtime.config import Settings
from service.runtime.database import embedded_server, stop_embedded_server

log = logging.getLogger("service.runtime.database_keeper")

#: How long a stop waits for the other processes' sessions to close before the fast shutdown.
STOP_WAIT = 10.0
# The sessions of the service's other processes (client backends other than this one's).
SESSIONS_SQL = """
SELECT count(*) FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
"""


def _wait_for_sessions(url: str) -> None:
    """Until no other process holds a session (they stop with the keeper), at most STOP_WAIT."""
    deadline = time.monotonic() + STOP_WAIT
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
            while time.monotonic() < deadline:
                row = conn.execute(SESSIONS_SQL).fetchone()
                if row is None or row[0] == 0:
                    return
                time.sleep(0.05)
        log.warning(
            "sessions still open after %.0f s: stopping the database all the same", STOP_WAIT
        )
    except psycopg.Error:
        log.warning("could not see the sessions: stopping the database now", exc_info=True)


def main() -> int:
    logs.configure()
    settings = Settings.from_env()
    if settings.database_url:
        log.info("DATABASE_URL is set: no embedded database to keep")
        return 0
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = embedded_server(settings.data_dir)
    log.info("embedded PostgreSQL running in %s", server.pgdata)
    stop.wait()
    _wait_for_sessions(server.get_uri())
    stop_embedded_server(server)
    log.info("embedded PostgreSQL stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
