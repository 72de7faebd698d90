"""The event catalog and its codec: stable names and versions, schemas, JSON round trips,
refusal of malformed data, unknown types and versions, and upcasting old events on read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from events import catalog, codec
from events.catalog import (
    AutoCompleted,
    AutoMove,
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    StockRecycled,
    Undone,
    Voided,
)
from events.codec import (
    UPCASTERS,
    InvalidEvent,
    UnknownEvent,
    decode,
    decode_game,
    encode,
    upcast,
)
from events.schemas import SCHEMAS
from service import game as g
from service import shuffle
from service.errors import RuleViolation
from tests.builders import SEED, easy_deck, play, start

SEED_HEX = SEED.hex()
COMMITMENT = shuffle.commitment(SEED)

#: The names and versions stored events carry. Changing one breaks every stored stream, so
#: this list only ever grows; a shape change bumps the version and adds an upcaster.
STABLE_NAMES = {
    StakePlaced: ("StakePlaced", 1),
    Dealt: ("Dealt", 1),
    CardDrawn: ("CardDrawn", 2),
    StockRecycled: ("StockRecycled", 1),
    CardMoved: ("CardMoved", 1),
    CardTurned: ("CardTurned", 1),
    Undone: ("Undone", 1),
    AutoCompleted: ("AutoCompleted", 1),
    Collected: ("Collected", 1),
    Voided: ("Voided", 1),
}

EXAMPLES: list[GameEvent] = [
    StakePlaced(
        game_id="game-1",
        player_id="player-1",
        variant="vegas-draw3",
        draw_count=3,
        passes=3,
        stake=520,
        currency="GBP",
        win_rate=50,
        paytable_id="vegas-gbp",
        paytable_version=1,
        rules_version="vegas-klondike/1",
        certification=False,
    ),
    StakePlaced(
        game_id="g",
        player_id="p",
        variant="vegas-draw1",
        draw_count=1,
        passes=1,
        stake=104,
        currency="EUR",
        win_rate=10,
        paytable_id="vegas-eur",
        paytable_version=2,
        rules_version="vegas-klondike/1",
        certification=True,
    ),
    Dealt(
        deck=shuffle.derive_deck(SEED),
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=COMMITMENT,
        client_seed="lucky 7",
    ),
    Dealt(deck=easy_deck(), shuffle_algorithm=shuffle.CERTIFICATION_DECK),
    CardDrawn(cards=("3H",)),
    CardDrawn(cards=("3H", "4H", "KD")),
    StockRecycled(cards=24, passes_left=2),
    StockRecycled(cards=1, passes_left=1),
    CardMoved(source="waste", target="foundation:1", cards=("AH",)),
    CardMoved(source="tableau:6", target="tableau:0", cards=("QD", "JS", "TD", "9C")),
    CardMoved(source="foundation:3", target="tableau:2", cards=("7C",)),
    CardTurned(column=0, card="KS"),
    CardTurned(column=6, card="AS"),
    Undone(action="draw", source="stock", target="waste", cards=("2S", "7C", "QS"), waste_fan=2),
    Undone(action="move", source="waste", target="tableau:4", cards=("JS",), waste_fan=0),
    AutoCompleted(
        moves=(
            AutoMove(source="tableau:0", target="foundation:0", card="7S"),
            AutoMove(source="tableau:1", target="foundation:1", card="7H"),
        )
    ),
    Collected(
        reason="player", winnings=2600, currency="GBP", foundation_count=52, server_seed=SEED_HEX
    ),
    Collected(reason="timeout", winnings=0, currency="USD", foundation_count=0, server_seed=None),
    Voided(reason="operator: table fault", refund=520, currency="GBP", server_seed=SEED_HEX),
    Voided(reason="x", refund=0, currency="GBP", server_seed=None),
]


def _stored(event: GameEvent) -> tuple[str, int, Any]:
    """What a store would hold: name, version, and the data after a trip through JSON text."""
    type_name, version, data = encode(event)
    return type_name, version, json.loads(json.dumps(data))


def _valid(event: GameEvent) -> dict[str, Any]:
    return dict(_stored(event)[2])


# --- the catalog ----------------------------------------------------------------------------


def test_catalog_lists_each_event_type_once() -> None:
    assert len(set(catalog.GAME_EVENT_TYPES)) == len(catalog.GAME_EVENT_TYPES) == 10
    assert set(catalog.GAME_EVENT_TYPES) == set(STABLE_NAMES)


@pytest.mark.parametrize("cls", catalog.GAME_EVENT_TYPES, ids=lambda c: c.__name__)
def test_event_type_has_its_stable_name_a_version_and_a_schema(cls: type[GameEvent]) -> None:
    assert STABLE_NAMES[cls] == (cls.TYPE, cls.VERSION)
    assert isinstance(cls.VERSION, int)
    assert cls.VERSION >= 1
    assert cls in SCHEMAS
    assert codec.CATALOG[cls.TYPE] is cls


def test_type_names_are_unique() -> None:
    names = [cls.TYPE for cls in catalog.GAME_EVENT_TYPES]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("cls", catalog.GAME_EVENT_TYPES, ids=lambda c: c.__name__)
def test_every_older_version_has_an_upcaster_chain(cls: type[GameEvent]) -> None:
    for version in range(1, cls.VERSION):
        assert (cls.TYPE, version) in UPCASTERS
    for type_name, version in UPCASTERS:
        assert type_name in codec.CATALOG
        assert 1 <= version < codec.CATALOG[type_name].VERSION


def test_every_event_type_has_an_example_here() -> None:
    assert {type(e) for e in EXAMPLES} == set(catalog.GAME_EVENT_TYPES)


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_event_round_trips_through_json(event: GameEvent) -> None:
    type_name, version, data = _stored(event)
    assert (type_name, version) == (event.TYPE, event.VERSION)
    decoded = decode(type_name, version, data)
    assert decoded == event
    assert type(decoded) is type(event)


def test_card_moved_is_stored_with_from_and_to_keys() -> None:
    event = CardMoved(source="tableau:6", target="tableau:0", cards=("QD", "JS"))
    assert encode(event) == (
        "CardMoved",
        1,
        {"from": "tableau:6", "to": "tableau:0", "cards": ["QD", "JS"]},
    )


def test_undone_is_stored_with_from_and_to_keys() -> None:
    event = Undone(action="move", source="waste", target="foundation:2", cards=("AD",), waste_fan=1)
    assert encode(event) == (
        "Undone",
        1,
        {
            "action": "move",
            "from": "waste",
            "to": "foundation:2",
            "cards": ["AD"],
            "waste_fan": 1,
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


def test_card_drawn_is_stored_as_a_list_of_cards() -> None:
    assert encode(CardDrawn(cards=("2S", "7C"))) == ("CardDrawn", 2, {"cards": ["2S", "7C"]})


def test_collected_and_voided_keep_a_null_seed() -> None:
    collected = Collected(reason="player", winnings=0, currency="GBP", foundation_count=0)
    assert _stored(collected)[2]["server_seed"] is None
    assert decode(*_stored(collected)) == collected


# --- refusing malformed data ----------------------------------------------------------------


def _bad(event: GameEvent, **changes: Any) -> tuple[str, int, dict[str, Any]]:
    data = _valid(event)
    data.update(changes)
    return event.TYPE, event.VERSION, data


MOVED = CardMoved(source="waste", target="foundation:1", cards=("AH",))
COLLECTED = EXAMPLES[16]
assert isinstance(COLLECTED, Collected)


@pytest.mark.parametrize(
    ("case", "stored"),
    [
        ("unknown card in a draw", _bad(CardDrawn(cards=("3H",)), cards=["ZZ"])),
        ("lower-case card", _bad(CardDrawn(cards=("3H",)), cards=["3h"])),
        ("ten written as 10", _bad(CardTurned(column=0, card="TH"), card="10H")),
        ("four cards in one draw", _bad(CardDrawn(cards=("3H",)), cards=["AS", "2S", "3S", "4S"])),
        ("no cards in a draw", _bad(CardDrawn(cards=("3H",)), cards=[])),
        ("unknown card in a move", _bad(MOVED, cards=["1S"])),
        ("column 7", _bad(MOVED, to="tableau:7")),
        ("foundation 4", _bad(MOVED, to="foundation:4")),
        ("unknown pile", _bad(MOVED, **{"from": "hand"})),
        ("pile id with trailing newline", _bad(MOVED, to="tableau:1\n")),
        ("turned column 7", _bad(CardTurned(column=0, card="KS"), column=7)),
        ("negative winnings", _bad(COLLECTED, winnings=-50)),
        ("winnings as text", _bad(COLLECTED, winnings="2600")),
        ("winnings as a float", _bad(COLLECTED, winnings=2600.0)),
        ("winnings as a boolean", _bad(COLLECTED, winnings=True)),
        ("53 foundation cards", _bad(COLLECTED, foundation_count=53)),
        ("unknown collect reason", _bad(COLLECTED, reason="bonus")),
        ("lower-case currency", _bad(COLLECTED, currency="gbp")),
        ("short seed", _bad(COLLECTED, server_seed="00" * 31)),
        ("upper-case seed", _bad(COLLECTED, server_seed=SEED_HEX.upper())),
        ("negative refund", _bad(EXAMPLES[18], refund=-1)),
        ("empty void reason", _bad(EXAMPLES[18], reason="")),
        ("extra field", _bad(MOVED, extra=1)),
        ("extra field in a turn", _bad(CardTurned(column=0, card="KS"), note="x")),
        ("stake of zero", _bad(EXAMPLES[0], stake=0)),
        ("deck of 51", _bad(EXAMPLES[2], deck=list(shuffle.derive_deck(SEED))[:51])),
        ("bad commitment", _bad(EXAMPLES[2], seed_commitment="abc")),
        ("undo of a turn", _bad(EXAMPLES[14], action="turn")),
        ("waste fan of 4", _bad(EXAMPLES[14], waste_fan=4)),
        ("recycle of 0 cards", _bad(StockRecycled(cards=24, passes_left=2), cards=0)),
        ("empty auto-complete", _bad(EXAMPLES[15], moves=[])),
        (
            "auto move to column 9",
            _bad(EXAMPLES[15], moves=[{"from": "tableau:0", "to": "tableau:9", "card": "7S"}]),
        ),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_decode_refuses_malformed_data(case: str, stored: tuple[str, int, dict[str, Any]]) -> None:
    with pytest.raises(InvalidEvent):
        decode(*stored)


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_decode_refuses_each_missing_field(event: GameEvent) -> None:
    data = _valid(event)
    for key in data:
        partial = {k: v for k, v in data.items() if k != key}
        with pytest.raises(InvalidEvent) as info:
            decode(event.TYPE, event.VERSION, partial)
        assert key in info.value.messages


def test_invalid_event_names_the_type_and_the_field() -> None:
    with pytest.raises(InvalidEvent) as info:
        decode("Collected", 1, _bad(COLLECTED, winnings=-50)[2])
    assert "Collected" in str(info.value)
    assert set(info.value.messages) == {"winnings"}


# --- unknown types and versions -------------------------------------------------------------


def test_unknown_type_is_refused() -> None:
    with pytest.raises(UnknownEvent):
        decode("CardFlipped", 1, {"card": "AS"})


def test_type_names_are_case_sensitive() -> None:
    with pytest.raises(UnknownEvent):
        decode("cardmoved", 1, _valid(MOVED))


@pytest.mark.parametrize("cls", catalog.GAME_EVENT_TYPES, ids=lambda c: c.__name__)
def test_a_version_newer_than_this_code_is_refused(cls: type[GameEvent]) -> None:
    example = next(e for e in EXAMPLES if type(e) is cls)
    with pytest.raises(UnknownEvent):
        decode(cls.TYPE, cls.VERSION + 1, _valid(example))


@pytest.mark.parametrize("version", [0, -1])
def test_a_version_below_one_is_refused(version: int) -> None:
    with pytest.raises(UnknownEvent):
        decode("CardMoved", version, _valid(MOVED))


# --- upcasting ------------------------------------------------------------------------------


def test_card_drawn_v1_decodes_to_the_current_version() -> None:
    assert CardDrawn.VERSION == 2
    assert decode("CardDrawn", 1, {"card": "AS"}) == CardDrawn(cards=("AS",))


def test_upcast_turns_v1_data_into_v2_data() -> None:
    stored = {"card": "QH"}
    assert upcast("CardDrawn", 1, stored) == {"cards": ["QH"]}
    assert stored == {"card": "QH"}  # the stored data itself is never rewritten


def test_current_version_data_is_not_upcast() -> None:
    assert upcast("CardDrawn", 2, {"cards": ["QH"]}) == {"cards": ["QH"]}


def test_an_upcast_event_is_still_validated() -> None:
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, {"card": "ZZ"})
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, {"card": "AS", "extra": True})


@pytest.mark.parametrize("data", [{}, {"cards": ["AS"]}], ids=["empty", "v2-shape"])
def test_v1_data_missing_its_card_is_refused_as_invalid(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent):
        decode("CardDrawn", 1, data)


@pytest.mark.parametrize("data", [["waste"], "waste", None], ids=["list", "string", "null"])
def test_data_that_is_not_an_object_is_refused_as_invalid(data: Any) -> None:
    with pytest.raises(InvalidEvent):
        decode("CardMoved", 1, data)


def _as_v1(event: GameEvent) -> tuple[str, int, Any]:
    """How the first release stored a draw-one draw."""
    if isinstance(event, CardDrawn):
        assert len(event.cards) == 1
        return "CardDrawn", 1, {"card": event.cards[0]}
    return _stored(event)


def test_a_stream_with_v1_draws_folds_like_the_v2_stream() -> None:
    game, events = start()  # vegas-draw1 on the worked example's seed
    game, played = play(
        game,
        g.MoveCards("tableau:3", "foundation"),
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

    v2 = [decode_game(*_stored(e)) for e in stream]
    old = [decode_game(*_as_v1(e)) for e in stream]
    # Mixed: the first three draws were stored by the old release, the rest by the new one.
    draws = [i for i, e in enumerate(stream) if isinstance(e, CardDrawn)]
    mixed_records = [_as_v1(e) if i in draws[:3] else _stored(e) for i, e in enumerate(stream)]
    assert [r[1] for r in mixed_records if r[0] == "CardDrawn"] == [1, 1, 1, 2, 2, 2]
    mixed = [decode_game(*r) for r in mixed_records]
    assert v2 == mixed == old == stream
    assert g.fold(mixed) == g.fold(old) == g.fold(v2) == game
    assert game.status == "collected"
    assert game.foundation_count == 2
    assert game.payout == 100
    assert game.layout is not None
    assert game.layout.waste == ("3H", "4H", "KD", "8S")


# --- what the decider emits is storable ------------------------------------------------------


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
    assert exc.value.code == "seed-mismatch"


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_void_without_a_storable_reason_is_refused(reason: str) -> None:
    game, _ = start()
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Void(reason=reason, server_seed=SEED_HEX))
    assert exc.value.code == "invalid-reason"


def test_collect_with_an_unknown_reason_is_refused() -> None:
    game, _ = start()
    with pytest.raises(RuleViolation) as exc:
        g.decide(game, g.Collect(reason="bogus", server_seed=SEED_HEX))  # type: ignore[arg-type]
    assert exc.value.code == "invalid-reason"
