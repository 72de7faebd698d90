"""The RTP lab's fan-out survives a worker that dies with a chunk: the chunk is sent again,
answered once, and a fan-out whose workers never answer stops with the reason."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from service.rtp.fanout import LostWork, gather


class Sent:
    def __init__(self, answer: dict[str, int] | None) -> None:
        self.answer = answer  # None: lost with its worker

    def ready(self) -> bool:
        return self.answer is not None

    def get(self, timeout: float | None = None) -> Any:
        assert self.answer is not None
        return self.answer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_lost_chunk_is_sent_again_and_counted_once() -> None:
    clock = Clock()
    sends: list[int] = []

    def send(start: int) -> Sent:
        sends.append(start)
        lost = start == 250 and sends.count(250) == 1  # its first worker was killed
        return Sent(None if lost else {"52": start})

    answers: dict[int, Mapping[str, int]] = {}

    def done(start: int, answer: Mapping[str, int]) -> None:
        assert start not in answers
        answers[start] = answer

    gather(send, [0, 250, 500], on_done=done, resend_after=10, clock=clock, sleep=clock.sleep)
    assert answers == {0: {"52": 0}, 250: {"52": 250}, 500: {"52": 500}}
    assert sends == [0, 250, 500, 250]  # only the lost one again, once nothing came for 10 s
    assert clock.now >= 10


def test_workers_that_never_answer_stop_the_fan_out_with_the_reason() -> None:
    clock = Clock()
    with pytest.raises(LostWork, match="1 chunk"):
        gather(
            lambda start: Sent(None),
            [0],
            on_done=lambda start, answer: None,
            resend_after=5,
            max_resends=2,
            clock=clock,
            sleep=clock.sleep,
        )
    assert clock.now == pytest.approx(15, abs=0.5)  # three quiet stretches: two re-sends
