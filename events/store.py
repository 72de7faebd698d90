"""The event store interface, and an in-memory store that honours it for fast unit tests.

One contract test suite (tests/contract) runs against this store and the PostgreSQL one.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from events.chain import GENESIS, event_hash
from events.json_text import canonical_json
from events.records import STREAM_ID, ConcurrencyConflict, NewEvent, RecordedEvent


class EventStore(Protocol):
    def append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> list[RecordedEvent]:
        """Append events to a stream now at ``expected_version`` (0 for a new stream), all or
        none; raise ConcurrencyConflict if the stream is at any other version."""
        ...

    def read_stream(
        self, stream_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """A stream's events with after_version < version <= to_version, in order."""
        ...

    def read_streams(self, stream_ids: Sequence[str]) -> dict[str, list[RecordedEvent]]:
        """Whole streams in one read, by stream (a stream with no events is absent)."""
        ...

    def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """The whole log after a position, in position order, at most ``limit`` events."""
        ...

    def stream_version(self, stream_id: str) -> int:
        """The stream's current version; 0 if it has no events."""
        ...


def check_stream_id(stream_id: str) -> None:
    if STREAM_ID.fullmatch(stream_id) is None:
        raise ValueError(f"bad stream id {stream_id!r}")


class InMemoryEventStore:
    """The same contract in a process's memory, with the same hash chain. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._log: list[RecordedEvent] = []
        self._streams: dict[str, list[RecordedEvent]] = {}

    def append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> list[RecordedEvent]:
        check_stream_id(stream_id)
        with self._lock:
            stream = self._streams.get(stream_id, [])
            if len(stream) != expected_version:
                raise ConcurrencyConflict(stream_id, expected_version)
            prev_hash = stream[-1].hash if stream else GENESIS
            recorded_at = datetime.now(UTC)
            added: list[RecordedEvent] = []
            for offset, event in enumerate(events, start=1):
                version = expected_version + offset
                # Store copies, as a database would: later changes to the caller's dicts
                # must not rewrite history.
                data, metadata = copy.deepcopy(event.data), copy.deepcopy(event.metadata)
                digest = event_hash(
                    prev_hash,
                    stream_id,
                    version,
                    event.event_id,
                    event.type,
                    event.schema_version,
                    recorded_at,
                    canonical_json(data),
                    canonical_json(metadata),
                )
                added.append(
                    RecordedEvent(
                        position=len(self._log) + len(added) + 1,
                        stream_id=stream_id,
                        version=version,
                        event_id=event.event_id,
                        type=event.type,
                        schema_version=event.schema_version,
                        data=data,
                        metadata=metadata,
                        recorded_at=recorded_at,
                        prev_hash=prev_hash,
                        hash=digest,
                    )
                )
                prev_hash = digest
            self._streams[stream_id] = stream + added
            self._log.extend(added)
            return list(added)

    def read_stream(
        self, stream_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[RecordedEvent]:
        with self._lock:
            stream = self._streams.get(stream_id, [])
            end = len(stream) if to_version is None else min(to_version, len(stream))
            return stream[after_version:end]

    def read_streams(self, stream_ids: Sequence[str]) -> dict[str, list[RecordedEvent]]:
        with self._lock:
            return {s: list(self._streams[s]) for s in stream_ids if self._streams.get(s)}

    def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        with self._lock:
            return self._log[after_position : after_position + limit]

    def stream_version(self, stream_id: str) -> int:
        with self._lock:
            return len(self._streams.get(stream_id, []))
