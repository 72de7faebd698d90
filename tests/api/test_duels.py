"""Classic duels (seed 003) end to end over HTTP, on the server's clock as the tests move it.

The tests share one database, and a join takes the oldest open duel of its fee, seat count and
currency: so every test uses its own fee and seat count where it can, joins certification
duels through the operator, and leaves no duel open behind it (it fills it, or lets it expire
and sweeps it). A certification duel's money (fees, prizes, rake, refunds) is the sandbox's:
its seats' sandbox wallets, never their real ones (tests/api/test_sandbox.py checks that the
real books never move); a player's own join pays real money."""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from events.codec import decode_game
from service.bootstrap import Container
from service.core import game_decider as g
from service.core import scoring, shuffle
from service.core.context import Actor, RequestContext
from service.errors import RuleViolation
from service.services import history_audits as audit
from tests.api.books import DbConn, balance, sandbox_balance, statement, wallet
from tests.api.client import Http, assert_problem, assert_salted_commitment
from tests.api.duel_support import (
    FakeClock,
    Played,
    assert_books_balance,
    at,
    clock,
    duel_event_types,
    duel_transactions,
    game_events,
    join,
    look,
    moves,
    play,
    play_up,
    pot_balance,
    seat_call,
    seat_refused,
)
from tests.api.factories import Player, WalletFactory
from tests.api.play import assert_none_of, cards_in
from tests.api.test_concurrency import event_types, race, statuses
from tests.builders import easy_deck

__all__ = ["clock"]

DECK = list(easy_deck())
FIVE_MINUTES = timedelta(seconds=300)
FIFTEEN_MINUTES = timedelta(minutes=15)


def funded(amount: int) -> Player:
    return WalletFactory.create(balance=amount).player


def score_aces(http: Http, player: Player, duel_id: str, view: dict[str, Any], n: int) -> Played:
    """On the easy deck: draw once (the waste shows AS AH AD, AD on top) and put ``n`` of those
    aces up, the top one first: 5 points each, nothing else."""
    played = play(http, player.token, duel_id, view, {"action": "draw"})
    for _ in range(n):
        up = moves(played.game, "move", "foundation")
        assert up, played.game["legal_moves"]
        assert up[0]["from"] == "waste", up
        played.view = seat_call(http, player.token, duel_id, "actions", **up[0])
        played.sent.append(up[0])
    assert played.view["you"]["points"] == 5 * n
    return played


def finish(http: Http, player: Player, duel_id: str) -> dict[str, Any]:
    """The player stops their seat's game (dealing it first if need be)."""
    mine = look(http, player.token, duel_id)["you"]
    if mine["game_id"] is None:
        seat_call(http, player.token, duel_id, "deal")
    return seat_call(http, player.token, duel_id, "actions", action="collect")


def game_points(http: Http, game_id: str) -> int:
    """Seed 003's points of a seat's game as an auditor replaying its recorded events gets them
    (service.core.scoring over the stream the events route shows)."""
    events = [
        decode_game(e["type"], e["schema_version"], e["data"]) for e in game_events(http, game_id)
    ]
    return scoring.points(events).total


def seats_of(view: dict[str, Any], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(seat.get(k) for k in keys) for seat in view["seat_list"]]


