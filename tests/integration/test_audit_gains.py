"""What the whole-history audit gained (issue 36: the insider): the database refuses each of
these forgeries to the service's login (migrations/0028-0032), and the audit, its second and
independent guard, names each in data written any other way: as the owner (through the
shape-only append) or as the server's superuser (triggers off, a constraint dropped), as an
older release or a restored backup might have left it. Each with its honest counterpart."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from events.catalog import GamingSwitched, LimitChanged, PlayerExcluded
from events.codec import encode
from service.bootstrap import Container
from service.core.clock import instant
from service.core.ledger import player_account
from service.services import history_audits as audit
from tests.dbtools import ScratchDatabase
from tests.integration.conftest import OPERATOR, World, as_player
from tests.integration.test_audit import _run, _tamper
from tests.integration.test_insider import _items

Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture
def owner(fresh_database: ScratchDatabase, fresh_container: Container) -> Iterator[Conn]:
    """The owner's login on fresh_container's database (autocommit): writes around the service."""
    with psycopg.connect(fresh_database.owner_url, autocommit=True) as conn:
        yield conn


def _append(owner: Conn, stream: str, event: Any, meta: dict[str, Any] | None = None) -> int:
    """Append a catalog event at the stream's head through the owner's shape-only append (no
    rule of what it means is asked); its version."""
    head = owner.execute(
        "SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %s", (stream,)
    ).fetchone()
    assert head is not None
    type_name, _, data = encode(event)
    owner.execute(
        "SELECT FROM append_events(%s, %s, %s)",
        (stream, head[0], _items((type_name, data), meta=meta)),
    )
    return int(head[0]) + 1


def _found(result: audit.AuditStatus, unit: str | None = None) -> set[tuple[str, str]]:
    return {(f.check, f.location) for f in result.findings if unit is None or f.unit == unit}


def test_safer_gambling_and_the_controls_are_folded_against_their_rules(
    fresh_container: Container, owner: Conn
) -> None:
    """A time-out over a five-year self-exclusion, one ending yesterday, a limit lifted at once,
    and gaming switched back on in a player's name: each named where it stands."""
    world, safer = World(fresh_container), fresh_container.safer
    a = world.player(balance=1_000)
    safer.exclude(as_player(a.player_id), a.player_id, "five-years")
    safer.set_limit(as_player(a.player_id), a.player_id, "deposit-day", 520)
    stream = f"player-{a.player_id}"
    now = datetime.now(UTC)
    shorter = _append(
        owner, stream, PlayerExcluded("six-weeks", "time-out", instant(now + timedelta(weeks=6)))
    )
    ended = _append(
        owner, stream, PlayerExcluded("24-hours", "time-out", instant(now - timedelta(days=1)))
    )
    lifted = _append(owner, stream, LimitChanged("deposit-day", 520, None, instant(now)))
    fresh_container.controls.switch(OPERATOR, "game", "golf", False, "RNG defect")
    switched_on = _append(
        owner,
        "gaming-controls",
        GamingSwitched("game", "golf", True, "cleared"),
        meta={"role": "player", "actor": str(a.player_id)},
    )
    # the honest counterparts: a time-out extended, a limit tightened then loosened a day later
    b = world.player(balance=1_000)
    safer.exclude(as_player(b.player_id), b.player_id, "24-hours")
    safer.exclude(as_player(b.player_id), b.player_id, "one-week")
    safer.exclude(as_player(b.player_id), b.player_id, "24-hours")  # the week stands
    safer.set_limit(as_player(b.player_id), b.player_id, "max-stake", 1_040)
    safer.set_limit(as_player(b.player_id), b.player_id, "max-stake", 520)
    safer.set_limit(as_player(b.player_id), b.player_id, "max-stake", None)

    result = _run(fresh_container, audit.Scope("all"))
    assert _found(result, stream) >= {
        ("safer-gambling", f"{stream} v{shorter}"),
        ("safer-gambling", f"{stream} v{ended}"),
        ("safer-gambling", f"{stream} v{lifted}"),
    }
    assert _found(result, "gaming-controls") == {("controls", f"gaming-controls v{switched_on}")}
    assert _found(result, f"player-{b.player_id}") == set()
    # a one-player audit names them too; the other player's, nothing
    mine = _run(fresh_container, audit.Scope("player", player_id=a.player_id))
    assert ("safer-gambling", f"{stream} v{lifted}") in _found(mine, stream)
    assert _run(fresh_container, audit.Scope("player", player_id=b.player_id)).findings == ()


