"""Growth figures (issue 25: cost flat as the log grows): the same operations timed on an empty
log and on logs of past history, side by side.

For each size in BENCH_GROWTH_EVENTS (events, comma-separated; default "0,1000000", add
10000000 for the big one), a scratch database of its own on the server in use
(TEST_DATABASE_URL, else the embedded PostgreSQL) is migrated, loaded with about that many
events of valid history (tests/benchmarks/history.py: every game, duels, players, the ledger,
checkpoints, ending before today began), and then, in this process through the services as
the API calls them, the same work is made and timed at every size:

- appends: our store's append (one event, its own transaction) by 1 writer, ms an append;
- a game (a certification deal of Vegas draw three from a fixed seed, so the same game at every
  size: 60 random legal commands, collected) loaded and folded (the stream read, decoded and
  folded, as the audit and a cold service do), and replayed for an auditor (the regulatory
  replay: stream, postings, every check);
- a player's history page (the newest 20 of their 40 games);
- the daily report (the last 30 days, GBP: the projector caught up first, as the API does) and
  the reconciliation of one day (today: only what this suite made, the same at every size);
- a checkpoint (signed after a deposit, so there is always something new to cover);
- the idle sweep (BENCH_GROWTH_IDLE games, 20, dealt and left; collected with an idle time of
  one second), per game collected, the median of three batches;
- the duel sweep (BENCH_GROWTH_DUELS duels, 20, both seats dealt; the clock moved past their
  five minutes; one sweep times every seat out and settles every duel), per duel, the median
  of three batches.

Every size is loaded first and kept; then every size is measured in each of BENCH_GROWTH_ROUNDS
rounds (5), the order of the sizes reversed from one round to the next, so that whatever else
the machine was doing weighs on every size alike; a figure is its median over the rounds, each
round's the median of several runs (milliseconds an operation), and its ratio to the empty
log's is the median over the rounds of each round's ratio (the two sizes measured back to
back). At every size, each
figure's main queries are run again under EXPLAIN (ANALYZE, BUFFERS) as the superuser, with the
values the figure used (in a transaction rolled back; auto_explain's nested plans for the append
function where the server has auto_explain); a figure more than 1.2 times its empty-log value
is printed with those plans and each query's execution time on the empty log beside it, which
says whether the query moved or the time went elsewhere. The machine is shared: other work on
it moves every figure, so small ratios mean little on their own.
"""

from __future__ import annotations

import math
import os
import random
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from cryptography.fernet import Fernet

from events.catalog import FundsDeposited
from events.postgres import READ_STREAM_SQL, PostgresEventStore, append_params
from events.records import NewEvent
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core.context import Actor, RequestContext
from service.core.dealing import CertificationDeal
from service.core.streams import duel_stream, game_stream
from service.runtime.config import Settings
from service.runtime.database import session_options
from service.services import finance_books as finance
from service.services.games import decode_records
from service.services.idle import collect_idle
from service.storage import advantage, checkpoints, duels, game_writes, projections, seeds
from service.storage import finance as finance_sql
from service.storage.audit_reads import POSTINGS_SQL
from tests.benchmarks.history import load_for
from tests.credentials import OPERATOR, as_player, mint_test_session, sign_checkpoint
from tests.dbtools import (
    ScratchDatabase,
    as_owner,
    move_db_clock,
    server_admin_url,
    split_database,
)

SIZES = [int(n) for n in os.environ.get("BENCH_GROWTH_EVENTS", "0,1000000").split(",") if n]
SECONDS = float(os.environ.get("BENCH_GROWTH_SECONDS", "2"))
IDLE_GAMES = int(os.environ.get("BENCH_GROWTH_IDLE", "20"))
DUELS = int(os.environ.get("BENCH_GROWTH_DUELS", "20"))
#: Rounds of measurement, every size in each (the figures: each one's median over them).
ROUNDS = int(os.environ.get("BENCH_GROWTH_ROUNDS", "5"))
#: Checkpoints timed (each commits, so its figure moves with the disk's flushes: take many).
CHECKPOINTS = int(os.environ.get("BENCH_GROWTH_CHECKPOINTS", "30"))
#: Batches of idle games and of duels swept, each batch timed.
SWEEPS = 3
#: A figure this many times its empty-log value gets its plans printed.
MOVED = 1.2

