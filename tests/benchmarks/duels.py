"""Duel figures: seats joined per second with concurrent players, and duels settled per second,
through the real duel service on a scratch database (TEST_DATABASE_URL's server, else the
embedded PostgreSQL), dropped afterwards.

- Joins: BENCH_DUEL_PLAYERS funded players (400) join two-seat duels at one fee from
  BENCH_DUEL_THREADS threads (8) at once; each join is one transaction (find or open a duel,
  take the seat, debit the fee into the pot, write the read models).
- Settlements: every full duel's two seats deal their games; one seat stops, then the other's
  stop (from the same threads) ends its game, records both results, settles the pot to the
  winner and the rake to the house, and reveals the seed: one transaction per duel, timed.
- The sweep: as many duels again, both seats dealt and left playing; the clock is moved past
  their five minutes and one ``sweep`` ends every seat as timed out and settles every duel.
The client here is the service called in-process, so the figures are the server's own work.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet

from service.bootstrap import build
from service.core import game_decider as g
from service.runtime.config import Settings
from tests.credentials import OPERATOR, as_player, mint_test_session
from tests.dbtools import as_owner, move_db_clock, scratch_database, server_admin_url

PLAYERS = int(os.environ.get("BENCH_DUEL_PLAYERS", "400"))
THREADS = int(os.environ.get("BENCH_DUEL_THREADS", "8"))
FEE = 500


class _Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _parallel(jobs: Sequence[Callable[[], object]]) -> float:
    def run_all() -> None:
        with ThreadPoolExecutor(THREADS) as pool:
            for future in [pool.submit(job) for job in jobs]:
                future.result()

    return _timed(run_all)


def run() -> Iterator[str]:
    with scratch_database(server_admin_url(), prefix="vegas_bench") as url:
        settings = replace(
            Settings(),
            database_url=url,
            seed_keys=(Fernet.generate_key().decode(),),
            pool_max_size=THREADS + 2,
        )
        container = build(settings, migrate=False)
        clock = _Clock()
        container.duels.clock = clock
        container.games.clock = clock
        try:
            players = []
            for n in range(PLAYERS):
                opened = container.players.open_account(
                    OPERATOR, f"bench-duel-{n}-{uuid.uuid4()}", "GBP"
                )
                player_id = opened.row.player_id
                container.players.deposit(OPERATOR, player_id, 10 * FEE, f"d{n}")
                mint_test_session(container, player_id)
                players.append(player_id)

            def joiner(player_id: uuid.UUID) -> Callable[[], object]:
                return lambda: container.duels.join(as_player(player_id), player_id, FEE)

            half = PLAYERS // 2
            seconds = _parallel([joiner(p) for p in players[:half]])
            yield (
                f"joins: {half} seats in {seconds:.2f} s = {half / seconds:,.0f} joins/s "
                f"({THREADS} concurrent players, two-seat duels at one fee)"
            )
            rows = container.duels.listed(status="full", limit=1_000)
            duels = [(r.duel_id, container.duels.duel(r.duel_id).state) for r in rows]

            def play(duel_id: uuid.UUID, seat: int, stop: bool) -> Callable[[], object]:
                def job() -> None:
                    player = uuid.UUID(dict(duels)[duel_id].seats[seat].player_id)
                    request = as_player(player)
                    if stop:
                        container.duels.play(request, duel_id, player, g.Collect("player"))
                    else:
                        container.duels.deal(request, duel_id, player)

                return job

            _parallel([play(d, s, False) for d, _ in duels for s in (0, 1)])
            _parallel([play(d, 0, True) for d, _ in duels])
            seconds = _parallel([play(d, 1, True) for d, _ in duels])
            yield (
                f"settlements by the last seat's stop: {len(duels)} duels in {seconds:.2f} s = "
                f"{len(duels) / seconds:,.0f} duels settled/s ({THREADS} threads)"
            )

            seconds = _parallel([joiner(p) for p in players[half:]])
            rows = container.duels.listed(status="full", limit=1_000)
            duels = [(r.duel_id, container.duels.duel(r.duel_id).state) for r in rows]
            _parallel([play(d, s, False) for d, _ in duels for s in (0, 1)])
            clock.now += timedelta(minutes=6)
            move_db_clock(as_owner(url), clock.now)  # the database's rules' clock too
            swept: list[uuid.UUID] = []
            seconds = _timed(lambda: swept.extend(container.duels.sweep(limit=10_000)))
            yield (
                f"sweep after the clock ran out: {len(swept)} duels (both seats timed out, then "
                f"settled) in {seconds:.2f} s = {len(swept) / seconds:,.0f} duels/s (one caller)"
            )
        finally:
            container.close()
