"""Game streams recorded by the previous release still fold, replay and verify.

tests/fixtures/legacy_streams.json holds five real streams, stored before the catalog's new
schema versions (StakePlaced v1, Dealt v1 with the deck in clear, CardDrawn v2, CardTurned v1,
Undone v1, Collected v1, Voided v1), with their hash chains and ledger postings exactly as the
store and the audit read them back. Stored events are never rewritten: the upcasters must carry
every one of them to the current shapes, and the result must fold to the state the old code
recorded, replay, and pass every audit check. A data edit must still be caught."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from events import chain
from events.catalog import CardDrawn, Collected, Dealt, GameEvent
from events.codec import decode_game, encode
from events.records import RecordedEvent
from service.core import game_decider as g
from service.core import shuffle
from service.core.game_verification import CHECKS, PostingRow, verify_game
from service.core.game_views import MASKED, revealed_deck
from service.core.paytable import default_paytables
from service.core.replay import build_replay

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_streams.json"
LEGACY: dict[str, Any] = json.loads(FIXTURE.read_text())
GAMES: dict[str, dict[str, Any]] = {game["name"]: game for game in LEGACY["games"]}
NAMES = sorted(GAMES)
FINISHED = [n for n in NAMES if GAMES[n]["final"]["status"] != "in_progress"]
UNFINISHED = [n for n in NAMES if GAMES[n]["final"]["status"] == "in_progress"]
DRAWN = [n for n in FINISHED if any(r["type"] == "CardDrawn" for r in GAMES[n]["records"])]
PAYTABLES = default_paytables()

ALL_PASS = dict.fromkeys(CHECKS, "pass")
#: What every audit check says of each stream: c was dealt from a deck recorded in clear (no
#: commitment to check), e is still being played (its seed is secret, nothing is paid yet).
EXPECTED_CHECKS: dict[str, dict[str, str]] = {
    "a-draw1-collected": ALL_PASS,
    "b-draw3-recycle-undo-collected": ALL_PASS,
    "c-draw3-deck-autocomplete-collected": {
        **ALL_PASS,
        "seed-commitment": "not-applicable",
        "deck": "not-applicable",
    },
    "d-draw1-voided": ALL_PASS,
    "e-draw1-in-progress": {
        **ALL_PASS,
        "seed-commitment": "pending",
        "deck": "pending",
        "payout": "pending",
    },
}


def records_of(name: str) -> list[RecordedEvent]:
    """The stored records, rebuilt with every stored field as the store reads them."""
    return [
        RecordedEvent(
            position=r["position"],
            stream_id=r["stream_id"],
            version=r["version"],
            event_id=uuid.UUID(r["event_id"]),
            type=r["type"],
            schema_version=r["schema_version"],
            data=copy.deepcopy(r["data"]),
            metadata=copy.deepcopy(r["metadata"]),
            recorded_at=datetime.fromisoformat(r["recorded_at"]),
            prev_hash=r["prev_hash"],
            hash=r["hash"],
        )
        for r in GAMES[name]["records"]
    ]


def postings_of(name: str) -> list[PostingRow]:
    return [PostingRow(**p) for p in GAMES[name]["postings"]]


def events_of(records: Iterable[RecordedEvent]) -> list[GameEvent]:
    return [decode_game(r.type, r.schema_version, r.data) for r in records]


def legacy_deck(name: str) -> tuple[str, ...]:
    dealt = GAMES[name]["records"][1]
    assert (dealt["type"], dealt["schema_version"]) == ("Dealt", 1)
    return tuple(dealt["data"]["deck"])


# --- the fixture ----------------------------------------------------------------------------


def test_the_fixture_holds_the_five_streams_its_note_describes() -> None:
    assert len(LEGACY["recorded_with"]) == 40
    assert NAMES == [
        "a-draw1-collected",
        "b-draw3-recycle-undo-collected",
        "c-draw3-deck-autocomplete-collected",
        "d-draw1-voided",
        "e-draw1-in-progress",
    ]
    assert UNFINISHED == ["e-draw1-in-progress"]
    stored = {(r["type"], r["schema_version"]) for n in NAMES for r in GAMES[n]["records"]}
    # Only the shapes of the previous release: every one of them needs an upcaster (or none).
    assert stored == {
        ("StakePlaced", 1),
        ("Dealt", 1),
        ("CardDrawn", 2),
        ("CardMoved", 1),
        ("CardTurned", 1),
        ("StockRecycled", 1),
        ("Undone", 1),
        ("AutoCompleted", 1),
        ("Collected", 1),
        ("Voided", 1),
    }


@pytest.mark.parametrize("name", NAMES)
def test_records_are_one_whole_stream(name: str) -> None:
    records = records_of(name)
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    assert len({r.stream_id for r in records}) == 1
    assert records[0].stream_id == f"game-{GAMES[name]['game_id']}"
    assert all(r.recorded_at.tzinfo is not None for r in records)
    assert len(records) == GAMES[name]["final"]["version"]


# --- the hash chain -------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_recorded_hash_chain_is_intact(name: str) -> None:
    records = records_of(name)
    assert chain.verify(records) is None
    assert records[0].prev_hash == chain.GENESIS
    for before, after in itertools.pairwise(records):
        assert after.prev_hash == before.hash
    for record in records:
        assert chain.hash_of(record) == record.hash


# --- folding --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_old_stream_folds_to_the_state_the_old_code_recorded(name: str) -> None:
    records = records_of(name)
    stored = copy.deepcopy([r.data for r in records])
    events = events_of(records)
    assert [r.data for r in records] == stored  # decoding never rewrites what was stored
    state = g.fold(events)
    final = GAMES[name]["final"]
    assert state.status == final["status"]
    assert state.units == final["foundation_count"]
    assert state.payout == final["payout"]
    assert state.refund == final["refund"]
    assert state.version == final["version"] == len(records)
    assert state.game_id == GAMES[name]["game_id"]
    assert state.variant == records[0].data["variant"]
    assert state.stake == 520
    assert state.currency == "GBP"
    assert state.win_rate == records[0].data["win_rate"] == 50
    assert state.info is not None
    assert state.info.legacy_deck == legacy_deck(name)
    assert state.info.multiplier == "5"
    assert state.max_units == 52
    # Every upcast event stores in the current shapes and reads back the same.
    for event in events:
        type_name, version, data = encode(event)
        assert decode_game(type_name, version, json.loads(json.dumps(data))) == event


@pytest.mark.parametrize("name", NAMES)
def test_the_table_holds_the_whole_recorded_deck(name: str) -> None:
    state = g.fold(events_of(records_of(name)))
    assert state.table is not None
    assert sorted(state.table.slots(), key=str) == sorted(legacy_deck(name))


@pytest.mark.parametrize("name", [n for n in NAMES if GAMES[n]["seed_hex"]])
def test_the_revealed_seed_deals_the_recorded_deck(name: str) -> None:
    """The fixture itself: each seeded game's v1 deck is the deck its seed derives."""
    seed = bytes.fromhex(GAMES[name]["seed_hex"])
    dealt = events_of(records_of(name))[1]
    assert isinstance(dealt, Dealt)
    assert dealt.seed_commitment == shuffle.commitment(seed)
    assert shuffle.derive_deck(seed, dealt.client_seed) == legacy_deck(name)


