"""Anchored history over HTTP and the command line: sign a checkpoint on demand, export it,
check it against the live log and offline with the published key."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from events.anchor import load_public_keys, verify_document
from service.app import create_app
from service.bootstrap import Container
from service.worker import tasks
from tests.api.client import Http, assert_problem
from tests.integration.conftest import OPERATOR
from tests.workers import worker_environment


def _sign_now(http: Http) -> dict[str, Any]:
    # Something new in the log (a player opened), so a checkpoint is signed.
    opened = http.post(
        "/v1/players",
        http.operator_key,
        json={"external_ref": f"anchor-{uuid.uuid4()}", "currency": "GBP"},
    )
    assert opened.status_code == 201, opened.get_json()
    made = http.post("/v1/checkpoints", http.auditor_key)
    assert made.status_code == 201, made.get_json()
    body: dict[str, Any] = made.get_json()
    assert made.headers["Location"].endswith(f"/v1/checkpoints/{body['seq']}")
    return body


def test_a_checkpoint_is_signed_exported_and_verified(http: Http) -> None:
    made = _sign_now(http)
    assert made["format"] == "vegas-solitaire/checkpoint/1"
    assert made["requested_by"].startswith("key:")
    assert made["events"] >= made["streams"] >= 1

    exported = http.get(f"/v1/checkpoints/{made['seq']}", http.operator_key)
    assert exported.status_code == 200
    assert "attachment" in exported.headers["Content-Disposition"]
    document = exported.get_json()
    fields = {k: v for k, v in made.items() if k not in ("signature", "requested_by")}
    assert document["checkpoint"] == fields
    assert document["signature"] == made["signature"]

    # Offline: the published key, fetched without any token, is all an auditor needs.
    published = http.get("/v1/checkpoints/keys")
    assert published.status_code == 200
    keys = load_public_keys("".join(k["public_key"] for k in published.get_json()["keys"]))
    assert verify_document(document, keys).seq == made["seq"]

    checked = http.post("/v1/checkpoints/verify", http.auditor_key, json=document)
    assert checked.status_code == 200
    assert checked.get_json() == {"verified": True, "checkpoint": fields, "findings": []}

    listed = http.get("/v1/checkpoints?limit=1", http.auditor_key).get_json()
    assert listed["items"][0]["seq"] >= made["seq"]


def test_an_altered_checkpoint_does_not_verify(http: Http) -> None:
    made = _sign_now(http)
    document = http.get(f"/v1/checkpoints/{made['seq']}", http.auditor_key).get_json()
    document["checkpoint"]["events"] += 1
    checked = http.post("/v1/checkpoints/verify", http.auditor_key, json=document).get_json()
    assert checked["verified"] is False
    assert checked["checkpoint"] is None
    assert [f["check"] for f in checked["findings"]] == ["checkpoint-signature"]


def test_a_malformed_checkpoint_or_an_unknown_one_is_a_clear_problem(http: Http) -> None:
    bad = http.post("/v1/checkpoints/verify", http.auditor_key, json={"checkpoint": {"seq": "one"}})
    assert_problem(bad, 422, "validation-error")
    assert_problem(http.get("/v1/checkpoints/2000000000", http.auditor_key), 404, "not-found")
    assert_problem(http.get("/v1/checkpoints?limit=0", http.auditor_key), 422, "validation-error")


def test_the_command_line_exports_and_verifies(
    container: Container, http: Http, tmp_path: Path
) -> None:
    _sign_now(http)
    runner = create_app(container).test_cli_runner()
    env = worker_environment(container.settings)
    file = tmp_path / "checkpoint.json"
    exported = runner.invoke(args=["checkpoints", "export", "-o", str(file)], env=env)
    assert exported.exit_code == 0, exported.output
    seq = json.loads(file.read_text())["checkpoint"]["seq"]

    verified = runner.invoke(args=["checkpoints", "verify", str(file)], env=env)
    assert verified.exit_code == 0, verified.output
    assert f"checkpoint {seq}: verified" in verified.output

    document = json.loads(file.read_text())
    document["checkpoint"]["log_hash"] = "0" * 64
    file.write_text(json.dumps(document))
    failed = runner.invoke(args=["checkpoints", "verify", str(file)], env=env)
    assert failed.exit_code == 1
    assert "FAILED" in failed.output
    assert "checkpoint-signature" in failed.output


def test_before_the_log_s_first_event_there_is_nothing_to_sign(
    fresh_container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh service (`make run` on a new machine): beat's checkpoint finds nothing to sign
    and says so quietly; asked over HTTP it is a 409 log-empty problem, not a 500; the
    command line says so. Once the log holds an event, the first checkpoint covers it."""
    app = create_app(fresh_container)
    app.config["TESTING"] = True
    auditor = fresh_container.access.create_key("fresh-auditor", "auditor")
    client = Http(app.test_client(), auditor, auditor, auditor)
    assert_problem(client.post("/v1/checkpoints", auditor), 409, "log-empty")
    monkeypatch.setattr(tasks, "_container", fresh_container)  # the worker's services
    assert tasks.checkpoint_log() == 0
    refused = app.test_cli_runner().invoke(
        args=["checkpoints", "create"], env=worker_environment(fresh_container.settings)
    )
    assert refused.exit_code == 1
    assert "nothing to sign" in refused.output
    assert fresh_container.anchors.page(before=None, limit=5) == []

    fresh_container.players.open_account(OPERATOR, "first", "GBP")
    made = client.post("/v1/checkpoints", auditor)
    assert made.status_code == 201, made.get_json()
    assert (made.get_json()["seq"], made.get_json()["events"]) == (1, 1)
