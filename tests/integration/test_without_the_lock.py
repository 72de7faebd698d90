"""Each check that reads rows it does not write holds without the writers' lock (issue 36,
migrations/0036, 0038): one open game a player, a player's limits, a duel's seats, a seed's
commitment, a session's time limit, one account per external reference and the operator's
switches.

Every race runs the services as they are, on units of work whose writers' lock is a no-op (what
they will be once UnitOfWork.lock_for_write goes), each on its own thread and connection under
READ COMMITTED. The first racer is held just before its commit; the second runs until it
finishes or waits on a lock the first holds (pg_blocking_pids); then the first commits. Without
the database's guard the second would have read before the first committed and gone through;
with it, the second waits and is refused by what the first wrote, or by the named constraint.
Each has its honest counterpart: two players, or two duels, both go through.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet
from psycopg_pool import ConnectionPool

from events.records import ConcurrencyConflict
from service.bootstrap import Container, build
from service.core import shuffle
from service.core.clock import system_clock
from service.core.context import Actor, RequestContext
from service.core.controls import EVERYONE, Scope
from service.errors import CommitmentTaken, Disabled, GameInProgress, LimitExceeded
from service.games import GAMES
from service.runtime.config import Settings
from service.services.controls import Controls
from service.services.duels import Duels, LoadedDuel
from service.services.games import Games, LoadedGame
from service.services.players import Opened
from service.services.safer_gambling import SaferGambling
from service.services.unit_of_work import UnitOfWork
from service.storage.game_writes import OPEN_GAME_INDEX
from service.storage.projections import HistoryRow, PlayerRow, ProjectionStore
from tests.credentials import OPERATOR, as_player, mint_test_session, player_token
from tests.dbtools import ScratchDatabase, split_database
from tests.workers import with_broker

Conn = psycopg.Connection[tuple[Any, ...]]
STAKE = 520
FEE = 500  # a duel seat's entry fee (GBP 5.00, one of the default duel fees)
#: How long a racer may take to reach its commit or its wait (the machine is shared).
PATIENCE_S = 10.0


class Racer:
    """One side of a race: the services on units of work of its own, without the writers' lock.
    ``hold``: stop before the first commit until ``release``. ``blind``: its deals read no open
    game (to show what the database refuses when a read misses one)."""

    def __init__(
        self,
        container: Container,
        *,
        hold: bool = False,
        blind: bool = False,
        clock: Callable[[], datetime] = system_clock,
    ) -> None:
        self.hold, self.blind = hold, blind
        self.held, self.released = threading.Event(), threading.Event()
        self.pids: list[int] = []
        self._pool = container.pool
        settings = container.settings
        self.safer = SaferGambling(self.unit_of_work, settings.paytables, clock=clock)
        self.games = Games(
            self.unit_of_work,
            dict(settings.paytables),
            container.vault,
            self.safer,
            certification_mode=True,
        )
        self.duels = Duels(
            self.unit_of_work,
            self.games,
            settings.duel_paytables,
            settings.paytables,
            container.vault,
            self.safer,
            certification_mode=True,
        )
        # The cashier as built (whatever else it is given), on this racer's units of work.
        self.players = copy.copy(container.players)
        self.players._uow, self.players._safer = self.unit_of_work, self.safer
        self.controls = Controls(self.unit_of_work)

    def unit_of_work(self) -> UnitOfWork:
        return _Unlocked(self._pool, self)

    def before_commit(self) -> None:
        if self.hold and not self.released.is_set():
            self.held.set()
            assert self.released.wait(PATIENCE_S), "the race was never let go"

    def release(self) -> None:
        self.released.set()


class _Blind(ProjectionStore):
    """A deal's reads with neither the player's lock nor the open game (its first read of it
    misses): only the database's constraint is left."""

    missed = False

    def player_locked(self, player_id: uuid.UUID) -> PlayerRow | None:
        return self.player(player_id)

    def open_game(self, player_id: uuid.UUID) -> HistoryRow | None:
        if not self.missed:
            self.missed = True
            return None
        return super().open_game(player_id)