def footprint(conn: DbConn) -> tuple[int, ...]:
    """How much the log, the ledger and the duels' rows hold."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM postings),"
        " (SELECT count(*) FROM duels), (SELECT count(*) FROM duel_seats)"
    ).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def stream(duel_id: str) -> str:
    return f"duel-{duel_id}"


# --- 1. a duel end to end ---------------------------------------------------------------------


def test_a_two_seat_duel_on_a_known_deck_pays_the_best_score(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    fee, a, b = 500, funded(5_000), funded(5_000)
    t0 = clock.now
    opened = join(http, a.id, fee, deck=DECK)
    duel_id = opened["id"]
    assert (opened["status"], opened["seats"], opened["taken"], opened["pot"]) == (
        "open",
        2,
        1,
        500,
    )
    assert (opened["variant"], opened["rules_version"]) == ("klondike-duel", "klondike-duel/1")
    assert (opened["certification"], opened["rake"], opened["currency"]) == (True, "0.1", "XTS")
    assert opened["paytable"] == {"id": "duel-gbp", "version": 1}
    assert at(opened["fill_by"]) == t0 + FIFTEEN_MINUTES
    assert (opened["deal_by"], opened["server_seed"], opened["result"]) == (None, None, None)
    assert_salted_commitment(opened, DECK)
    assert (sandbox_balance(http, a), pot_balance(admin_conn, duel_id)) == (-500, 500)

    clock.advance(5)
    full = join(http, b.id, fee)
    assert (full["id"], full["status"], full["taken"], full["pot"]) == (duel_id, "full", 2, 1_000)
    # the seats deal within the time the duel had to fill, counted from when it filled
    assert at(full["deal_by"]) == clock.now + FIFTEEN_MINUTES
    assert (sandbox_balance(http, b), pot_balance(admin_conn, duel_id)) == (-500, 1_000)

    dealt_a = seat_call(http, a.token, duel_id, "deal")
    a_deadline = clock.now + FIVE_MINUTES
    # the fee sits in the pot: a seat's game holds no stake of its own
    seen = wallet(http, a)
    assert (seen["sandbox"]["balance"], seen["sandbox"]["held"]) == (-500, 0)
    assert (seen["balance"], seen["held"], seen["open_game_id"]) == (5_000, 0, None)
    you = dealt_a["you"]
    assert (at(you["deadline"]), you["seconds_left"], you["points"]) == (a_deadline, 300, 0)
    assert (you["game"]["variant"], you["game"]["status"]) == ("klondike-duel", "in_progress")
    clock.advance(7)
    dealt_b = seat_call(http, b.token, duel_id, "deal")
    assert at(dealt_b["you"]["deadline"]) == clock.now + FIVE_MINUTES

    # both seats play the same deal: the same Dealt piles, the duel's one commitment
    a_game, b_game = you["game_id"], dealt_b["you"]["game_id"]
    assert a_game != b_game
    dealt = [
        next(e["data"] for e in game_events(http, gid) if e["type"] == "Dealt")
        for gid in (a_game, b_game)
    ]
    assert dealt[0]["piles"] == dealt[1]["piles"]
    assert dealt[0]["seed_commitment"] == dealt[1]["seed_commitment"] == opened["seed_commitment"]
    assert dealt_a["you"]["game"]["piles"] == dealt_b["you"]["game"]["piles"]

    # B puts three aces up (15 points) and stops; the duel waits for A
    clock.advance(3)
    scored = score_aces(http, b, duel_id, dealt_b, 3)
    b_end = clock.now
    stopped = seat_call(http, b.token, duel_id, "actions", action="collect")
    assert (stopped["status"], stopped["you"]["points"]) == ("full", 15)
    assert scored.count("move") == 3

    # A wins the deal 17 seconds into their five minutes: the winning move settles the duel
    clock.advance(7)
    won = play_up(http, a.token, duel_id, dealt_a)
    a_end = clock.now
    assert (won.count("turn"), won.count("recycle")) == (21, 0)
    assert (won.game["status"], won.game["end_reason"], won.game["foundation_count"]) == (
        "collected",
        "finished",
        52,
    )
    # seed 003: first placings of all 52 (4 x (5+10+...+45 + 4 x 50) = 1,700), 21 cards turned
    # (210), no recycle, 1,700 for all up, and 5 per whole second left (300 - 17 = 283)
    first_placings = 4 * sum(min(5 * (i + 1), 50) for i in range(13))
    assert first_placings == 1_700
    a_points = first_placings + 21 * 10 + 0 + 1_700 + 5 * 283
    assert won.view["you"]["points"] == a_points == 5_025
    assert game_points(http, a_game) == a_points
    settled = won.view

    assert settled["status"] == "settled"
    assert settled["result"] == {
        "pot": 1_000,
        "rake": 100,
        "payouts": [{"seat": 0, "player_id": a.id, "amount": 900}],
        "refunds": [],
        "cancelled_because": None,
    }
    expected_seats = [
        (0, a.id, a_game, a_points, "finished", a_end, 900, 0),
        (1, b.id, b_game, 15, "player", b_end, 0, 0),
    ]
    for viewer in (a.token, b.token, http.operator_key, http.auditor_key):
        seen = look(http, viewer, duel_id)
        got = seats_of(seen, "seat", "player_id", "game_id", "points", "end_reason")
        assert got == [s[:5] for s in expected_seats]
        assert [at(s["ended_at"]) for s in seen["seat_list"]] == [a_end, b_end]
        assert [(s["payout"], s["refund"]) for s in seen["seat_list"]] == [(900, 0), (0, 0)]
        assert seen["result"] == settled["result"]
        assert seen["ended_at"] is not None
    # the given deck is revealed with its salt, and matches the commitment published at the open
    assert settled["revealed_deck"] == DECK
    assert shuffle.deck_matches(DECK, settled["server_seed"], opened["seed_commitment"])

    # money: the pot less the rake to A, the rake to the house, the pot empty
    assert (sandbox_balance(http, a), sandbox_balance(http, b)) == (400, -500)
    assert statement(http, a, "sandbox") == [
        ("duel-prize", 900, stream(duel_id)),
        ("duel-fee", -500, stream(duel_id)),
    ]
    assert statement(http, b, "sandbox") == [("duel-fee", -500, stream(duel_id))]
    assert pot_balance(admin_conn, duel_id) == 0
    pot = f"duel-pot:{duel_id}"
    assert duel_transactions(admin_conn, duel_id) == [
        ("duel-fee", {f"sandbox:{a.id}": -500, pot: 500}),
        ("duel-fee", {f"sandbox:{b.id}": -500, pot: 500}),
        ("duel-prize", {pot: -1_000, f"sandbox:{a.id}": 900, "house-rake:XTS": 100}),
    ]
    assert_books_balance(admin_conn, duel_id)
    assert duel_event_types(http, duel_id) == [
        "DuelOpened",
        "SeatTaken",
        "SeatTaken",
        "SeatDealt",
        "SeatDealt",
        "SeatFinished",
        "SeatFinished",
        "DuelSettled",
    ]
    assert [e["type"] for e in game_events(http, a_game)][-2:] == ["AutoCompleted", "Collected"]


# --- 2. privacy ---------------------------------------------------------------------------------


def test_a_seat_sees_nothing_of_another_until_the_duel_settles(
    http: Http, clock: FakeClock
) -> None:
    fee, a, b = 1_000, funded(3_000), funded(3_000)
    seed = secrets.token_hex(32)
    opened = join(http, a.id, fee, seed=seed)
    duel_id = opened["id"]
    assert opened["seed_commitment"] == hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    join(http, b.id, fee)

    dealt_a = seat_call(http, a.token, duel_id, "deal")
    a_game = dealt_a["you"]["game_id"]
    # A draws twice: six stock cards B has not seen (the same deal, still face down for B)
    drawn = play(http, a.token, duel_id, dealt_a, {"action": "draw"}, {"action": "draw"})
    a_points = drawn.view["you"]["points"]
    assert a_points is not None
    a_seen = cards_in(drawn.game)
    assert len(a_seen) >= 7 + 3  # the seven column tops and at least the waste's three

    before = look(http, b.token, duel_id)
    assert before["seat_list"][0] == {"seat": 0, "taken": True}
    assert before["you"] == {
        "seat": 1,
        "game_id": None,
        "deadline": None,
        "seconds_left": None,
        "points": None,
        "game": None,
    }
    assert cards_in(before) == set()
    assert a_game not in json.dumps(before)
    assert (before["server_seed"], before["revealed_deck"], before["result"]) == (None, None, None)

    dealt_b = seat_call(http, b.token, duel_id, "deal")
    b_seen = cards_in(dealt_b["you"]["game"])
    only_a = a_seen - b_seen
    assert only_a, "A's draws show cards B's deal does not"
    for shown in (dealt_b, look(http, b.token, duel_id)):
        assert shown["seat_list"][0] == {"seat": 0, "taken": True}
        assert a_game not in json.dumps(shown)
        assert_none_of(only_a, shown, "B's view of the duel")
        assert cards_in(shown) == b_seen
    # nor through the games API
    refused = http.get(f"/v1/games/{a_game}", b.token)
    assert_problem(refused, 404, "not-found")

    # staff see who sits where and whether they finished, but no points before the end
    for key in (http.operator_key, http.auditor_key):
        staff = look(http, key, duel_id)
        assert staff["seat_list"][0] == {
            "seat": 0,
            "taken": True,
            "player_id": a.id,
            "game_id": a_game,
            "finished": False,
        }
        assert "points" not in json.dumps(staff["seat_list"])
        assert staff["you"] is None
        assert staff["server_seed"] is None

    # A finishes: B still sees nothing of A's result until the duel settles
    stopped = seat_call(http, a.token, duel_id, "actions", action="collect")
    assert (stopped["status"], stopped["you"]["points"]) == ("full", a_points)
    after_a = look(http, b.token, duel_id)
    assert after_a["seat_list"][0] == {"seat": 0, "taken": True}
    assert "points" not in look(http, http.operator_key, duel_id)["seat_list"][0]

    clock.advance(1)
    settled = seat_call(http, b.token, duel_id, "actions", action="collect")
    assert settled["status"] == "settled"
    # draws score nothing: a tie at 0, the prize (2,000 less 200) split
    assert (a_points, settled["you"]["points"]) == (0, 0)
    for viewer in (a.token, b.token):
        seen = look(http, viewer, duel_id)
        assert seats_of(seen, "seat", "player_id", "game_id", "points", "payout") == [
            (0, a.id, a_game, 0, 900),
            (1, b.id, dealt_b["you"]["game_id"], 0, 900),
        ]
        assert [(p["seat"], p["amount"]) for p in seen["result"]["payouts"]] == [(0, 900), (1, 900)]
        # the seed is revealed and is the one committed to: sha256 of its bytes
        assert seen["server_seed"] == seed
        digest = hashlib.sha256(bytes.fromhex(seen["server_seed"])).hexdigest()
        assert digest == seen["seed_commitment"] == opened["seed_commitment"]
        assert shuffle.seed_matches(seen["server_seed"], opened["seed_commitment"])


def test_staff_see_no_seat_s_cards_moves_or_points_until_the_duel_settles(
    http: Http, clock: FakeClock, container: Container
) -> None:
    """Issue 22: every seat plays one deck, so a seat's game is every other seat's sealed
    cards. Before the duel ends no staff route shows a seat's game, its events or replay, the
    duel's replay, an audit of either, or a seat's result in the duel's events; after, all."""
    fee, a, b = 1_000, funded(3_000), funded(3_000)
    duel_id = join(http, a.id, fee)["id"]
    join(http, b.id, fee)
    dealt_a = seat_call(http, a.token, duel_id, "deal")
    a_game = dealt_a["you"]["game_id"]
    drawn = play(http, a.token, duel_id, dealt_a, {"action": "draw"}, {"action": "draw"})
    a_seen = cards_in(drawn.game)
    stopped = seat_call(http, a.token, duel_id, "actions", action="collect")  # A's seat is over
    a_points = stopped["you"]["points"]

    sealed = [
        (http.operator_key, "GET", f"/v1/games/{a_game}"),
        (http.auditor_key, "GET", f"/v1/games/{a_game}"),
        (http.auditor_key, "GET", f"/v1/games/{a_game}?view=full"),
        (http.auditor_key, "GET", f"/v1/games/{a_game}/events"),
        (http.auditor_key, "GET", f"/v1/games/{a_game}/replay"),
        (http.auditor_key, "GET", f"/v1/duels/{duel_id}/replay"),
    ]
    for key, method, path in sealed:
        refused = http.call(method, path, key)
        body = assert_problem(refused, 409, "duel-in-progress")
        assert_none_of(a_seen, body, path)
    voided = http.post(f"/v1/games/{a_game}/void", http.operator_key, json={"reason": "peek"})
    assert_none_of(a_seen, assert_problem(voided, 404, "not-found"), "a void's answer")
    events = http.get(f"/v1/duels/{duel_id}/events", http.auditor_key).get_json()
    assert events["chain_intact"] is True
    (finished,) = [e for e in events["events"] if e["type"] == "SeatFinished"]
    assert finished["data"]["seat"] == 0
    assert {finished["data"][k] for k in ("points", "units", "reason")} == {
        "hidden until the duel ends"
    }
    assert_none_of(a_seen, events, "the duel's events")
    with container.unit_of_work() as uow:
        planned = audit.plan(uow, audit.Scope("all"))
    assert f"game-{a_game}" not in planned
    assert f"duel-{duel_id}" not in planned

    clock.advance(1)
    seat_call(http, b.token, duel_id, "deal")
    assert seat_call(http, b.token, duel_id, "actions", action="collect")["status"] == "settled"
    for key, method, path in sealed:
        assert http.call(method, path, key).status_code == 200, path
    events = http.get(f"/v1/duels/{duel_id}/events", http.auditor_key).get_json()
    (finished,) = [
        e for e in events["events"] if e["type"] == "SeatFinished" and e["data"]["seat"] == 0
    ]
    assert finished["data"]["points"] == a_points
    with container.unit_of_work() as uow:
        planned = audit.plan(uow, audit.Scope("all"))
    assert {f"game-{a_game}", f"duel-{duel_id}"} <= set(planned)


