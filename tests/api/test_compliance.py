"""Compliance over HTTP: the regulatory replay of a game (auditor and player), tampering found by
it, whole-history audits run by a real worker, and the significant-events log."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from service.core import shuffle
from service.runtime.config import Settings
from tests.api.books import audit_done
from tests.api.client import Http, assert_problem
from tests.api.factories import Game, GameFactory, PlayerFactory, WalletFactory
from tests.api.play import win_and_collect
from tests.builders import easy_deck

DbConn = psycopg.Connection[tuple[Any, ...]]

#: Keys of the full (auditor's) view that a player must never see in a replay.
HIDDEN_KEYS = {"deck", "stock", "waste_all", "foundation_piles", "shuffle_algorithm"}
#: What a game view answer adds to the game's state: its times, the player's reality check and
#: its payout's settlement.
TIMESTAMPS = {"started_at", "last_event_at", "ended_at", "reality_check", "payout_status"}
SEEDED_ONLY = {"seed-commitment", "deck"}


def _command(http: Http, token: str, game_id: str, name: str, **body: Any) -> dict[str, Any]:
    response = http.post(f"/v1/games/{game_id}/{name}", token, json=body or None)
    assert response.status_code == 200, response.get_json()
    view: dict[str, Any] = response.get_json()
    return view


def _two_aces(http: Http, game: Game) -> None:
    """Draw and play the two aces on top of an easy deck's stock (2 x 50 at a 520 stake)."""
    for _ in range(2):
        _command(http, game.player.token, game.id, "draw")
        _command(http, game.player.token, game.id, "move", **{"from": "waste", "to": "foundation"})


def _collected_certification_game(http: Http) -> Game:
    """An easy-deck certification game: two aces up, collected. Seven events:
    StakePlaced, Dealt, (CardDrawn, CardMoved) x 2, Collected."""
    game = GameFactory.create(deck=list(easy_deck()))
    _two_aces(http, game)
    _command(http, game.player.token, game.id, "collect")
    return game


def _replay(http: Http, game_id: str, token: str, query: str = "") -> dict[str, Any]:
    response = http.get(f"/v1/games/{game_id}/replay{query}", token)
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


# --- the replay -------------------------------------------------------------------------------


def test_an_auditor_replays_a_finished_certification_game_event_by_event(
    http: Http, staff_actors: dict[str, str]
) -> None:
    game = _collected_certification_game(http)
    replay = _replay(http, game.id, http.auditor_key)
    recorded = http.get(f"/v1/games/{game.id}/events", http.auditor_key).get_json()["events"]

    assert replay["label"] == "replay"
    assert replay["game_id"] == game.id
    assert replay["masked"] is False
    assert replay["version"] == replay["latest_version"] == len(recorded) == 7
    steps = replay["steps"]
    assert [s["type"] for s in steps] == [
        "StakePlaced",
        "Dealt",
        "CardDrawn",
        "CardMoved",
        "CardDrawn",
        "CardMoved",
        "Collected",
    ]
    for step, event in zip(steps, recorded, strict=True):
        assert step["version"] == event["version"]
        assert step["type"] == event["type"]
        assert step["recorded_at"] == event["recorded_at"]
        assert step["hash"] == event["hash"]
        assert step["data"] == event["data"]
        assert step["actor"] == event["metadata"]["actor"]
        assert step["role"] == event["metadata"]["role"]
        assert step["request_id"] == event["metadata"]["request_id"]
    # The operator dealt the certification game; the player played it.
    operator = staff_actors["operator"]
    assert [(s["actor"], s["role"]) for s in steps[:2]] == [(operator, "operator")] * 2
    assert {(s["actor"], s["role"]) for s in steps[2:]} == {(game.player.id, "player")}

    # No layout before the deal; after each event the full state at that version.
    assert steps[0]["state"] is None
    for step in steps[1:]:
        state = step["state"]
        assert state["version"] == step["version"]
        assert state["deck"] == list(easy_deck())
        assert all("face_down_cards" in column for column in state["tableau"])
    assert steps[1]["state"]["stock_count"] == 24
    assert steps[1]["state"]["foundation_count"] == 0
    assert steps[3]["state"]["foundation_count"] == 1
    assert steps[5]["state"]["foundation_count"] == 2
    assert steps[5]["state"]["status"] == "in_progress"

    final = replay["final"]
    assert final == steps[-1]["state"]
    assert final["status"] == "collected"
    assert sorted(p for p in final["foundation_piles"] if p) == [["AH"], ["AS"]]
    assert final["stock_count"] == 22

    outcome = replay["outcome"]
    assert outcome["player_id"] == game.player.id
    assert (outcome["status"], outcome["end_reason"]) == ("collected", "player")
    # a certification game is played for the sandbox currency, never for real money
    assert (outcome["stake"], outcome["currency"], outcome["win_rate"]) == (520, "XTS", 50)
    assert outcome["foundation_count"] == 2
    assert outcome["payout"] == outcome["winnings"] == 2 * 50
    assert outcome["payout"] == outcome["foundation_count"] * outcome["win_rate"]
    assert outcome["refund"] == 0
    assert outcome["net"] == outcome["payout"] + outcome["refund"] - outcome["stake"] == -420

    verification = replay["verification"]
    assert verification["verified"] is True
    assert verification["findings"] == []
    # A given deck is committed to at the deal and revealed at the end: both are checked.
    assert verification["checks"] == dict.fromkeys(
        ("hash-chain", "seed-commitment", "deck", "rules", "payout", "ledger"), "pass"
    )
    assert steps[-1]["data"]["deck"] == list(easy_deck())
    salt = steps[-1]["data"]["server_seed"]
    assert shuffle.deck_matches(easy_deck(), salt, steps[1]["data"]["seed_commitment"])


