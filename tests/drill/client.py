"""HTTP with retries, as a careful casino front-end does it: every state-changing request has
its own Idempotency-Key (also sent as X-Request-Id, so the events it writes can be traced back
to it), and is sent again with the same key and the same body after a connection error, a
timeout or a 5xx, until it gets a definitive answer or its deadline passes. Every attempt goes
on a shared timeline, from which the drill reads when the service answered again after a
fault."""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests

#: (connect, read) timeouts of one attempt. The read timeout is above gunicorn's 30 s worker
#: timeout, so a hung request shows up as a worker restart rather than a client guess.
ATTEMPT_TIMEOUT = (3.0, 35.0)
#: The header a load balancer in front of several hosts puts on its own error answers
#: (tests/drill/hosts.py), so a host dying under a request is not taken for the service's 5xx.
GATEWAY_ERROR = "X-Gateway-Error"
#: The body argument meaning "send no body at all".
NO_BODY: Any = object()


@dataclass(frozen=True)
class Attempt:
    sent: float  # time.monotonic()
    done: float
    #: ok (2xx), refused (4xx), unavailable (503), error (other 5xx), connection, timeout,
    #: gateway (the load balancer's own error: no host could take or finish the request)
    outcome: str
    path: str


@dataclass
class Timeline:
    """Every attempt of every client, for recovery times and error counts."""

    attempts: list[Attempt] = field(default_factory=list)
    #: 500-class answers other than 503: each one is a bug (method, path, status, text).
    server_errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, attempt: Attempt) -> None:
        with self._lock:
            self.attempts.append(attempt)

    def add_server_error(self, text: str) -> None:
        with self._lock:
            self.server_errors.append(text)

    def snapshot(self) -> list[Attempt]:
        with self._lock:
            return list(self.attempts)

    def first_ok_after(self, moment: float) -> Attempt | None:
        """The first successful attempt sent at or after ``moment`` (by when it finished)."""
        found = [a for a in self.snapshot() if a.outcome == "ok" and a.sent >= moment]
        return min(found, key=lambda a: a.done) if found else None

    def failures(self, start: float, end: float) -> list[Attempt]:
        """Attempts sent in [start, end] that got no answer or a 5xx."""
        return [
            a
            for a in self.snapshot()
            if start <= a.sent <= end and a.outcome not in ("ok", "refused")
        ]


@dataclass(frozen=True)
class Answer:
    request_id: str
    #: None: no definitive answer before the deadline.
    status: int | None
    body: Any
    #: The service answered from its idempotency record: an earlier attempt had applied it.
    replayed: bool
    attempts: int

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Api:
    """One client's connection to the service (a requests.Session is not thread-safe)."""

    def __init__(self, base: str, timeline: Timeline, deadline: float) -> None:
        self.base = base
        self.timeline = timeline
        self.deadline = deadline
        self.http = requests.Session()
        self._rng = random.Random()

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, token: str, *, deadline: float | None = None) -> Answer:
        return self.call("GET", path, token, idempotent=False, deadline=deadline)

    def post(
        self, path: str, token: str, body: Any = NO_BODY, *, deadline: float | None = None
    ) -> Answer:
        return self.call("POST", path, token, body, deadline=deadline)

    def call(
        self,
        method: str,
        path: str,
        token: str,
        body: Any = NO_BODY,
        *,
        idempotent: bool = True,
        deadline: float | None = None,
    ) -> Answer:
        request_id = str(uuid.uuid4())
        headers = {"Authorization": f"Bearer {token}", "X-Request-Id": request_id}
        if idempotent:
            headers["Idempotency-Key"] = request_id
        kwargs: dict[str, Any] = {"headers": headers, "timeout": ATTEMPT_TIMEOUT}
        if body is not NO_BODY:
            kwargs["json"] = body
        give_up = time.monotonic() + (self.deadline if deadline is None else deadline)
        pause = 0.2
        attempts = 0
        while True:
            attempts += 1
            sent = time.monotonic()
            response: requests.Response | None = None
            try:
                response = self.http.request(method, self.base + path, **kwargs)
                outcome = outcome_of(response)
            except requests.Timeout:
                outcome = "timeout"
            except requests.RequestException:
                # Refused, reset or cut short: a killed worker or a service not yet back.
                outcome = "connection"
            self.timeline.add(Attempt(sent, time.monotonic(), outcome, path))
            if response is not None and outcome in ("ok", "refused"):
                return Answer(
                    request_id,
                    response.status_code,
                    _json(response),
                    response.headers.get("Idempotent-Replayed") == "true",
                    attempts,
                )
            if response is not None and outcome == "error":
                text = response.text[:300]
                self.timeline.add_server_error(f"{method} {path}: {response.status_code} {text}")
            if time.monotonic() + pause > give_up:
                return Answer(request_id, None, None, False, attempts)
            # Jitter, so sixteen clients do not all come back in the same instant.
            time.sleep(pause * (0.5 + self._rng.random()))
            pause = min(pause * 2, 2.0)


def outcome_of(response: requests.Response) -> str:
    status = response.status_code
    if GATEWAY_ERROR in response.headers:
        return "gateway"  # the host died under the request, or none was up: not the service's
    if 200 <= status < 300:
        return "ok"
    if status in (429, 503):
        return "unavailable"
    if status >= 500:
        return "error"
    return "refused"


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