class _Unlocked(UnitOfWork):
    """The unit of work with the writers' lock skipped, reporting to its racer."""

    def __init__(self, pool: ConnectionPool, racer: Racer) -> None:
        super().__init__(pool)
        self._racer = racer

    def __enter__(self) -> _Unlocked:
        super().__enter__()
        self._racer.pids.append(self.conn.info.backend_pid)
        if self._racer.blind:
            self.projections = _Blind(self.conn)
        return self

    def lock_for_write(self) -> None:
        """What the service does once the lock goes: nothing."""

    def commit(self) -> None:
        self._racer.before_commit()
        super().commit()


def race(
    admin: Conn,
    first: Racer,
    do_first: Callable[[], Any],
    second: Racer,
    do_second: Callable[[], Any],
) -> tuple[Future[Any], Future[Any], bool]:
    """Run ``do_first`` up to its commit and hold it there; run ``do_second`` until it ends or
    waits on the first; then let the first commit. Returns both outcomes and whether the second
    waited on the first."""
    assert first.hold
    with ThreadPoolExecutor(2) as pool:
        one = pool.submit(do_first)
        try:
            assert first.held.wait(PATIENCE_S), one.exception(0.1) if one.done() else "no commit"
            two = pool.submit(do_second)
            waited = _waits_on(admin, second, first, two)
        finally:
            first.release()
        one.exception(PATIENCE_S * 3)
        two.exception(PATIENCE_S * 3)
    return one, two, waited


def _waits_on(admin: Conn, waiter: Racer, holder: Racer, running: Future[Any]) -> bool:
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline and not running.done():
        if waiter.pids:
            row = admin.execute(
                "SELECT %s = ANY (pg_blocking_pids(%s))", (holder.pids[-1], waiter.pids[-1])
            ).fetchone()
            if row is not None and row[0]:
                return True
        time.sleep(0.02)
    return False


# --- the module's own database (its duels are the only ones open) ------------------------------


@pytest.fixture(scope="module")
def own_database(admin_server_url: str) -> Iterator[ScratchDatabase]:
    with split_database(admin_server_url) as found:
        yield found


@pytest.fixture(scope="module")
def own(own_database: ScratchDatabase, data_dir: Path) -> Iterator[Container]:
    settings = replace(
        Settings(),
        environment="test",
        database_url=own_database.service_url,
        migration_database_url=own_database.owner_url,
        seed_keys=(Fernet.generate_key().decode(),),
        certification_mode=True,
        pool_max_size=8,
    )
    built = build(with_broker(settings, data_dir), migrate=False)
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def admin(own_database: ScratchDatabase) -> Iterator[Conn]:
    with psycopg.connect(own_database.admin_url, autocommit=True) as conn:
        yield conn


def _player(c: Container, balance: int = 10_000) -> PlayerRow:
    row = c.players.open_account(OPERATOR, f"ext-{uuid.uuid4()}", "GBP").row
    mint_test_session(c, row.player_id)
    if balance:
        c.players.deposit(OPERATOR, row.player_id, balance, f"seed-{uuid.uuid4()}")
    return row


def _deal(
    racer: Racer, player: PlayerRow, variant: str = "vegas-draw1"
) -> Callable[[], LoadedGame]:
    return lambda: racer.games.start(as_player(player.player_id), player.player_id, variant, STAKE)


def _join(racer: Racer, player: PlayerRow, seats: int = 2) -> Callable[[], LoadedDuel]:
    return lambda: racer.duels.join(as_player(player.player_id), player.player_id, FEE, seats)


def _deposit(racer: Racer, player: PlayerRow, amount: int) -> Callable[[], Any]:
    return lambda: racer.players.deposit(OPERATOR, player.player_id, amount, str(uuid.uuid4()))