def test_a_game_dealt_from_a_real_seed_verifies_its_seed_and_deck(http: Http) -> None:
    game = GameFactory.create()  # the player's own deal, from a committed seed
    assert game.view["seed_commitment"]
    _command(http, game.player.token, game.id, "draw")
    _command(http, game.player.token, game.id, "collect")
    replay = _replay(http, game.id, http.auditor_key)
    assert [s["type"] for s in replay["steps"]] == [
        "StakePlaced",
        "Dealt",
        "CardDrawn",
        "Collected",
    ]
    assert {(s["actor"], s["role"]) for s in replay["steps"]} == {(game.player.id, "player")}
    assert replay["verification"]["verified"] is True
    assert replay["verification"]["checks"] == dict.fromkeys(
        ("hash-chain", "seed-commitment", "deck", "rules", "payout", "ledger"), "pass"
    )
    # The seed is revealed at the end; the deal's commitment stands in the Dealt event.
    assert replay["final"]["server_seed"]
    assert replay["steps"][1]["data"]["seed_commitment"] == game.view["seed_commitment"]
    assert replay["outcome"]["payout"] == 0
    assert replay["outcome"]["net"] == -520


def test_a_replay_up_to_a_version_shows_the_game_as_it_stood(http: Http) -> None:
    game = _collected_certification_game(http)
    whole = _replay(http, game.id, http.auditor_key)
    at_four = _replay(http, game.id, http.auditor_key, "?to_version=4")
    assert len(at_four["steps"]) == 4
    assert at_four["steps"] == whole["steps"][:4]
    assert at_four["version"] == 4
    assert at_four["latest_version"] == 7
    assert at_four["final"] == at_four["steps"][-1]["state"]
    assert at_four["final"]["version"] == 4
    assert at_four["final"]["foundation_count"] == 1
    assert at_four["final"]["status"] == "in_progress"
    # The verification is of the whole recorded game whatever version is shown.
    assert at_four["verification"] == whole["verification"]

    last = _replay(http, game.id, http.auditor_key, "?to_version=7")
    assert last["steps"] == whole["steps"]
    assert last["final"] == whole["final"]


def test_a_replay_past_the_last_version_is_refused_saying_how_many_there_are(
    http: Http,
) -> None:
    game = _collected_certification_game(http)
    body = assert_problem(
        http.get(f"/v1/games/{game.id}/replay?to_version=8", http.auditor_key),
        422,
        "validation-error",
    )
    assert body["errors"] == {"to_version": ["the game has 7 versions; ask for 1 to 7"]}


