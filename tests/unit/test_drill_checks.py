"""The drill's verdict is only as good as its arithmetic: lost and duplicated work, recovery
times and pass/fail, on hand-made acknowledgements and database facts."""

from __future__ import annotations

import pytest
import requests

from tests.drill.checks import (
    Acks,
    Command,
    Deal,
    Deposit,
    EventFact,
    Facts,
    GameFact,
    LedgerFact,
    Settled,
    duplicated,
    lost,
)
from tests.drill.client import GATEWAY_ERROR, Attempt, Timeline, outcome_of
from tests.drill.config import DrillConfig
from tests.drill.faults import FaultResult
from tests.drill.report import Figure, passed, render

PLAYER = "p1"
GAME = "g1"


def _consistent() -> tuple[Acks, Facts]:
    """A deposit, a deal, two commands and a collect paying 150, all acknowledged and all in
    the database, each request written by one transaction."""
    acks = Acks()
    for request_id, ack in (
        ("r-dep", Deposit("r-dep", PLAYER, "t1", 5_000)),
        ("r-deal", Deal("r-deal", PLAYER, GAME, 520)),
        ("r-c1", Command("r-c1", GAME, 3)),
        ("r-c2", Command("r-c2", GAME, 4)),
        ("r-col", Command("r-col", GAME, 5)),
        ("r-col", Settled("r-col", GAME, "collected", 150)),
    ):
        acks.sending(request_id, deal=request_id == "r-deal")
        acks.add(ack)
    events = [
        EventFact(f"player-{PLAYER}", 1, "PlayerRegistered", "r-open", "100"),
        EventFact(f"player-{PLAYER}", 2, "FundsDeposited", "r-dep", "101", "t1"),
        EventFact(f"game-{GAME}", 1, "StakePlaced", "r-deal", "102"),
        EventFact(f"game-{GAME}", 2, "Dealt", "r-deal", "102"),
        EventFact(f"game-{GAME}", 3, "CardDrawn", "r-c1", "103"),
        EventFact(f"game-{GAME}", 4, "CardMoved", "r-c2", "104"),
        EventFact(f"game-{GAME}", 5, "Collected", "r-col", "105"),
    ]
    ledger = [
        LedgerFact("cashier:t1", "deposit", 5_000, "r-dep", "101"),
        LedgerFact(f"stake:{GAME}", "stake", 520, "r-deal", "102"),
        LedgerFact(f"winnings:{GAME}", "winnings", 150, "r-col", "105"),
    ]
    return acks, Facts(events, ledger, {GAME: GameFact(GAME, "collected", 150)})


def test_a_consistent_run_has_nothing_lost_or_duplicated() -> None:
    acks, facts = _consistent()
    assert lost(acks, facts) == []
    assert duplicated(acks, facts) == []


def test_an_acknowledged_deposit_missing_from_the_ledger_is_lost() -> None:
    acks, facts = _consistent()
    facts.ledger = [t for t in facts.ledger if t.kind != "deposit"]
    assert [(f.what, f.why) for f in lost(acks, facts)] == [("deposit t1", "no ledger transaction")]


def test_a_deposit_posted_for_another_amount_or_without_its_event_is_lost() -> None:
    acks, facts = _consistent()
    facts.ledger[0] = LedgerFact("cashier:t1", "deposit", 500, "r-dep", "101")
    assert [f.what for f in lost(acks, facts)] == ["deposit t1"]
    acks, facts = _consistent()
    facts.events = [e for e in facts.events if e.type != "FundsDeposited"]
    assert [f.why for f in lost(acks, facts)] == ["no FundsDeposited event in the player's stream"]


def test_an_acknowledged_deal_without_its_stream_stake_or_history_is_lost() -> None:
    acks, facts = _consistent()
    facts.ledger = [t for t in facts.ledger if t.kind != "stake"]
    assert [f.what for f in lost(acks, facts)] == [f"deal {GAME}"]
    acks, facts = _consistent()
    facts.games = {}
    assert f"deal {GAME}" in [f.what for f in lost(acks, facts)]


def test_an_acknowledged_command_whose_event_is_not_its_own_is_lost() -> None:
    acks, facts = _consistent()
    # Version 4 holds some other request's event: r-c2's move was never recorded.
    facts.events[5] = EventFact(f"game-{GAME}", 4, "CardMoved", "r-other", "104")
    assert [(f.what, f.why) for f in lost(acks, facts)] == [("command r-c2", "no event v4 of it")]


def test_a_settlement_paid_otherwise_than_answered_is_lost() -> None:
    acks, facts = _consistent()
    facts.ledger = [t for t in facts.ledger if t.kind != "winnings"]
    assert [(f.what, f.why) for f in lost(acks, facts)] == [
        (f"settlement of {GAME}", "ledger paid 0, answered 150")
    ]
    acks, facts = _consistent()
    facts.games[GAME] = GameFact(GAME, "in_progress", 0)
    assert [f.what for f in lost(acks, facts)] == [f"settlement of {GAME}"]


