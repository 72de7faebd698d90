"""Whole-history audits and single-game verification through the real PostgreSQL, including
tampering behind the database's back."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core.game_verification import Finding
from service.services import history_audits as audit
from service.services.unit_of_work import UnitOfWork
from service.storage.audit_reads import AuditReads
from tests.credentials import sign_checkpoint
from tests.dbtools import ScratchDatabase
from tests.integration.conftest import OPERATOR, World, as_player


def _run(container: Container, scope: audit.Scope) -> audit.AuditStatus:
    with container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, scope, "test-auditor")
    return _check(container, audit_id, chunks)


def _check(
    container: Container,
    audit_id: uuid.UUID,
    chunks: list[list[str]],
    log_check: audit.LogCheck | None = None,
) -> audit.AuditStatus:
    """Check every chunk of a started audit here, as the workers would; how it stands then."""
    for units in chunks:
        audit.check_chunk(
            container.audit_unit_of_work,
            audit_id,
            units,
            container.settings.paytables,
            log_check or container.anchors.findings,
        )
    with container.audit_unit_of_work() as uow:
        found = audit.status(uow, audit_id)
    assert found is not None
    return found


def _history(world: World) -> dict[str, Any]:
    a = world.player(balance=5_000)
    won = world.easy_game(a)
    gid = uuid.UUID(won.state.game_id)
    for _ in range(2):
        world.c.games.play(as_player(a.player_id), gid, g.Draw())
        world.c.games.play(as_player(a.player_id), gid, g.MoveCards("waste", "foundation"))
    world.c.games.collect(as_player(a.player_id), gid)
    b = world.player(balance=5_000)
    seeded = world.game(b)  # a real shuffle, with a commitment and a revealed seed
    world.c.games.play(as_player(b.player_id), uuid.UUID(seeded.state.game_id), g.Draw())
    world.c.games.collect(as_player(b.player_id), uuid.UUID(seeded.state.game_id))
    voided = world.game(b)
    world.c.games.void(OPERATOR, uuid.UUID(voided.state.game_id), "test")
    world.game(a)  # open
    return {"won": won.state.game_id, "seeded": seeded.state.game_id, "a": a, "b": b}


def _tamper(admin: psycopg.Connection[Any], sql: str, *params: object) -> None:
    with admin.transaction():
        admin.execute("SET LOCAL session_replication_role = replica")  # around the triggers
        admin.execute(sql, params)


def test_an_audit_of_a_clean_history_finds_nothing(fresh_container: Container) -> None:
    _history(World(fresh_container))
    result = _run(fresh_container, audit.Scope("all"))
    assert result.status == "done"
    assert result.total == result.checked == 4 + 2 + 1 + 1  # games, players, ledger, log
    assert result.failed_units == 0
    assert result.findings == ()
    assert result.finished_at is not None


def test_an_edited_event_is_named_by_game_and_version(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    history = _history(World(fresh_container))
    stream = f"game-{history['won']}"
    _tamper(
        fresh_admin_conn,
        "UPDATE events SET data = jsonb_set(data, '{winnings}', '5000') "
        "WHERE stream_id = %s AND type = 'Collected'",
        stream,
    )
    result = _run(fresh_container, audit.Scope("all"))
    assert result.failed_units == 1
    game_ids = {f.game_id for f in result.findings}
    assert game_ids == {uuid.UUID(history["won"])}
    checks = {(f.check, f.location) for f in result.findings}
    assert ("hash-chain", f"{stream} v7") in checks  # the edited event itself
    assert ("payout", f"{stream} v7") in checks  # 2 cards x 50 was paid, not 5000
    assert any(f.check == "ledger" for f in result.findings)


def test_an_edited_posting_is_named(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    history = _history(World(fresh_container))
    row = fresh_admin_conn.execute(
        "SELECT p.posting_id FROM postings p JOIN ledger_transactions t USING (transaction_id) "
        "WHERE t.cause_stream = %s AND t.kind = 'stake' AND p.account_id LIKE 'player:%%'",
        (f"game-{history['seeded']}",),
    ).fetchone()
    assert row is not None
    posting_id = row[0]
    _tamper(
        fresh_admin_conn,
        "UPDATE postings SET amount = amount + 100, balance_after = balance_after + 100 "
        "WHERE posting_id = %s",
        posting_id,
    )
    result = _run(fresh_container, audit.Scope("all"))
    locations = {f.location for f in result.findings}
    assert f"posting {posting_id}" in locations
    assert uuid.UUID(history["seeded"]) in {f.game_id for f in result.findings}
    assert any(f.unit == audit.LEDGER_UNIT for f in result.findings)


def test_a_deleted_cashier_event_is_found_through_its_posting(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    """Deleting a stream's last event leaves a chain that looks whole; the ledger posting that
    names the deleted event gives it away."""
    history = _history(World(fresh_container))
    stream = f"player-{history['a'].player_id}"
    _tamper(fresh_admin_conn, "DELETE FROM events WHERE stream_id = %s AND version = 2", stream)
    result = _run(fresh_container, audit.Scope("all"))
    mine = [f for f in result.findings if f.unit == stream]
    assert [(f.check, f.expected, f.found) for f in mine] == [
        ("ledger", f"an event at {stream} v2", "none")
    ]
    assert mine[0].location.startswith("posting ")


def test_a_stake_committed_between_the_ledger_unit_s_reads_is_no_finding(
    fresh_container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: the ledger unit read every posting, then every balance, in two statements, so
    an honest stake committed between them looked like tampering (the house's stakes and the
    player's balance each off by the stake). Here another connection deals a game through the
    service, and commits, right after the postings are read: the unit sees neither or both."""
    world = World(fresh_container)
    _history(world)
    player = world.player(balance=5_000)
    with fresh_container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "test-auditor")
    read_postings = AuditReads.all_postings
    dealt: list[str] = []

    def postings_then_a_stake(reads: AuditReads) -> Any:
        postings = read_postings(reads)
        if not dealt:  # once, before the balances are read
            dealt.append(world.game(player, stake=520).state.game_id)
        return postings

    monkeypatch.setattr(AuditReads, "all_postings", postings_then_a_stake)
    result = _check(fresh_container, audit_id, chunks)
    assert len(dealt) == 1  # the stake did commit between the two reads
    assert world.balance(player) == 5_000 - 520
    assert (result.status, result.checked, result.total) == ("done", 9, 4 + 3 + 1 + 1)
    assert [(f.unit, f.location) for f in result.findings] == []
    # The stake is real and honest: the next audit checks it, and finds nothing either.
    monkeypatch.undo()
    assert _run(fresh_container, audit.Scope("all")).findings == ()


