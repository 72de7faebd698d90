"""Sealed until seen, over HTTP: while a game is in play no card its player has not seen (a
face-down card, a stock card) shows anywhere: not in the player's view, not in the auditor's
full view, the raw event stream or the replay, not in a refusal's problem, not even in the
events table. Once the game ends its seed (or given deck) is revealed and everything verifies.

The sealed cards are worked out here from the certification seed (or deck) each game is dealt
from: the deal's face-down cards, less the ones the test's own draws have shown."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask

from events.records import NewEvent
from service.app import create_app
from service.bootstrap import Container
from service.core import shuffle
from service.core.game_decider import hidden_cards
from service.games import GAMES, STANDALONE
from tests.api.client import Http
from tests.api.factories import Player, WalletFactory
from tests.api.play import assert_none_of, cards_in, golf_winning_deck, legal, played
from tests.builders import easy_deck

DbConn = psycopg.Connection[tuple[Any, ...]]
SEED = "5e" * 32
LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_streams.json"
#: What a game view answer adds to the game's state: its times, and the player's reality check.
TIMESTAMPS = ("started_at", "last_event_at", "ended_at", "reality_check", "payout_status")
#: Full-view keys that name cards; none of them belongs to a game in play.
FULL_ONLY = {"deck", "stock", "waste_all", "foundation_piles", "shuffle_algorithm"}


@dataclass(frozen=True)
class Deal:
    """How a game's face-down cards are dealt and shown: how many lie face down at the deal,
    and where in the deck the cards a draw shows come from."""

    face_down: int
    first_shown: int  # deck position of the first card a draw shows
    per_draw: int
    draws: int  # how many the test plays before looking again


DEALS = {
    "vegas-draw1": Deal(face_down=21 + 24, first_shown=28, per_draw=1, draws=3),
    "vegas-draw3": Deal(face_down=21 + 24, first_shown=28, per_draw=3, draws=2),
    "klondike": Deal(face_down=21 + 24, first_shown=28, per_draw=3, draws=2),
    "golf": Deal(face_down=16, first_shown=36, per_draw=1, draws=3),
    # Pyramid's stock top lies face up at the deal; each draw turns the next one up.
    "pyramid": Deal(face_down=23, first_shown=29, per_draw=1, draws=3),
    # Scorpion's reserve is dealt once, one card onto each of columns 0-2.
    "scorpion": Deal(face_down=12 + 3, first_shown=49, per_draw=3, draws=1),
    # Super Scorpion's hand deals one card onto each of the ten columns.
    "super-scorpion": Deal(face_down=15 + 24, first_shown=80, per_draw=10, draws=2),
    # Forty Thieves' stock top lies face up at the deal; each draw turns the next one up.
    "forty-thieves": Deal(face_down=63, first_shown=41, per_draw=1, draws=3),
    # Upside-Down Pyramid: every column card face up; its 49-card stock is drawn three at a time.
    "upside-down-pyramid": Deal(face_down=49, first_shown=55, per_draw=3, draws=2),
    # Salic Law: the hand is the deck less its Queens and first King of spades, drawn one at a
    # time (the seed's first three cards are none of those).
    "salic-law": Deal(face_down=95, first_shown=0, per_draw=1, draws=3),
    # Three Shuffles and a Draw: every card face up, no stock; what stays secret is the seed
    # its redeals shuffle with.
    "three-shuffles": Deal(face_down=0, first_shown=0, per_draw=0, draws=0),
    # La Nivernaise: 8 flank and 24 Line cards face up; a deal puts 4 stock cards on each of
    # the 6 Line columns (this seed's first Ace of spades, flank:0's, lies deep in the stock).
    "la-nivernaise": Deal(face_down=72, first_shown=31, per_draw=24, draws=1),
}


@dataclass
class InPlay:
    http: Http
    player: Player
    variant: str
    game_id: str
    deck: tuple[str, ...]
    hidden: Counter[str]  # the cards nobody has seen yet (two decks: a code may lie twice)
    decks: int

    @property
    def token(self) -> str:
        return self.player.token

    @property
    def sealed(self) -> set[str]:
        """The codes no copy of which has been seen: none of them may show anywhere (two decks:
        a code whose twin lies face up may show, for that twin)."""
        return {card for card, n in self.hidden.items() if n == self.decks}

    def get(self, path: str, token: str) -> Any:
        response = self.http.get(path, token)
        assert response.status_code == 200, response.get_json()
        return response.get_json()


def _deal(http: Http, variant: str, source: str) -> tuple[InPlay, dict[str, Any]]:
    rules = GAMES[variant]
    if source == "seed":
        deck = shuffle.derive_deck(bytes.fromhex(SEED), None, rules.decks)
        given: dict[str, Any] = {"seed": SEED}
    else:
        deck = tuple(golf_winning_deck() if variant == "golf" else easy_deck())
        given = {"deck": list(deck)}
    player = WalletFactory.create(balance=1_040).player
    body = {"variant": variant, "stake": 520, "player_id": player.id, **given}
    dealt = http.post("/v1/games", http.operator_key, json=body)
    assert dealt.status_code == 201, dealt.get_json()
    hidden = Counter(hidden_cards(rules, deck))
    assert hidden.total() == DEALS[variant].face_down
    assert max(hidden.values(), default=0) <= rules.decks
    game = InPlay(http, player, variant, dealt.get_json()["id"], deck, hidden, rules.decks)
    return game, dealt.get_json()


def _check_views(game: InPlay) -> dict[str, Any]:
    """The player's view and the auditor's full view: the same, and neither names a sealed card;
    every face-down card is a count, and the counts add up to the cards still sealed."""
    mine = game.get(f"/v1/games/{game.game_id}", game.token)
    assert_none_of(game.sealed, mine, "the player's view")
    assert not FULL_ONLY & mine.keys()
    for pile in mine["piles"]:
        assert "face_down_cards" not in pile
        if pile["kind"] != "waste":  # the waste shows its fan only
            assert len(pile["cards"]) == pile["count"] - pile["face_down"], pile
    assert sum(p["face_down"] for p in mine["piles"]) == game.hidden.total()
    seen = {c for p in mine["piles"] for c in p["cards"]}
    assert seen <= set(game.deck) - game.sealed

    full = game.get(f"/v1/games/{game.game_id}?view=full", game.http.auditor_key)
    assert full == mine
    return dict(mine)


def _check_records(game: InPlay, admin_conn: DbConn) -> None:
    """The raw stream, the replay (whole and up to the deal), and the events table itself."""
    auditor = game.http.auditor_key
    stream = game.get(f"/v1/games/{game.game_id}/events", auditor)
    assert stream["chain_intact"] is True
    assert_none_of(game.sealed, stream, "GET /events")
    dealt = next(e for e in stream["events"] if e["type"] == "Dealt")
    assert dealt["schema_version"] == 2
    assert dealt["data"]["deck"] is None
    for query in ("", "?to_version=2"):
        replay = game.get(f"/v1/games/{game.game_id}/replay{query}", auditor)
        assert replay["masked"] is False
        assert_none_of(game.sealed, replay, f"GET /replay{query}")
        for step in replay["steps"]:
            assert step["state"] is None or not FULL_ONLY & step["state"].keys()
    rows = admin_conn.execute(
        "SELECT type, data::text, metadata::text FROM events WHERE stream_id = %s",
        (f"game-{game.game_id}",),
    ).fetchall()
    assert len(rows) == len(stream["events"])
    for kind, data, metadata in rows:
        assert_none_of(game.sealed, [json.loads(data), json.loads(metadata)], f"stored {kind}")


def _attempts(variant: str) -> list[dict[str, Any]]:
    """Commands to try; those the view does not list as legal must be refused."""
    if variant == "golf":
        piles = [f"tableau:{c}" for c in range(7)]
        moves = [{"action": "move", "from": p, "to": "waste"} for p in piles]
        return [
            *moves,
            {"action": "move", "from": "waste", "to": "tableau:0"},
            {"action": "move", "from": "tableau:0", "to": "stock"},
            {"action": "recycle"},
            {"action": "turn", "pile": "stock"},
            {"action": "remove", "piles": ["stock"]},
        ]
    if variant == "pyramid":
        pyramid = [f"pyramid:{n}" for n in range(28)]
        return [
            *({"action": "remove", "piles": [p]} for p in pyramid),
            *({"action": "remove", "piles": ["stock", p]} for p in pyramid),
            *({"action": "remove", "piles": ["waste", p]} for p in pyramid[21:]),
            {"action": "remove", "piles": ["stock", "waste"]},
            {"action": "turn", "pile": "stock"},
            {"action": "move", "from": "pyramid:27", "to": "foundation"},
            {"action": "recycle"},
        ]
    columns = [f"tableau:{c}" for c in range(7)]
    return [
        *(
            {"action": "move", "from": a, "to": b, **({"count": 2} if a == columns[6] else {})}
            for a in columns
            for b in (*columns, "foundation")
            if a != b
        ),
        *({"action": "move", "from": "waste", "to": b} for b in (*columns, "foundation")),
        {"action": "move", "from": "foundation:0", "to": "tableau:0"},
        {"action": "move", "from": "tableau:6", "to": "stock"},
        {"action": "turn", "pile": "tableau:6"},
        {"action": "turn", "pile": "stock"},
        {"action": "recycle"},
        {"action": "remove", "piles": ["tableau:6"]},
    ]


def _is_legal(attempt: dict[str, Any], view: dict[str, Any]) -> bool:
    for move in legal(view, attempt["action"]):
        if attempt["action"] == "move":
            to = move["to"] if attempt["to"] != "foundation" else move["to"].split(":")[0]
            if (move["from"], to) == (attempt["from"], attempt["to"]):
                return True
        elif attempt["action"] == "remove":
            if set(move["piles"]) == set(attempt["piles"]):
                return True
        else:
            return True
    return False


def _check_refusals(game: InPlay, view: dict[str, Any]) -> None:
    """Every command the rules refuse now: a 422 naming its rule, and no sealed card."""
    tried = 0
    for attempt in _attempts(game.variant):
        if _is_legal(attempt, view):
            continue
        response = game.http.post(f"/v1/games/{game.game_id}/actions", game.token, json=attempt)
        assert response.status_code == 422, (attempt, response.get_json())
        problem = response.get_json()
        assert problem["type"] == "/problems/rule-violation", (attempt, problem)
        assert problem["rule"]
        assert_none_of(game.sealed, problem, f"the refusal of {attempt}")
        tried += 1
    assert tried >= 10
    assert game.get(f"/v1/games/{game.game_id}", game.token) == view  # nothing changed


CASES = [(variant, "seed") for variant in STANDALONE] + [
    ("vegas-draw1", "deck"),
    ("golf", "deck"),
]


@pytest.mark.parametrize(("variant", "source"), CASES, ids=[f"{v}-{s}" for v, s in CASES])
def test_no_unseen_card_shows_anywhere_until_the_game_ends(
    http: Http, admin_conn: DbConn, variant: str, source: str
) -> None:
    game, dealt = _deal(http, variant, source)
    assert_none_of(game.sealed, dealt, "the deal's answer")
    view = _check_views(game)
    _check_records(game, admin_conn)
    _check_refusals(game, view)

    # Draws show the next stock cards, and only those.
    deal = DEALS[variant]
    for n in range(deal.draws):
        start = deal.first_shown + n * deal.per_draw
        shown = Counter(game.deck[start : start + deal.per_draw])
        assert shown <= game.hidden
        before = game.get(f"/v1/games/{game.game_id}", game.token)["version"]
        answer = played(http, game.token, game.game_id, {"action": "draw"})
        game.hidden -= shown
        assert_none_of(game.sealed, answer, "a draw's answer")
        events = game.get(f"/v1/games/{game.game_id}/events", http.auditor_key)["events"]
        # The draw's events (Scorpion's deal: one per column) show every card drawn.
        assert set(shown) <= cards_in([e for e in events if e["version"] > before])
    assert game.hidden.total() == deal.face_down - deal.draws * deal.per_draw
    view = _check_views(game)
    _check_records(game, admin_conn)
    _check_refusals(game, view)
    # The secret is kept encrypted: the stored secret is not the seed or the deck in clear.
    stored = admin_conn.execute(
        "SELECT kind, ciphertext FROM game_seeds WHERE game_id = %s", (game.game_id,)
    ).fetchone()
    assert stored is not None
    assert stored[0] == source
    secret = bytes.fromhex(SEED) if source == "seed" else " ".join(game.deck).encode()
    assert secret not in bytes(stored[1])

    # The end reveals the seed (or deck): it matches the commitment and the replay verifies.
    done = played(http, game.token, game.game_id, {"action": "collect"})
    if source == "seed":
        assert (done["server_seed"], done["revealed_deck"]) == (SEED, None)
    else:  # the deck, and the salt of its commitment
        assert done["revealed_deck"] == list(game.deck)
        assert shuffle.deck_matches(game.deck, done["server_seed"], done["seed_commitment"])
    replay = game.get(f"/v1/games/{game.game_id}/replay", http.auditor_key)
    verification = replay["verification"]
    assert verification["verified"] is True, verification["findings"]
    assert verification["checks"]["seed-commitment"] == "pass"
    assert verification["checks"]["deck"] == "pass"
    assert set(verification["checks"].values()) == {"pass"}
    ending = replay["steps"][-1]
    assert ending["type"] == "Collected"
    assert ending["data"]["deck"] == (None if source == "seed" else list(game.deck))

    # Now the auditor's full view shows the deck, and every card still face down by name.
    full = game.get(f"/v1/games/{game.game_id}?view=full", http.auditor_key)
    assert full["deck"] == list(game.deck)
    named = [c for p in full["piles"] for c in p.get("face_down_cards", [])]
    assert sorted(named) == sorted(game.hidden.elements())
    assert [len(p.get("face_down_cards", [])) for p in full["piles"]] == [
        p["face_down"] for p in full["piles"]
    ]
    assert replay["final"]["deck"] == list(game.deck)
    # The player's own view of the ended game still names no face-down card.
    mine = game.get(f"/v1/games/{game.game_id}", game.token)
    assert not FULL_ONLY & mine.keys()
    assert all("face_down_cards" not in p for p in mine["piles"])


# --- a game dealt before sealing ----------------------------------------------------------------


@pytest.fixture
def legacy_app(fresh_container: Container) -> tuple[Flask, Container]:
    """The app on a database of its own: the stream written there has no ledger postings."""
    app = create_app(fresh_container)
    app.config["TESTING"] = True
    return app, fresh_container


def test_a_v1_deal_in_play_keeps_its_recorded_deck_masked(
    legacy_app: tuple[Flask, Container],
) -> None:
    """Game e of tests/fixtures/legacy_streams.json: a draw-one game recorded (with its deck in
    clear, as v1 deals were) and left in progress. Staff see it as its player would."""
    app, container = legacy_app
    legacy = next(
        g for g in json.loads(LEGACY.read_text())["games"] if g["name"] == "e-draw1-in-progress"
    )
    game_id = str(uuid.uuid4())
    stream = f"game-{game_id}"
    records = legacy["records"]
    events = []
    for record in records:
        data = dict(record["data"])
        if record["type"] == "StakePlaced":
            data["game_id"] = game_id
        events.append(NewEvent(record["type"], record["schema_version"], data, record["metadata"]))
    with container.owner_unit_of_work() as uow:
        uow.lock_for_write()
        uow.events.append(stream, events, 0)
        uow.commit()

    deck = records[1]["data"]["deck"]
    assert deck == list(shuffle.derive_deck(bytes.fromhex(legacy["seed_hex"])))
    shown = {c for r in records if r["type"] == "CardDrawn" for c in r["data"]["cards"]}
    sealed = set(hidden_cards(GAMES["vegas-draw1"], deck)) - shown
    assert len(sealed) == 45 - 4

    auditor = container.access.create_key(f"legacy-{uuid.uuid4()}", "auditor")
    client = app.test_client()
    headers = {"Authorization": f"Bearer {auditor}"}

    answer = client.get(f"/v1/games/{game_id}/events", headers=headers)
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["chain_intact"] is True
    dealt = body["events"][1]
    assert (dealt["type"], dealt["schema_version"]) == ("Dealt", 1)
    assert dealt["data"]["deck"] == "hidden until the game ends"
    assert_none_of(sealed, body, "GET /events of a v1 deal")

    mine = client.get(f"/v1/games/{game_id}", headers=headers).get_json()
    full = client.get(f"/v1/games/{game_id}?view=full", headers=headers).get_json()
    assert full == mine
    assert not FULL_ONLY & full.keys()
    assert (full["status"], full["version"], full["stock_count"]) == ("in_progress", 8, 20)
    assert_none_of(sealed, full, "the full view of a v1 deal")

    replay = client.get(f"/v1/games/{game_id}/replay", headers=headers).get_json()
    assert replay["steps"][1]["data"]["deck"] == "hidden until the game ends"
    assert replay["verification"]["checks"]["seed-commitment"] == "pending"
    assert_none_of(sealed, replay, "the replay of a v1 deal")
    assert replay["final"] == {k: v for k, v in mine.items() if k not in TIMESTAMPS}
