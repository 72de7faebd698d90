"""What goes into the event store and what comes back out, independent of any backend."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from events import codec
from events.catalog import AnyEvent

#: Stream ids are lowercase words joined by hyphens: "game-<uuid>", "player-<uuid>".
STREAM_ID = re.compile(r"^[a-z][a-z0-9-]{0,99}\Z")


class ConcurrencyConflict(Exception):
    """An append's expected version did not match the stream: someone else wrote first."""

    def __init__(self, stream_id: str, expected_version: int) -> None:
        super().__init__(f"stream {stream_id} is no longer at version {expected_version}")
        self.stream_id = stream_id
        self.expected_version = expected_version


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be appended: its type, schema version, data and metadata as JSON."""

    type: str
    schema_version: int
    data: dict[str, Any]
    metadata: dict[str, Any]
    event_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @classmethod
    def of(cls, event: AnyEvent, metadata: dict[str, Any]) -> NewEvent:
        type_name, version, data = codec.encode(event)
        return cls(type_name, version, data, metadata)


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as stored: where it sits in its stream and in the whole log, and its hashes."""

    position: int  # global, increasing in commit order
    stream_id: str
    version: int  # 1 for a stream's first event
    event_id: uuid.UUID
    type: str
    schema_version: int
    data: dict[str, Any]
    metadata: dict[str, Any]
    recorded_at: datetime  # the database clock, UTC
    prev_hash: str
    hash: str

    def decode(self) -> AnyEvent:
        """The catalog event, upcast to the current schema version."""
        return codec.decode(self.type, self.schema_version, self.data)
