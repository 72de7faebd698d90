"""Leadership of one role among processes on any number of hosts: a PostgreSQL session advisory
lock held on a connection of its own. The server releases it when that session ends (the
process dies, its host goes, the connection is cut), and another process takes the role on its
next try. Used by the beat (service/worker/single_beat.py) so that one schedule runs however
many beat processes are started."""

from __future__ import annotations

import logging

import psycopg

log = logging.getLogger(__name__)

# Take the role's lock if no other session holds it; never waits. The key is the role's name
# hashed, as the provisioning lock's is (a different name, so a different key).
TAKE_SQL = "SELECT pg_try_advisory_lock(hashtext(%(role)s))"

# A session that holds the lock holds it until it ends: asking anything of the connection
# proves the session (and so the lock) is still there.
STILL_HERE_SQL = "SELECT 1"

# The server checks the lock holder's connection every few seconds when it is idle, so a
# holder cut off without a goodbye (its host gone) loses the lock in about 20 s rather than
# the operating system's default of two hours.
KEEPALIVE_SQL = (
    "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 2"
)

#: The client gives up on a silent server as quickly (libpq's own keepalives), and never waits
#: long to connect: a follower asks again on its next tick.
CONNECT = {
    "autocommit": True,
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 2,
    "application_name": "vegas-leadership",
}


class Leadership:
    """Whether this process holds ``role``, asked as often as the caller likes (a query each
    time)."""

    def __init__(self, url: str, role: str) -> None:
        self._url = url
        self._role = role
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._leading = False

    def lead(self) -> bool:
        """True while this process holds the role: it takes it when free, keeps it while its
        session lasts, and loses it (and asks again next time) when the session has gone."""
        try:
            if self._leading and self._conn is not None:
                self._conn.execute(STILL_HERE_SQL)
                return True
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(self._url, **CONNECT)  # type: ignore[arg-type]
                self._conn.execute(KEEPALIVE_SQL)
            row = self._conn.execute(TAKE_SQL, {"role": self._role}).fetchone()
            self._leading = bool(row and row[0])
            if self._leading:
                log.info("this process now leads %s", self._role)
            return self._leading
        except psycopg.Error as lost:
            if self._leading:
                log.warning("this process no longer leads %s: %s", self._role, lost)
            self.release()
            return False

    def release(self) -> None:
        """Give the role up (closing the session releases its lock)."""
        self._leading = False
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