def test_a_replay_version_that_is_no_version_is_refused(http: Http) -> None:
    game = _collected_certification_game(http)
    for bad in ("0", "x", "-1", "2.5", ""):
        body = assert_problem(
            http.get(f"/v1/games/{game.id}/replay?to_version={bad}", http.auditor_key),
            422,
            "validation-error",
        )
        assert "to_version" in body["errors"]
    assert_problem(
        http.get(f"/v1/games/{game.id}/replay?version=2", http.auditor_key),
        422,
        "validation-error",
    )


def test_a_replay_up_to_the_stake_shows_no_layout_yet(http: Http) -> None:
    game = _collected_certification_game(http)
    at_stake = _replay(http, game.id, http.auditor_key, "?to_version=1")
    assert [step["type"] for step in at_stake["steps"]] == ["StakePlaced"]
    assert at_stake["final"] is None
    assert at_stake["outcome"]["status"] == "new"
    assert at_stake["outcome"]["stake"] == 520


def test_an_in_progress_game_replays_for_auditors_only(http: Http) -> None:
    game = GameFactory.create()  # seeded: the seed stays secret until the game ends
    _command(http, game.player.token, game.id, "draw")

    replay = _replay(http, game.id, http.auditor_key)
    assert replay["masked"] is False
    assert [s["type"] for s in replay["steps"]] == ["StakePlaced", "Dealt", "CardDrawn"]
    checks = replay["verification"]["checks"]
    assert checks["seed-commitment"] == checks["deck"] == "pending"
    assert checks["payout"] == "pending"
    assert (checks["hash-chain"], checks["rules"], checks["ledger"]) == ("pass",) * 3
    assert replay["verification"]["verified"] is True
    assert replay["outcome"]["status"] == "in_progress"
    assert replay["outcome"]["payout"] is None
    # Sealed until seen: while the seed is secret the auditor sees what the player sees. The
    # deal records only what it showed, and no step names a face-down card or the stock.
    dealt = replay["steps"][1]
    assert dealt["data"]["deck"] is None
    assert [p["down"] for p in dealt["data"]["piles"] if p["pile"].startswith("tableau:")] == list(
        range(7)
    )
    for step in replay["steps"][1:]:
        _assert_masked(step["state"])
    mine = http.get(f"/v1/games/{game.id}", game.player.token).get_json()
    assert replay["final"] == {k: v for k, v in mine.items() if k not in TIMESTAMPS}
    assert replay["final"]["server_seed"] is None
    assert replay["final"]["stock_count"] == 23

    body = assert_problem(
        http.get(f"/v1/games/{game.id}/replay", game.player.token), 409, "game-not-finished"
    )
    assert body["game_id"] == game.id
    stranger = PlayerFactory.create()
    assert_problem(http.get(f"/v1/games/{game.id}/replay", stranger.token), 404, "not-found")
    assert_problem(http.get(f"/v1/games/{uuid.uuid4()}/replay", http.auditor_key), 404, "not-found")


def _assert_masked(state: dict[str, Any]) -> None:
    assert not HIDDEN_KEYS & state.keys(), sorted(HIDDEN_KEYS & state.keys())
    for column in state["tableau"]:
        assert set(column) == {"face_down", "face_up"}
    for pile in state["piles"]:
        assert "face_down_cards" not in pile


