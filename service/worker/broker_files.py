"""kombu's filesystem transport (the broker of `make run` when none is configured), with each
message written under a name no consumer reads and then renamed into the queue, so that a
consumer never takes a message before it is whole; and a worker's wait for messages cut into
short waits, so that a stop is noticed within a quarter of a second (Celery's loop for such a
transport waits 2 s at a time, and looks for a stop only in between).

kombu's own transport creates the message file under its final name and then writes it: a
worker polling the folder in between moves the empty file away and dies decoding it
("Expecting value: line 1 column 1", kombu issue #1551; seen here with two workers).
A rename within one folder is atomic on POSIX and Windows alike.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Put ``payload`` onto ``queue``: written whole, then renamed into place."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        # A leading dot and a suffix: no queue's consumer matches this name.
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb") as f:
                f.write(dumps(payload).encode())  # type: ignore[no-untyped-call]
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


#: The longest one wait for messages lasts (it polls every 0.1 s within it).
LONGEST_WAIT = 0.25


class Transport(filesystem.Transport):
    Channel = Channel

    def drain_events(self, connection: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Wait for messages as kombu's transport does, for at most LONGEST_WAIT at a time
        (a caller asking for longer asks again); with no timeout, as long as it takes."""
        timeout = kwargs.get("timeout")
        if timeout is not None:
            kwargs["timeout"] = min(timeout, LONGEST_WAIT)
        return super().drain_events(connection, **kwargs)  # type: ignore[no-untyped-call]