# --- 3. the clock -------------------------------------------------------------------------------


@pytest.mark.parametrize("trigger", ["action", "read", "sweep"])
def test_a_seat_out_of_time_ends_at_its_deadline(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn, trigger: str
) -> None:
    fee, a, b = 200, funded(1_000), funded(1_000)
    opened = join(http, a.id, fee, deck=DECK)
    duel_id = opened["id"]
    join(http, b.id, fee)
    dealt_a = seat_call(http, a.token, duel_id, "deal")
    a_game, a_deadline = dealt_a["you"]["game_id"], clock.now + FIVE_MINUTES
    assert at(dealt_a["you"]["deadline"]) == a_deadline
    score_aces(http, a, duel_id, dealt_a, 3)  # 15 points
    clock.advance(10)
    dealt_b = seat_call(http, b.token, duel_id, "deal")
    b_deadline = clock.now + FIVE_MINUTES

    # at the deadline itself the seat still plays; nothing ends it
    clock.now = a_deadline
    assert container.duels.sweep_duel(uuid.UUID(duel_id)) is False
    still = seat_call(http, a.token, duel_id, "actions", action="draw")
    assert (still["you"]["seconds_left"], still["you"]["points"]) == (0, 15)

    clock.advance(1)
    if trigger == "action":
        problem = seat_refused(
            http, a.token, duel_id, "actions", {"action": "draw"}, 409, "time-up"
        )
        assert problem["rule"] == "time-up"
        assert at(problem["deadline"]) == a_deadline
    elif trigger == "read":
        look(http, b.token, duel_id)  # any read: B's, of a duel A sits in
    else:
        assert uuid.UUID(duel_id) in container.duels.sweep()

    staff = look(http, http.operator_key, duel_id)
    assert staff["status"] == "full"
    assert seats_of(staff, "finished") == [(True,), (False,)]
    mine = look(http, a.token, duel_id)
    assert mine["seat_list"][0]["end_reason"] == "timeout"
    assert at(mine["seat_list"][0]["ended_at"]) == a_deadline
    assert (mine["seat_list"][0]["points"], mine["you"]["points"]) == (15, 15)
    assert mine["you"]["seconds_left"] is None
    # the seat's game ended as timed out at its deadline, and scores what it scored
    a_events = game_events(http, a_game)
    assert [e["type"] for e in a_events].count("Collected") == 1
    collected = a_events[-1]
    assert (collected["type"], collected["data"]["reason"]) == ("Collected", "timeout")
    assert datetime.fromisoformat(collected["data"]["ended_at"]) == a_deadline
    assert game_points(http, a_game) == 15
    # nothing more is accepted from A, and nothing is ended twice
    late = http.post(f"/v1/duels/{duel_id}/actions", a.token, json={"action": "draw"})
    assert late.status_code in (409, 422), late.get_json()
    assert container.duels.sweep_duel(uuid.UUID(duel_id)) is False
    assert duel_event_types(http, duel_id).count("SeatFinished") == 1

    # B plays on within their own five minutes, then stops: A's 15 points win
    assert at(dealt_b["you"]["deadline"]) == b_deadline
    settled = seat_call(http, b.token, duel_id, "actions", action="collect")
    assert settled["status"] == "settled"
    assert seats_of(settled, "points", "end_reason", "payout") == [
        (15, "timeout", 360),
        (0, "player", 0),
    ]
    assert at(settled["seat_list"][0]["ended_at"]) == a_deadline
    assert (sandbox_balance(http, a), sandbox_balance(http, b)) == (160, -200)
    assert pot_balance(admin_conn, duel_id) == 0
    assert_books_balance(admin_conn, duel_id)
    assert duel_event_types(http, duel_id)[-3:] == ["SeatFinished", "SeatFinished", "DuelSettled"]