def test_a_player_replays_their_own_finished_game_masked(http: Http) -> None:
    game = _collected_certification_game(http)
    replay = _replay(http, game.id, game.player.token)
    assert replay["masked"] is True
    assert len(replay["steps"]) == 7
    assert replay["steps"][0]["state"] is None
    for step in replay["steps"][1:]:
        _assert_masked(step["state"])
    _assert_masked(replay["final"])
    assert replay["final"] == replay["steps"][-1]["state"]
    assert [c["face_down"] for c in replay["steps"][1]["state"]["tableau"]] == list(range(7))
    dealt = replay["steps"][1]
    assert dealt["type"] == "Dealt"
    assert dealt["data"]["deck"] is None  # the deal records only what it showed
    assert "AS" not in str(dealt["data"])  # a face-down card at the deal shows nowhere
    assert replay["outcome"]["payout"] == 100
    assert replay["verification"]["verified"] is True

    # The same game, for an auditor, is not masked; another player may not see it at all.
    full = _replay(http, game.id, http.auditor_key)
    assert full["masked"] is False
    assert full["steps"][1]["state"]["deck"] == list(easy_deck())
    assert full["steps"][-1]["data"]["deck"] == list(easy_deck())  # revealed by the collect
    stranger = PlayerFactory.create()
    assert_problem(http.get(f"/v1/games/{game.id}/replay", stranger.token), 404, "not-found")


# --- tampering --------------------------------------------------------------------------------


@contextmanager
def _tampered(admin: DbConn, stream: str, version: int, sql_set: str) -> Iterator[None]:
    """Edit one recorded event behind the service's back, and put it back exactly as it was
    afterwards (the session's database is shared with tests that audit the whole history)."""
    where = "WHERE stream_id = %s AND version = %s"
    read = f"SELECT data::text, metadata::text FROM events {where}"
    original = admin.execute(read, (stream, version)).fetchone()
    assert original is not None
    with admin.transaction():
        admin.execute("SET LOCAL session_replication_role = replica")  # around the triggers
        admin.execute(f"UPDATE events SET {sql_set} {where}", (stream, version))
    try:
        yield
    finally:
        with admin.transaction():
            admin.execute("SET LOCAL session_replication_role = replica")
            admin.execute(
                f"UPDATE events SET data = %s::jsonb, metadata = %s::jsonb {where}",
                (*original, stream, version),
            )
        assert admin.execute(read, (stream, version)).fetchone() == original


def test_a_replay_names_an_event_edited_behind_the_service(http: Http, admin_conn: DbConn) -> None:
    game = _collected_certification_game(http)
    stream = f"game-{game.id}"
    assert _replay(http, game.id, http.auditor_key)["verification"]["verified"] is True

    with _tampered(admin_conn, stream, 7, "data = jsonb_set(data, '{winnings}', '5000')"):
        replay = _replay(http, game.id, http.auditor_key)
        verification = replay["verification"]
        assert verification["verified"] is False
        assert verification["checks"]["hash-chain"] == "fail"
        assert verification["checks"]["payout"] == "fail"
        found = {(f["check"], f["location"]) for f in verification["findings"]}
        assert ("hash-chain", f"{stream} v7") in found
        assert ("payout", f"{stream} v7") in found
        # The player's masked replay tells the same story.
        mine = _replay(http, game.id, game.player.token)
        assert mine["verification"]["verified"] is False

    again = _replay(http, game.id, http.auditor_key)
    assert again["verification"]["verified"] is True
    assert again["verification"]["findings"] == []


def test_a_replay_names_an_edited_move(http: Http, admin_conn: DbConn) -> None:
    """A move in the middle of the game, not the money: the chain breaks at that version."""
    game = _collected_certification_game(http)
    stream = f"game-{game.id}"
    with _tampered(admin_conn, stream, 3, 'metadata = metadata || \'{"actor": "mallory"}\''):
        replay = _replay(http, game.id, http.auditor_key)
        assert replay["steps"][2]["actor"] == "mallory"
        verification = replay["verification"]
        assert verification["verified"] is False
        assert [(f["check"], f["location"]) for f in verification["findings"]] == [
            ("hash-chain", f"{stream} v3")
        ]
    assert _replay(http, game.id, http.auditor_key)["verification"]["verified"] is True


# --- audits -----------------------------------------------------------------------------------