AUDITOR = Actor("bench-auditor", "auditor")
SEED = "25" * 32  # the certification deal's seed: the same game at every size
STAKE = 520
HISTORY_GAMES = 40
COMMANDS = 60


@dataclass(frozen=True)
class Probe:
    """One of a figure's main queries, with the values it ran with."""

    label: str
    sql: str
    params: dict[str, Any]
    nested: bool = False  # a function: show its statements' plans (auto_explain)


@dataclass
class Measured:
    figures: dict[str, float] = field(default_factory=dict)  # ms an operation
    probes: dict[str, list[Probe]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Each probe's plan, by figure and probe label, and its execution time (ms).
    plans: dict[tuple[str, str], tuple[str, float | None]] = field(default_factory=dict)
    #: Against the first size: the median over the rounds of each round's ratio, the two
    #: measured back to back (the rounds pair them; a ratio of medians would compare moments).
    ratios: dict[str, float] = field(default_factory=dict)

    def time(self, name: str, work: Callable[[], object], runs: int) -> None:
        """The median of ``runs`` runs of ``work`` (after one more, which warms up); infinite
        if a statement of it outlasts the service's statement timeout."""
        try:
            self.figures[name] = _median_ms(work, runs)
        except psycopg.errors.QueryCanceled as exc:
            self.figures[name] = math.inf
            self.notes.append(f"{name}: {str(exc).strip()} (the service's statement timeout)")


class _Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def _player(container: Container, balance: int) -> uuid.UUID:
    opened = container.players.open_account(OPERATOR, f"growth-{uuid.uuid4()}", "GBP")
    player_id = opened.row.player_id
    container.players.deposit(OPERATOR, player_id, balance, f"growth-{uuid.uuid4()}")
    mint_test_session(container, player_id)
    return player_id


def _as(player_id: uuid.UUID) -> RequestContext:
    return as_player(player_id)


def _median_ms(work: Callable[[], object], runs: int) -> float:
    work()  # the first run warms caches and prepares statements
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


def _appends(url: str) -> tuple[float, Probe]:
    """Ms an append, one event a transaction, one writer (the median of three runs)."""
    rounds = []
    # As the owner: the shape-only append is the owner's (migrations/0031).
    with psycopg.connect(as_owner(url), autocommit=True) as conn:
        store = PostgresEventStore(conn)
        stream = f"growth-{uuid.uuid4()}"
        event = FundsDeposited(100, "GBP", "growth")
        meta = {"actor": "bench", "role": "player", "request_id": "growth"}
        version = 0
        for _ in range(20):
            store.append(stream, [NewEvent.of(event, meta)], version)
            version += 1
        for _ in range(3):
            count, started = 0, time.perf_counter()
            deadline = started + SECONDS
            while time.perf_counter() < deadline:
                store.append(stream, [NewEvent.of(event, meta)], version)
                version += 1
                count += 1
            rounds.append((time.perf_counter() - started) / count * 1000)
    params = append_params(stream, [NewEvent.of(event, meta)], version)
    probe = Probe(
        "append_events (one event)",
        "SELECT * FROM append_events(%(stream_id)s, %(expected_version)s, %(events)s)",
        {k: params[k] for k in ("stream_id", "expected_version", "events")},
        nested=True,
    )
    return statistics.median(rounds), probe


def _idle_games(container: Container) -> list[uuid.UUID]:
    """IDLE_GAMES games dealt to players of their own and left."""
    idle = []
    for _ in range(IDLE_GAMES):
        owner = _player(container, 10**6)
        dealt = container.games.start(_as(owner), owner, "vegas-draw1", STAKE)
        idle.append(uuid.UUID(dealt.state.game_id))
    return idle


def _dealt_duels(container: Container) -> None:
    """DUELS two-seat duels, full, both seats dealt (on the container's clock)."""
    seated = [_player(container, 10**6) for _ in range(2 * DUELS)]
    for player_id in seated:
        container.duels.join(_as(player_id), player_id, 500)
    for row in container.duels.listed(status="full", limit=10 * DUELS):
        for seat in container.duels.duel(row.duel_id).state.seats:
            seat_player = uuid.UUID(seat.player_id)
            container.duels.deal(_as(seat_player), row.duel_id, seat_player)


def _play_game(container: Container, player_id: uuid.UUID) -> uuid.UUID:
    """The same game at every size: dealt from a fixed seed, random legal commands from a fixed
    generator, collected."""
    deal = CertificationDeal(seed_hex=SEED)
    loaded = container.games.start(
        _as(player_id), player_id, "vegas-draw3", STAKE, certification=deal
    )
    game_id = uuid.UUID(loaded.state.game_id)
    rng = random.Random(25)
    state = loaded.state
    for _ in range(COMMANDS):
        options = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not options:
            break
        state = container.games.play(_as(player_id), game_id, rng.choice(options)).state
    container.games.collect(_as(player_id), game_id)
    return game_id


def _measure(container: Container, clock: _Clock) -> Measured:
    found = Measured()
    url = container.database_url

    # Appends.
    found.figures["appends, 1 writer"], probe = _appends(url)
    found.probes["appends, 1 writer"] = [probe]

    # One game, loaded and folded, and replayed for an auditor.
    player = _player(container, 10**9)
    game_id = _play_game(container, player)
    stream = game_stream(game_id)

    def load_and_fold() -> None:
        with container.unit_of_work() as uow:
            uow.outside_transaction()
            records = uow.events.read_stream(stream)
        state = g.fold(decode_records(records))
        assert state.is_over

    read = Probe(
        "the game's stream",
        READ_STREAM_SQL,
        {"stream_id": stream, "after_version": 0, "to_version": None},
    )
    found.time("load + fold one game", load_and_fold, 100)
    found.probes["load + fold one game"] = [read]
    found.time("replay one game (auditor)", lambda: container.audits.replay(game_id, AUDITOR), 30)
    found.probes["replay one game (auditor)"] = [
        read,
        Probe("the game's postings", POSTINGS_SQL, {"stream": stream}),
    ]

    # A player's history page.
    regular = _player(container, 10**9)
    for _ in range(HISTORY_GAMES):
        dealt = container.games.start(_as(regular), regular, "golf", STAKE)
        container.games.collect(_as(regular), uuid.UUID(dealt.state.game_id))
    found.time(
        "history page (20 of 40 games)", lambda: container.games.history(regular, limit=20), 100
    )
    found.probes["history page (20 of 40 games)"] = [
        Probe(
            "the page",
            projections.HISTORY_PAGE_SQL,
            {"player_id": regular, "before_started": None, "before_game": None, "limit": 20},
        ),
        Probe("the player", projections.PLAYER_SQL, {"player_id": regular}),
    ]

    # The daily report and the reconciliation of today.
    today = datetime.now(UTC).date()
    first = today - timedelta(days=29)
    found.time("daily report (30 days)", lambda: container.reports.daily(first, today, "GBP"), 10)
    start, end = finance.utc_span(first, today)
    with container.unit_of_work() as uow:
        position = uow.conn.execute("SELECT max(position) FROM events").fetchone()
    caught_up = {"after": position[0] if position else 0, "upto": position[0] if position else 0}
    found.probes["daily report (30 days)"] = [
        Probe(
            "the projector's catch-up",
            finance_sql.MONEY_EVENTS_SQL,
            {**caught_up, "limit": finance.BATCH},
        ),
        Probe(
            "the cashier projection's catch-up",
            finance_sql.CASHIER_EVENTS_SQL,
            {**caught_up, "limit": finance.BATCH},
        ),
        Probe(
            "the days",
            finance_sql.REPORT_SQL,
            {"start": first, "end": today, "currency": "GBP", "variants": _variants()},
        ),
        Probe("lifetime sums", finance_sql.LIFETIME_SQL, {"currency": "GBP", "end": today}),
        Probe(
            "month-to-date sums",
            finance_sql.SUM_SQL,
            {"currency": "GBP", "start": today.replace(day=1), "end": today},
        ),
        Probe(
            "safer gambling by day",
            finance_sql.SAFER_GAMBLING_SQL,
            {
                "currency": "GBP",
                "first": first,
                "last": today,
                "start": start,
                "end": end,
                "time_outs": ["24-hours"],
                "self_exclusions": ["six-months"],
            },
        ),
        Probe(
            "advantage-play rows",
            advantage.REPORTS_SQL,
            {"kind": "advantage-play", "currency": "GBP", "start": start, "end": end},
        ),
    ]
    found.time("reconciliation of one day", lambda: container.reports.reconciliation(today), 5)
    # Its work is the day's: what the earlier figures of the rounds added to today (each runs for
    # a time, so a faster log adds more), not the log's size.
    checked = container.reports.reconciliation(today).result["events_checked"]
    found.notes.append(f"reconciliation of one day: {checked:,} money events that day")
    day_start, day_last = finance.utc_span(today, today)
    found.probes["reconciliation of one day"] = [
        Probe("the day's money events", finance_sql.DAY_EVENTS_SQL, {"start": day_start,
                                                                    "last": day_last}),
        Probe("the day's ledger", finance_sql.DAY_LEDGER_SQL, {"start": day_start,
                                                               "last": day_last}),
    ]  # fmt: skip

    # A checkpoint, after a deposit each time.
    timings = []
    sign_checkpoint(container, "growth")
    for n in range(CHECKPOINTS):
        container.players.deposit(OPERATOR, player, 100, f"growth-cp-{n}-{uuid.uuid4()}")
        started = time.perf_counter()
        _, made = sign_checkpoint(container, "growth")
        timings.append(time.perf_counter() - started)
        assert made
    found.figures["checkpoint"] = statistics.median(timings) * 1000
    with container.unit_of_work() as uow:
        latest = uow.checkpoints.latest()
    assert latest is not None
    found.probes["checkpoint"] = [
        Probe("the log's head", checkpoints.LOG_HEAD_SQL, {"upto": latest.position}),
        Probe(
            "the entries since the last",
            checkpoints.ENTRIES_SQL,
            {"after": latest.position - 1, "upto": latest.position, "limit": 10_000},
        ),
        Probe("add_checkpoint's bounds", ADD_CHECKPOINT_BOUNDS_SQL, {}),
    ]

    # The idle sweep and the duel sweep, each of SWEEPS batches (the median batch's figure).
    idle_times: list[float] = []
    duel_times: list[float] = []
    idle: list[uuid.UUID] = []
    swept: list[uuid.UUID] = []
    owner_url = container.settings.migration_database_url
    assert owner_url is not None
    for batch in range(SWEEPS):
        idle = _idle_games(container)
        time.sleep(1.2)
        started = time.perf_counter()
        collected = collect_idle(container.games, container.unit_of_work, timedelta(seconds=1))
        idle_times.append((time.perf_counter() - started) / max(len(collected), 1) * 1e3)
        if len(collected) != len(idle):
            found.notes.append(f"idle sweep collected {len(collected)} of {len(idle)} games")

        # Duels whose seats are dealt, then the clock past their five minutes.
        clock.now = datetime.now(UTC) + timedelta(minutes=10 * batch)
        move_db_clock(owner_url, clock.now)  # the database's rules' clock too (0031)
        _dealt_duels(container)
        clock.now += timedelta(minutes=6)
        move_db_clock(owner_url, clock.now)
        started = time.perf_counter()
        swept = container.duels.sweep(limit=10_000)
        duel_times.append((time.perf_counter() - started) / max(len(swept), 1) * 1e3)
        if len(swept) != DUELS:
            found.notes.append(f"duel sweep settled {len(swept)} of {DUELS} duels")
    idle_name = f"idle sweep, per game ({IDLE_GAMES})"
    found.figures[idle_name] = statistics.median(idle_times)
    idle_stream = game_stream(idle[0])
    found.probes[idle_name] = [
        Probe(
            "idle games",
            projections.IDLE_GAMES_SQL,
            {"idle": timedelta(seconds=1), "limit": 500},
        ),
        Probe("a collected game's snapshot", game_writes.SNAPSHOT_SQL, {"stream_id": idle_stream}),
        Probe(
            "a collected game's stream",
            READ_STREAM_SQL,
            {"stream_id": idle_stream, "after_version": 0, "to_version": None},
        ),
        Probe("a collected game's seed", seeds.SELECT_SQL, {"game_id": idle[0]}),
        Probe("a collected game's postings", POSTINGS_SQL, {"stream": idle_stream}),
    ]
    duel_name = f"duel sweep, per duel ({DUELS})"
    found.figures[duel_name] = statistics.median(duel_times)
    probes = [Probe("duels due", duels.DUE_SQL, {"now": clock.now, "limit": 10_000})]
    if swept:
        duel_id = swept[0]
        seat_game = container.duels.duel(duel_id).state.seats[0].game_id
        probes += [
            Probe(
                "a swept duel's stream",
                READ_STREAM_SQL,
                {"stream_id": duel_stream(duel_id), "after_version": 0, "to_version": None},
            ),
            Probe(
                "a seat's game stream",
                READ_STREAM_SQL,
                {"stream_id": game_stream(str(seat_game)), "after_version": 0, "to_version": None},
            ),
            Probe("whether the duel is over", duels.DUEL_OVER_SQL, {"duel_id": str(duel_id)}),
            Probe("the duel's postings", POSTINGS_SQL, {"stream": duel_stream(duel_id)}),
        ]
    found.probes[duel_name] = probes
    return found


# What add_checkpoint (migrations/0016) reads before it inserts: the log's end, and the furthest
# checkpoint inside it.
ADD_CHECKPOINT_BOUNDS_SQL = """
SELECT (SELECT c.seq FROM log_checkpoints c ORDER BY c.seq DESC LIMIT 1),
       (SELECT coalesce(max(c.position), 0) FROM log_checkpoints c
         WHERE c.position <= (SELECT coalesce(max(e.position), 0) FROM events e))
"""


def _variants() -> list[str]:
    from service.games import GAMES

    return list(GAMES)


def _explain(admin_url: str, probe: Probe) -> tuple[str, float | None]:
    """The probe's EXPLAIN (ANALYZE, BUFFERS), in a transaction rolled back (a write changes
    nothing), and its execution time; for a function, the plans of the statements it ran, if
    auto_explain loads (the time: the call's)."""
    lines: list[str] = []
    # The service's own session settings (no JIT, its timeouts), so the plan is the one it runs.
    with psycopg.connect(admin_url, options=session_options(Settings())) as conn:
        cur = psycopg.ClientCursor(conn)
        if probe.nested:
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
            try:
                cur.execute("LOAD 'auto_explain'")
                for setting in (
                    "auto_explain.log_min_duration = 0",
                    "auto_explain.log_analyze = on",
                    "auto_explain.log_buffers = on",
                    "auto_explain.log_nested_statements = on",
                    "auto_explain.log_level = notice",
                ):
                    cur.execute(f"SET {setting}")
                cur.execute(probe.sql, probe.params)
                lines += [n for n in notices if n]
            except psycopg.Error as exc:
                lines.append(f"(no nested plans: {exc})")
            conn.rollback()
            text = "\n".join(lines)
            durations = re.findall(r"duration: ([0-9.]+) ms", text)
            return text, float(durations[-1]) if durations else None
        cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + probe.sql, probe.params)
        lines += [str(row[0]) for row in cur.fetchall()]
        conn.rollback()
    text = "\n".join(lines)
    found = re.search(r"Execution Time: ([0-9.]+) ms", text)
    return text, float(found.group(1)) if found else None


