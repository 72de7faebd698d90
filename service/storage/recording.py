"""The service's one way to append to the log (migrations/0031): record_events, as the holder
of the credential the request presented (None for the service's own tasks). The database checks
the stream's kind, each event's type, who asks and what the event means, then appends as
append_events does; the shape-only append_events is the owner's alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from events.postgres import append_params, send_appending
from events.records import NewEvent, RecordedEvent

# Append at the expected version as the credential's holder (unique_violation at any other head;
# insufficient_privilege or check_violation, naming the rule, for an event the holder may not
# record); the recorded events come back as append_events returns them.
RECORD_SQL = """
SELECT position, version, recorded_at, prev_hash, hash
  FROM record_events(%(credential)s, %(stream_id)s, %(expected_version)s, %(events)s)
"""


class Recorder:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def append(
        self,
        credential: str | None,
        stream_id: str,
        events: Sequence[NewEvent],
        expected_version: int,
    ) -> list[RecordedEvent]:
        params = append_params(stream_id, events, expected_version)
        params["credential"] = credential
        return send_appending(self._conn, RECORD_SQL, params).records()
