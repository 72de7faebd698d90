"""Without a configured broker, Celery's messages go through folders
(service/worker/broker_files.py): a consumer polling the queue while a message is being written
finds nothing, never a part of it, and finds the whole message once it is put."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from queue import Empty
from typing import Any

import pytest
from kombu.connection import Connection

from service.runtime.config import Settings
from service.worker import broker_files
from service.worker.config import make_celery


@pytest.fixture
def connection(tmp_path: Path) -> Iterator[Connection]:
    app = make_celery(replace(Settings(), data_dir=tmp_path, celery_broker_url=None))
    with app.connection_for_write() as conn:
        yield conn


def test_the_embedded_broker_is_the_whole_message_transport(connection: Connection) -> None:
    assert isinstance(connection.transport, broker_files.Transport)
    assert isinstance(connection.default_channel, broker_files.Channel)


def test_a_consumer_never_takes_a_message_being_written(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel: Any = connection.default_channel
    seen_while_writing: list[Any] = []
    rename = os.replace

    def consumer_polls_then_rename(src: str, dst: str) -> None:
        try:
            seen_while_writing.append(channel._get("audits"))
        except Empty:
            seen_while_writing.append(None)
        rename(src, dst)

    monkeypatch.setattr(os, "replace", consumer_polls_then_rename)
    channel._put("audits", {"body": "x" * 10_000})
    assert seen_while_writing == [None]
    assert channel._get("audits") == {"body": "x" * 10_000}
    with pytest.raises(Empty):
        channel._get("audits")