def test_a_deposit_committed_between_a_chunk_s_reads_is_no_finding(
    fresh_container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk reads its streams' events, then their postings: a deposit committed between the
    two (its event and its posting in one transaction) is in both or in neither."""
    world = World(fresh_container)
    history = _history(world)
    player = history["a"].player_id
    with fresh_container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "test-auditor")
    read_postings = AuditReads.postings_of
    deposited: list[int] = []

    def a_deposit_then_postings(reads: AuditReads, streams: Any) -> Any:
        if f"player-{player}" in streams and not deposited:
            posted = world.c.players.deposit(OPERATOR, player, 1_000, f"late-{uuid.uuid4()}")
            deposited.append(posted.amount)
        return read_postings(reads, streams)

    monkeypatch.setattr(AuditReads, "postings_of", a_deposit_then_postings)
    result = _check(fresh_container, audit_id, chunks)
    assert deposited == [1_000]
    assert [(f.unit, f.location) for f in result.findings] == []


def test_the_log_unit_reads_its_snapshot_while_an_append_is_in_flight(
    fresh_container: Container, fresh_database: ScratchDatabase
) -> None:
    """The log unit reads the log in the chunk's snapshot, where log_horizon() would wait for
    that snapshot to move on, which it never does: an append in flight when the snapshot was
    taken held it until the statement timed out. The snapshot's own head is used instead."""
    _history(World(fresh_container))
    sign_checkpoint(fresh_container, "test")
    with fresh_container.audit_unit_of_work() as uow:
        audit_id, _ = audit.start(uow, audit.Scope("all"), "test-auditor")
    with psycopg.connect(fresh_database.admin_url) as in_flight:
        in_flight.execute("SELECT pg_current_xact_id()")  # an id, as append_events takes first
        ends = threading.Timer(0.5, in_flight.commit)  # a short append, ending mid-chunk
        ends.start()
        try:
            result = _check(fresh_container, audit_id, [[audit.LOG_UNIT]])
        finally:
            ends.join()
    assert (result.checked, result.findings) == (1, ())


def test_a_chunk_s_snapshot_may_idle_while_the_worker_verifies(
    fresh_container: Container,
) -> None:
    """The snapshot stays open while the worker verifies what it read (every checkpoint's
    signature before the log is read): longer than a session may otherwise idle in a
    transaction, here 0.3 s, without the server ending it."""
    _history(World(fresh_container))
    impatient = build(
        replace(fresh_container.settings, idle_in_transaction_timeout_ms=300), migrate=False
    )

    def slow_log_check(uow: UnitOfWork) -> list[Finding]:
        uow.checkpoints.all()
        time.sleep(1.0)  # verifying, between two reads of the snapshot
        return impatient.anchors.findings(uow)

    try:
        with impatient.audit_unit_of_work() as uow:
            audit_id, chunks = audit.start(uow, audit.Scope("all"), "test-auditor")
        result = _check(impatient, audit_id, chunks, slow_log_check)
    finally:
        impatient.close()
    assert (result.status, result.findings) == ("done", ())


def test_an_audit_of_one_player_or_a_date_range(fresh_container: Container) -> None:
    history = _history(World(fresh_container))
    mine = _run(fresh_container, audit.Scope("player", player_id=history["b"].player_id))
    assert mine.total == 2 + 1 + 1  # b's two games, b's stream, the ledger
    assert mine.findings == ()
    from datetime import UTC, datetime

    today = datetime.now(UTC).date()
    dated = _run(fresh_container, audit.Scope("dates", start=today, end=today))
    assert dated.total == 4
    assert dated.checked == 4


def test_running_a_chunk_twice_records_it_once(fresh_container: Container) -> None:
    _history(World(fresh_container))
    with fresh_container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, audit.Scope("all"), "test")
    paytables = fresh_container.settings.paytables
    log_check = fresh_container.anchors.findings
    first = audit.check_chunk(
        fresh_container.audit_unit_of_work, audit_id, chunks[0], paytables, log_check
    )
    again = audit.check_chunk(
        fresh_container.audit_unit_of_work, audit_id, chunks[0], paytables, log_check
    )
    assert (first, again) == (8, 0)
    with fresh_container.audit_unit_of_work() as uow:
        found = audit.status(uow, audit_id)
    assert found is not None
    assert (found.checked, found.status) == (8, "done")


