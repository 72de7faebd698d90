"""Fanning RTP chunks out to the Celery workers and gathering them, surviving a worker that
dies with a chunk: with the filesystem transport a message fetched by a killed worker is gone,
so a chunk whose answer does not come is sent again. Chunks are pure and seeded, so a chunk
answered twice gives the same answer and the first one is taken."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol


class Pending(Protocol):
    """The part of Celery's AsyncResult used here."""

    def ready(self) -> bool: ...

    def get(self, timeout: float | None = None) -> Any: ...


class LostWork(Exception):
    """Chunks never answered, even after re-sending them."""


def gather(
    send: Callable[[int], Pending],
    starts: Sequence[int],
    *,
    on_done: Callable[[int, Mapping[str, int]], None],
    resend_after: float = 300.0,
    max_resends: int = 3,
    poll: float = 0.2,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Send every chunk (``send(start)``), call ``on_done(start, answer)`` once per chunk as
    answers come, and send again every chunk still unanswered when nothing has been answered
    for ``resend_after`` seconds; LostWork after ``max_resends`` re-sends without progress."""
    waiting: dict[int, list[Pending]] = {start: [send(start)] for start in starts}
    progress_at = clock()
    resends = 0
    while waiting:
        answered = False
        for start, sent in list(waiting.items()):
            done = next((p for p in sent if p.ready()), None)
            if done is not None:
                on_done(start, done.get(timeout=0))
                del waiting[start]
                answered = True
        if answered:
            progress_at, resends = clock(), 0
            continue
        if clock() - progress_at >= resend_after:
            if resends >= max_resends:
                raise LostWork(
                    f"{len(waiting)} chunk(s) never answered after {resends} re-sends "
                    f"(first at deal {min(waiting)}): are the workers running?"
                )
            resends += 1
            for start, sent in waiting.items():
                sent.append(send(start))
            progress_at = clock()
        sleep(poll)