def _table(sizes: list[int], measured: dict[int, Measured]) -> Iterator[str]:
    base = measured[sizes[0]]
    names = list(base.figures)
    header = " | ".join(f"{size:,} events" for size in sizes)
    yield f"figure (ms an operation, median; x: median of the rounds' ratios) | {header}"
    for name in names:
        cells = []
        for size in sizes:
            value = measured[size].figures.get(name)
            if value is None:
                cells.append("-")
                continue
            ratio = measured[size].ratios.get(name, 0.0)
            shown = "timed out" if math.isinf(value) else f"{value:.2f}"
            cells.append(shown if size == sizes[0] else f"{shown} ({ratio:.2f}x)")
        yield f"{name} | " + " | ".join(cells)


def run() -> Iterator[str]:
    admin = server_admin_url()
    loaded: dict[int, tuple[ScratchDatabase, Container, _Clock]] = {}
    rounds: dict[int, list[Measured]] = {size: [] for size in SIZES}
    with tempfile.TemporaryDirectory(prefix="vegas-bench-growth-") as tmp, ExitStack() as stack:
        for size in SIZES:
            found = stack.enter_context(split_database(admin, prefix="vegas_bench"))
            # The idle sweep collects after a second: the database's floor (migrations/0031,
            # collection_policy) set to it by the owner, as a deployment's owner would.
            with psycopg.connect(found.owner_url, autocommit=True) as owner:
                owner.execute("UPDATE collection_policy SET idle_after = interval '1 second'")
            settings = replace(
                Settings(),
                database_url=found.service_url,
                migration_database_url=found.owner_url,  # the rules' clock, moved (tests/dbtools)
                background_database_url=found.background_url,  # beat's checkpoints (0039)
                data_dir=Path(tmp),
                seed_keys=(Fernet.generate_key().decode(),),
                certification_mode=True,
                pool_max_size=4,
            )
            container = build(settings, migrate=False)
            stack.callback(container.close)  # closed before its database is dropped
            clock = _Clock()
            container.duels.clock = clock
            container.games.clock = clock
            if size:
                report = load_for(
                    container,
                    found.admin_url,
                    size,
                    progress=lambda line: print(f"  ({line})", flush=True),
                )
                yield f"history of {report.describe()}"
            with psycopg.connect(found.admin_url) as conn:
                row = conn.execute(
                    "SELECT pg_size_pretty(pg_database_size(current_database()))"
                ).fetchone()
            yield f"{size:,} events: database {row[0] if row else '?'}"
            loaded[size] = (found, container, clock)
        # Every size measured in each round, the order reversed from one round to the next, so
        # that what the machine was doing at one moment weighs on every size alike.
        for number in range(ROUNDS):
            for size in SIZES if number % 2 == 0 else SIZES[::-1]:
                _, container, clock = loaded[size]
                started = time.perf_counter()
                rounds[size].append(_measure(container, clock))
                took = time.perf_counter() - started
                yield f"{size:,} events: round {number + 1} measured in {took:.0f} s"
        measured = {size: _median_of(rounds[size]) for size in SIZES}
        for size in SIZES[1:]:
            measured[size].ratios = _paired_ratios(rounds[SIZES[0]], rounds[size])
        for size, found_measured in measured.items():
            for note in found_measured.notes:
                yield f"{size:,} events: {note}"
            for name, probes in found_measured.probes.items():
                for probe in probes:
                    found_measured.plans[name, probe.label] = _explain(
                        loaded[size][0].admin_url, probe
                    )
    yield from _table(SIZES, measured)
    plans = list(_moved(SIZES, measured))
    if plans:
        yield f"plans of the figures more than {MOVED}x the empty log's:"
        yield from plans
    else:
        yield f"no figure moved more than {MOVED}x the empty log's"


