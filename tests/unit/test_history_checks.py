"""The whole-history audit's pure checks (service/core/history_checks.py) and the rules they ask
(safer gambling, the controls, accounts by id, stream kinds), without a database."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from events import chain
from events.catalog import GamingSwitched, LimitChanged, PlayerExcluded
from events.codec import encode
from events.records import RecordedEvent
from service.core import controls, ledger
from service.core import safer_gambling as sg
from service.core.clock import instant
from service.core.game_verification import PostingRow
from service.core.history_checks import (
    account_findings,
    cause_stream_findings,
    controls_findings,
    safer_gambling_findings,
    secret_of,
    seed_findings,
)
from service.core.streams import kind_of

T0 = datetime(2026, 3, 2, 12, tzinfo=UTC)
PLAYER = str(uuid.UUID(int=7))
STREAM = f"player-{PLAYER}"


def chained(
    stream: str, items: list[tuple[str, int, dict[str, Any], dict[str, Any], datetime]]
) -> list[RecordedEvent]:
    """The records a store would hold: (type, schema version, data, metadata, time) each."""
    records: list[RecordedEvent] = []
    prev = chain.GENESIS
    for version, (type_name, schema, data, meta, at) in enumerate(items, start=1):
        record = RecordedEvent(
            version,
            stream,
            version,
            uuid.UUID(int=version),
            type_name,
            schema,
            json.loads(json.dumps(data)),
            meta,
            at,
            prev,
            "",
        )
        record = replace(record, hash=chain.hash_of(record))
        records.append(record)
        prev = record.hash
    return records


def _records(
    stream: str, *events: tuple[Any, datetime], meta: dict[str, Any] | None = None
) -> list[RecordedEvent]:
    """A chained stream of catalog events, each recorded at its time."""
    found = []
    for event, at in events:
        type_name, version, data = encode(event)
        found.append((type_name, version, data, meta or {}, at))
    return chained(stream, found)


def test_a_looser_limit_waits_a_day_and_a_stricter_one_holds_at_once() -> None:
    assert [sg.loosens(new, 520) for new in (None, 1_040, 520, 104)] == [True, True, False, False]
    assert not sg.loosens(104, None)
    state = sg.applied(sg.change("max-stake", sg.NO_LIMIT, 520, T0))
    honest = sg.change("max-stake", state, None, T0)
    assert not sg.loosened_too_soon(state, honest, T0)
    lifted = LimitChanged("max-stake", 520, None, instant(T0))
    assert sg.loosened_too_soon(state, lifted, T0)
    # recorded a little after it was decided: within the slack, no finding
    assert not sg.loosened_too_soon(state, honest, T0 + timedelta(seconds=3), timedelta(minutes=5))


def test_an_exclusion_only_extends_and_a_self_exclusion_stays_one() -> None:
    self_excluded = sg.excluded(sg.exclude(None, "six-months", T0))
    later = T0 + timedelta(days=170)  # a little of it left: a six-week time-out ends later
    event = sg.exclude(self_excluded, "six-weeks", later)
    assert event.kind == "self-exclusion"
    assert not sg.lessens(self_excluded, sg.excluded(event), later)
    timed_out = sg.Exclusion("time-out", later + timedelta(weeks=6))
    assert sg.lessens(self_excluded, timed_out, later)  # a lesser kind
    shorter = sg.Exclusion("self-exclusion", T0 + timedelta(days=1))
    assert sg.lessens(self_excluded, shorter, T0)
    assert sg.lessens(None, sg.Exclusion("time-out", T0), T0)  # ends as it is recorded


def test_a_player_stream_is_folded_against_the_safer_gambling_rules() -> None:
    records = _records(
        STREAM,
        (sg.exclude(None, "five-years", T0), T0),
        (PlayerExcluded("24-hours", "time-out", instant(T0 + timedelta(days=1))), T0),
        (sg.change("deposit-day", sg.NO_LIMIT, 520, T0), T0),
        (LimitChanged("deposit-day", 520, 10_000, instant(T0 + timedelta(hours=1))), T0),
        (LimitChanged("no-such-limit", None, 1, instant(T0)), T0),
    )
    assert [(f.check, f.location) for f in safer_gambling_findings(records)] == [
        ("safer-gambling", f"{STREAM} v2"),
        ("safer-gambling", f"{STREAM} v4"),
        ("safer-gambling", f"{STREAM} v5"),
    ]
    limit = sg.applied(sg.change("deposit-day", sg.NO_LIMIT, 520, T0))
    honest = _records(
        STREAM,
        (sg.exclude(None, "24-hours", T0), T0),
        (sg.exclude(sg.excluded(sg.exclude(None, "24-hours", T0)), "one-week", T0), T0),
        (sg.change("deposit-day", sg.NO_LIMIT, 520, T0), T0),
        (sg.change("deposit-day", limit, None, T0), T0 + timedelta(seconds=1)),
    )
    assert safer_gambling_findings(honest, timedelta(minutes=5)) == []


def test_the_controls_stream_holds_operators_well_formed_switches() -> None:
    operator = {"role": "operator", "actor": "key:1"}
    assert controls.fault_of(controls.switched("all", "", False, "maintenance")) is None
    assert controls.fault_of(GamingSwitched("all", "golf", False, "x")) is not None
    assert controls.fault_of(GamingSwitched("planet", "x", False, "x")) is not None
    assert controls.fault_of(GamingSwitched("game", "golf", True, " ")) is not None
    switch = (GamingSwitched("game", "golf", False, "RNG"), T0)
    assert controls_findings(_records("gaming-controls", switch, meta=operator)) == []
    by_player = _records("gaming-controls", switch, meta={"role": "player"})
    assert [(f.check, f.location) for f in controls_findings(by_player)] == [
        ("controls", "gaming-controls v1")
    ]


@pytest.mark.parametrize(
    ("account", "ok"),
    [
        (ledger.player_account(PLAYER, "GBP"), True),
        (ledger.player_account(PLAYER, ledger.SANDBOX), True),
        (ledger.house_payouts("GBP"), True),
        (ledger.duel_pot(str(uuid.UUID(int=9)), "EUR"), True),
        (ledger.Account(f"player:{PLAYER}", "house-payouts", "GBP"), False),
        (ledger.Account("house-stakes:GBP", "house-stakes", "EUR"), False),
        (ledger.Account(f"player:{PLAYER}", "player", "GBP", str(uuid.UUID(int=8))), False),
        (ledger.Account("bonus:GBP", "cashier", "GBP"), False),
    ],
)
def test_an_account_s_kind_follows_from_its_id(account: ledger.Account, ok: bool) -> None:
    found = account_findings([account])
    assert (found == []) is ok
    assert all(f.check == "account-kind" for f in found)


def test_a_transaction_s_cause_is_on_a_stream_that_moves_money() -> None:
    def row(posting: int, tx: str, stream: str) -> PostingRow:
        return PostingRow(posting, tx, "deposit", 5, stream, 1, "x", 5, 0, 5)

    names = (STREAM, "gaming-controls", "game-1", "payouts-manual")
    assert [kind_of(name) for name in names] == ["player", "controls", None, None]
    rows = [row(1, "t1", STREAM), row(2, "t2", "payouts-manual"), row(3, "t2", "payouts-manual")]
    rows.append(row(4, "t3", "gaming-controls"))
    assert [(f.check, f.location) for f in cause_stream_findings(rows)] == [
        ("ledger-cause", "payouts-manual v1"),
        ("ledger-cause", "gaming-controls v1"),
    ]


def test_a_sealed_deal_s_secret_is_kept_under_its_game_or_its_duel() -> None:
    game, duel = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))

    def stream(duel_id: str | None, commitment: str | None) -> list[RecordedEvent]:
        return chained(
            f"game-{game}",
            [
                ("StakePlaced", 3, {"game_id": game, "duel_id": duel_id}, {}, T0),
                ("Dealt", 2, {"seed_commitment": commitment}, {}, T0),
            ],
        )

    assert secret_of(stream(None, "c")) == game
    assert secret_of(stream(duel, "c")) == duel
    assert secret_of(stream(None, None)) is None  # a deal in clear seals nothing
    assert seed_findings(stream(None, "c"), {game}) == []
    assert [(f.check, f.location) for f in seed_findings(stream(duel, "c"), {game})] == [
        ("seed", f"game-{game} v2")
    ]