def test_a_seat_never_dealt_forfeits_at_the_deal_by_time(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn
) -> None:
    fee, a, b, c = 2_000, funded(2_000), funded(2_000), funded(2_000)
    opened = join(http, a.id, fee, deck=DECK, seats=3)
    duel_id = opened["id"]
    join(http, b.id, fee, seats=3)
    clock.advance(30)
    full = join(http, c.id, fee, seats=3)
    deal_by = at(full["deal_by"])
    assert deal_by == clock.now + FIFTEEN_MINUTES  # counted from when the duel filled
    dealt = seat_call(http, a.token, duel_id, "deal")
    score_aces(http, a, duel_id, dealt, 1)
    clock.advance(301)
    assert uuid.UUID(duel_id) in container.duels.sweep()  # A out of time; B and C never dealt
    assert look(http, http.operator_key, duel_id)["status"] == "full"
    clock.now = deal_by - timedelta(seconds=1)
    assert uuid.UUID(duel_id) not in container.duels.sweep()
    clock.now = deal_by + timedelta(seconds=1)
    seat_refused(http, b.token, duel_id, "deal", {}, 422, "rule-violation", "deal-expired")
    settled = look(http, c.token, duel_id)  # the read forfeits B's and C's seats, and settles
    assert settled["status"] == "settled"
    assert seats_of(settled, "points", "end_reason", "game_id", "payout") == [
        (5, "timeout", dealt["you"]["game_id"], 5_400),
        (0, "not-dealt", None, 0),
        (0, "not-dealt", None, 0),
    ]
    assert [at(s["ended_at"]) for s in settled["seat_list"][1:]] == [deal_by, deal_by]
    assert [sandbox_balance(http, p) for p in (a, b, c)] == [3_400, -2_000, -2_000]
    assert pot_balance(admin_conn, duel_id) == 0
    assert_books_balance(admin_conn, duel_id)


# --- 4. ties ------------------------------------------------------------------------------------


def test_a_tie_splits_the_prize_evenly(http: Http, clock: FakeClock, admin_conn: DbConn) -> None:
    fee, a, b = 100, funded(1_000), funded(1_000)
    duel_id = join(http, a.id, fee, seed=secrets.token_hex(32))["id"]
    join(http, b.id, fee)
    seat_call(http, a.token, duel_id, "deal")
    seat_call(http, b.token, duel_id, "deal")
    seat_call(http, a.token, duel_id, "actions", action="collect")
    settled = seat_call(http, b.token, duel_id, "actions", action="collect")  # the same instant
    assert settled["status"] == "settled"
    assert settled["result"]["payouts"] == [
        {"seat": 0, "player_id": a.id, "amount": 90},
        {"seat": 1, "player_id": b.id, "amount": 90},
    ]
    assert seats_of(settled, "points", "payout") == [(0, 90), (0, 90)]
    assert (sandbox_balance(http, a), sandbox_balance(http, b)) == (-10, -10)
    pot = f"duel-pot:{duel_id}"
    assert duel_transactions(admin_conn, duel_id)[-1] == (
        "duel-prize",
        {pot: -200, f"sandbox:{a.id}": 90, f"sandbox:{b.id}": 90, "house-rake:XTS": 20},
    )
    assert pot_balance(admin_conn, duel_id) == 0