@pytest.mark.parametrize("name", NAMES)
def test_the_deck_is_revealed_only_once_the_game_has_ended(name: str) -> None:
    state = g.fold(events_of(records_of(name)))
    expected = legacy_deck(name) if state.is_over else None
    assert revealed_deck(state) == expected


# --- verification ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_old_stream_passes_every_audit_check(name: str) -> None:
    records = records_of(name)
    stored = copy.deepcopy([r.data for r in records])
    result = verify_game(records, postings_of(name), PAYTABLES)
    assert result.findings == []
    assert result.ok
    assert result.checks == EXPECTED_CHECKS[name]
    assert result.state == g.fold(events_of(records))
    assert [r.data for r in records] == stored


@pytest.mark.parametrize("name", FINISHED)
def test_a_finished_old_stream_has_no_check_left_pending(name: str) -> None:
    result = verify_game(records_of(name), postings_of(name), PAYTABLES)
    assert set(result.checks.values()) <= {"pass", "not-applicable"}
    assert result.checks["rules"] == result.checks["payout"] == result.checks["ledger"] == "pass"


@pytest.mark.parametrize("name", UNFINISHED)
def test_the_unfinished_old_stream_waits_for_its_seed(name: str) -> None:
    result = verify_game(records_of(name), postings_of(name), PAYTABLES)
    assert result.findings == []
    pending = {check for check, status in result.checks.items() if status == "pending"}
    assert pending == {"seed-commitment", "deck", "payout"}
    assert {result.checks[c] for c in set(CHECKS) - pending} == {"pass"}


