"""Upgrade in place from the release before (issue 36): a database written by c3fa770's own code
(tests/fixtures/release-c3fa770: its data on its schema) is migrated with this release, and then
every stream, posting and checkpoint still verifies, its staff key and its players' sessions
still work through the database's new checks of who asks, and its sealed secrets still open."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from service.bootstrap import build
from service.core import game_decider as g
from service.core.context import RequestContext
from service.runtime import database as db
from service.services import history_audits as audit
from tests.conftest import _test_settings
from tests.credentials import sign_checkpoint
from tests.dbtools import bare_database, migrate_through
from tests.integration.test_audit import _run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "release-c3fa770"
#: The release's last migration.
RELEASE_SCHEMA = "0027.history-row-lookup"


def _restore(admin_url: str) -> None:
    """The release's rows, as its code wrote them: restored by the server's superuser with the
    triggers off (they are the release's rows, not new writes; psql's meta-commands dropped)."""
    lines = (FIXTURE / "data.sql").read_text().splitlines()
    script = "\n".join(line for line in lines if not line.startswith("\\"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(script.encode())  # a dump's own statements, trusted
        # The upgrade happens while the sessions are live (they were minted when it was written).
        conn.execute(
            "UPDATE public.player_sessions SET last_used_at = now(),"
            " expires_at = now() + interval '8 hours'"
        )


def test_a_database_written_by_the_release_before_upgrades_in_place(
    admin_server_url: str, data_dir: Path
) -> None:
    secrets: dict[str, Any] = json.loads((FIXTURE / "secrets.json").read_text())
    with bare_database(admin_server_url, "vegas_test_release") as scratch:
        migrate_through(scratch.owner_url, RELEASE_SCHEMA)
        _restore(scratch.admin_url)

        applied = db.migrate(scratch.owner_url)  # in place, with this release
        assert {"0028.ledger-meaning", "0030.who-asks", "0031.what-a-write-means"} <= set(applied)

        settings = replace(
            _test_settings(scratch, data_dir),
            seed_keys=(secrets["seed_key"],),
            anchor_key_file=FIXTURE / "anchor-signing-key.pem",
        )
        c = build(settings, migrate=False)
        try:
            assert _run(c, audit.Scope("all")).findings == ()  # all of it still verifies

            # Its operator's key still acts, through the database's check of who asks.
            key = secrets["operator_key"]
            desk = c.access.authenticate(key)
            assert desk is not None
            operator = RequestContext(desk.actor, credential=key)
            ann = secrets["players"]["ann"]
            ann_id = uuid.UUID(ann["id"])
            c.players.deposit(operator, ann_id, 1_000, "after-the-upgrade")

            # Its player's session still plays and collects the game left open (its sealed seed
            # still opens), and deals again.
            found = c.access.authenticate(ann["token"])
            assert found is not None
            me = RequestContext(
                found.actor, session_started=found.session_started, credential=ann["token"]
            )
            game_id = uuid.UUID(secrets["open_game"])
            c.games.play(me, game_id, g.Draw())
            assert c.games.collect(me, game_id).state.status == "collected"
            c.games.start(me, ann_id, "golf", 520)

            made, created = sign_checkpoint(c, "beat")
            assert created
            assert made.seq == 2
            assert _run(c, audit.Scope("all")).findings == ()
        finally:
            c.close()
