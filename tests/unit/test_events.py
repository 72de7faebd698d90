"""The event catalog and its codec: stable names and versions, schemas, JSON round trips,
refusal of malformed data, unknown types and versions, and upcasting old events on read."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from events import catalog, codec
from events.catalog import (
    DUEL_EVENT_TYPES,
    GAME_EVENT_TYPES,
    AnyEvent,
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardPicked,
    CardTurned,
    ClockStarted,
    Collected,
    Dealt,
    DealtPile,
    DuelCancelled,
    DuelOpened,
    DuelSettled,
    GameEvent,
    PairRemoved,
    Payout,
    PilesGathered,
    RemovedCard,
    Reshuffled,
    SeatDealt,
    SeatFinished,
    SeatTaken,
    StakePlaced,
    StockRecycled,
    Undone,
    UndoneMove,
    Voided,
)
from events.codec import (
    UPCASTERS,
    InvalidEvent,
    UnknownEvent,
    decode,
    decode_duel,
    decode_game,
    encode,
    upcast,
)
from events.schemas import SCHEMAS
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.errors import RuleViolation
from service.games import GAMES, game_named
from service.rules.cards import CANONICAL_DECK, canonical_deck
from tests.builders import GBP, SEED, easy_deck, play, start

SEED_HEX = SEED.hex()
COMMITMENT = shuffle.commitment(SEED)
DECK = shuffle.derive_deck(SEED)
EASY = easy_deck()
#: Every event type a stream may hold: a game's and a duel's.
EVENT_TYPES: tuple[type[AnyEvent], ...] = (*GAME_EVENT_TYPES, *DUEL_EVENT_TYPES)
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

#: The names and versions stored events carry. Changing one breaks every stored stream, so
#: this list only ever grows; a shape change bumps the version and adds an upcaster.
STABLE_NAMES: dict[type[AnyEvent], tuple[str, int]] = {
    StakePlaced: ("StakePlaced", 3),
    Dealt: ("Dealt", 2),
    ClockStarted: ("ClockStarted", 1),
    CardDrawn: ("CardDrawn", 3),
    StockRecycled: ("StockRecycled", 1),
    PilesGathered: ("PilesGathered", 1),
    Reshuffled: ("Reshuffled", 1),
    CardPicked: ("CardPicked", 1),
    CardMoved: ("CardMoved", 1),
    CardTurned: ("CardTurned", 2),
    PairRemoved: ("PairRemoved", 1),
    Undone: ("Undone", 2),
    AutoCompleted: ("AutoCompleted", 1),
    Collected: ("Collected", 3),
    Voided: ("Voided", 2),
    DuelOpened: ("DuelOpened", 1),
    SeatTaken: ("SeatTaken", 1),
    SeatDealt: ("SeatDealt", 1),
    SeatFinished: ("SeatFinished", 1),
    DuelSettled: ("DuelSettled", 1),
    DuelCancelled: ("DuelCancelled", 1),
}

KLONDIKE_DEAL = (
    DealtPile("stock", 24, ()),
    DealtPile("tableau:0", 0, ("2C",)),
    DealtPile("tableau:1", 1, ("JC",)),
    DealtPile("tableau:2", 2, ("KC",)),
    DealtPile("tableau:3", 3, ("AC",)),
    DealtPile("tableau:4", 4, ("TH",)),
    DealtPile("tableau:5", 5, ("3S",)),
    DealtPile("tableau:6", 6, ("JD",)),
)

EXAMPLES: list[AnyEvent] = [
    StakePlaced(
        game_id="game-1",
        player_id="player-1",
        variant="vegas-draw3",
        stake=520,
        currency="GBP",
        multiplier="5",
        max_units=52,
        paytable_id="vegas-gbp",
        paytable_version=1,
        rules_version="vegas-klondike/1",
        certification=False,
    ),
    StakePlaced(
        game_id="g",
        player_id="p",
        variant="golf",
        stake=104,
        currency="EUR",
        multiplier="1.3",
        max_units=35,
        paytable_id="vegas-eur",
        paytable_version=2,
        rules_version="golf/1",
        certification=True,
    ),
    # A duel seat's game: its stake is the duel's entry fee, under the duel paytable.
    StakePlaced(
        game_id="game-7",
        player_id="player-2",
        variant="klondike-duel",
        stake=500,
        currency="GBP",
        multiplier="1",
        max_units=52,
        paytable_id="duel-gbp",
        paytable_version=1,
        rules_version="klondike-duel/1",
        duel_id="duel-3",
    ),
    Dealt(
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=COMMITMENT,
        client_seed="lucky 7",
        piles=KLONDIKE_DEAL,
    ),
    Dealt(
        shuffle_algorithm=shuffle.CERTIFICATION_DECK,
        seed_commitment=shuffle.deck_commitment(EASY, SEED),
        piles=(DealtPile("stock", 23, ("QH",)), DealtPile("pyramid:0", 0, ("7S",))),
    ),
    # What a v1 deal becomes on read: the deck it recorded in clear, and no pile record.
    Dealt(shuffle_algorithm=shuffle.CERTIFICATION_DECK, deck=EASY),
    Dealt(shuffle_algorithm=shuffle.ALGORITHM, seed_commitment=COMMITMENT, deck=DECK),
    ClockStarted(started_at="2030-01-01T12:00:00.000000Z", deadline="2030-01-01T12:05:00.000000Z"),
    CardDrawn(source="stock", target="waste", cards=("3H",)),
    CardDrawn(source="stock", target="waste", cards=("3H", "4H", "KD")),
    StockRecycled(cards=24, passes_left=2),
    StockRecycled(cards=1, passes_left=None),
    PilesGathered(
        sources=("line:5", "line:4"), target="stock", cards=("KS", "KS", "2H"), passes_left=2
    ),
    Reshuffled(
        label="redeal-1",
        sources=("fan:0", "fan:1", "fan:2"),
        piles=(DealtPile("fan:0", 0, ("7H", "2C", "QD")), DealtPile("fan:1", 0, ("5S",))),
        passes_left=1,
    ),
    CardPicked(source="fan:3", index=0, card="7H", target="foundation:1", picks_left=0),
    CardMoved(source="waste", target="foundation:1", cards=("AH",)),
    CardMoved(source="tableau:6", target="tableau:0", cards=("QD", "JS", "TD", "9C")),
    CardMoved(source="foundation:3", target="tableau:2", cards=("7C",)),
    CardMoved(source="tableau:4", target="waste", cards=("8D",)),
    CardTurned(pile="tableau:0", card="KS"),
    CardTurned(pile="stock", card="AS"),
    PairRemoved(
        cards=(RemovedCard("pyramid:21", "6H"), RemovedCard("waste", "7C")), target="foundation"
    ),
    PairRemoved(cards=(RemovedCard("stock", "KD"),), target="foundation"),
    Undone(action="draw", moves=(UndoneMove("stock", "waste", ("2S", "7C", "QS")),)),
    Undone(action="move", moves=(UndoneMove("waste", "tableau:4", ("JS",)),)),
    Undone(
        action="remove",
        moves=(
            UndoneMove("pyramid:27", "foundation", ("QC",)),
            UndoneMove("waste", "foundation", ("AD",)),
        ),
    ),
    AutoCompleted(
        moves=(
            AutoMove(source="tableau:0", target="foundation:0", card="7S"),
            AutoMove(source="tableau:1", target="foundation:1", card="7H"),
        )
    ),
    Collected(reason="player", winnings=2600, currency="GBP", units=52, server_seed=SEED_HEX),
    Collected(reason="timeout", winnings=0, currency="USD", units=0, server_seed=None),
    Collected(reason="player", winnings=50, currency="GBP", units=1, deck=EASY),
    Collected(
        reason="finished",
        winnings=0,
        currency="GBP",
        units=52,
        ended_at="2030-01-01T12:03:20.500000Z",
    ),
    Collected(
        reason="timeout",
        winnings=0,
        currency="EUR",
        units=7,
        ended_at="2030-01-01T12:05:00.000000Z",
    ),
    Voided(reason="operator: table fault", refund=520, currency="GBP", server_seed=SEED_HEX),
    Voided(reason="x", refund=0, currency="GBP", server_seed=None),
    Voided(reason="fault", refund=520, currency="GBP", deck=canonical_deck(2)),
    DuelOpened(
        duel_id="duel-3",
        variant="klondike-duel",
        rules_version="klondike-duel/1",
        currency="GBP",
        fee=500,
        seats=3,
        rake="0.1",
        paytable_id="duel-gbp",
        paytable_version=1,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=COMMITMENT,
        opened_at="2030-01-01T11:50:00.000000Z",
        fill_by="2030-01-01T12:05:00.000000Z",
    ),
    DuelOpened(
        duel_id="d",
        variant="klondike-duel",
        rules_version="klondike-duel/1",
        currency="EUR",
        fee=100,
        seats=100,
        rake="0",
        paytable_id="duel-eur",
        paytable_version=2,
        shuffle_algorithm=shuffle.CERTIFICATION_DECK,
        seed_commitment=shuffle.deck_commitment(EASY, SEED),
        opened_at="2030-01-01T11:50:00.000000Z",
        fill_by="2030-01-01T12:05:00.000000Z",
        certification=True,
    ),
    SeatTaken(seat=0, player_id="player-2", fee=500, taken_at="2030-01-01T11:51:00.250000Z"),
    SeatDealt(seat=2, game_id="game-7", deadline="2030-01-01T12:05:00.000000Z"),
    SeatFinished(
        seat=2,
        game_id="game-7",
        points=4_105,
        units=52,
        reason="finished",
        ended_at="2030-01-01T12:03:20.500000Z",
    ),
    SeatFinished(
        seat=1,
        game_id=None,
        points=0,
        units=0,
        reason="not-dealt",
        ended_at="2030-01-01T12:20:00.000000Z",
    ),
    SeatFinished(
        seat=0,
        game_id="g",
        points=-60,
        units=0,
        reason="timeout",
        ended_at="2030-01-01T12:05:00.000000Z",
    ),
    DuelSettled(
        pot=1_500,
        rake=150,
        payouts=(Payout(seat=2, player_id="player-2", amount=1_350),),
        server_seed=SEED_HEX,
    ),
    DuelSettled(
        pot=300,
        rake=15,
        payouts=(Payout(0, "player-1", 143), Payout(2, "player-3", 142)),
        server_seed=SEED_HEX,
        deck=EASY,
    ),
    DuelSettled(pot=200, rake=0, payouts=(), server_seed=None, deck=EASY),
    DuelCancelled(
        reason="not-filled",
        refunds=(Payout(0, "player-1", 500), Payout(1, "player-2", 500)),
        voided=False,
        server_seed=SEED_HEX,
    ),
    DuelCancelled(reason="operator: fault", refunds=(), voided=True, server_seed=None, deck=EASY),
]


def _first(cls: type[AnyEvent]) -> AnyEvent:
    return next(e for e in EXAMPLES if type(e) is cls)


def _stored(event: AnyEvent) -> tuple[str, int, Any]:
    """What a store would hold: name, version, and the data after a trip through JSON text."""
    type_name, version, data = encode(event)
    return type_name, version, json.loads(json.dumps(data))


def _valid(event: AnyEvent) -> dict[str, Any]:
    return dict(_stored(event)[2])


# --- the catalog ----------------------------------------------------------------------------


def test_catalog_lists_each_event_type_once() -> None:
    assert len(set(catalog.GAME_EVENT_TYPES)) == len(catalog.GAME_EVENT_TYPES) == 15
    assert len(set(catalog.DUEL_EVENT_TYPES)) == len(catalog.DUEL_EVENT_TYPES) == 6
    assert set(catalog.GAME_EVENT_TYPES) | set(catalog.DUEL_EVENT_TYPES) == set(STABLE_NAMES)
    assert not set(catalog.GAME_EVENT_TYPES) & set(catalog.DUEL_EVENT_TYPES)
    assert set(EVENT_TYPES) <= set(catalog.ALL_EVENT_TYPES)


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_event_type_has_its_stable_name_a_version_and_a_schema(cls: type[AnyEvent]) -> None:
    assert STABLE_NAMES[cls] == (cls.TYPE, cls.VERSION)
    assert isinstance(cls.VERSION, int)
    assert cls.VERSION >= 1
    assert cls in SCHEMAS
    assert codec.CATALOG[cls.TYPE] is cls


def test_type_names_are_unique() -> None:
    names = [cls.TYPE for cls in catalog.ALL_EVENT_TYPES]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_every_older_version_has_an_upcaster_chain(cls: type[AnyEvent]) -> None:
    for version in range(1, cls.VERSION):
        assert (cls.TYPE, version) in UPCASTERS
    for type_name, version in UPCASTERS:
        assert type_name in codec.CATALOG
        assert 1 <= version < codec.CATALOG[type_name].VERSION


def test_every_event_type_has_an_example_here() -> None:
    assert {type(e) for e in EXAMPLES} == set(EVENT_TYPES)


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_event_round_trips_through_json(event: AnyEvent) -> None:
    type_name, version, data = _stored(event)
    assert (type_name, version) == (event.TYPE, event.VERSION)
    decoded = decode(type_name, version, data)
    assert decoded == event
    assert type(decoded) is type(event)
    assert encode(decoded) == encode(event)
    if isinstance(event, GAME_EVENT_TYPES):
        assert decode_game(type_name, version, data) == event
    else:
        assert decode_duel(type_name, version, data) == event


def _deal(game_id: str) -> list[GameEvent]:
    """The first events of a game dealt from the worked example's seed; a duel's game dealt to
    a duel's seat on the server's clock."""
    if not game_named(game_id).duel:
        return start(variant=game_id)[1]
    command = g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant=game_id,
        stake=520,
        paytable=GBP,
        deck=shuffle.derive_deck(SEED),
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=COMMITMENT,
        duel_id="duel-1",
        now=T0,
    )
    return g.decide(g.INITIAL, command)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_deal_of_every_game_round_trips(game_id: str) -> None:
    events = _deal(game_id)
    for event in events:
        assert decode_game(*_stored(event)) == event
    dealt = events[1]
    assert isinstance(dealt, Dealt)
    assert dealt.deck is None
    assert dealt.piles


def test_card_moved_is_stored_with_from_and_to_keys() -> None:
    event = CardMoved(source="tableau:6", target="tableau:0", cards=("QD", "JS"))
    assert encode(event) == (
        "CardMoved",
        1,
        {"from": "tableau:6", "to": "tableau:0", "cards": ["QD", "JS"]},
    )


def test_card_drawn_is_stored_with_from_to_and_its_cards() -> None:
    assert encode(CardDrawn("stock", "waste", ("2S", "7C"))) == (
        "CardDrawn",
        3,
        {"from": "stock", "to": "waste", "cards": ["2S", "7C"]},
    )


def test_card_turned_is_stored_with_its_pile() -> None:
    assert encode(CardTurned("tableau:3", "QD")) == (
        "CardTurned",
        2,
        {"pile": "tableau:3", "card": "QD"},
    )


def test_undone_is_stored_as_moves_with_from_and_to_keys() -> None:
    event = Undone(action="move", moves=(UndoneMove("waste", "foundation:2", ("AD",)),))
    assert encode(event) == (
        "Undone",
        2,
        {"action": "move", "moves": [{"from": "waste", "to": "foundation:2", "cards": ["AD"]}]},
    )


def test_pair_removed_is_stored_with_from_and_to_keys() -> None:
    event = PairRemoved(
        cards=(RemovedCard("pyramid:0", "6H"), RemovedCard("stock", "7C")), target="foundation"
    )
    assert encode(event) == (
        "PairRemoved",
        1,
        {
            "cards": [{"from": "pyramid:0", "card": "6H"}, {"from": "stock", "card": "7C"}],
            "to": "foundation",
        },
    )


def test_dealt_is_stored_with_its_piles_and_no_deck() -> None:
    event = Dealt(
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=COMMITMENT,
        piles=(DealtPile("stock", 24, ()), DealtPile("tableau:0", 0, ("2C",))),
    )
    assert encode(event) == (
        "Dealt",
        2,
        {
            "shuffle_algorithm": shuffle.ALGORITHM,
            "seed_commitment": COMMITMENT,
            "client_seed": None,
            "piles": [
                {"pile": "stock", "down": 24, "up": []},
                {"pile": "tableau:0", "down": 0, "up": ["2C"]},
            ],
            "deck": None,
        },
    )


def test_auto_moves_are_stored_with_from_and_to_keys() -> None:
    event = AutoCompleted(moves=(AutoMove(source="tableau:3", target="foundation:0", card="KS"),))
    assert encode(event) == (
        "AutoCompleted",
        1,
        {"moves": [{"from": "tableau:3", "to": "foundation:0", "card": "KS"}]},
    )


def test_python_field_names_are_not_accepted_for_from_and_to() -> None:
    data = {"source": "waste", "target": "foundation:0", "cards": ["AS"]}
    with pytest.raises(InvalidEvent):
        decode("CardMoved", 1, data)
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 3, {"source": "stock", "target": "waste", "cards": ["AS"]})


def test_collected_and_voided_keep_a_null_seed_and_deck() -> None:
    collected = Collected(reason="player", winnings=0, currency="GBP", units=0)
    voided = Voided(reason="x", refund=0, currency="GBP")
    for event in (collected, voided):
        data = _stored(event)[2]
        assert data["server_seed"] is None
        assert data["deck"] is None
        assert decode(*_stored(event)) == event


def test_a_revealed_deck_keeps_its_order_and_its_duplicates() -> None:
    two = canonical_deck(2)
    voided = Voided(reason="fault", refund=520, currency="GBP", deck=two)
    decoded = decode(*_stored(voided))
    assert isinstance(decoded, Voided)
    assert decoded.deck == two
    assert isinstance(decoded.deck, tuple)


# --- refusing malformed data ----------------------------------------------------------------


def _bad(event: AnyEvent, **changes: Any) -> tuple[str, int, dict[str, Any]]:
    data = _valid(event)
    data.update(changes)
    return event.TYPE, event.VERSION, data


PLACED = _first(StakePlaced)
DEALT = _first(Dealt)
DRAWN = CardDrawn("stock", "waste", ("3H",))
MOVED = CardMoved(source="waste", target="foundation:1", cards=("AH",))
TURNED = CardTurned("tableau:0", "KS")
REMOVED = PairRemoved(
    cards=(RemovedCard("pyramid:21", "6H"), RemovedCard("waste", "7C")), target="foundation"
)
UNDONE = Undone(action="move", moves=(UndoneMove("waste", "tableau:4", ("JS",)),))
AUTO = _first(AutoCompleted)
GATHERED = _first(PilesGathered)
RESHUFFLED = _first(Reshuffled)
PICKED = _first(CardPicked)
COLLECTED = Collected(
    reason="player", winnings=2600, currency="GBP", units=52, server_seed=SEED_HEX
)
VOIDED = Voided(reason="operator: table fault", refund=520, currency="GBP", server_seed=SEED_HEX)
CLOCK = _first(ClockStarted)
SEAT_GAME = next(e for e in EXAMPLES if isinstance(e, StakePlaced) and e.duel_id)
ENDED = next(e for e in EXAMPLES if isinstance(e, Collected) and e.ended_at)
OPENED = _first(DuelOpened)
TAKEN = _first(SeatTaken)
SEAT_DEALT = _first(SeatDealt)
FINISHED = _first(SeatFinished)
SETTLED = _first(DuelSettled)
CANCELLED = _first(DuelCancelled)
PAID = {"seat": 0, "player_id": "player-1", "amount": 100}
BAD_INSTANTS: list[Any] = [
    "2030-01-01T12:00:00Z",  # no microseconds
    "2030-01-01T12:00:00.000Z",
    "2030-01-01 12:00:00.000000Z",
    "2030-01-01T12:00:00.000000+00:00",
    "2030-01-01T12:00:00.000000",
    "2030-01-01T12:00:00.000000Z\n",
    "",
    None,
    1_893_499_200,
]


def _duel_cases() -> list[tuple[str, tuple[str, int, dict[str, Any]]]]:
    cases: list[tuple[str, tuple[str, int, dict[str, Any]]]] = []
    for n, moment in enumerate(BAD_INSTANTS):
        cases += [
            (f"clock started at bad instant {n}", _bad(CLOCK, started_at=moment)),
            (f"clock deadline bad instant {n}", _bad(CLOCK, deadline=moment)),
            (f"opened at bad instant {n}", _bad(OPENED, opened_at=moment)),
            (f"fill by bad instant {n}", _bad(OPENED, fill_by=moment)),
            (f"seat taken at bad instant {n}", _bad(TAKEN, taken_at=moment)),
            (f"seat deadline bad instant {n}", _bad(SEAT_DEALT, deadline=moment)),
            (f"seat ended at bad instant {n}", _bad(FINISHED, ended_at=moment)),
        ]
        if moment is not None:  # an untimed game's end records no time
            cases.append((f"collected ended at bad instant {n}", _bad(ENDED, ended_at=moment)))
    cases += [
        ("an empty duel id on a game", _bad(SEAT_GAME, duel_id="")),
        ("a duel id of 65 characters", _bad(SEAT_GAME, duel_id="d" * 65)),
        ("a duel id as a number", _bad(SEAT_GAME, duel_id=3)),
        ("an unknown end reason", _bad(ENDED, reason="won")),
        ("an empty duel id", _bad(OPENED, duel_id="")),
        ("a fee of zero", _bad(OPENED, fee=0)),
        ("a fee as text", _bad(OPENED, fee="500")),
        ("one seat", _bad(OPENED, seats=1)),
        ("101 seats", _bad(OPENED, seats=101)),
        ("a rake of 1", _bad(OPENED, rake="1")),
        ("a rake of five places", _bad(OPENED, rake="0.12345")),
        ("a rake as a number", _bad(OPENED, rake=0.1)),
        ("a negative rake", _bad(OPENED, rake="-0.1")),
        ("a duel without a commitment", _bad(OPENED, seed_commitment=None)),
        ("a short duel commitment", _bad(OPENED, seed_commitment="ab" * 31)),
        ("a lower-case duel currency", _bad(OPENED, currency="gbp")),
        ("a certification flag of null", _bad(OPENED, certification=None)),
        ("a negative seat", _bad(TAKEN, seat=-1)),
        ("seat 100", _bad(TAKEN, seat=100)),
        ("a seat's fee of zero", _bad(TAKEN, fee=0)),
        ("a seat without a player", _bad(TAKEN, player_id="")),
        ("a seat dealt no game", _bad(SEAT_DEALT, game_id="")),
        ("a seat dealt a null game", _bad(SEAT_DEALT, game_id=None)),
        ("a seat finished for a win", _bad(FINISHED, reason="won")),
        ("points as a float", _bad(FINISHED, points=1.5)),
        ("points as text", _bad(FINISHED, points="100")),
        ("105 units in a seat", _bad(FINISHED, units=105)),
        ("a finished seat's empty game", _bad(FINISHED, game_id="")),
        ("a pot of zero", _bad(SETTLED, pot=0)),
        ("a negative rake taken", _bad(SETTLED, rake=-1)),
        ("no payouts list", _bad(SETTLED, payouts=None)),
        ("a payout of zero", _bad(SETTLED, payouts=[{**PAID, "amount": 0}])),
        ("a negative payout", _bad(SETTLED, payouts=[{**PAID, "amount": -5}])),
        ("a payout to seat -1", _bad(SETTLED, payouts=[{**PAID, "seat": -1}])),
        ("a payout without a player", _bad(SETTLED, payouts=[{"seat": 0, "amount": 100}])),
        ("a payout with an extra", _bad(SETTLED, payouts=[{**PAID, "bonus": 1}])),
        ("a short duel seed", _bad(SETTLED, server_seed="00" * 31)),
        ("a settled deck of 51", _bad(SETTLED, deck=_deck_of(51))),
        ("a cancellation without a reason", _bad(CANCELLED, reason="")),
        ("a refund of zero", _bad(CANCELLED, refunds=[{**PAID, "amount": 0}])),
        ("a voided flag of null", _bad(CANCELLED, voided=None)),
        ("an extra field in a duel event", _bad(OPENED, pot=0)),
        ("an extra field in a seat", _bad(TAKEN, points=0)),
    ]
    return cases


BAD_PILE_IDS = [
    "",
    "hand pile",
    "Tableau:1",
    "tableau:1\n",
    "tableau:",
    "tableau:1234",
    "tableau:-1",
    ":3",
    "3",
    "tableau:1:2",
    "a" * 21,
    "tab_leau:1",
    "tableau: 1",
]
BAD_CARDS = ["ZZ", "3h", "10H", "1S", "", "AS ", "AAS", "Jk"]
BAD_MULTIPLIERS = [
    "0",
    "05",
    "-5",
    "5.",
    ".5",
    "5.123",
    "1,3",
    "1e3",
    " 5",
    "5 ",
    "5\n",
    "",
    "x",
    "12345",
    "NaN",
]
BAD_DECK_LENGTHS = [0, 1, 51, 53, 103, 105, 156]


def _deck_of(length: int) -> list[str]:
    return list((CANONICAL_DECK * 3)[:length])


def _pile_cases() -> list[tuple[str, tuple[str, int, dict[str, Any]]]]:
    cases: list[tuple[str, tuple[str, int, dict[str, Any]]]] = []
    for pid in BAD_PILE_IDS:
        cases += [
            (f"moved from {pid!r}", _bad(MOVED, **{"from": pid})),
            (f"moved to {pid!r}", _bad(MOVED, to=pid)),
            (f"drawn from {pid!r}", _bad(DRAWN, **{"from": pid})),
            (f"drawn to {pid!r}", _bad(DRAWN, to=pid)),
            (f"turned {pid!r}", _bad(TURNED, pile=pid)),
            (f"removed from {pid!r}", _bad(REMOVED, cards=[{"from": pid, "card": "KS"}])),
            (f"removed to {pid!r}", _bad(REMOVED, to=pid)),
            (
                f"undone from {pid!r}",
                _bad(UNDONE, moves=[{"from": pid, "to": "waste", "cards": ["JS"]}]),
            ),
            (f"dealt pile {pid!r}", _bad(DEALT, piles=[{"pile": pid, "down": 0, "up": ["AS"]}])),
            (
                f"auto move to {pid!r}",
                _bad(AUTO, moves=[{"from": "tableau:0", "to": pid, "card": "7S"}]),
            ),
        ]
    return cases


def _card_cases() -> list[tuple[str, tuple[str, int, dict[str, Any]]]]:
    cases: list[tuple[str, tuple[str, int, dict[str, Any]]]] = []
    for card in BAD_CARDS:
        cases += [
            (f"drawn {card!r}", _bad(DRAWN, cards=[card])),
            (f"moved {card!r}", _bad(MOVED, cards=["AH", card])),
            (f"turned {card!r}", _bad(TURNED, card=card)),
            (f"removed {card!r}", _bad(REMOVED, cards=[{"from": "stock", "card": card}])),
            (
                f"undone {card!r}",
                _bad(UNDONE, moves=[{"from": "waste", "to": "tableau:4", "cards": [card]}]),
            ),
            (
                f"dealt face up {card!r}",
                _bad(DEALT, piles=[{"pile": "w", "down": 0, "up": [card]}]),
            ),
            (
                f"auto-played {card!r}",
                _bad(AUTO, moves=[{"from": "tableau:0", "to": "foundation:0", "card": card}]),
            ),
            (f"deck holding {card!r}", _bad(COLLECTED, deck=[card, *CANONICAL_DECK[1:]])),
        ]
    return cases


def _money_and_deck_cases() -> list[tuple[str, tuple[str, int, dict[str, Any]]]]:
    cases: list[tuple[str, tuple[str, int, dict[str, Any]]]] = [
        (f"multiplier {m!r}", _bad(PLACED, multiplier=m)) for m in BAD_MULTIPLIERS
    ]
    cases += [
        ("multiplier as a number", _bad(PLACED, multiplier=5)),
        ("multiplier null", _bad(PLACED, multiplier=None)),
        ("max units 0", _bad(PLACED, max_units=0)),
        ("max units as text", _bad(PLACED, max_units="52")),
        ("stake of zero", _bad(PLACED, stake=0)),
        ("an old draw count", _bad(PLACED, draw_count=1)),
        ("an old win rate", _bad(PLACED, win_rate=50)),
    ]
    for n in BAD_DECK_LENGTHS:
        cases += [
            (f"dealt deck of {n}", _bad(DEALT, deck=_deck_of(n))),
            (f"collected deck of {n}", _bad(COLLECTED, deck=_deck_of(n))),
            (f"voided deck of {n}", _bad(VOIDED, deck=_deck_of(n))),
        ]
    return cases


@pytest.mark.parametrize(
    ("case", "stored"),
    [
        *_pile_cases(),
        *_card_cases(),
        *_money_and_deck_cases(),
        *_duel_cases(),
        ("105 cards in one draw", _bad(DRAWN, cards=list(_deck_of(105)))),
        ("no cards in a draw", _bad(DRAWN, cards=[])),
        ("no cards in a move", _bad(MOVED, cards=[])),
        ("a pair of three", _bad(REMOVED, cards=[{"from": "stock", "card": "KS"}] * 3)),
        ("a removal of nothing", _bad(REMOVED, cards=[])),
        ("a removed card without a pile", _bad(REMOVED, cards=[{"card": "KS"}])),
        ("dealt pile with -1 down", _bad(DEALT, piles=[{"pile": "stock", "down": -1, "up": []}])),
        ("dealt pile with 105 down", _bad(DEALT, piles=[{"pile": "stock", "down": 105, "up": []}])),
        ("dealt pile with down as text", _bad(DEALT, piles=[{"pile": "s", "down": "1", "up": []}])),
        (
            "dealt pile with an extra",
            _bad(DEALT, piles=[{"pile": "s", "down": 0, "up": [], "x": 1}]),
        ),
        ("bad commitment", _bad(DEALT, seed_commitment="abc")),
        ("negative winnings", _bad(COLLECTED, winnings=-50)),
        ("winnings as text", _bad(COLLECTED, winnings="2600")),
        ("winnings as a float", _bad(COLLECTED, winnings=2600.0)),
        ("winnings as a boolean", _bad(COLLECTED, winnings=True)),
        ("105 units", _bad(COLLECTED, units=105)),
        ("negative units", _bad(COLLECTED, units=-1)),
        ("an old foundation count", _bad(COLLECTED, foundation_count=52)),
        ("unknown collect reason", _bad(COLLECTED, reason="bonus")),
        ("lower-case currency", _bad(COLLECTED, currency="gbp")),
        ("short seed", _bad(COLLECTED, server_seed="00" * 31)),
        ("upper-case seed", _bad(COLLECTED, server_seed=SEED_HEX.upper())),
        ("negative refund", _bad(VOIDED, refund=-1)),
        ("empty void reason", _bad(VOIDED, reason="")),
        ("extra field", _bad(MOVED, extra=1)),
        ("extra field in a turn", _bad(TURNED, note="x")),
        ("an old column in a turn", _bad(TURNED, column=0)),
        ("undo of a turn", _bad(UNDONE, action="turn")),
        ("an undo of nothing", _bad(UNDONE, moves=[])),
        ("an old waste fan", _bad(UNDONE, waste_fan=1)),
        ("recycle of 0 cards", _bad(StockRecycled(cards=24, passes_left=2), cards=0)),
        ("negative passes left", _bad(StockRecycled(cards=24, passes_left=2), passes_left=-1)),
        ("empty auto-complete", _bad(AUTO, moves=[])),
        ("a gathering of no pile", _bad(GATHERED, sources=[])),
        ("a gathering of no card", _bad(GATHERED, cards=[])),
        ("a label with spaces", _bad(RESHUFFLED, label="redeal 1")),
        ("a reshuffle without piles", _bad(RESHUFFLED, piles=None)),
        ("a pick at a negative index", _bad(PICKED, index=-1)),
        ("a pick of no card", _bad(PICKED, card="1H")),
        ("negative picks left", _bad(PICKED, picks_left=-1)),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_decode_refuses_malformed_data(case: str, stored: tuple[str, int, dict[str, Any]]) -> None:
    with pytest.raises(InvalidEvent):
        decode(*stored)


@pytest.mark.parametrize("pile", ["stock", "waste", "foundation", "tableau:0", "pyramid:27"])
def test_pile_ids_of_every_game_are_accepted(pile: str) -> None:
    assert decode(*_bad(MOVED, to=pile)) == CardMoved("waste", pile, ("AH",))


@pytest.mark.parametrize("multiplier", ["1", "5", "1.3", "1.25", "9999.99", "10"])
def test_multipliers_of_up_to_two_places_are_accepted(multiplier: str) -> None:
    decoded = decode(*_bad(PLACED, multiplier=multiplier))
    assert isinstance(decoded, StakePlaced)
    assert decoded.multiplier == multiplier


@pytest.mark.parametrize("decks", [1, 2])
def test_decks_of_52_and_104_cards_are_accepted(decks: int) -> None:
    deck = list(canonical_deck(decks))
    decoded = decode(*_bad(DEALT, deck=deck, piles=None))  # a deal from before sealing
    assert getattr(decoded, "deck", None) == tuple(deck)
    for event in (COLLECTED, VOIDED):
        decoded = decode(*_bad(event, deck=deck))
        assert getattr(decoded, "deck", None) == tuple(deck)


def test_a_deal_records_its_piles_or_its_deck_and_a_sealed_deal_commits() -> None:
    for change in ({"deck": list(canonical_deck(1))}, {"piles": None}, {"seed_commitment": None}):
        with pytest.raises(InvalidEvent):
            decode(*_bad(DEALT, **change))


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_decode_refuses_each_missing_field(event: AnyEvent) -> None:
    data = _valid(event)
    for key in data:
        partial = {k: v for k, v in data.items() if k != key}
        with pytest.raises(InvalidEvent) as info:
            decode(event.TYPE, event.VERSION, partial)
        assert key in info.value.messages


def test_invalid_event_names_the_type_and_the_field() -> None:
    with pytest.raises(InvalidEvent) as info:
        decode("Collected", Collected.VERSION, _bad(COLLECTED, winnings=-50)[2])
    assert "Collected" in str(info.value)
    assert set(info.value.messages) == {"winnings"}


# --- unknown types and versions -------------------------------------------------------------


def test_unknown_type_is_refused() -> None:
    with pytest.raises(UnknownEvent):
        decode("CardFlipped", 1, {"card": "AS"})


def test_type_names_are_case_sensitive() -> None:
    with pytest.raises(UnknownEvent):
        decode("cardmoved", 1, _valid(MOVED))


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_a_version_newer_than_this_code_is_refused(cls: type[AnyEvent]) -> None:
    with pytest.raises(UnknownEvent):
        decode(cls.TYPE, cls.VERSION + 1, _valid(_first(cls)))


@pytest.mark.parametrize("version", [0, -1])
def test_a_version_below_one_is_refused(version: int) -> None:
    with pytest.raises(UnknownEvent):
        decode("CardMoved", version, _valid(MOVED))


def test_a_player_event_is_not_a_game_event() -> None:
    data = {"amount": 100, "currency": "GBP", "transaction_id": "t-1"}
    assert decode("FundsDeposited", 1, data) == catalog.FundsDeposited(100, "GBP", "t-1")
    with pytest.raises(UnknownEvent):
        decode_game("FundsDeposited", 1, data)
    with pytest.raises(UnknownEvent):
        decode_duel("FundsDeposited", 1, data)


@pytest.mark.parametrize("cls", DUEL_EVENT_TYPES, ids=lambda c: c.__name__)
def test_a_duel_event_is_not_a_game_event(cls: type[AnyEvent]) -> None:
    stored = _stored(_first(cls))
    assert decode_duel(*stored) == _first(cls)
    with pytest.raises(UnknownEvent):
        decode_game(*stored)


@pytest.mark.parametrize("cls", GAME_EVENT_TYPES, ids=lambda c: c.__name__)
def test_a_game_event_is_not_a_duel_event(cls: type[AnyEvent]) -> None:
    stored = _stored(_first(cls))
    assert decode_game(*stored) == _first(cls)
    with pytest.raises(UnknownEvent):
        decode_duel(*stored)


# --- upcasting: the exact shapes older releases stored ---------------------------------------

#: A v1 StakePlaced as recorded (tests/fixtures/legacy_streams.json, game b).
STAKE_PLACED_V1 = {
    "stake": 520,
    "passes": 3,
    "game_id": "60bf77d0-52d8-4e84-9353-fa31e8104f3f",
    "variant": "vegas-draw3",
    "currency": "GBP",
    "win_rate": 50,
    "player_id": "40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
    "draw_count": 3,
    "paytable_id": "vegas-gbp",
    "certification": True,
    "rules_version": "vegas-klondike/1",
    "paytable_version": 1,
}
STAKE_PLACED_V2 = {
    "stake": 520,
    "game_id": "60bf77d0-52d8-4e84-9353-fa31e8104f3f",
    "variant": "vegas-draw3",
    "currency": "GBP",
    "player_id": "40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
    "paytable_id": "vegas-gbp",
    "certification": True,
    "rules_version": "vegas-klondike/1",
    "paytable_version": 1,
    "multiplier": "5",
    "max_units": 52,
}
DEALT_V1 = {
    "deck": list(DECK),
    "client_seed": None,
    "seed_commitment": COMMITMENT,
    "shuffle_algorithm": shuffle.ALGORITHM,
}
DEALT_V1_GIVEN_DECK = {
    "deck": list(EASY),
    "client_seed": None,
    "seed_commitment": None,
    "shuffle_algorithm": shuffle.CERTIFICATION_DECK,
}
UNDONE_V1_DRAW = {
    "to": "waste",
    "from": "stock",
    "cards": ["KD"],
    "action": "draw",
    "waste_fan": 1,
}
UNDONE_V1_MOVE = {
    "to": "foundation:0",
    "from": "waste",
    "cards": ["AC"],
    "action": "move",
    "waste_fan": 3,
}
COLLECTED_V1 = {
    "reason": "player",
    "currency": "GBP",
    "winnings": 50,
    "server_seed": SEED_HEX,
    "foundation_count": 1,
}
COLLECTED_V1_GIVEN_DECK = {
    "reason": "player",
    "currency": "GBP",
    "winnings": 2600,
    "server_seed": None,
    "foundation_count": 52,
}
COLLECTED_V2 = {
    "reason": "timeout",
    "currency": "GBP",
    "winnings": 50,
    "server_seed": SEED_HEX,
    "units": 1,
    "deck": None,
}
VOID_REASON = "legacy fixture: operator void after a malfunction report"
VOIDED_V1 = {
    "reason": VOID_REASON,
    "refund": 520,
    "currency": "GBP",
    "server_seed": SEED_HEX,
}

#: (name, stored type, stored version, stored data, data at the current version, the event).
LEGACY: list[tuple[str, str, int, dict[str, Any], dict[str, Any], GameEvent]] = [
    (
        "StakePlaced v1",
        "StakePlaced",
        1,
        STAKE_PLACED_V1,
        {**STAKE_PLACED_V2, "duel_id": None},
        StakePlaced(
            game_id="60bf77d0-52d8-4e84-9353-fa31e8104f3f",
            player_id="40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
            variant="vegas-draw3",
            stake=520,
            currency="GBP",
            multiplier="5",
            max_units=52,
            paytable_id="vegas-gbp",
            paytable_version=1,
            rules_version="vegas-klondike/1",
            certification=True,
        ),
    ),
    (
        "StakePlaced v1 draw one",
        "StakePlaced",
        1,
        {**STAKE_PLACED_V1, "variant": "vegas-draw1", "draw_count": 1, "passes": 1},
        {**STAKE_PLACED_V2, "variant": "vegas-draw1", "duel_id": None},
        StakePlaced(
            game_id="60bf77d0-52d8-4e84-9353-fa31e8104f3f",
            player_id="40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
            variant="vegas-draw1",
            stake=520,
            currency="GBP",
            multiplier="5",
            max_units=52,
            paytable_id="vegas-gbp",
            paytable_version=1,
            rules_version="vegas-klondike/1",
            certification=True,
        ),
    ),
    (
        "Dealt v1 seeded",
        "Dealt",
        1,
        DEALT_V1,
        {**DEALT_V1, "piles": None},
        Dealt(
            shuffle_algorithm=shuffle.ALGORITHM,
            seed_commitment=COMMITMENT,
            client_seed=None,
            piles=None,
            deck=DECK,
        ),
    ),
    (
        "Dealt v1 given deck",
        "Dealt",
        1,
        DEALT_V1_GIVEN_DECK,
        {**DEALT_V1_GIVEN_DECK, "piles": None},
        Dealt(shuffle_algorithm=shuffle.CERTIFICATION_DECK, piles=None, deck=EASY),
    ),
    (
        "CardDrawn v1",
        "CardDrawn",
        1,
        {"card": "AS"},
        {"cards": ["AS"], "from": "stock", "to": "waste"},
        CardDrawn("stock", "waste", ("AS",)),
    ),
    (
        "CardDrawn v2 one card",
        "CardDrawn",
        2,
        {"cards": ["3H"]},
        {"cards": ["3H"], "from": "stock", "to": "waste"},
        CardDrawn("stock", "waste", ("3H",)),
    ),
    (
        "CardDrawn v2 three cards",
        "CardDrawn",
        2,
        {"cards": ["8S", "QH", "AC"]},
        {"cards": ["8S", "QH", "AC"], "from": "stock", "to": "waste"},
        CardDrawn("stock", "waste", ("8S", "QH", "AC")),
    ),
    (
        "CardTurned v1",
        "CardTurned",
        1,
        {"card": "QD", "column": 4},
        {"card": "QD", "pile": "tableau:4"},
        CardTurned("tableau:4", "QD"),
    ),
    (
        "CardTurned v1 column 0",
        "CardTurned",
        1,
        {"card": "KC", "column": 0},
        {"card": "KC", "pile": "tableau:0"},
        CardTurned("tableau:0", "KC"),
    ),
    (
        "Undone v1 draw",
        "Undone",
        1,
        UNDONE_V1_DRAW,
        {"action": "draw", "moves": [{"from": "stock", "to": "waste", "cards": ["KD"]}]},
        Undone("draw", (UndoneMove("stock", "waste", ("KD",)),)),
    ),
    (
        "Undone v1 move",
        "Undone",
        1,
        UNDONE_V1_MOVE,
        {"action": "move", "moves": [{"from": "waste", "to": "foundation:0", "cards": ["AC"]}]},
        Undone("move", (UndoneMove("waste", "foundation:0", ("AC",)),)),
    ),
    (
        "Collected v1",
        "Collected",
        1,
        COLLECTED_V1,
        {
            "reason": "player",
            "currency": "GBP",
            "winnings": 50,
            "server_seed": SEED_HEX,
            "units": 1,
            "deck": None,
            "ended_at": None,
        },
        Collected("player", 50, "GBP", 1, SEED_HEX, None),
    ),
    (
        "Collected v1 given deck",
        "Collected",
        1,
        COLLECTED_V1_GIVEN_DECK,
        {
            "reason": "player",
            "currency": "GBP",
            "winnings": 2600,
            "server_seed": None,
            "units": 52,
            "deck": None,
            "ended_at": None,
        },
        Collected("player", 2600, "GBP", 52, None, None),
    ),
    (
        "StakePlaced v2",
        "StakePlaced",
        2,
        STAKE_PLACED_V2,
        {**STAKE_PLACED_V2, "duel_id": None},
        StakePlaced(
            game_id="60bf77d0-52d8-4e84-9353-fa31e8104f3f",
            player_id="40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
            variant="vegas-draw3",
            stake=520,
            currency="GBP",
            multiplier="5",
            max_units=52,
            paytable_id="vegas-gbp",
            paytable_version=1,
            rules_version="vegas-klondike/1",
            certification=True,
            duel_id=None,
        ),
    ),
    (
        "StakePlaced v2 golf",
        "StakePlaced",
        2,
        {**STAKE_PLACED_V2, "variant": "golf", "multiplier": "1.3", "max_units": 35},
        {
            **STAKE_PLACED_V2,
            "variant": "golf",
            "multiplier": "1.3",
            "max_units": 35,
            "duel_id": None,
        },
        StakePlaced(
            game_id="60bf77d0-52d8-4e84-9353-fa31e8104f3f",
            player_id="40509c94-0f8c-41d0-b7c7-f7a4c8ed9284",
            variant="golf",
            stake=520,
            currency="GBP",
            multiplier="1.3",
            max_units=35,
            paytable_id="vegas-gbp",
            paytable_version=1,
            rules_version="vegas-klondike/1",
            certification=True,
        ),
    ),
    (
        "Collected v2",
        "Collected",
        2,
        COLLECTED_V2,
        {**COLLECTED_V2, "ended_at": None},
        Collected("timeout", 50, "GBP", 1, SEED_HEX, None, None),
    ),
    (
        "Collected v2 given deck",
        "Collected",
        2,
        {**COLLECTED_V2, "reason": "player", "server_seed": SEED_HEX, "deck": list(EASY)},
        {
            **COLLECTED_V2,
            "reason": "player",
            "server_seed": SEED_HEX,
            "deck": list(EASY),
            "ended_at": None,
        },
        Collected("player", 50, "GBP", 1, SEED_HEX, EASY, None),
    ),
    (
        "Voided v1",
        "Voided",
        1,
        VOIDED_V1,
        {**VOIDED_V1, "deck": None},
        Voided(VOID_REASON, 520, "GBP", SEED_HEX, None),
    ),
    (
        "Voided v1 no seed",
        "Voided",
        1,
        {**VOIDED_V1, "server_seed": None},
        {**VOIDED_V1, "server_seed": None, "deck": None},
        Voided(VOID_REASON, 520, "GBP", None, None),
    ),
]


def test_every_upcaster_has_a_legacy_shape_here() -> None:
    assert {(type_name, version) for _, type_name, version, *_ in LEGACY} == set(UPCASTERS)


@pytest.mark.parametrize(
    ("type_name", "version", "old", "new", "event"),
    [case[1:] for case in LEGACY],
    ids=[case[0] for case in LEGACY],
)
def test_upcast_brings_the_stored_shape_to_the_current_one(
    type_name: str, version: int, old: dict[str, Any], new: dict[str, Any], event: GameEvent
) -> None:
    stored = json.loads(json.dumps(old))
    assert upcast(type_name, version, stored) == new
    assert stored == old  # the stored data itself is never rewritten
    assert decode(type_name, version, stored) == event
    assert decode_game(type_name, version, stored) == event
    # The event now stores in the current shape, and reads back the same.
    assert decode(*_stored(event)) == event


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_current_version_data_is_not_upcast(cls: type[AnyEvent]) -> None:
    data = _valid(_first(cls))
    assert upcast(cls.TYPE, cls.VERSION, data) == data


def test_card_drawn_v1_runs_the_whole_upcaster_chain() -> None:
    assert CardDrawn.VERSION == 3
    assert upcast("CardDrawn", 1, {"card": "QH"}) == upcast("CardDrawn", 2, {"cards": ["QH"]})


def test_an_upcast_event_is_still_validated() -> None:
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, {"card": "ZZ"})
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, {"card": "AS", "extra": True})
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 2, {"cards": []})
    with pytest.raises(InvalidEvent):
        decode("CardTurned", 1, {"card": "QD", "column": -1})
    with pytest.raises(InvalidEvent):
        decode("Undone", 1, {**UNDONE_V1_MOVE, "action": "turn"})
    with pytest.raises(InvalidEvent):
        decode("Collected", 1, {**COLLECTED_V1, "foundation_count": -1})
    with pytest.raises(InvalidEvent):
        decode("StakePlaced", 1, {**STAKE_PLACED_V1, "stake": 0})
    with pytest.raises(InvalidEvent):
        decode("Dealt", 1, {**DEALT_V1, "deck": list(DECK)[:51]})
    with pytest.raises(InvalidEvent):
        decode("StakePlaced", 2, {**STAKE_PLACED_V2, "stake": 0})
    with pytest.raises(InvalidEvent):
        decode("Collected", 2, {**COLLECTED_V2, "winnings": -1})
    with pytest.raises(InvalidEvent):
        decode("Collected", 2, {**COLLECTED_V2, "reason": "bonus"})


@pytest.mark.parametrize(
    ("type_name", "version", "data"),
    [
        ("CardDrawn", 1, {}),
        ("CardDrawn", 1, {"cards": ["AS"]}),  # a v2 shape stored as v1
        ("CardTurned", 1, {"card": "QD"}),
        ("CardTurned", 1, {"card": "QD", "column": "four"}),
        ("CardTurned", 1, {"card": "QD", "pile": "tableau:4"}),  # a v2 shape stored as v1
        ("Undone", 1, {"action": "draw", "cards": ["KD"], "waste_fan": 1}),
        ("Undone", 1, {"action": "draw", "moves": []}),  # a v2 shape stored as v1
        ("Collected", 1, {k: v for k, v in COLLECTED_V1.items() if k != "foundation_count"}),
    ],
    ids=lambda x: json.dumps(x) if isinstance(x, dict) else str(x),
)
def test_old_data_missing_what_its_upcaster_needs_is_refused_as_invalid(
    type_name: str, version: int, data: dict[str, Any]
) -> None:
    with pytest.raises(InvalidEvent):
        decode(type_name, version, data)


@pytest.mark.parametrize("data", [["waste"], "waste", None], ids=["list", "string", "null"])
def test_data_that_is_not_an_object_is_refused_as_invalid(data: Any) -> None:
    with pytest.raises(InvalidEvent):
        decode("CardMoved", 1, data)
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, data)


# --- a stream stored partly by older releases folds like the current one ----------------------


def _as_old(event: GameEvent) -> tuple[str, int, Any]:
    """How the first releases stored an event the current code would store as ``event``."""
    if isinstance(event, StakePlaced) and event.variant.startswith("vegas-"):
        count = 1 if event.variant == "vegas-draw1" else 3
        data = {k: v for k, v in _valid(event).items() if k not in ("multiplier", "max_units")}
        data |= {"draw_count": count, "passes": count, "win_rate": event.stake * 5 // 52}
        return "StakePlaced", 1, data
    if isinstance(event, CardDrawn):
        assert (event.source, event.target) == ("stock", "waste")
        if len(event.cards) == 1:
            return "CardDrawn", 1, {"card": event.cards[0]}
        return "CardDrawn", 2, {"cards": list(event.cards)}
    if isinstance(event, CardTurned):
        return "CardTurned", 1, {"card": event.card, "column": int(event.pile[8:])}
    if isinstance(event, Undone):
        (move,) = event.moves
        old = {"from": move.source, "to": move.target, "cards": list(move.cards)}
        return "Undone", 1, {"action": event.action, **old, "waste_fan": 1}
    if isinstance(event, Collected):
        data = {k: v for k, v in _valid(event).items() if k not in ("units", "deck")}
        return "Collected", 1, {**data, "foundation_count": event.units}
    if isinstance(event, Voided):
        return "Voided", 1, {k: v for k, v in _valid(event).items() if k != "deck"}
    return _stored(event)


def test_a_stream_stored_in_older_shapes_folds_like_the_current_stream() -> None:
    game, events = start()  # vegas-draw1 on the worked example's seed
    game, played = play(
        game,
        g.MoveCards("tableau:3", "foundation"),
        g.Turn("tableau:3"),
        g.Draw(),
        g.Draw(),
        g.Draw(),
        g.Draw(),  # AH
        g.MoveCards("waste", "foundation"),
        g.Draw(),
        g.Undo(),
        g.Draw(),
        g.Collect(server_seed=SEED_HEX),
    )
    stream = events + played
    assert sum(isinstance(e, CardDrawn) for e in stream) == 6
    old_records = [_as_old(e) for e in stream]
    assert {(t, v) for t, v, _ in old_records} >= {
        ("StakePlaced", 1),
        ("CardDrawn", 1),
        ("CardTurned", 1),
        ("Undone", 1),
        ("Collected", 1),
    }

    current = [decode_game(*_stored(e)) for e in stream]
    old = [decode_game(*r) for r in old_records]
    # Mixed: the first three draws were stored by the old release, the rest by the new one.
    draws = [i for i, e in enumerate(stream) if isinstance(e, CardDrawn)]
    mixed_records = [_as_old(e) if i in draws[:3] else _stored(e) for i, e in enumerate(stream)]
    assert [r[1] for r in mixed_records if r[0] == "CardDrawn"] == [1, 1, 1, 3, 3, 3]
    mixed = [decode_game(*r) for r in mixed_records]
    assert current == mixed == old == stream
    assert g.fold(mixed) == g.fold(old) == g.fold(current) == game
    assert game.status == "collected"
    assert game.units == 2
    assert game.payout == 100
    assert game.table is not None
    assert game.table.pile("waste").cards == ("3H", "4H", "KD", "8S")


# --- what the decider emits is storable ------------------------------------------------------


def test_a_given_deck_game_reveals_its_deck_in_a_storable_collected() -> None:
    game, _ = start(deck=EASY)
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Collect(server_seed=SEED_HEX))
    assert exc.value.code == errors.SEED_REQUIRED
    (collected,) = g.decide(game, g.Collect(server_seed=SEED.hex(), deck=EASY))
    assert collected == Collected("player", 0, "GBP", 0, SEED.hex(), EASY)
    assert decode_game(*_stored(collected)) == collected
    (voided,) = g.decide(game, g.Void("fault", server_seed=SEED.hex(), deck=EASY))
    assert voided == Voided("fault", 520, "GBP", SEED.hex(), EASY)
    assert decode_game(*_stored(voided)) == voided


@pytest.mark.parametrize(
    "spelling",
    [SEED_HEX.upper(), " ".join(SEED_HEX[i : i + 2] for i in range(0, 64, 2))],
    ids=["upper-case", "spaced"],
)
def test_collect_with_an_odd_seed_spelling_is_refused(spelling: str) -> None:
    """Events record one spelling of a seed (64 lowercase hex digits); others are refused."""
    game, _ = start()
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Collect(server_seed=spelling))
    assert exc.value.code == errors.SEED_MISMATCH


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_void_without_a_storable_reason_is_refused(reason: str) -> None:
    game, _ = start()
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Void(reason=reason, server_seed=SEED_HEX))
    assert exc.value.code == errors.INVALID_REASON


def test_collect_with_an_unknown_reason_is_refused() -> None:
    game, _ = start()
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Collect(reason="bogus", server_seed=SEED_HEX))  # type: ignore[arg-type]
    assert exc.value.code == errors.INVALID_REASON


def test_the_stake_placed_the_decider_emits_stores_its_game_s_payout_terms() -> None:
    for game_id, rules in GAMES.items():
        placed = decode_game(*_stored(_deal(game_id)[0]))
        assert isinstance(placed, StakePlaced)
        assert (placed.variant, placed.multiplier, placed.max_units) == (
            game_id,
            rules.multiplier,
            rules.max_units,
        )
        assert (placed.stake, placed.currency, placed.paytable_id) == (520, "GBP", GBP.id)
        assert placed.duel_id == ("duel-1" if rules.duel else None)