def test_an_audit_of_one_player_runs_on_a_worker_and_finds_nothing(
    http: Http, worker: Settings, staff_actors: dict[str, str]
) -> None:
    game = _collected_certification_game(http)
    player = game.player
    other = GameFactory.create(wallet=WalletFactory.create(player=player))  # open, seeded
    started = http.post("/v1/audits", http.auditor_key, json={"player_id": player.id})
    assert started.status_code == 202, started.get_json()
    body = started.get_json()
    assert body["status"] in ("running", "done")
    audit_id = body["id"]
    assert started.headers["Location"].endswith(f"/v1/audits/{audit_id}")
    assert body["scope"] == {"kind": "player", "player_id": player.id, "from": None, "to": None}
    assert body["requested_by"] == staff_actors["auditor"]
    assert body["total"] == 2 + 1 + 1  # two games, the player's stream, the ledger

    done = audit_done(http, started.headers["Location"], worker)
    assert done["id"] == audit_id
    assert done["checked"] == done["total"] == 4
    assert done["failed_units"] == 0
    assert done["findings"] == []
    assert done["finished_at"] is not None
    assert other.view["status"] == "in_progress"


def test_an_audit_request_is_validated(http: Http) -> None:
    today = datetime.now(UTC).date()
    player_id = str(uuid.uuid4())
    bad: list[tuple[dict[str, Any], str]] = [
        ({"player_id": player_id, "from": str(today), "to": str(today)}, "player_id"),
        ({"player_id": player_id, "from": str(today)}, "player_id"),
        ({"from": str(today)}, "to"),
        ({"to": str(today)}, "from"),
        ({"from": str(today), "to": str(today - timedelta(days=1))}, "to"),
        ({"from": "yesterday", "to": str(today)}, "from"),
        ({"player_id": "not-a-uuid"}, "player_id"),
        ({"everything": True}, "everything"),
    ]
    for body, field in bad:
        problem = assert_problem(
            http.post("/v1/audits", http.auditor_key, json=body), 422, "validation-error"
        )
        assert field in problem["errors"], (body, problem)
    assert_problem(http.get(f"/v1/audits/{uuid.uuid4()}", http.auditor_key), 404, "not-found")


def test_an_audit_without_a_body_covers_the_whole_history(http: Http) -> None:
    bodies: tuple[dict[str, Any] | None, ...] = ({}, None)
    for sent in bodies:
        started = http.post("/v1/audits", http.auditor_key, json=sent)
        assert started.status_code == 202, started.get_json()
        assert started.get_json()["scope"]["kind"] == "all"
        assert started.get_json()["total"] >= 1  # the ledger at least


def test_an_audit_of_dates_at_the_ends_of_the_calendar_is_accepted(http: Http) -> None:
    for first, last in (("0001-01-01", "0001-01-02"), ("9999-12-30", "9999-12-31")):
        started = http.post("/v1/audits", http.auditor_key, json={"from": first, "to": last})
        assert started.status_code == 202, started.get_json()
        body = started.get_json()
        assert body["scope"] == {"kind": "dates", "from": first, "to": last, "player_id": None}
        assert (body["status"], body["total"]) == ("done", 0)  # no games dealt then


# --- significant events -----------------------------------------------------------------------


def _void(http: Http, game: Game, reason: str) -> None:
    voided = http.post(f"/v1/games/{game.id}/void", http.operator_key, json={"reason": reason})
    assert voided.status_code == 200, voided.get_json()
    assert voided.get_json()["status"] == "voided"


