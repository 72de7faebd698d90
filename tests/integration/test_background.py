"""Background work on real Celery processes, consuming from the real broker: audits fanned
out to a worker, idle games collected and daily totals projected on beat's schedule, and
tasks delivered twice changing nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg

from service.bootstrap import Container
from service.core import game_decider as g
from service.core.context import Actor
from service.runtime.config import Settings
from service.services import history_audits as audit
from tests.credentials import staff
from tests.integration.conftest import World, as_player
from tests.workers import celery_processes, logs, wait_for

AUDITOR = Actor("test-auditor", "auditor")


def _finished(container: Container, audit_id: uuid.UUID) -> audit.AuditStatus:
    def done() -> bool:
        return container.audits.audit(audit_id).status == "done"

    assert wait_for(done), logs(container.settings)
    return container.audits.audit(audit_id)


def _won_two_cards(world: World) -> tuple[Any, uuid.UUID]:
    player = world.player(balance=520)
    game_id = uuid.UUID(world.easy_game(player).state.game_id)
    me = as_player(player.player_id)
    for _ in range(2):  # two aces up: 2 x 50 held
        world.c.games.play(me, game_id, g.Draw())
        world.c.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    return player, game_id


def _auditor_key(container: Container) -> str:
    """A live auditor's key as presented: the service only asks for an audit (0037)."""
    credential = staff(container, "auditor").credential
    assert credential is not None
    return credential


def test_a_worker_runs_an_audit_to_the_end(container: Container, worker: Settings) -> None:
    world = World(container)
    player, game_id = _won_two_cards(world)
    container.games.collect(as_player(player.player_id), game_id)

    started = container.audits.start_audit(
        audit.Scope("player", player_id=player.player_id), _auditor_key(container)
    )
    # Answered once planned: three units may be checked, and the audit done, by then.
    assert started.status in ("running", "done")
    result = _finished(container, started.audit_id)
    assert result.total == result.checked == 3  # the game, the player's stream, the ledger
    assert result.failed_units == 0
    assert result.findings == ()


def test_a_worker_audit_names_an_event_edited_behind_the_service(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(fresh_container)
    player, game_id = _won_two_cards(world)
    world.c.games.collect(as_player(player.player_id), game_id)
    stream = f"game-{game_id}"
    with fresh_admin_conn.transaction():
        fresh_admin_conn.execute("SET LOCAL session_replication_role = replica")
        fresh_admin_conn.execute(
            "UPDATE events SET data = jsonb_set(data, '{winnings}', '5000') "
            "WHERE stream_id = %s AND type = 'Collected'",
            (stream,),
        )
    with celery_processes(fresh_container.settings):
        started = fresh_container.audits.start_audit(
            audit.Scope("all"), _auditor_key(fresh_container)
        )
        result = _finished(fresh_container, started.audit_id)
    assert result.checked == result.total
    assert {f.game_id for f in result.findings} == {game_id}
    assert ("hash-chain", f"{stream} v7") in {(f.check, f.location) for f in result.findings}


def test_a_chunk_delivered_twice_is_recorded_once(
    container: Container, worker: Settings, admin_conn: psycopg.Connection[Any]
) -> None:
    world = World(container)
    player, _ = _won_two_cards(world)
    scope = audit.Scope("player", player_id=player.player_id)
    with container.audit_unit_of_work() as uow:
        audit_id, chunks = audit.start(uow, scope, AUDITOR.id)
    (units,) = chunks
    for _ in range(2):  # at-least-once delivery: the same chunk twice
        container.send_task("vegas.audit_chunk", str(audit_id), units)
    result = _finished(container, audit_id)
    second = container.send_task("vegas.audit_chunk", str(audit_id), units)
    assert wait_for(lambda: second.ready() or _recorded_twice(admin_conn, audit_id), timeout=30)
    assert result.checked == result.total == len(units)
    assert not _recorded_twice(admin_conn, audit_id)
    assert container.audits.audit(audit_id).checked == len(units)


def _recorded_twice(admin: psycopg.Connection[Any], audit_id: uuid.UUID) -> bool:
    row = admin.execute(
        "SELECT count(*) - count(DISTINCT unit) FROM audit_units WHERE audit_id = %s",
        (audit_id,),
    ).fetchone()
    assert row is not None
    return int(row[0]) > 0


def test_beat_collects_idle_games_keeps_the_daily_totals_and_signs_checkpoints(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    """Beat and a worker, as `make run` starts them, with an idle time of 2 seconds."""
    world = World(fresh_container)
    player, game_id = _won_two_cards(world)
    # The database's floor for idle collection (migrations/0031), as an owner would set it.
    fresh_admin_conn.execute("UPDATE collection_policy SET idle_after = interval '2 seconds'")
    schedule = {
        "IDLE_COLLECT_AFTER_SECONDS": "2",
        "IDLE_CHECK_EVERY_SECONDS": "1",
        "PROJECTOR_EVERY_SECONDS": "1",
        "CHECKPOINT_EVERY_SECONDS": "1",
    }
    with celery_processes(fresh_container.settings, beat=True, **schedule):

        def collected() -> bool:
            return fresh_container.games.game(game_id).state.status == "collected"

        assert wait_for(collected, timeout=90), logs(fresh_container.settings)

        def projected() -> bool:
            row = fresh_admin_conn.execute(
                "SELECT coalesce(sum(games_finished), 0) FROM daily_totals"
            ).fetchone()
            return row is not None and int(row[0]) == 1

        assert wait_for(projected, timeout=60), logs(fresh_container.settings)

        def anchored() -> bool:
            """A checkpoint signed by beat covers the whole log, the collection included."""
            row = fresh_admin_conn.execute(
                "SELECT (SELECT max(position) FROM log_checkpoints WHERE requested_by = 'beat')"
                " >= (SELECT max(position) FROM events)"
            ).fetchone()
            return row is not None and row[0] is True

        assert wait_for(anchored, timeout=60), logs(fresh_container.settings)
    with fresh_container.unit_of_work() as uow:
        assert fresh_container.anchors.findings(uow) == []
    state = fresh_container.games.game(game_id).state
    assert (state.end_reason, state.payout) == ("timeout", 100)
    assert world.sandbox_balance(player) == 100 - 520  # a certification game's money
    events = fresh_admin_conn.execute(
        "SELECT count(*) FROM events WHERE stream_id = %s AND type = 'Collected'",
        (f"game-{game_id}",),
    ).fetchone()
    assert events == (1,)


def test_the_nightly_reconciliation_is_stored_by_a_worker(fresh_container: Container) -> None:
    """On a database of its own: the shared one's reconciliation of today stays unstored for
    the tests that compute it live."""
    World(fresh_container).game()
    today = datetime.now(UTC).date()
    with celery_processes(fresh_container.settings):
        fresh_container.send_task("vegas.reconcile_day", today.isoformat())

        def stored() -> bool:
            return fresh_container.reports.reconciliation(today).stored

        assert wait_for(stored), logs(fresh_container.settings)
    found = fresh_container.reports.reconciliation(today)
    assert found.result["date"] == today.isoformat()
    assert found.result["reconciled"] is True
    assert found.computed_at is not None