# --- one open game a player -----------------------------------------------------------------


def test_two_deals_for_one_player_the_second_waits_and_finds_the_first_game(
    own: Container, admin: Conn
) -> None:
    player = _player(own)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _deal(first, player), second, _deal(second, player))
    assert waited  # on the player's row (lock_player)
    dealt = one.result()
    with pytest.raises(GameInProgress) as refused:
        two.result()
    assert str(refused.value.game_id) == dealt.state.game_id
    assert own.players.wallet(player.player_id).balance == 10_000 - STAKE

    # the honest counterpart: two players, one deal each
    a, b = _player(own), _player(own)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, _ = race(admin, first, _deal(first, a), second, _deal(second, b))
    assert one.result().state.player_id == str(a.player_id)
    assert two.result().state.player_id == str(b.player_id)


def test_a_second_open_game_a_deal_s_read_missed_is_refused_by_the_database(
    own: Container, admin: Conn
) -> None:
    """The rule is the database's too: a deal that neither locked the player nor read an open
    game (blind) writes its history row, waits on the first's, and is refused by
    game_history_one_open_game, answered as the game in progress it is, its stake not taken."""
    player = _player(own)
    first, blind = Racer(own, hold=True), Racer(own, blind=True)
    one, two, waited = race(admin, first, _deal(first, player), blind, _deal(blind, player))
    assert waited  # on the index entry of the first's history row
    dealt = one.result()
    with pytest.raises(GameInProgress) as refused:
        two.result()
    assert str(refused.value.game_id) == dealt.state.game_id
    conflict = refused.value.__cause__
    assert isinstance(conflict, ConcurrencyConflict)
    violation = conflict.__cause__
    assert isinstance(violation, psycopg.errors.UniqueViolation)
    assert violation.diag.constraint_name == OPEN_GAME_INDEX
    assert own.players.wallet(player.player_id).balance == 10_000 - STAKE
    # the honest counterpart: once the first is collected, the same blind deal is the next game
    own.games.collect(as_player(player.player_id), uuid.UUID(dealt.state.game_id))
    assert _deal(Racer(own, blind=True), player)().state.player_id == str(player.player_id)


# --- limits -----------------------------------------------------------------------------------


def test_two_deposits_against_a_daily_limit_with_room_for_one_let_one_through(
    own: Container, admin: Conn
) -> None:
    player, other = _player(own, balance=0), _player(own, balance=0)
    for p in (player, other):
        own.safer.set_limit(OPERATOR, p.player_id, "deposit-day", 1_000)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(
        admin, first, _deposit(first, player, 600), second, _deposit(second, player, 600)
    )
    assert waited
    one.result()
    with pytest.raises(LimitExceeded) as refused:
        two.result()
    assert refused.value.limit == "deposit-day"
    assert own.players.wallet(player.player_id).balance == 600

    # the honest counterpart: the same deposits of two players, each within their own limit
    first, second = Racer(own, hold=True), Racer(own)
    one, two, _ = race(
        admin, first, _deposit(first, player, 400), second, _deposit(second, other, 600)
    )
    one.result(), two.result()
    assert own.players.wallet(player.player_id).balance == 1_000
    assert own.players.wallet(other.player_id).balance == 600


def test_a_stake_and_a_duel_fee_against_a_loss_limit_with_room_for_one_let_one_through(
    own: Container, admin: Conn
) -> None:
    """A deal and a duel's join both spend a daily loss limit of 700: 520 and 500 do not fit."""
    player, other, third = _player(own), _player(own), _player(own)
    for p in (player, other, third):
        own.safer.set_limit(OPERATOR, p.player_id, "loss-day", 700)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _deal(first, player), second, _join(second, player, 3))
    assert waited
    one.result()
    with pytest.raises(LimitExceeded) as refused:
        two.result()
    assert refused.value.limit == "loss-day"
    assert own.players.wallet(player.player_id).balance == 10_000 - STAKE

    # the honest counterpart: the same stake and fee of two players, each within their limit
    first, second = Racer(own, hold=True), Racer(own)
    one, two, _ = race(admin, first, _deal(first, other), second, _join(second, third, 3))
    one.result(), two.result()
    assert own.players.wallet(other.player_id).balance == 10_000 - STAKE
    assert own.players.wallet(third.player_id).balance == 10_000 - FEE


