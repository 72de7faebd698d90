"""What the service counts for Prometheus: one definition of each metric, for every process.

`make run`'s processes (gunicorn's workers, the Celery worker, beat) share one multiprocess
directory (``PROMETHEUS_MULTIPROC_DIR``, set by service/runtime/run.py to ``DATA_DIR/metrics``,
emptied at each start), and the web's ``GET /metrics`` serves them all at once
(prometheus-client's multiprocess mode). Without that variable (a test's app, the CLI) the
figures are the process's own.

Names and labels follow Prometheus' conventions: base units (seconds; money in minor units,
labelled by currency), counters end in ``_total``. No label ever holds an id (player, game,
duel, key), a token or a card: routes are labelled by their template, games by variant.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import REGISTRY
from prometheus_client.registry import Collector

from service.runtime.config import PROJECT_ROOT

#: The environment variable prometheus-client's multiprocess mode reads at import.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Its exposition format's media type.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Request latencies: a play's few milliseconds to a slow report's seconds.
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter(
    "vegas_http_requests",
    "HTTP requests answered, by method, route template and status",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "vegas_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route template",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
PROBLEMS = Counter("vegas_problems", "Problem answers (RFC 9457), by problem type", ["type"])
GAMES = Counter(
    "vegas_games",
    "Games by variant and what happened to them: dealt, collected, timed_out (collected by the "
    "clock or as idle), voided",
    ["variant", "event"],
)
STAKES = Counter(
    "vegas_stakes_minor_units",
    "Real-money stakes taken, in the currency's minor units (an operational signal: the ledger "
    "is the books)",
    ["variant", "currency"],
)
PAYOUTS = Counter(
    "vegas_payouts_minor_units",
    "Real-money winnings paid, in the currency's minor units",
    ["variant", "currency"],
)
DUEL_FEES = Counter(
    "vegas_duel_fees_minor_units", "Real-money duel entry fees taken, in minor units", ["currency"]
)
SAFER_GAMBLING_REFUSALS = Counter(
    "vegas_safer_gambling_refusals",
    "Deals, joins, deposits and plays refused by a limit, an exclusion or a reality check",
    ["kind"],
)
WALLET_CALLS = Counter(
    "vegas_wallet_calls",
    "Calls to the operator's wallet (seamless mode), by method and what the answer meant",
    ["method", "outcome"],
)
WALLET_LATENCY = Histogram(
    "vegas_wallet_call_duration_seconds",
    "Time for the operator's wallet to answer (or the call to give up), by method",
    ["method"],
    buckets=LATENCY_BUCKETS,
)
TASKS = Counter(
    "vegas_tasks",
    "Background tasks run, by name and outcome (succeeded, failed)",
    ["task", "outcome"],
)
TASK_LATENCY = Histogram(
    "vegas_task_duration_seconds",
    "Time a background task took, by name",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0),
)
#: Each process's database pool, added up across the host's processes.
POOL = Gauge(
    "vegas_db_pool_connections",
    "Database pool connections of the host's processes: open, idle, and requests waiting for one",
    ["state"],
    multiprocess_mode="livesum",
)


BUILD = Gauge(
    "vegas_build_info",
    "The running release: its version and commit (always 1)",
    ["version", "commit"],
    multiprocess_mode="max",
)
RULES = Gauge(
    "vegas_game_rules_info",
    "Each game's rules version as this release plays it (always 1)",
    ["game", "rules_version"],
    multiprocess_mode="max",
)


def describe_build() -> None:
    """The release and each game's rules version, once a process (web, worker, beat)."""
    from service.games import GAMES  # the games' own module, pure

    try:
        version = importlib.metadata.version("vegas-solitaire")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    BUILD.labels(version, _commit()).set(1)
    for game in GAMES.values():
        RULES.labels(game.id, game.rules_version).set(1)


def _commit() -> str:
    """The checkout's commit, if the service runs from one (COMMIT overrides)."""
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"][:40]
    git = PROJECT_ROOT / ".git"
    try:
        ref = (git / "HEAD").read_text().strip()
        if not ref.startswith("ref: "):
            return ref[:40]
        name = ref[5:]
        loose = git / name
        if loose.exists():
            return loose.read_text().strip()[:40]
        for line in (git / "packed-refs").read_text().splitlines():  # a fresh clone's
            sha, _, packed = line.partition(" ")
            if packed == name:
                return sha[:40]
    except OSError:
        pass
    return "unknown"


def pool_figures(stats: dict[str, int]) -> None:
    """This process's database pool (psycopg_pool's get_stats), for the host's live sum."""
    POOL.labels("open").set(stats.get("pool_size", 0))
    POOL.labels("idle").set(stats.get("pool_available", 0))
    POOL.labels("waiting").set(stats.get("requests_waiting", 0))


def prepare_directory(directory: Path) -> None:
    """An empty multiprocess directory, before any process of a start writes to it (run.py)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)


def process_exited(pid: int) -> None:
    """A gunicorn worker exited: its live gauges no longer count (the master's hook)."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def exposition(extra: Iterable[Collector] = ()) -> bytes:
    """Every process's figures on this host (or this process's own), and ``extra`` collectors
    read now (the database's state), in Prometheus' text format."""
    now = CollectorRegistry()
    for collector in extra:
        now.register(collector)
    if os.environ.get(MULTIPROC_ENV):
        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)  # type: ignore[no-untyped-call]
        return generate_latest(shared) + generate_latest(now)
    return generate_latest(REGISTRY) + generate_latest(now)