def test_the_ledger_is_held_to_its_accounts_and_its_causes(
    fresh_container: Container, owner: Conn, fresh_admin_conn: Conn
) -> None:
    """A player's wallet made a house account (no floor), a deposit's cause moved to a stream
    of the insider's naming, a deposit recorded as a withdrawal, and a game's stake paid from
    another player's wallet."""
    world, now = World(fresh_container), datetime.now(UTC)
    a, b, c = world.player(balance=1_000), world.player(balance=700), world.player(balance=900)
    wallet_a = player_account(str(a.player_id), "GBP").account_id
    fresh_admin_conn.execute("ALTER TABLE accounts DROP CONSTRAINT accounts_kind_follows_id")
    _tamper(
        fresh_admin_conn,
        "UPDATE accounts SET kind = 'house-payouts', player_id = NULL WHERE account_id = %s",
        wallet_a,
    )
    # B's deposit, its cause now an event on 'payouts-manual' (appended by the owner)
    forged = _append(owner, "payouts-manual", PlayerExcluded("24-hours", "time-out", instant(now)))
    _tamper(
        fresh_admin_conn,
        "UPDATE ledger_transactions SET cause_stream = 'payouts-manual', cause_version = %s"
        " WHERE cause_stream = %s",
        forged,
        f"player-{b.player_id}",
    )
    # C's deposit recorded as a withdrawal (the same accounts and amounts)
    c_stream = f"player-{c.player_id}"
    _tamper(
        fresh_admin_conn,
        "UPDATE ledger_transactions SET kind = 'withdrawal' WHERE cause_stream = %s",
        c_stream,
    )
    c_posting = fresh_admin_conn.execute(
        "SELECT min(posting_id) FROM postings WHERE cause_stream = %s", (c_stream,)
    ).fetchone()
    # A's game, staked from C's wallet
    game = world.game(a)
    game_stream = f"game-{game.state.game_id}"
    stake = fresh_admin_conn.execute(
        "SELECT posting_id FROM postings WHERE cause_stream = %s AND account_id = %s",
        (game_stream, wallet_a),
    ).fetchone()
    assert stake is not None
    _tamper(
        fresh_admin_conn,
        "UPDATE postings SET account_id = %s WHERE posting_id = %s",
        player_account(str(c.player_id), "GBP").account_id,
        stake[0],
    )
    # the honest counterparts: D's wallet, deposit and game
    d = world.player(balance=600)
    honest = world.game(d)

    result = _run(fresh_container, audit.Scope("all"))
    ledger = _found(result, audit.LEDGER_UNIT)
    assert ("account-kind", f"account {wallet_a}") in ledger
    assert ("ledger-cause", f"payouts-manual v{forged}") in ledger
    assert {check for check, where in ledger if str(d.player_id) in where} == set()
    assert c_posting is not None
    assert ("ledger", f"posting {c_posting[0]}") in _found(result, c_stream)
    assert ("ledger", f"posting {stake[0]}") in _found(result, game_stream)
    assert _found(result, f"player-{d.player_id}") == set()
    assert _found(result, f"game-{honest.state.game_id}") == set()


def test_every_sealed_deal_has_its_secret_kept(
    fresh_container: Container, fresh_admin_conn: Conn
) -> None:
    """A game's sealed secret deleted (never revealed, never payable): named at its deal."""
    world = World(fresh_container)
    lost, kept = world.game(), world.game()
    _tamper(
        fresh_admin_conn,
        "DELETE FROM game_seeds WHERE game_id = %s",
        uuid.UUID(lost.state.game_id),
    )
    result = _run(fresh_container, audit.Scope("all"))
    lost_stream = f"game-{lost.state.game_id}"
    assert _found(result, lost_stream) == {("seed", f"{lost_stream} v2")}
    assert _found(result, f"game-{kept.state.game_id}") == set()
