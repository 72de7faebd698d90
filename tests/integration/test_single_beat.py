"""One beat's schedule at a time (issue 25): beat processes on any number of hosts send periodic
work only while they lead, a PostgreSQL session advisory lock held on a connection of its own
(service/storage/leadership.py, service/worker/single_beat.py); when the leader's session ends
without a goodbye (its host gone), another takes over. Through the real PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from celery.beat import ScheduleEntry

from service.runtime.config import Settings
from service.storage.leadership import Leadership
from service.worker.config import make_celery
from service.worker.single_beat import SingleBeat

DbConn = psycopg.Connection[tuple[object, ...]]

# Every leadership session of this database that holds an advisory lock: the leader's.
LEADERS_SQL = """
SELECT a.pid
  FROM pg_stat_activity a
  JOIN pg_locks l ON l.pid = a.pid
 WHERE a.application_name = 'vegas-leadership'
   AND a.datname = current_database()
   AND l.locktype = 'advisory' AND l.granted
"""


def _within(seconds: float, check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _cut_off_the_leader(admin_conn: DbConn) -> None:
    """End the leader's session from the server's side, as its host's loss would."""
    (pid,) = (row[0] for row in admin_conn.execute(LEADERS_SQL).fetchall())
    admin_conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


@pytest.fixture
def role() -> str:
    """A role of the test's own (advisory locks are the database's, shared by the session)."""
    return f"test-{uuid.uuid4()}"


def test_one_process_leads_and_another_takes_over_when_its_session_ends(
    database_url: str, admin_conn: DbConn, role: str
) -> None:
    first, second = Leadership(database_url, role), Leadership(database_url, role)
    try:
        assert first.lead() is True
        assert second.lead() is False
        assert (first.lead(), second.lead()) == (True, False)  # it keeps the role
        _cut_off_the_leader(admin_conn)
        assert _within(5, second.lead)  # the server released the lock: the other takes it
        assert first.lead() is False  # the old leader finds its session gone and follows
        assert second.lead() is True
        second.release()  # a leader that stops hands over at once
        assert first.lead() is True
    finally:
        first.release()
        second.release()


class _Counting(SingleBeat):
    """A beat that records what it would send instead of sending it."""

    producer = None  # no broker: apply_entry below sends nothing

    def __init__(self, sent: list[str], name: str, *args: Any, **kwargs: Any) -> None:
        self._sent, self._name = sent, name
        super().__init__(*args, **kwargs)

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        self._sent.append(self._name)


def test_of_two_beats_only_the_leader_sends_and_the_other_takes_over(
    settings: Settings, database_url: str, admin_conn: DbConn, role: str, tmp_path: Path
) -> None:
    app = make_celery(settings)
    app.conf.beat_schedule = {"often": {"task": "vegas.resume_audits", "schedule": 0.05}}
    sent: list[str] = []
    beats = {
        name: _Counting(
            sent,
            name,
            app=app,
            schedule_filename=str(tmp_path / f"beat-{name}"),
            leadership=Leadership(database_url, role),
        )
        for name in ("a", "b")
    }
    try:

        def run(seconds: float) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                for beat in beats.values():
                    beat.tick()
                time.sleep(0.06)

        run(1.0)
        assert len(sent) >= 5
        leader = sent[0]
        assert set(sent) == {leader}  # the other beat sent nothing
        _cut_off_the_leader(admin_conn)
        sent.clear()
        follower = ({"a", "b"} - {leader}).pop()
        beats[follower].follower_wait = 0.0
        run(1.0)
        assert follower in sent  # the other took over within the second
        assert sent[-1] == follower
        assert sent.count(leader) <= 1  # at most the tick before it noticed
    finally:
        for beat in beats.values():
            beat.close()
