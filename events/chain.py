"""The hash chain that makes any edit of stored history detectable.

Each event's hash is SHA-256 over the previous event's hash (of the same stream; 64 zeros for
a stream's first event) and a canonical encoding of the event: these lines joined by "\\n",

    previous hash (hex)
    stream id
    version
    event id (lowercase, hyphenated UUID)
    type
    schema version
    recorded at: UTC, "YYYY-MM-DDTHH:MM:SS.ffffffZ"
    data as canonical JSON
    metadata as canonical JSON

where canonical JSON has keys sorted, no whitespace and only ASCII (``json.dumps`` with
``sort_keys=True, separators=(",", ":"), ensure_ascii=True``). The PostgreSQL store computes the
same encoding in SQL when it appends (the timestamp comes from the database clock);
:func:`verify` recomputes it here, independently, from what was stored.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from events.json_text import canonical_json
from events.records import RecordedEvent

GENESIS = "0" * 64


def timestamp_text(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_hash(
    prev_hash: str,
    stream_id: str,
    version: int,
    event_id: uuid.UUID,
    type_name: str,
    schema_version: int,
    recorded_at: datetime,
    data_json: str,
    metadata_json: str,
) -> str:
    lines = (
        prev_hash,
        stream_id,
        str(version),
        str(event_id),
        type_name,
        str(schema_version),
        timestamp_text(recorded_at),
        data_json,
        metadata_json,
    )
    return hashlib.sha256("\n".join(lines).encode("ascii")).hexdigest()


def hash_of(record: RecordedEvent) -> str:
    """Recompute a stored event's hash from its stored fields."""
    return event_hash(
        record.prev_hash,
        record.stream_id,
        record.version,
        record.event_id,
        record.type,
        record.schema_version,
        record.recorded_at,
        canonical_json(record.data),
        canonical_json(record.metadata),
    )


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first stored event that does not match the chain, and why."""

    stream_id: str
    version: int
    position: int
    problem: str
    expected: str
    found: str


def verify(records: Iterable[RecordedEvent]) -> ChainBreak | None:
    """Walk events (one stream, or the whole log in position order) and report the first one
    whose hash, previous-hash link or version sequence does not hold; None if all hold."""
    heads: dict[str, tuple[int, str]] = {}  # stream -> (last version, last hash)
    for record in records:
        last_version, last_hash = heads.get(record.stream_id, (0, GENESIS))
        if record.version != last_version + 1:
            return ChainBreak(
                record.stream_id,
                record.version,
                record.position,
                "version-gap",
                str(last_version + 1),
                str(record.version),
            )
        if record.prev_hash != last_hash:
            return ChainBreak(
                record.stream_id,
                record.version,
                record.position,
                "prev-hash-mismatch",
                last_hash,
                record.prev_hash,
            )
        recomputed = hash_of(record)
        if recomputed != record.hash:
            return ChainBreak(
                record.stream_id,
                record.version,
                record.position,
                "hash-mismatch",
                recomputed,
                record.hash,
            )
        heads[record.stream_id] = (record.version, record.hash)
    return None