# --- a duel's seats ---------------------------------------------------------------------------


def test_two_joins_for_a_duel_s_last_seat_seat_one_and_open_another_duel_for_the_other(
    own: Container, admin: Conn
) -> None:
    """The seat is appended at the duel's version read: the second append at that version waits
    for the first's transaction and fails on the events' primary key; the join is tried again
    on the duel as it now is (full), and opens another."""
    opener, p, q = _player(own), _player(own), _player(own)
    duel = own.duels.join(as_player(opener.player_id), opener.player_id, FEE, 2).state.duel_id
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _join(first, p, 2), second, _join(second, q, 2))
    assert waited  # on the duel's stream
    assert one.result().state.duel_id == duel
    assert [s.player_id for s in one.result().state.seats] == [
        str(opener.player_id),
        str(p.player_id),
    ]
    elsewhere = two.result().state
    assert elsewhere.duel_id != duel
    assert [s.player_id for s in elsewhere.seats] == [str(q.player_id)]
    assert [s.player_id for s in own.duels.duel(uuid.UUID(duel)).state.seats] == [
        str(opener.player_id),
        str(p.player_id),
    ]

    # the honest counterpart: a duel with room for both seats both, the second after a retry
    opener, p, q = _player(own), _player(own), _player(own)
    duel = own.duels.join(as_player(opener.player_id), opener.player_id, FEE, 5).state.duel_id
    first, second = Racer(own, hold=True), Racer(own)
    one, two, _ = race(admin, first, _join(first, p, 5), second, _join(second, q, 5))
    assert one.result().state.duel_id == two.result().state.duel_id == duel
    seated = {s.player_id for s in own.duels.duel(uuid.UUID(duel)).state.seats}
    assert seated == {str(opener.player_id), str(p.player_id), str(q.player_id)}


# --- a seed's commitment ----------------------------------------------------------------------