# --- replay ---------------------------------------------------------------------------------


def _hidden_at(state: g.Game) -> set[str]:
    """The cards the player had not seen at ``state`` (a v1 deal holds them as codes)."""
    assert state.table is not None
    return {str(slot) for pile in state.table.piles for slot in pile.face_down}


@pytest.mark.parametrize("masked", [False, True], ids=["auditor", "player"])
@pytest.mark.parametrize("name", NAMES)
def test_the_old_stream_replays(name: str, masked: bool) -> None:
    records = records_of(name)
    replay = build_replay(records, postings_of(name), PAYTABLES, masked=masked)
    final = GAMES[name]["final"]
    assert replay.game_id == GAMES[name]["game_id"]
    assert replay.version == replay.latest_version == len(records)
    assert replay.masked is masked
    assert replay.verification.findings == []
    assert replay.verification.checks == EXPECTED_CHECKS[name]
    assert [(s["version"], s["type"], s["hash"]) for s in replay.steps] == [
        (r.version, r.type, r.hash) for r in records
    ]
    assert [s["actor"] for s in replay.steps] == [r.metadata["actor"] for r in records]
    assert replay.outcome["status"] == final["status"]
    assert (
        replay.outcome["foundation_count"] == replay.outcome["units"] == final["foundation_count"]
    )
    assert replay.outcome["payout"] == final["payout"]
    assert replay.outcome["refund"] == final["refund"]
    assert replay.outcome["net"] == (final["payout"] or 0) + (final["refund"] or 0) - 520
    assert replay.steps[0]["state"] is None  # the stake alone: no table yet
    assert replay.final is not None
    assert replay.final["status"] == final["status"]
    # The v1 deal's deck is shown in clear only to auditors, and only once the game has ended.
    dealt = replay.steps[1]["data"]
    ended = final["status"] != "in_progress"
    if masked or not ended:
        assert dealt["deck"] == MASKED
        assert "deck" not in replay.final
    else:
        assert dealt["deck"] == list(legacy_deck(name))
        assert replay.final["deck"] == list(legacy_deck(name))
    assert records[1].data["deck"] == list(legacy_deck(name))  # the record is untouched


@pytest.mark.parametrize("name", NAMES)
def test_a_player_s_replay_never_names_a_card_still_face_down(name: str) -> None:
    records = records_of(name)
    replay = build_replay(records, postings_of(name), PAYTABLES, masked=True)
    state = g.INITIAL
    for step, event in zip(replay.steps, events_of(records), strict=True):
        state = g.evolve(state, event)
        if step["state"] is None:
            continue
        assert "deck" not in step["state"]
        text = json.dumps(step["state"])
        assert sorted(c for c in _hidden_at(state) if f'"{c}"' in text) == [], step["version"]


