"""One contract, two event stores: the in-memory one and the PostgreSQL one behave alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from events import chain
from events.catalog import CardDrawn, CardTurned, StockRecycled
from events.records import ConcurrencyConflict, NewEvent, RecordedEvent
from events.store import EventStore, InMemoryEventStore
from service.bootstrap import Container


class CommittingPostgresStore:
    """The PostgreSQL store with each call in its own committed transaction, as a caller that
    does nothing else in the transaction would use it. As the owner: the shape-only append is
    the owner's (migrations/0031), and these streams are of no kind the service records."""

    def __init__(self, container: Container) -> None:
        self._container = container

    def append(
        self, stream_id: str, events: Sequence[NewEvent], expected_version: int
    ) -> list[RecordedEvent]:
        with self._container.owner_unit_of_work() as uow:
            recorded = uow.events.append(stream_id, events, expected_version)
            uow.commit()
            return recorded

    def read_stream(
        self, stream_id: str, *, after_version: int = 0, to_version: int | None = None
    ) -> list[RecordedEvent]:
        with self._container.owner_unit_of_work() as uow:
            return uow.events.read_stream(
                stream_id, after_version=after_version, to_version=to_version
            )

    def read_streams(self, stream_ids: Sequence[str]) -> dict[str, list[RecordedEvent]]:
        with self._container.owner_unit_of_work() as uow:
            return uow.events.read_streams(stream_ids)

    def read_all(self, *, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        with self._container.owner_unit_of_work() as uow:
            return uow.events.read_all(after_position=after_position, limit=limit)

    def stream_version(self, stream_id: str) -> int:
        with self._container.owner_unit_of_work() as uow:
            return uow.events.stream_version(stream_id)


@pytest.fixture(params=["memory", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[EventStore]:
    if request.param == "memory":
        yield InMemoryEventStore()
    else:
        yield CommittingPostgresStore(request.getfixturevalue("container"))


def _drawn(cards: tuple[str, ...]) -> CardDrawn:
    """A draw from the stock onto the waste, as Klondike records it."""
    return CardDrawn("stock", "waste", cards)


def _stream() -> str:
    return f"test-{uuid.uuid4()}"


def _events(*events: Any, actor: str = "tester") -> list[NewEvent]:
    return [NewEvent.of(e, {"actor": actor, "role": "system"}) for e in events]


def test_append_to_a_new_stream_starts_at_version_1(store: EventStore) -> None:
    stream = _stream()
    recorded = store.append(stream, _events(_drawn(("AS",)), CardTurned("tableau:3", "KH")), 0)
    assert [r.version for r in recorded] == [1, 2]
    assert [r.type for r in recorded] == ["CardDrawn", "CardTurned"]
    assert recorded[0].position < recorded[1].position
    assert store.stream_version(stream) == 2
    assert recorded[0].recorded_at == recorded[1].recorded_at  # one append, one clock reading


def test_read_stream_returns_what_was_appended_in_order(store: EventStore) -> None:
    stream = _stream()
    store.append(stream, _events(_drawn(("AS",))), 0)
    store.append(stream, _events(_drawn(("2S",)), StockRecycled(2, 2)), 1)
    records = store.read_stream(stream)
    assert [r.version for r in records] == [1, 2, 3]
    assert [r.decode() for r in records] == [
        _drawn(("AS",)),
        _drawn(("2S",)),
        StockRecycled(2, 2),
    ]
    assert records[0].metadata == {"actor": "tester", "role": "system"}


def test_read_stream_up_to_and_after_a_version(store: EventStore) -> None:
    stream = _stream()
    store.append(stream, _events(*(_drawn((c,)) for c in ("AS", "2S", "3S", "4S"))), 0)
    assert [r.version for r in store.read_stream(stream, to_version=2)] == [1, 2]
    assert [r.version for r in store.read_stream(stream, after_version=2)] == [3, 4]
    assert [r.version for r in store.read_stream(stream, after_version=1, to_version=3)] == [2, 3]
    assert store.read_stream(_stream()) == []


@pytest.mark.parametrize("expected", [0, 2, 5])
def test_append_at_the_wrong_version_is_a_conflict_and_writes_nothing(
    store: EventStore, expected: int
) -> None:
    stream = _stream()
    store.append(stream, _events(_drawn(("AS",))), 0)
    with pytest.raises(ConcurrencyConflict) as exc:
        store.append(stream, _events(_drawn(("2S",)), _drawn(("3S",))), expected)
    assert exc.value.stream_id == stream
    assert exc.value.expected_version == expected
    assert [r.version for r in store.read_stream(stream)] == [1]


def test_two_writers_at_the_same_version_one_wins(store: EventStore) -> None:
    stream = _stream()
    store.append(stream, _events(_drawn(("AS",))), 0)
    store.append(stream, _events(_drawn(("2S",))), 1)
    with pytest.raises(ConcurrencyConflict):
        store.append(stream, _events(_drawn(("3S",))), 1)
    assert [r.decode() for r in store.read_stream(stream)][-1] == _drawn(("2S",))


def test_read_all_is_in_position_order_across_streams(store: EventStore) -> None:
    a, b = _stream(), _stream()
    start = store.read_all(after_position=0, limit=1_000_000)
    after = start[-1].position if start else 0
    store.append(a, _events(_drawn(("AS",))), 0)
    store.append(b, _events(_drawn(("KS",))), 0)
    store.append(a, _events(_drawn(("2S",))), 1)
    records = store.read_all(after_position=after)
    assert [(r.stream_id, r.version) for r in records] == [(a, 1), (b, 1), (a, 2)]
    positions = [r.position for r in records]
    assert positions == sorted(positions)
    assert store.read_all(after_position=after, limit=2) == records[:2]
    assert store.read_all(after_position=positions[0]) == records[1:]


def test_every_event_has_a_unique_id(store: EventStore) -> None:
    stream = _stream()
    recorded = store.append(stream, _events(_drawn(("AS",)), _drawn(("2S",))), 0)
    assert recorded[0].event_id != recorded[1].event_id
    assert all(isinstance(r.event_id, uuid.UUID) for r in recorded)


def test_hash_chain_links_each_event_to_the_one_before(store: EventStore) -> None:
    stream = _stream()
    store.append(stream, _events(_drawn(("AS",)), _drawn(("2S",))), 0)
    store.append(stream, _events(_drawn(("3S",))), 2)
    records = store.read_stream(stream)
    assert records[0].prev_hash == chain.GENESIS
    assert records[1].prev_hash == records[0].hash
    assert records[2].prev_hash == records[1].hash
    # The store's hash is exactly what the published encoding gives, recomputed here.
    assert all(chain.hash_of(r) == r.hash for r in records)
    assert chain.verify(records) is None


def test_verify_reports_the_first_event_that_does_not_match(store: EventStore) -> None:
    stream = _stream()
    store.append(stream, _events(*(_drawn((c,)) for c in ("AS", "2S", "3S"))), 0)
    records = store.read_stream(stream)
    edited = [records[0], _with_data(records[1], {**records[1].data, "cards": ["KS"]}), records[2]]
    found = chain.verify(edited)
    assert found is not None
    assert (found.stream_id, found.version, found.problem) == (stream, 2, "hash-mismatch")
    dropped = chain.verify([records[0], records[2]])
    assert dropped is not None
    assert (dropped.version, dropped.problem) == (3, "version-gap")


def _with_data(record: RecordedEvent, data: dict[str, Any]) -> RecordedEvent:
    from dataclasses import replace

    return replace(record, data=data)


def test_stored_data_is_a_copy(store: EventStore) -> None:
    stream = _stream()
    new = _events(_drawn(("AS",)))
    store.append(stream, new, 0)
    new[0].data["cards"].append("2S")  # the caller changes its dict afterwards
    assert store.read_stream(stream)[0].data == {"from": "stock", "to": "waste", "cards": ["AS"]}


def test_bad_stream_ids_are_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="stream id"):
        store.append("Game 1; DROP TABLE events", _events(_drawn(("AS",))), 0)


def test_several_streams_are_read_whole_in_one_read(store: EventStore) -> None:
    a, b, empty = (_stream() for _ in range(3))
    store.append(a, _events(_drawn(("AS",))), 0)
    store.append(b, _events(_drawn(("2S",)), _drawn(("3S",))), 0)
    store.append(a, _events(_drawn(("4S",))), 1)
    found = store.read_streams([a, b, empty])
    assert found == {a: store.read_stream(a), b: store.read_stream(b)}
    assert [r.version for r in found[a]] == [1, 2]
