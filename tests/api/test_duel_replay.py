"""An auditor's replay of a duel: every check passes on an honest duel, and each check catches
what it is there for."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

import pytest

from events import chain
from events.records import RecordedEvent
from service.bootstrap import Container
from service.core.duel_verification import SeatStream, verify_duel
from service.services import finance_books as finance
from service.services import history_audits as audit
from tests.api.client import Http
from tests.api.duel_support import FakeClock, clock, join, seat_call
from tests.api.factories import WalletFactory
from tests.builders import easy_deck

__all__ = ["clock"]


def _settled_duel(http: Http, clock: FakeClock, fee: int) -> tuple[str, list[Any]]:
    players = [WalletFactory.create(balance=5_000).player for _ in range(2)]
    duel_id = join(http, players[0].id, fee, deck=list(easy_deck()))["id"]
    assert join(http, players[1].id, fee)["id"] == duel_id
    for player in players:
        seat_call(http, player.token, duel_id, "deal")
        clock.advance(3)
        seat_call(http, player.token, duel_id, "actions", action="draw")
    clock.advance(3)
    seat_call(http, players[0].token, duel_id, "actions", action="collect")
    done = seat_call(http, players[1].token, duel_id, "actions", action="collect")
    assert done["status"] == "settled"
    return duel_id, players


def test_a_settled_duel_replays_with_every_check_passing(http: Http, clock: FakeClock) -> None:
    duel_id, players = _settled_duel(http, clock, 200)
    replay = http.get(f"/v1/duels/{duel_id}/replay", http.auditor_key).get_json()
    assert replay["label"] == "replay"
    assert replay["verification"]["findings"] == []
    assert set(replay["verification"]["checks"].values()) == {"pass"}
    assert [s["type"] for s in replay["steps"]][:3] == ["DuelOpened", "SeatTaken", "SeatTaken"]
    assert replay["steps"][-1]["type"] == "DuelSettled"
    # A seat's player may replay the duel once it has ended; another player may not see it.
    mine = http.get(f"/v1/duels/{duel_id}/replay", players[0].token)
    assert mine.status_code == 200
    stranger = WalletFactory.create(balance=0).player
    assert http.get(f"/v1/duels/{duel_id}/replay", stranger.token).status_code == 404
    # Each seat's own game verifies with the duel's revealed seed; on its own, its seed check
    # waits for the duel (pending), never fails.
    game_id = http.get(f"/v1/duels/{duel_id}", http.auditor_key).get_json()["seat_list"][0][
        "game_id"
    ]
    alone = http.get(f"/v1/games/{game_id}/replay", http.auditor_key).get_json()
    assert alone["verification"]["findings"] == []
    assert alone["verification"]["checks"]["seed-commitment"] == "pending"


def _rechained(records: list[RecordedEvent], version: int, data: dict[str, Any]) -> list[Any]:
    """The stream with one event's data rewritten and every hash recomputed, as an insider
    rewriting history consistently would leave it."""
    out: list[RecordedEvent] = []
    prev = chain.GENESIS
    for record in records:
        changed = replace(record, data=data) if record.version == version else record
        changed = replace(changed, prev_hash=prev)
        changed = replace(changed, hash=chain.hash_of(changed))
        out.append(changed)
        prev = changed.hash
    return out


def _inputs(container: Container, duel_id: str) -> tuple[list[RecordedEvent], Any, Any]:
    records = container.duels.records(uuid.UUID(duel_id))
    with container.unit_of_work() as uow:
        postings = audit.stream_postings(uow, records[0].stream_id)
        seats = {}
        for record in records:
            if record.type == "SeatDealt":
                stream = f"game-{record.data['game_id']}"
                seats[record.data["game_id"]] = SeatStream(
                    uow.events.read_stream(stream), audit.stream_postings(uow, stream)
                )
    return records, postings, seats


def _failed(result: Any) -> set[str]:
    return {check for check, status in result.checks.items() if status == "fail"}


def test_each_duel_check_catches_a_consistent_rewrite(
    http: Http, clock: FakeClock, container: Container
) -> None:
    duel_id, _ = _settled_duel(http, clock, 1_000)
    records, postings, seats = _inputs(container, duel_id)
    tables = container.settings.paytables
    assert verify_duel(records, postings, seats, tables).findings == []

    finished = next(r for r in records if r.type == "SeatFinished")
    forged = _rechained(records, finished.version, {**finished.data, "points": 9_999})
    assert "points" in _failed(verify_duel(forged, postings, seats, tables))

    settled = records[-1]
    assert settled.type == "DuelSettled"
    first, second = settled.data["payouts"]  # a tie: both drew once and stopped
    shifted = [{**first, "amount": first["amount"] + 1}, {**second, "amount": second["amount"] - 1}]
    forged = _rechained(records, settled.version, {**settled.data, "payouts": shifted})
    assert {"settlement", "ledger"} <= _failed(verify_duel(forged, postings, seats, tables))

    forged = _rechained(records, settled.version, {**settled.data, "server_seed": "ab" * 32})
    assert "seed-commitment" in _failed(verify_duel(forged, postings, seats, tables))

    first_seat = next(iter(seats))
    missing = {k: v for k, v in seats.items() if k != first_seat}
    assert "seats" in _failed(verify_duel(records, postings, missing, tables))

    assert "ledger" in _failed(verify_duel(records, postings[1:], seats, tables))


def _duel_line(http: Http, day: date, currency: str) -> dict[str, Any]:
    report = http.get(
        f"/v1/reports/daily?from={day}&to={day}&currency={currency}", http.finance_key
    ).get_json()
    (row,) = [r for r in report["days"] if r["variant"] == "klondike-duel"]
    return dict(row)


def test_finance_reports_and_reconciles_duels(
    http: Http, clock: FakeClock, container: Container
) -> None:
    """A certification duel, so on the sandbox's own line (XTS), never the real currency's."""
    today = datetime.now(UTC).date()
    real_before = _duel_line(http, today, "GBP")
    before = _duel_line(http, today, "XTS")
    duel_id, _ = _settled_duel(http, clock, 2_000)
    after = _duel_line(http, today, "XTS")
    assert _duel_line(http, today, "GBP") == real_before
    change = {k: after[k] - before[k] for k in ("games_started", "games_finished", "stakes")}
    # Two seats: two fees in, both seats settled; the prizes out; the rake is the GGR.
    assert change == {"games_started": 2, "games_finished": 2, "stakes": 4_000}
    assert after["payouts"] - before["payouts"] == 3_600
    assert after["ggr"] - before["ggr"] == 400
    assert after["refunds"] == before["refunds"]
    # Computed now: a worker may have stored an earlier result for today.
    with container.unit_of_work() as uow:
        reconciliation = finance.reconcile(uow, today)
    assert reconciliation["mismatches"] == []
    sandbox = reconciliation["currencies"]["XTS"]
    assert (sandbox["balanced"], sandbox["sandbox"]) == (True, True)
    assert sandbox["events"]["duel-fee"] >= 4_000
    assert sandbox["events"]["duel-prize"] >= 4_000
    assert duel_id


def test_audits_check_duels_with_every_seat(
    http: Http, clock: FakeClock, container: Container
) -> None:
    duel_id, players = _settled_duel(http, clock, 5_000)
    unit = f"duel-{duel_id}"
    with container.unit_of_work() as uow:
        mine = audit.plan(uow, audit.Scope("player", player_id=uuid.UUID(players[0].id)))
        everything = audit.plan(uow, audit.Scope("all"))
        assert unit in mine
        assert unit in everything
        paytables = container.settings.paytables
        assert audit.check_unit(uow, unit, paytables, container.anchors.findings) == []


def test_a_big_duel_prize_is_a_significant_event(
    http: Http, clock: FakeClock, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(container.duels, "_big_win_threshold", 1_000)
    duel_id, players = _settled_duel(http, clock, 1_000)  # a tie: 900 each, under the line
    wins = http.get("/v1/significant-events?kind=big-win", http.auditor_key).get_json()["items"]
    assert not [w for w in wins if w["details"].get("duel_id") == duel_id]
    duel_id, players = _settled_duel(http, clock, 2_000)  # 1,800 each
    wins = http.get("/v1/significant-events?kind=big-win", http.auditor_key).get_json()["items"]
    mine = [w for w in wins if w["details"].get("duel_id") == duel_id]
    assert sorted(w["player_id"] for w in mine) == sorted(p.id for p in players)
    assert {w["amount"] for w in mine} == {1_800}