def test_an_audit_whose_chunk_was_lost_is_resumed_and_finishes(container: Container) -> None:
    world = World(container)
    player = world.player(balance=5_000)
    world.easy_game(player)
    scope = audit.Scope("player", player_id=player.player_id)
    with container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, scope, "test-auditor")
    (units,) = chunks  # a game, the player's stream, the ledger: one chunk
    # The chunk is lost (its worker was killed): nothing was checked. The sweeper, once the
    # audit has been quiet long enough, sends exactly the unchecked units again.
    with container.audit_unit_of_work() as uow:
        assert audit.resume(uow, quiet=timedelta(hours=1)) == []  # not quiet for long yet
    with container.audit_unit_of_work() as uow:
        resumed = dict(audit.resume(uow, quiet=timedelta(0)))
    assert resumed[audit_id] == [sorted(units)]
    audit.check_chunk(
        container.audit_unit_of_work, audit_id, resumed[audit_id][0], {}, container.anchors.findings
    )
    with container.audit_unit_of_work() as uow:
        found = audit.status(uow, audit_id)
    assert found is not None
    assert (found.status, found.checked, found.total) == ("done", len(units), len(units))


def test_an_audit_that_keeps_losing_work_fails_with_its_reason(container: Container) -> None:
    world = World(container)
    player = world.player(balance=5_000)
    world.easy_game(player)
    scope = audit.Scope("player", player_id=player.player_id)
    with container.audit_unit_of_work() as uow:
        audit_id, _ = audit.start(uow, scope, "test-auditor")
    for _ in range(3):  # re-sent three times, lost every time
        with container.audit_unit_of_work() as uow:
            assert audit_id in dict(audit.resume(uow, quiet=timedelta(0)))
    with container.audit_unit_of_work() as uow:
        assert audit_id not in dict(audit.resume(uow, quiet=timedelta(0)))
        found = audit.status(uow, audit_id)
    assert found is not None
    assert found.status == "failed"
    assert found.failure is not None
    assert "never checked after 3 re-sends" in found.failure
    assert found.finished_at is not None