def test_a_request_applied_by_two_transactions_is_duplicated() -> None:
    acks, facts = _consistent()
    # The retry of r-c2 was applied again instead of being answered from its record.
    facts.events.append(EventFact(f"game-{GAME}", 6, "CardMoved", "r-c2", "106"))
    assert [(f.what, f.why) for f in duplicated(acks, facts)] == [
        ("request r-c2", "applied by 2 transactions")
    ]


def test_a_deal_that_made_two_games_is_duplicated() -> None:
    acks, facts = _consistent()
    facts.events.append(EventFact("game-g2", 1, "StakePlaced", "r-deal", "102"))
    assert [(f.what, f.why) for f in duplicated(acks, facts)] == [("deal r-deal", "2 games")]


def test_one_transfer_twice_in_a_stream_or_the_ledger_is_duplicated() -> None:
    acks, facts = _consistent()
    facts.events.append(EventFact(f"player-{PLAYER}", 3, "FundsDeposited", "r-x", "107", "t1"))
    facts.ledger.append(LedgerFact("cashier:t1", "deposit", 5_000, "r-x", "107"))
    assert [f.what for f in duplicated(acks, facts)] == ["transfer t1", "ledger cashier:t1"]


def test_work_of_requests_the_drill_did_not_send_is_not_its_duplicate() -> None:
    acks, facts = _consistent()
    # The idle collector or a beat task writes under request ids of its own.
    facts.events += [
        EventFact("game-g9", 1, "StakePlaced", "system-1", "201"),
        EventFact("game-g9", 2, "Collected", "system-1", "202"),
    ]
    assert duplicated(acks, facts) == []


def test_recovery_is_the_first_success_sent_after_the_fault() -> None:
    timeline = Timeline()
    for attempt in (
        Attempt(9.0, 10.5, "ok", "/a"),  # in flight before the fault: does not count
        Attempt(10.1, 10.2, "connection", "/a"),
        Attempt(10.3, 13.0, "unavailable", "/a"),
        Attempt(11.0, 12.0, "ok", "/b"),
        Attempt(10.4, 12.5, "ok", "/c"),
    ):
        timeline.add(attempt)
    first = timeline.first_ok_after(10.0)
    assert first is not None
    assert (first.sent, first.done) == (11.0, 12.0)
    assert len(timeline.failures(10.0, 12.0)) == 2
    assert timeline.first_ok_after(12.0) is None


def test_the_drill_fails_on_any_nonzero_must_be_zero_figure_or_unrecovered_fault() -> None:
    clean = [Figure("lost", 0, must_be_zero=True), Figure("acknowledged", 1200)]
    recovered = FaultResult("kill -9 of an API worker", 10.0, recovered=0.05)
    assert passed(clean, [recovered])
    assert "PASS" in render(clean, [recovered])
    assert not passed([*clean, Figure("duplicated", 1, must_be_zero=True)], [recovered])
    assert not passed(clean, [FaultResult("database outage", 50.0, recovered=None)])
    died = FaultResult("kill -9 of the Celery worker", 30.0, recovered=2.0, supervisor_died=True)
    assert not passed(clean, [died])
    assert "FAIL" in render(clean, [died])


def test_drill_settings_come_from_the_environment() -> None:
    config = DrillConfig.from_env(
        {"DRILL_CLIENTS": "4", "DRILL_SECONDS": "30", "DRILL_FAULTS": "api, database"}
    )
    assert (config.clients, config.seconds, config.faults) == (4, 30.0, ("api", "database"))
    assert DrillConfig.from_env({}).faults == ("api", "worker", "service", "database")
    with pytest.raises(ValueError, match="unknown"):
        DrillConfig.from_env({"DRILL_FAULTS": "api,meteor"})


def test_the_host_drill_kills_hosts_and_the_database_and_nothing_of_one_service() -> None:
    hosts = DrillConfig.from_env({"DRILL_HOSTS": "2", "DRILL_HOST_DOWN_SECONDS": "5"})
    assert (hosts.hosts, hosts.host_down, hosts.faults) == (2, 5.0, ("host", "database"))
    assert DrillConfig.from_env({}).hosts == 0
    with pytest.raises(ValueError, match="unknown"):
        DrillConfig.from_env({"DRILL_HOSTS": "2", "DRILL_FAULTS": "host,api"})
    with pytest.raises(ValueError, match="unknown"):
        DrillConfig.from_env({"DRILL_FAULTS": "host"})


def _response(status: int, headers: dict[str, str] | None = None) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers or {})
    return response


def test_the_balancer_s_own_errors_are_failed_attempts_not_bugs() -> None:
    assert outcome_of(_response(502, {GATEWAY_ERROR: "502"})) == "gateway"
    assert outcome_of(_response(503, {GATEWAY_ERROR: "503"})) == "gateway"
    # The service's own answers: a 502 without the balancer's mark is a bug like any 500.
    assert outcome_of(_response(502)) == "error"
    assert outcome_of(_response(500)) == "error"
    assert outcome_of(_response(503)) == "unavailable"
    assert outcome_of(_response(200)) == "ok"
    assert outcome_of(_response(422)) == "refused"
    timeline = Timeline()
    timeline.add(Attempt(1.0, 1.5, "gateway", "/v1/x"))
    assert [a.outcome for a in timeline.failures(0.0, 2.0)] == ["gateway"]
