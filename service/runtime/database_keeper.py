"""The embedded PostgreSQL's keeper of `make run`: ``python -m service.runtime.database_keeper``.

Every process joins the embedded server in the data folder (service/runtime/database.py), and
pgserver stops it when the last of them exits normally; a process killed with -9 never says it left,
so the server would run on for ever. The keeper is supervised like the others: it starts (or joins)
the server, and when the supervisor stops it (Ctrl-C, SIGTERM, or the supervisor's death) it stops
the server with a fast shutdown, which ends every session cleanly. Killed alone, it is restarted and
joins the still-running server, so the API never notices. With DATABASE_URL set there is nothing to
keep: it exits at once, and the supervisor leaves it stopped.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from service.runtime.config import Settings
from service.runtime.database import embedded_server, stop_embedded_server

log = logging.getLogger("service.runtime.database_keeper")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
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
    stop_embedded_server(server)
    log.info("embedded PostgreSQL stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