def test_two_duels_opened_on_one_commitment_keep_one_secret(
    own: Container, admin: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two joins each open a duel, dealt from the same seed: neither can see the other's
    DuelOpened, but the second's keep_seed waits on the first's claim of the commitment
    (deal_commitments) and is refused once it commits."""
    seed = bytes([0x36]) * 32
    monkeypatch.setattr(shuffle, "new_server_seed", lambda: seed)
    p, q = _player(own), _player(own)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _join(first, p, 6), second, _join(second, q, 6))
    assert waited
    kept = one.result().state.duel_id
    with pytest.raises(CommitmentTaken) as refused:  # 409 commitment-taken, not a 500
        two.result()
    assert isinstance(refused.value.__cause__, psycopg.errors.CheckViolation)
    row = admin.execute(
        "SELECT game_id, certification FROM deal_commitments WHERE commitment = %s",
        (shuffle.commitment(seed),),
    ).fetchone()
    assert row == (uuid.UUID(kept), False)
    assert own.players.wallet(q.player_id).balance == 10_000  # nothing moved
    monkeypatch.undo()

    # the honest counterpart: two duels opened on seeds of their own (four seats: no duel of
    # this module's is open to join) both keep them
    p, q = _player(own), _player(own)
    first, second = Racer(own, hold=True), Racer(own)
    one, two, _ = race(admin, first, _join(first, p, 4), second, _join(second, q, 4))
    duels = [uuid.UUID(one.result().state.duel_id), uuid.UUID(two.result().state.duel_id)]
    assert duels[0] != duels[1]  # the second could not see the first's duel to join it
    found = admin.execute(
        "SELECT count(*) FROM game_seeds WHERE game_id = ANY (%s)", (duels,)
    ).fetchone()
    assert found == (2,)


# --- a session's time limit -------------------------------------------------------------------


def _in_session(admin: Conn, player: PlayerRow) -> RequestContext:
    """The player in the session mint_test_session minted, with its start (so the session's
    checks run)."""
    row = admin.execute(
        "SELECT created_at FROM player_sessions WHERE player_id = %s", (player.player_id,)
    ).fetchone()
    assert row is not None
    return RequestContext(
        Actor(str(player.player_id), "player"),
        session_started=row[0],
        credential=player_token(player.player_id),
    )


def test_a_deal_racing_a_session_time_limit_set_in_its_session_waits_and_is_refused(
    own: Container, admin: Conn
) -> None:
    """Ten minutes into the session the player sets a session-time limit of 5 minutes while
    dealing: the deal waits for the limit's transaction and reads it."""
    later = lambda: system_clock() + timedelta(minutes=10)  # noqa: E731
    player, other = _player(own), _player(own)
    setting = Racer(own, hold=True, clock=later)
    dealing = Racer(own, clock=later)
    me = _in_session(admin, player)
    one, two, waited = race(
        admin,
        setting,
        lambda: setting.safer.set_limit(me, player.player_id, "session-time", 5),
        dealing,
        lambda: dealing.games.start(me, player.player_id, "vegas-draw1", STAKE),
    )
    assert waited
    one.result()
    with pytest.raises(LimitExceeded) as refused:
        two.result()
    assert refused.value.limit == "session-time"

    # the honest counterpart: another player's deal in their own session, racing the same
    setting, dealing = Racer(own, hold=True, clock=later), Racer(own, clock=later)
    one, two, _ = race(
        admin,
        setting,
        lambda: setting.safer.set_limit(me, player.player_id, "session-time", 5),
        dealing,
        lambda: dealing.games.start(
            _in_session(admin, other), other.player_id, "vegas-draw1", STAKE
        ),
    )
    one.result()
    assert two.result().state.player_id == str(other.player_id)


# --- one account per external reference -------------------------------------------------------


def _open(racer: Racer, external_ref: str, currency: str = "GBP") -> Callable[[], Opened]:
    return lambda: racer.players.open_account(OPERATOR, external_ref, currency)


def test_two_openings_of_one_external_reference_open_one_account(
    own: Container, admin: Conn
) -> None:
    """The second opening waits for the first's (a lock on the reference) and then answers the
    account it opened, as a second opening after it does: never a unique violation."""
    ref = f"ext-{uuid.uuid4()}"
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _open(first, ref), second, _open(second, ref))
    assert waited
    opened, again = one.result(), two.result()
    assert (opened.created, again.created) == (True, False)
    assert again.row == opened.row
    found = admin.execute("SELECT count(*) FROM players WHERE external_ref = %s", (ref,))
    assert found.fetchone() == (1,)

    # the honest counterpart: two references, two accounts, neither waiting on the other
    refs = f"ext-{uuid.uuid4()}", f"ext-{uuid.uuid4()}"
    first, second = Racer(own, hold=True), Racer(own)
    one, two, waited = race(admin, first, _open(first, refs[0]), second, _open(second, refs[1]))
    assert not waited
    assert (one.result().created, two.result().created) == (True, True)
    assert one.result().row.player_id != two.result().row.player_id


# --- the operator's switches ------------------------------------------------------------------

#: The game the switch races deal (no other test of this module deals it), and one it does not.
SWITCHED, OTHER = "vegas-draw3", "golf"


def _target(scope: Scope, player: PlayerRow, game: str = SWITCHED) -> str:
    return {
        "all": EVERYONE,
        "player": str(player.player_id),
        "game": game,
        "version": GAMES[game].rules_version,
    }[scope]


def _switch(racer: Racer, scope: Scope, target: str, enabled: bool) -> Callable[[], Any]:
    return lambda: racer.controls.switch(OPERATOR, scope, target, enabled, "the race")