def _median_of(rounds: list[Measured]) -> Measured:
    """Each figure's median over the rounds; the last round's probes; every round's notes."""
    return Measured(
        figures={
            name: statistics.median(r.figures[name] for r in rounds) for name in rounds[-1].figures
        },
        probes=rounds[-1].probes,
        notes=[note for r in rounds for note in r.notes],
    )


def _paired_ratios(base: list[Measured], other: list[Measured]) -> dict[str, float]:
    """Each figure's ratio to the base size's in the same round, the median over the rounds."""
    ratios = {}
    for name in other[-1].figures:
        each = [
            o.figures[name] / b.figures[name] if b.figures.get(name) else math.inf
            for b, o in zip(base, other, strict=True)
        ]
        ratios[name] = statistics.median(each)
    return ratios


def _moved(sizes: list[int], measured: dict[int, Measured]) -> Iterator[str]:
    """For each figure more than MOVED times its value at the first size: the plans of its
    main queries at the size it moved at, each after its execution time at both sizes."""
    base = measured[sizes[0]]
    for size in sizes[1:]:
        for name in measured[size].figures:
            ratio = measured[size].ratios.get(name, math.inf)
            if ratio <= MOVED:
                continue
            for probe in measured[size].probes.get(name, []):
                plan, took = measured[size].plans.get((name, probe.label), ("", None))
                _, before = base.plans.get((name, probe.label), ("", None))
                yield (
                    f"{name} at {size:,} events ({ratio:.2f}x): {probe.label}: "
                    f"{_ms(took)} here, {_ms(before)} at {sizes[0]:,} events\n" + _indented(plan)
                )


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f} ms"


def _indented(plan: str) -> str:
    return "\n".join(f"      {line}" for line in plan.splitlines())