def _significant(http: Http, query: str) -> dict[str, Any]:
    response = http.get(f"/v1/significant-events{query}", http.auditor_key)
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def test_voids_and_big_wins_are_logged_as_significant_events(
    http: Http, staff_actors: dict[str, str]
) -> None:
    first = GameFactory.create(stake=1_040)
    second = GameFactory.create(deck=list(easy_deck()))
    _void(http, first, "a display fault on table 4")
    _void(http, second, "a certification run")
    big = GameFactory.create(deck=list(easy_deck()), stake=26_000)  # 52 x 2,500 = 130,000
    assert win_and_collect(http, big.player.token, big.id)["payout"] == 130_000

    everything = _significant(http, "?limit=200")
    mine = [i for i in everything["items"] if i["game_id"] in (first.id, second.id, big.id)]
    # Every certification deal (a known seed or deck) is on the log too, by the operator.
    dealt = [i for i in mine if i["kind"] == "certification"]
    assert [(i["game_id"], i["actor"]) for i in dealt] == [
        (big.id, staff_actors["operator"]),
        (second.id, staff_actors["operator"]),
    ]
    assert dealt[0]["details"] == {"variant": "vegas-draw1", "given": "deck"}
    assert (dealt[0]["amount"], dealt[0]["player_id"]) == (26_000, big.player.id)
    assert dealt[0]["currency"] == "XTS"  # staked in the sandbox, not in real money
    logged = [i for i in mine if i["kind"] != "certification"]
    assert [(i["game_id"], i["kind"]) for i in logged] == [  # newest first
        (big.id, "big-win"),
        (second.id, "void"),
        (first.id, "void"),
    ]
    win, second_void, item = logged
    assert item["actor"] == staff_actors["operator"]
    assert item["player_id"] == first.player.id
    assert (item["amount"], item["currency"]) == (1_040, "GBP")
    assert item["details"] == {"reason": "a display fault on table 4", "certification": False}
    assert second_void["details"] == {"reason": "a certification run", "certification": True}
    assert (second_void["amount"], second_void["currency"]) == (520, "XTS")
    assert datetime.fromisoformat(item["occurred_at"]) <= datetime.now(UTC)
    # A big win (at or over the threshold of 100,000) is the player's own doing.
    assert (win["player_id"], win["actor"]) == (big.player.id, big.player.id)
    assert (win["amount"], win["currency"]) == (130_000, "XTS")  # a certification game's
    assert win["details"]["units"] == 52
    assert win["details"]["threshold"] == 100_000
    ids = [i["id"] for i in everything["items"]]
    assert ids == sorted(ids, reverse=True)

    voids = _significant(http, "?kind=void")
    assert {i["kind"] for i in voids["items"]} == {"void"}
    assert [i["game_id"] for i in voids["items"][:2]] == [second.id, first.id]
    wins = _significant(http, "?kind=big-win")
    assert {i["kind"] for i in wins["items"]} == {"big-win"}
    assert wins["items"][0] == win

    # One at a time: the first page names the cursor for the next.
    page = _significant(http, "?kind=void&limit=1")
    assert [i["game_id"] for i in page["items"]] == [second.id]
    assert page["next"] == page["items"][0]["id"]

    for query in ("?kind=refund", "?limit=0", "?limit=201", "?before=0", "?before=x", "?foo=1"):
        assert_problem(
            http.get(f"/v1/significant-events{query}", http.auditor_key), 422, "validation-error"
        )


def test_a_big_win_still_names_its_foundation_count(http: Http) -> None:
    big = GameFactory.create(deck=list(easy_deck()), stake=26_000)
    assert win_and_collect(http, big.player.token, big.id)["payout"] == 130_000
    wins = _significant(http, "?kind=big-win&limit=200")["items"]
    (win,) = [i for i in wins if i["game_id"] == big.id]
    assert win["details"]["units"] == 52
    assert win["details"]["foundation_count"] == 52


def test_significant_events_page_on_with_the_next_cursor(http: Http) -> None:
    first = GameFactory.create()
    second = GameFactory.create()
    _void(http, first, "paging one")
    _void(http, second, "paging two")
    page = _significant(http, "?kind=void&limit=1")
    assert [i["game_id"] for i in page["items"]] == [second.id]
    following = _significant(http, f"?kind=void&limit=1&before={page['next']}")
    assert [i["game_id"] for i in following["items"]] == [first.id]
    assert following["items"][0]["id"] < page["next"]
    # Walking on to the end: every void once, newest first, and the last page says so.
    seen = page["items"] + following["items"]
    cursor = following["next"]
    while cursor is not None:
        more = _significant(http, f"?kind=void&limit=2&before={cursor}")
        seen += more["items"]
        cursor = more["next"]
    ids = [i["id"] for i in seen]
    assert ids == sorted(set(ids), reverse=True)
    assert ids == [i["id"] for i in _significant(http, "?kind=void&limit=200")["items"]]
