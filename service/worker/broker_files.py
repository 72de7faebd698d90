"""kombu's filesystem transport (the broker of `make run` when none is configured), with each
message written under a name no consumer reads and then renamed into the queue, so that a
consumer never takes a message before it is whole.

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


class Transport(filesystem.Transport):
    Channel = Channel
