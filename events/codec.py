"""Encoding events for storage and decoding them back, upcasting older schema versions on read.

Stored events are never rewritten. When an event's shape changes, its ``VERSION`` goes up and an
upcaster here turns the previous version's data into the next; decoding runs the chain from the
stored version to the current one, then validates with the current schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from marshmallow import ValidationError

from events import catalog
from events.catalog import DUEL_EVENT_TYPES, GAME_EVENT_TYPES, AnyEvent, DuelEvent, GameEvent
from events.fast_load import DEFER, compile_all
from events.schemas import SCHEMAS

EventData = dict[str, Any]
Upcaster = Callable[[EventData], EventData]

CATALOG: dict[str, type[AnyEvent]] = {cls.TYPE: cls for cls in catalog.ALL_EVENT_TYPES}
#: Each schema's compiled loader, where it has one (events.fast_load).
FAST = compile_all(SCHEMAS)


class UnknownEvent(Exception):
    """A stored event this code cannot read: an unknown type, or a version with no upcaster."""


class InvalidEvent(Exception):
    """Event data that does not match its schema."""

    def __init__(self, type_name: str, messages: Any) -> None:
        super().__init__(f"{type_name}: {messages}")
        self.messages = messages


def _without(data: EventData, *names: str) -> EventData:
    return {k: v for k, v in data.items() if k not in names}


def _stake_placed_v1_to_v2(data: EventData) -> EventData:
    # v1 existed only for Vegas Klondike: the draw count and passes follow from the variant,
    # and its win rate was stake x 5 / 52, i.e. a full win of 52 cards paying 5 x the stake.
    return {
        **_without(data, "draw_count", "passes", "win_rate"),
        "multiplier": "5",
        "max_units": 52,
    }


def _stake_placed_v2_to_v3(data: EventData) -> EventData:
    # Duels came with v3: every earlier game was an ordinary one.
    return {**data, "duel_id": None}


def _dealt_v1_to_v2(data: EventData) -> EventData:
    # v1 recorded the whole deck in clear; v2 records only what the deal shows. A v1 deal
    # keeps its deck (it is what was recorded) and has no pile record.
    return {**data, "piles": None}


def _card_drawn_v1_to_v2(data: EventData) -> EventData:
    # v1 recorded one card per event, from when only draw-one existed; v2 records a whole draw.
    return {**_without(data, "card"), "cards": [data["card"]]}


def _card_drawn_v2_to_v3(data: EventData) -> EventData:
    # Until v3 only Klondike drew, always from the stock onto the waste.
    return {**data, "from": "stock", "to": "waste"}


def _card_turned_v1_to_v2(data: EventData) -> EventData:
    # v1 turned Klondike's columns only, named by number.
    return {**_without(data, "column"), "pile": f"tableau:{int(data['column'])}"}


def _undone_v1_to_v2(data: EventData) -> EventData:
    # v1 undid one move and carried Klondike's waste fan, which the fold now restores from the
    # state before the undone action.
    move = {"from": data["from"], "to": data["to"], "cards": data["cards"]}
    return {"action": data["action"], "moves": [move]}


def _collected_v1_to_v2(data: EventData) -> EventData:
    # Vegas's units were the cards on the foundations; v1 games were never given decks to
    # reveal (a certification deck was recorded in clear by its v1 Dealt).
    return {**_without(data, "foundation_count"), "units": data["foundation_count"], "deck": None}


def _collected_v2_to_v3(data: EventData) -> EventData:
    # Timed games came with v3; no earlier game had a clock.
    return {**data, "ended_at": None}


def _voided_v1_to_v2(data: EventData) -> EventData:
    return {**data, "deck": None}


#: (type name, version) -> function producing the data of version + 1.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("StakePlaced", 1): _stake_placed_v1_to_v2,
    ("StakePlaced", 2): _stake_placed_v2_to_v3,
    ("Dealt", 1): _dealt_v1_to_v2,
    ("CardDrawn", 1): _card_drawn_v1_to_v2,
    ("CardDrawn", 2): _card_drawn_v2_to_v3,
    ("CardTurned", 1): _card_turned_v1_to_v2,
    ("Undone", 1): _undone_v1_to_v2,
    ("Collected", 1): _collected_v1_to_v2,
    ("Collected", 2): _collected_v2_to_v3,
    ("Voided", 1): _voided_v1_to_v2,
}


def encode(event: AnyEvent) -> tuple[str, int, EventData]:
    """Type name, schema version and JSON-ready data for one event."""
    data: EventData = SCHEMAS[type(event)].dump(event)
    return event.TYPE, event.VERSION, data


def upcast(type_name: str, version: int, data: Mapping[str, Any]) -> EventData:
    """Bring stored data of any known version up to the type's current version."""
    cls = CATALOG.get(type_name)
    if cls is None:
        raise UnknownEvent(f"unknown event type {type_name!r}")
    if version > cls.VERSION or version < 1:
        raise UnknownEvent(f"{type_name} v{version} is not a version this code knows")
    if not isinstance(data, Mapping):
        raise InvalidEvent(type_name, {"_schema": ["event data must be a JSON object"]})
    current = dict(data)
    while version < cls.VERSION:
        step = UPCASTERS.get((type_name, version))
        if step is None:
            raise UnknownEvent(f"no upcaster for {type_name} v{version}")
        try:
            current = step(current)
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidEvent(
                type_name, {"_schema": [f"v{version} data cannot be upcast: {exc!r}"]}
            ) from exc
        version += 1
    return current


def decode(type_name: str, version: int, data: Mapping[str, Any]) -> AnyEvent:
    """The catalog event for stored (type, version, data), upcast and validated: by the
    schema's compiled loader (events.fast_load) when it can vouch for the schema's answer,
    else by the schema itself."""
    cls = CATALOG.get(type_name)
    loader = FAST.get(cls) if cls is not None and version == cls.VERSION else None
    if loader is not None:
        fast: AnyEvent = loader(data)
        if fast is not DEFER:
            return fast
    current = upcast(type_name, version, data)
    cls = CATALOG[type_name]
    try:
        event: AnyEvent = SCHEMAS[cls].load(current)
    except ValidationError as exc:
        raise InvalidEvent(type_name, exc.messages) from exc
    return event


def decode_game(type_name: str, version: int, data: Mapping[str, Any]) -> GameEvent:
    """Like :func:`decode`, for a game stream: any other kind of event is refused."""
    event = decode(type_name, version, data)
    if not isinstance(event, GAME_EVENT_TYPES):
        raise UnknownEvent(f"{type_name} is not a game event")
    return event


def decode_duel(type_name: str, version: int, data: Mapping[str, Any]) -> DuelEvent:
    """Like :func:`decode`, for a duel stream: any other kind of event is refused."""
    event = decode(type_name, version, data)
    if not isinstance(event, DUEL_EVENT_TYPES):
        raise UnknownEvent(f"{type_name} is not a duel event")
    return event