@pytest.mark.parametrize("masked", [False, True], ids=["auditor", "player"])
@pytest.mark.parametrize("name", UNFINISHED)
def test_no_replay_of_the_unfinished_game_shows_its_v1_deck(name: str, masked: bool) -> None:
    records = records_of(name)
    replay = build_replay(records, postings_of(name), PAYTABLES, masked=masked)
    deck = legacy_deck(name)
    shown = {
        "steps": [{**s, "recorded_at": s["recorded_at"].isoformat()} for s in replay.steps],
        "final": replay.final,
        "outcome": replay.outcome,
    }
    text = json.dumps(shown)
    assert replay.steps[1]["data"]["deck"] == MASKED
    assert json.dumps(list(deck)) not in text
    assert '"deck"' not in json.dumps([replay.final, *(s["state"] for s in replay.steps)])
    # No card the player has not seen is named anywhere: not in a step, the outcome or the end.
    state = g.fold(events_of(records))
    never_seen = _hidden_at(state)
    assert len(never_seen) > 20
    assert sorted(c for c in never_seen if f'"{c}"' in text) == []
    # ... and each step hides what was face down at that step.
    state = g.INITIAL
    for step, event in zip(replay.steps, events_of(records), strict=True):
        state = g.evolve(state, event)
        if step["state"] is not None:
            step_text = json.dumps(step["state"])
            assert sorted(c for c in _hidden_at(state) if f'"{c}"' in step_text) == []


# --- an unfinished old game plays on under the new code ----------------------------------------


def _append(records: list[RecordedEvent], events: Iterable[GameEvent]) -> list[RecordedEvent]:
    """The records a store would append for ``events``: current shapes, chained hashes."""
    out = list(records)
    for event in events:
        last = out[-1]
        type_name, version, data = encode(event)
        record = RecordedEvent(
            position=last.position + 1,
            stream_id=last.stream_id,
            version=last.version + 1,
            event_id=uuid.UUID(int=last.version + 1),
            type=type_name,
            schema_version=version,
            data=json.loads(json.dumps(data)),
            metadata={"role": "player", "actor": last.metadata["actor"]},
            recorded_at=(last.recorded_at + timedelta(seconds=1)).astimezone(UTC),
            prev_hash=last.hash,
            hash="",
        )
        out.append(replace(record, hash=chain.hash_of(record)))
    return out


@pytest.mark.parametrize("name", UNFINISHED)
def test_the_unfinished_old_game_plays_on_ends_and_verifies(name: str) -> None:
    records = records_of(name)
    state = g.fold(events_of(records))
    seed_hex = GAMES[name]["seed_hex"]
    new: list[GameEvent] = []
    for command in (g.Draw(), g.Draw(), g.Collect(server_seed=seed_hex)):
        assert command in g.legal_commands(state) or isinstance(command, g.Collect)
        events = g.decide(state, command)  # a v1 deal needs no sealed cards: it knows them
        state = g.fold(events, state)
        new.extend(events)
    assert isinstance(new[0], CardDrawn)
    assert isinstance(new[-1], Collected)
    assert state.status == "collected"
    assert state.server_seed == seed_hex
    assert revealed_deck(state) == legacy_deck(name)

    longer = _append(records, new)
    assert chain.verify(longer) is None
    assert [r.schema_version for r in longer[len(records) :]] == [3, 3, 3]
    result = verify_game(longer, postings_of(name), PAYTABLES)  # winnings 0: no new money
    assert result.findings == []
    assert result.checks == ALL_PASS
    assert result.state == state
    replay = build_replay(longer, postings_of(name), PAYTABLES, masked=False)
    assert replay.steps[1]["data"]["deck"] == list(legacy_deck(name))
    assert replay.outcome["status"] == "collected"


# --- tampering ------------------------------------------------------------------------------


def _first_draw(records: list[RecordedEvent]) -> int:
    return next(i for i, r in enumerate(records) if r.type == "CardDrawn")