@pytest.fixture
def switched_back(own: Container) -> Iterator[list[tuple[Scope, str]]]:
    """The switches a test turns off, on again after it (the module's other deals need them)."""
    thrown: list[tuple[Scope, str]] = []
    yield thrown
    for scope, target in thrown:
        own.controls.switch(OPERATOR, scope, target, True, "the race is over")


@pytest.mark.parametrize("scope", ["all", "player", "game", "version"])
def test_a_deal_racing_a_switch_that_covers_it_waits_and_is_refused(
    own: Container, admin: Conn, switched_back: list[tuple[Scope, str]], scope: Scope
) -> None:
    """The switch is being recorded (held before its commit) when the deal checks: the deal
    waits on the switch's lock (migrations/0038), then reads it and is refused."""
    player = _player(own)
    target = _target(scope, player)
    switched_back.append((scope, target))
    switching, dealing = Racer(own, hold=True), Racer(own)
    one, two, waited = race(
        admin,
        switching,
        _switch(switching, scope, target, False),
        dealing,
        _deal(dealing, player, SWITCHED),
    )
    assert waited
    assert not one.result().enabled
    with pytest.raises(Disabled) as refused:
        two.result()
    assert (refused.value.scope, refused.value.target) == (scope, target)
    assert own.players.wallet(player.player_id).balance == 10_000  # nothing staked


@pytest.mark.parametrize("scope", ["player", "game", "version"])
def test_a_switch_that_does_not_cover_a_deal_neither_holds_nor_stops_it(
    own: Container, admin: Conn, switched_back: list[tuple[Scope, str]], scope: Scope
) -> None:
    """The honest counterpart: another player's switch, another game's, another version's."""
    player, other = _player(own), _player(own)
    target = _target(scope, other, OTHER)
    switched_back.append((scope, target))
    switching, dealing = Racer(own, hold=True), Racer(own)
    one, two, waited = race(
        admin,
        switching,
        _switch(switching, scope, target, False),
        dealing,
        _deal(dealing, player, SWITCHED),
    )
    assert not waited
    assert not one.result().enabled
    assert two.result().state.player_id == str(player.player_id)


def test_a_switch_racing_a_deal_it_covers_waits_for_the_deal_and_then_holds(
    own: Container, admin: Conn, switched_back: list[tuple[Scope, str]]
) -> None:
    """The reverse order: the deal is in flight (held before its commit) when the game is
    switched off; the switch waits for the deal, which goes through, and the next deal of the
    game is refused."""
    player = _player(own)
    switched_back.append(("game", SWITCHED))
    dealing, switching = Racer(own, hold=True), Racer(own)
    one, two, waited = race(
        admin,
        dealing,
        _deal(dealing, player, SWITCHED),
        switching,
        _switch(switching, "game", SWITCHED, False),
    )
    assert waited
    dealt = one.result()
    assert not two.result().enabled
    assert own.players.wallet(player.player_id).balance == 10_000 - STAKE
    own.games.collect(as_player(player.player_id), uuid.UUID(dealt.state.game_id))
    with pytest.raises(Disabled):
        _deal(Racer(own), player, SWITCHED)()


def test_a_duel_join_racing_a_switch_of_its_player_waits_and_is_refused(
    own: Container, admin: Conn, switched_back: list[tuple[Scope, str]]
) -> None:
    """A join checks the same switches as a deal, under the same locks."""
    player = _player(own)
    switched_back.append(("player", str(player.player_id)))
    switching, joining = Racer(own, hold=True), Racer(own)
    one, two, waited = race(
        admin,
        switching,
        _switch(switching, "player", str(player.player_id), False),
        joining,
        _join(joining, player, 5),
    )
    assert waited
    one.result()
    with pytest.raises(Disabled):
        two.result()
    assert own.players.wallet(player.player_id).balance == 10_000