def test_the_odd_units_of_a_tied_prize_go_to_the_earliest_finishers(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    """Every prize under the default paytable is 90% of a multiple of 100, a multiple of 90: it
    divides evenly between 2, 3, 5 or 6 winners, so four winners of five seats it is. 450 is
    4 x 112 and 2 over: the two earliest finishers get 113."""
    fee = 100
    players = [funded(1_000) for _ in range(5)]
    duel_id = join(http, players[0].id, fee, deck=DECK, seats=5)["id"]
    for seat, player in enumerate(players[1:], start=1):
        view = join(http, player.id, fee, seats=5)
        assert view["id"] == duel_id
        assert view["seat_list"][seat]["player_id"] == player.id
    assert view["status"] == "full"
    dealt = {s: seat_call(http, p.token, duel_id, "deal") for s, p in enumerate(players)}
    for seat in range(4):  # the ace of diamonds up: 5 points each
        score_aces(http, players[seat], duel_id, dealt[seat], 1)
    # seat 4 goes through the stock (8 draws of 3) and recycles it three times: the first two
    # recycles are free, the third starts a fourth pass and costs 20
    through = [{"action": "draw"}] * 8
    passes = play(http, players[4].token, duel_id, dealt[4], *through, {"action": "recycle"})
    passes = play(http, players[4].token, duel_id, passes.view, *through, {"action": "recycle"})
    assert passes.view["you"]["points"] == 0
    passes = play(http, players[4].token, duel_id, passes.view, *through, {"action": "recycle"})
    assert passes.view["you"]["points"] == -20
    ended = {}
    for seat in (3, 1, 4, 0, 2):  # finishing order, not seat order; seat 4 scores -20
        clock.advance(1)
        ended[seat] = clock.now
        last = seat_call(http, players[seat].token, duel_id, "actions", action="collect")
    assert last["status"] == "settled"
    assert (last["result"]["pot"], last["result"]["rake"]) == (500, 50)
    assert [(p["seat"], p["amount"]) for p in last["result"]["payouts"]] == [
        (0, 112),
        (1, 113),
        (2, 112),
        (3, 113),
    ]
    assert seats_of(last, "points", "payout") == [
        (5, 112),
        (5, 113),
        (5, 112),
        (5, 113),
        (-20, 0),
    ]
    assert game_points(http, last["seat_list"][4]["game_id"]) == -20
    assert [at(s["ended_at"]) for s in last["seat_list"]] == [ended[s] for s in range(5)]
    assert [sandbox_balance(http, p) for p in players] == [12, 13, 12, 13, -100]
    assert pot_balance(admin_conn, duel_id) == 0
    assert_books_balance(admin_conn, duel_id)


# --- 5. cancelled and voided duels --------------------------------------------------------------


@pytest.mark.parametrize("trigger", ["sweep", "read"])
def test_a_duel_not_full_in_time_is_cancelled_and_refunded_once(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn, trigger: str
) -> None:
    fee, a, b = 200, funded(1_000), funded(1_000)
    seed = secrets.token_hex(32)
    t0 = clock.now
    opened = join(http, a.id, fee, seats=3, seed=seed)
    duel_id = opened["id"]
    assert join(http, b.id, fee, seats=3)["id"] == duel_id
    assert pot_balance(admin_conn, duel_id) == 400

    clock.now = t0 + FIFTEEN_MINUTES - timedelta(seconds=1)
    assert uuid.UUID(duel_id) not in container.duels.sweep()
    assert look(http, a.token, duel_id)["status"] == "open"

    clock.now = t0 + FIFTEEN_MINUTES
    if trigger == "sweep":
        assert uuid.UUID(duel_id) in container.duels.sweep()
        assert uuid.UUID(duel_id) not in container.duels.sweep()
    else:
        assert look(http, a.token, duel_id)["status"] == "cancelled"
        assert uuid.UUID(duel_id) not in container.duels.sweep()
    clock.advance(60)
    assert uuid.UUID(duel_id) not in container.duels.sweep()

    for viewer in (a.token, b.token, http.operator_key):
        view = look(http, viewer, duel_id)
        assert view["status"] == "cancelled"
        assert view["result"] == {
            "pot": 400,
            "rake": 0,
            "payouts": [],
            "refunds": [
                {"seat": 0, "player_id": a.id, "amount": 200},
                {"seat": 1, "player_id": b.id, "amount": 200},
            ],
            "cancelled_because": "not-filled",
        }
        assert seats_of(view, "refund", "payout") == [(200, 0), (200, 0)]
        assert view["server_seed"] == seed
        assert shuffle.seed_matches(seed, view["seed_commitment"])
    for player in (a, b):
        assert sandbox_balance(http, player) == 0
        assert statement(http, player, "sandbox") == [
            ("duel-refund", 200, stream(duel_id)),
            ("duel-fee", -200, stream(duel_id)),
        ]
    assert pot_balance(admin_conn, duel_id) == 0
    assert [kind for kind, _ in duel_transactions(admin_conn, duel_id)] == [
        "duel-fee",
        "duel-fee",
        "duel-refund",
    ]
    assert_books_balance(admin_conn, duel_id)
    assert duel_event_types(http, duel_id) == [
        "DuelOpened",
        "SeatTaken",
        "SeatTaken",
        "DuelCancelled",
    ]
    # a cancelled duel deals no game
    seat_refused(http, a.token, duel_id, "deal", {}, 422, "rule-violation", "duel-over")


def test_an_operator_void_refunds_every_fee_and_voids_the_games_in_play(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    fee = 500
    a, b, c = funded(2_000), funded(2_000), funded(2_000)
    duel_id = join(http, a.id, fee, deck=DECK, seats=3)["id"]
    join(http, b.id, fee, seats=3)
    assert join(http, c.id, fee, seats=3)["status"] == "full"
    a_game = seat_call(http, a.token, duel_id, "deal")["you"]["game_id"]
    seat_call(http, a.token, duel_id, "actions", action="collect")  # A has finished
    dealt_b = seat_call(http, b.token, duel_id, "deal")  # B plays; C never dealt
    b_game = dealt_b["you"]["game_id"]
    play(http, b.token, duel_id, dealt_b, {"action": "draw"})

    refused = http.post(f"/v1/duels/{duel_id}/void", a.token, json={"reason": "mine"})
    assert_problem(refused, 403, "forbidden")
    voided = http.post(f"/v1/duels/{duel_id}/void", http.operator_key, json={"reason": "table"})
    assert voided.status_code == 200, voided.get_json()
    view = voided.get_json()
    assert view["status"] == "cancelled"
    assert view["result"]["cancelled_because"] == "table"
    assert view["result"]["payouts"] == []
    assert view["result"]["refunds"] == [
        {"seat": s, "player_id": p.id, "amount": 500} for s, p in enumerate((a, b, c))
    ]
    assert seats_of(view, "refund", "payout") == [(500, 0)] * 3
    assert view["revealed_deck"] == DECK

    games = {
        gid: http.get(f"/v1/games/{gid}", http.operator_key).get_json() for gid in (a_game, b_game)
    }
    assert games[a_game]["status"] == "collected"
    assert games[b_game]["status"] == "voided"
    assert [e["type"] for e in game_events(http, b_game)].count("Voided") == 1
    # B's seat takes no more commands; a second void refunds nothing again
    late = http.post(f"/v1/duels/{duel_id}/actions", b.token, json={"action": "draw"})
    assert 400 <= late.status_code < 500, late.get_json()
    again = http.post(f"/v1/duels/{duel_id}/void", http.operator_key, json={"reason": "again"})
    assert_problem(again, 422, "rule-violation", "duel-over")

    for player in (a, b, c):
        assert sandbox_balance(http, player) == 0
        assert statement(http, player, "sandbox")[:2] == [
            ("duel-refund", 500, stream(duel_id)),
            ("duel-fee", -500, stream(duel_id)),
        ]
    assert pot_balance(admin_conn, duel_id) == 0
    assert [kind for kind, _ in duel_transactions(admin_conn, duel_id)] == [
        "duel-fee",
        "duel-fee",
        "duel-fee",
        "duel-refund",
    ]
    assert_books_balance(admin_conn, duel_id)
    assert duel_event_types(http, duel_id)[-1] == "DuelCancelled"


# --- 6. racing to settle ------------------------------------------------------------------------


def _race(container: Container, duel_id: str, player_id: str) -> list[object]:
    """At once, on five threads: two sweeps of this duel, a sweep of every duel, a read of it,
    and its last seat's player's next command. What each returned (the player's refusal code)."""
    key = uuid.UUID(duel_id)
    start = threading.Barrier(5)
    player = RequestContext(Actor(player_id, "player"))

    def sweep_one() -> object:
        start.wait()
        return container.duels.sweep_duel(key)

    def sweep_all() -> object:
        start.wait()
        return key in container.duels.sweep()

    def read() -> object:
        start.wait()
        return container.duels.duel(key).state.status

    def last_action() -> object:
        start.wait()
        try:
            container.duels.play(player, key, uuid.UUID(player_id), g.Draw())
        except RuleViolation as refused:
            return refused.code
        return "accepted"

    with ThreadPoolExecutor(5) as pool:
        futures = [pool.submit(f) for f in (sweep_one, sweep_one, sweep_all, read, last_action)]
        return [f.result(timeout=60) for f in futures]


def test_racing_settlements_pay_the_pot_once(
    http: Http, clock: FakeClock, container: Container, admin_conn: DbConn
) -> None:
    fee = 2_000
    for _round in range(4):
        a, b = funded(2_000), funded(2_000)
        duel_id = join(http, a.id, fee, deck=DECK)["id"]
        join(http, b.id, fee)
        seat_call(http, a.token, duel_id, "deal")
        seat_call(http, a.token, duel_id, "actions", action="collect")  # 0 points
        dealt_b = seat_call(http, b.token, duel_id, "deal")
        score_aces(http, b, duel_id, dealt_b, 1)  # 5 points, and then B's time runs out
        clock.advance(301)

        results = _race(container, duel_id, b.id)
        assert results[3] == "settled", results
        assert results[4] in ("time-up", "game-over"), results
        assert [r for r in results[:3] if r is True] in ([], [True]), results

        types = duel_event_types(http, duel_id)
        assert types.count("DuelSettled") == 1, types
        assert types.count("SeatFinished") == 2, types
        assert types[-1] == "DuelSettled"
        b_game = look(http, b.token, duel_id)["you"]["game_id"]
        assert [e["type"] for e in game_events(http, b_game)].count("Collected") == 1
        assert [kind for kind, _ in duel_transactions(admin_conn, duel_id)] == [
            "duel-fee",
            "duel-fee",
            "duel-prize",
        ]
        assert (sandbox_balance(http, a), sandbox_balance(http, b)) == (-2_000, 1_600)
        assert statement(http, b, "sandbox")[0] == ("duel-prize", 3_600, stream(duel_id))
        assert pot_balance(admin_conn, duel_id) == 0
        assert_books_balance(admin_conn, duel_id)


def test_simultaneous_draws_on_one_seat_apply_exactly_one(
    app: Flask, http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    """A seat's command conflicts as a game's does: of four draws that read one version, one
    applies and three are told 409 (none is quietly applied again on top of it)."""
    a, b = funded(1_000), funded(1_000)
    duel_id = join(http, a.id, 1_000, deck=DECK)["id"]
    join(http, b.id, 1_000)
    a_game = seat_call(http, a.token, duel_id, "deal")["you"]["game_id"]
    path = f"/v1/duels/{duel_id}/actions"

    def draw(client: FlaskClient) -> TestResponse:
        return client.post(
            path, json={"action": "draw"}, headers={"Authorization": f"Bearer {a.token}"}
        )

    answers = race(app, [draw] * 4, hold=admin_conn)
    assert statuses(answers) == [200, 409, 409, 409]
    for refused in (r for r in answers if r.status_code == 409):
        assert_problem(refused, 409, "concurrent-update")
    assert event_types(admin_conn, f"game-{a_game}").count("CardDrawn") == 1


# --- 7. retries ---------------------------------------------------------------------------------


def test_a_retried_join_takes_one_seat_and_one_fee(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    fee, a, b = 2_000, funded(5_000), funded(5_000)
    key = {"Idempotency-Key": f"duel-{uuid.uuid4()}"}
    body = {"fee": fee, "seats": 2}
    first = http.post("/v1/duels", a.token, json=body, headers=key)
    assert first.status_code == 201, first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    duel_id = first.get_json()["id"]
    assert first.get_json()["certification"] is False
    retry = http.post("/v1/duels", a.token, json=body, headers=key)
    assert retry.status_code == 201, retry.get_json()
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.get_json() == first.get_json()
    assert balance(http, a) == 3_000
    assert pot_balance(admin_conn, duel_id) == 2_000
    reused = http.post("/v1/duels", a.token, json={"fee": 1_000, "seats": 2}, headers=key)
    assert_problem(reused, 422, "idempotency-key-reused")
    assert balance(http, a) == 3_000

    # the duel has one seat taken: B's join (a player's own) fills it
    joined = http.post("/v1/duels", b.token, json=body)
    assert joined.status_code == 201, joined.get_json()
    full = joined.get_json()
    assert (full["id"], full["status"], full["taken"]) == (duel_id, "full", 2)
    assert seats_of(look(http, http.operator_key, duel_id), "player_id") == [(a.id,), (b.id,)]

    # a retried deal deals once
    deal_key = {"Idempotency-Key": f"deal-{uuid.uuid4()}"}
    dealt = http.post(f"/v1/duels/{duel_id}/deal", a.token, json={}, headers=deal_key)
    again = http.post(f"/v1/duels/{duel_id}/deal", a.token, json={}, headers=deal_key)
    assert (dealt.status_code, again.status_code) == (200, 200), again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["you"]["game_id"] == dealt.get_json()["you"]["game_id"]
    assert duel_event_types(http, duel_id).count("SeatDealt") == 1

    finish(http, a, duel_id)
    assert finish(http, b, duel_id)["status"] == "settled"
    assert statement(http, a) == [
        ("duel-prize", 1_800, stream(duel_id)),
        ("duel-fee", -2_000, stream(duel_id)),
        ("deposit", 5_000, None),
    ]
    assert pot_balance(admin_conn, duel_id) == 0


def test_a_retried_operator_join_opens_one_duel(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    fee, a, b = 1_000, funded(1_000), funded(1_000)
    key = {"Idempotency-Key": f"duel-{uuid.uuid4()}"}
    body = {"fee": fee, "seats": 4, "player_id": a.id, "certification": True, "deck": DECK}
    first = http.post("/v1/duels", http.operator_key, json=body, headers=key)
    retry = http.post("/v1/duels", http.operator_key, json=body, headers=key)
    assert (first.status_code, retry.status_code) == (201, 201), retry.get_json()
    assert retry.headers["Idempotent-Replayed"] == "true"
    duel_id = first.get_json()["id"]
    assert retry.get_json()["id"] == duel_id
    listed = http.get(f"/v1/duels?player_id={a.id}", http.operator_key).get_json()["items"]
    assert [row["duel_id"] for row in listed] == [duel_id]
    assert sandbox_balance(http, a) == -1_000
    reused = http.post(
        "/v1/duels", http.operator_key, json={**body, "player_id": b.id}, headers=key
    )
    assert_problem(reused, 422, "idempotency-key-reused")
    assert sandbox_balance(http, b) == 0
    # leave nothing open: it expires unfilled
    clock.advance(15 * 60)
    assert look(http, a.token, duel_id)["status"] == "cancelled"
    assert sandbox_balance(http, a) == 0
    assert pot_balance(admin_conn, duel_id) == 0


# --- 8. refusals --------------------------------------------------------------------------------


def test_the_duel_paytables_are_published(http: Http) -> None:
    response = http.get("/v1/duels/paytables")
    assert response.status_code == 200
    tables = {t["currency"]: t for t in response.get_json()}
    gbp = tables["GBP"]
    assert gbp["fees"] == [100, 200, 500, 1_000, 2_000, 5_000]
    assert (gbp["max_seats"], gbp["rake"], gbp["fill_within_seconds"]) == (6, "0.1", 900)
    assert gbp["variant"] == "klondike-duel"


def test_joins_that_break_the_paytable_or_the_rules_are_refused(
    http: Http, clock: FakeClock, admin_conn: DbConn
) -> None:
    a, b, poor = funded(3_000), funded(3_000), funded(50)
    for body in ({"fee": 150}, {"fee": 100_000, "seats": 2}):
        assert_problem(
            http.post("/v1/duels", a.token, json=body), 422, "rule-violation", "fee-not-offered"
        )
    refused = http.post(
        "/v1/duels",
        http.operator_key,
        json={"fee": 300, "player_id": a.id, "certification": True, "deck": DECK},
    )
    assert_problem(refused, 422, "rule-violation", "fee-not-offered")
    assert_problem(
        http.post("/v1/duels", a.token, json={"fee": 100, "seats": 7}),
        422,
        "rule-violation",
        "seats-out-of-range",
    )
    assert_problem(
        http.post("/v1/duels", a.token, json={"fee": 100, "seats": 1}), 422, "validation-error"
    )
    # operator-only fields
    for extra in (
        {"seed": secrets.token_hex(32)},
        {"deck": DECK},
        {"certification": True},
        {"player_id": b.id},
    ):
        response = http.post("/v1/duels", a.token, json={"fee": 100, **extra})
        assert_problem(response, 403, "certification-disabled")
    # no money, no seat: nothing opened, nothing moved (a certification seat is paid from
    # the sandbox, which needs no money: tests/api/test_sandbox.py)
    before = footprint(admin_conn)
    broke = http.post("/v1/duels", poor.token, json={"fee": 100, "seats": 6})
    assert_problem(broke, 422, "insufficient-funds")
    assert footprint(admin_conn) == before
    assert balance(http, poor) == 50
    assert http.get(f"/v1/players/{poor.id}/duels", poor.token).get_json()["items"] == []
    assert statement(http, poor) == [("deposit", 50, None)]
    listed = http.get(f"/v1/duels?player_id={poor.id}", http.operator_key).get_json()["items"]
    assert listed == []


def test_a_player_joining_twice_sits_in_two_duels(
    http: Http, clock: FakeClock, container: Container
) -> None:
    fee, a, b = 1_000, funded(3_000), funded(3_000)
    first = join(http, a.id, fee, seats=3, seed=secrets.token_hex(32))
    clock.advance(1)
    second = join(http, a.id, fee, seats=3)
    assert second["id"] != first["id"]
    assert seats_of(second, "seat", "player_id") == [(0, a.id)]
    # the oldest open one takes the next player
    assert join(http, b.id, fee, seats=3)["id"] == first["id"]
    assert sandbox_balance(http, a) == -2_000
    # an open duel deals no game
    seat_refused(http, a.token, first["id"], "deal", {}, 422, "rule-violation", "duel-not-full")
    # leave nothing open: both expire unfilled, and every fee comes back
    clock.advance(15 * 60)
    done = container.duels.sweep()
    assert {uuid.UUID(first["id"]), uuid.UUID(second["id"])} <= set(done)
    assert (sandbox_balance(http, a), sandbox_balance(http, b)) == (0, 0)
    assert [kind for kind, _, _ in statement(http, a, "sandbox")].count("duel-refund") == 2


def test_seats_deal_once_and_only_their_own(http: Http, clock: FakeClock) -> None:
    fee, a, b, c, stranger = 5_000, funded(5_000), funded(5_000), funded(5_000), funded(1_000)
    duel_id = join(http, a.id, fee, deck=DECK, seats=3)["id"]
    join(http, b.id, fee, seats=3)
    join(http, c.id, fee, seats=3)
    dealt = seat_call(http, a.token, duel_id, "deal")
    a_game = dealt["you"]["game_id"]
    seat_refused(http, a.token, duel_id, "deal", {}, 422, "rule-violation", "seat-already-dealt")
    seat_refused(
        http,
        b.token,
        duel_id,
        "actions",
        {"action": "draw"},
        422,
        "rule-violation",
        "game-not-started",
    )
    # a player not seated finds no such duel
    assert_problem(http.get(f"/v1/duels/{duel_id}", stranger.token), 404, "not-found")
    seat_refused(http, stranger.token, duel_id, "deal", {}, 404, "not-found")
    seat_refused(http, stranger.token, duel_id, "actions", {"action": "draw"}, 404, "not-found")
    assert_problem(http.get(f"/v1/duels/{uuid.uuid4()}", http.operator_key), 404, "not-found")
    # staff do not play, players do not void or read the raw stream
    seat_refused(http, http.operator_key, duel_id, "deal", {}, 403, "forbidden")
    assert_problem(http.get(f"/v1/duels/{duel_id}/events", a.token), 403, "forbidden")
    # a seat's game plays, and is seen, only through its duel: the same answer from every
    # worker (this one holds the game in its cache, another would not)
    response = http.post(f"/v1/games/{a_game}/actions", a.token, json={"action": "draw"})
    assert_problem(response, 404, "not-found")
    for _ in range(2):
        assert_problem(http.get(f"/v1/games/{a_game}", a.token), 404, "not-found")
    response = http.post(f"/v1/games/{a_game}/void", http.operator_key, json={"reason": "x"})
    assert_problem(response, 404, "not-found")
    # and a duel's game is never dealt as a game of its own
    standalone: list[tuple[str, dict[str, Any]]] = [
        (stranger.token, {"variant": "klondike-duel", "stake": 100}),
        (
            http.operator_key,
            {"variant": "klondike-duel", "stake": 100, "player_id": stranger.id, "deck": DECK},
        ),
    ]
    for who, body in standalone:
        response = http.post("/v1/games", who, json=body)
        assert 400 <= response.status_code < 500, response.get_json()
    assert balance(http, stranger) == 1_000
    assert duel_event_types(http, duel_id)[-1] == "SeatDealt"

    finish(http, a, duel_id)
    finish(http, b, duel_id)
    assert finish(http, c, duel_id)["status"] == "settled"


# --- 9. lists -----------------------------------------------------------------------------------


def test_duels_are_listed_newest_first(http: Http, clock: FakeClock) -> None:
    fee, a = 5_000, funded(15_000)
    duels = []
    for _ in range(3):
        other = funded(5_000)
        duel_id = join(http, a.id, fee, deck=DECK)["id"]
        join(http, other.id, fee)
        finish(http, a, duel_id)
        assert finish(http, other, duel_id)["status"] == "settled"
        duels.append(duel_id)
        clock.advance(60)
    newest_first = duels[::-1]

    page = http.get(f"/v1/players/{a.id}/duels?limit=2", a.token)
    assert page.status_code == 200, page.get_json()
    body = page.get_json()
    assert [row["duel_id"] for row in body["items"]] == newest_first[:2]
    assert body["next"] is not None
    rest = http.get(f"/v1/players/{a.id}/duels?limit=2&before={body['next']}", a.token).get_json()
    assert [row["duel_id"] for row in rest["items"]] == newest_first[2:]
    assert rest["next"] is None
    row = body["items"][0]
    assert (row["status"], row["fee"], row["seats"], row["taken"], row["pot"], row["rake"]) == (
        "settled",
        5_000,
        2,
        2,
        10_000,
        1_000,
    )
    assert row["ended_at"] is not None
    # staff may read any player's duels; another player may not
    staff = http.get(f"/v1/players/{a.id}/duels", http.auditor_key).get_json()["items"]
    assert [r["duel_id"] for r in staff] == newest_first
    assert_problem(http.get(f"/v1/players/{a.id}/duels", other.token), 404, "not-found")

    for key in (http.operator_key, http.auditor_key):
        settled = http.get(f"/v1/duels?status=settled&player_id={a.id}", key)
        assert settled.status_code == 200, settled.get_json()
        assert [r["duel_id"] for r in settled.get_json()["items"]] == newest_first
        assert http.get(f"/v1/duels?status=open&player_id={a.id}", key).get_json()["items"] == []
        found, cursor = [], ""
        for _ in range(20):
            listed = http.get(f"/v1/duels?status=settled&limit=100{cursor}", key).get_json()
            found += [r["duel_id"] for r in listed["items"]]
            assert {r["status"] for r in listed["items"]} <= {"settled"}
            if set(duels) <= set(found) or listed["next"] is None:
                break
            cursor = f"&before={listed['next']}"
        assert set(duels) <= set(found)
    assert_problem(http.get("/v1/duels?status=settled", a.token), 403, "forbidden")
    assert_problem(http.get("/v1/duels?status=bogus", http.operator_key), 422, "validation-error")