@pytest.mark.parametrize("name", DRAWN)
def test_a_card_changed_in_a_recorded_draw_is_caught(name: str) -> None:
    records = records_of(name)
    i = _first_draw(records)
    drawn = list(records[i].data["cards"])
    other = next(c for c in legacy_deck(name) if c not in drawn)
    drawn[0] = other
    records[i] = replace(records[i], data={**records[i].data, "cards": drawn})  # hash kept

    result = verify_game(records, postings_of(name), PAYTABLES)
    assert not result.ok
    assert result.checks["hash-chain"] == "fail"
    where = f"{records[i].stream_id} v{records[i].version}"
    assert any(f.check == "hash-chain" and f.location == where for f in result.findings)
    assert {"deck", "rules"} & {f.check for f in result.findings}
    assert any(
        f.check in ("deck", "rules") and f.location == where and other in f.found
        for f in result.findings
    )


def _rechained(records: list[RecordedEvent]) -> list[RecordedEvent]:
    """The records with every hash recomputed: an edit by someone who can rewrite the chain."""
    out: list[RecordedEvent] = []
    prev = chain.GENESIS
    for record in records:
        moved = replace(record, prev_hash=prev, hash="")
        moved = replace(moved, hash=chain.hash_of(moved))
        out.append(moved)
        prev = moved.hash
    return out


@pytest.mark.parametrize("name", DRAWN)
def test_a_card_changed_in_a_recorded_draw_is_caught_even_with_the_chain_rewritten(
    name: str,
) -> None:
    records = records_of(name)
    i = _first_draw(records)
    drawn = list(records[i].data["cards"])
    drawn[0] = next(c for c in legacy_deck(name) if c not in drawn)
    records[i] = replace(records[i], data={**records[i].data, "cards": drawn})
    result = verify_game(_rechained(records), postings_of(name), PAYTABLES)
    assert result.checks["hash-chain"] == "pass"
    assert {"deck", "rules"} & {f.check for f in result.findings}


@pytest.mark.parametrize("name", [n for n in FINISHED if GAMES[n]["seed_hex"]])
def test_a_recorded_v1_deck_that_the_seed_does_not_deal_is_a_deck_finding(name: str) -> None:
    records = records_of(name)
    deck = list(records[1].data["deck"])
    deck[50], deck[51] = deck[51], deck[50]  # the last two cards of the stock
    assert shuffle.derive_deck(bytes.fromhex(GAMES[name]["seed_hex"])) != tuple(deck)
    records[1] = replace(records[1], data={**records[1].data, "deck": deck})
    result = verify_game(_rechained(records), postings_of(name), PAYTABLES)
    assert result.checks["hash-chain"] == "pass"  # rewritten by someone who could
    assert result.checks["deck"] == "fail"
    where = f"{records[1].stream_id} v2"
    assert any(
        f.check == "deck" and f.location == where and f.found == deck[50] for f in result.findings
    )


@pytest.mark.parametrize(
    ("version", "change"),
    [(7, {"to": "tableau:9"}), (8, {"column": 7})],
    ids=["move-to-tableau-9", "v1-turn-of-column-7"],
)
def test_a_recorded_event_naming_a_pile_the_game_lacks_is_a_finding_not_a_crash(
    version: int, change: dict[str, Any]
) -> None:
    name = "a-draw1-collected"
    records = records_of(name)
    i = version - 1
    assert records[i].type in ("CardMoved", "CardTurned")
    records[i] = replace(records[i], data={**records[i].data, **change})  # hash kept
    result = verify_game(records, postings_of(name), PAYTABLES)
    assert result.checks["hash-chain"] == "fail"
    assert result.checks["rules"] == "fail"
    assert any(f.check == "rules" for f in result.findings)
    # The replay shows the game up to the record it cannot fold, and the findings.
    shown = build_replay(records, postings_of(name), PAYTABLES, masked=False)
    assert len(shown.steps) == version - 1
    assert not shown.verification.ok
