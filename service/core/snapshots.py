"""A game's folded state as JSON, for the snapshot row a command writes every few versions, so a
process that has never seen a game loads one row and the few events after it, not the stream.

A snapshot is a cache of the fold, never a source of truth: the events are. It is written in the
transaction that appends the events it folds, stamped with the stream version it reflects and
with ``SHAPE`` (the state's field lists), so a snapshot written by code whose state looks
otherwise is ignored and the stream folded instead. Sealed cards stay sealed numbers, exactly as
in the state: a snapshot knows no card the player has not seen.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime
from typing import Any, cast

from events import codec
from events.catalog import GameEvent
from service.core import game_decider as g
from service.games import game_named
from service.rules.table import Pile, Slot, Table

#: How often (in stream versions) a command writes its game's snapshot row.
EVERY = 8


def _shape() -> str:
    described = [
        f"{cls.__name__}:{','.join(f.name for f in dataclasses.fields(cls))}"
        for cls in (g.Game, g.GameInfo, g.Ending, g.UndoRecord, Table, Pile)
    ]
    return hashlib.sha256(";".join(described).encode()).hexdigest()[:16]


#: The state's field lists, hashed: a snapshot of another shape is not read.
SHAPE = _shape()


def due(before: int, after: int) -> bool:
    """Whether a command taking a game from version ``before`` to ``after`` writes a snapshot:
    when it crosses a multiple of EVERY."""
    return after // EVERY > before // EVERY


def encode(state: g.Game) -> dict[str, Any]:
    info = state.info
    assert info is not None, "a game is snapshot once dealt"
    return {
        "shape": SHAPE,
        "status": state.status,
        "version": state.version,
        "info": _info(info),
        "table": None if state.table is None else _table(state.table),
        "undo": None if state.undo is None else _undo(state.undo),
        "last_action": state.last_action,
        "ending": None if state.ending is None else _ending(state.ending),
        "units": state.units,
    }


def decode(data: dict[str, Any]) -> g.Game | None:
    """The state a snapshot holds; None if it was written for another shape of state."""
    if data.get("shape") != SHAPE:
        return None
    info = _read_info(data["info"])
    rules = info.rules
    return g.Game(
        status=data["status"],
        version=data["version"],
        info=info,
        table=None if data["table"] is None else _read_table(rules.layout, data["table"]),
        undo=None if data["undo"] is None else _read_undo(rules.layout, data["undo"]),
        last_action=data["last_action"],
        ending=None if data["ending"] is None else _read_ending(data["ending"]),
        units=data["units"],
    )


def _info(info: g.GameInfo) -> dict[str, Any]:
    fields = {f.name: getattr(info, f.name) for f in dataclasses.fields(info)}
    fields["rules"] = info.rules.id
    fields["deadline"] = None if info.deadline is None else info.deadline.isoformat()
    return fields


def _read_info(data: dict[str, Any]) -> g.GameInfo:
    fields = dict(data)
    fields["rules"] = game_named(data["rules"])
    fields["legacy_deck"] = _cards(data["legacy_deck"])
    deadline = data["deadline"]
    fields["deadline"] = None if deadline is None else datetime.fromisoformat(deadline)
    return g.GameInfo(**fields)


def _table(table: Table) -> dict[str, Any]:
    return {
        "piles": [[list(p.cards), p.down] for p in table.piles],
        "passes_left": table.passes_left,
        "fan": table.fan,
        "picks_left": table.picks_left,
    }


def _read_table(layout: Any, data: dict[str, Any]) -> Table:
    piles = tuple(Pile(tuple(cast(list[Slot], cards)), down) for cards, down in data["piles"])
    return Table(layout, piles, data["passes_left"], data["fan"], data["picks_left"])


def _undo(undo: g.UndoRecord) -> dict[str, Any]:
    kind, version, event = codec.encode(undo.event)
    return {"type": kind, "schema_version": version, "event": event, "before": _table(undo.before)}


def _read_undo(layout: Any, data: dict[str, Any]) -> g.UndoRecord:
    event: GameEvent = codec.decode_game(data["type"], data["schema_version"], data["event"])
    return g.UndoRecord(cast(Any, event), _read_table(layout, data["before"]))


def _ending(ending: g.Ending) -> dict[str, Any]:
    return dataclasses.asdict(ending)


def _read_ending(data: dict[str, Any]) -> g.Ending:
    return g.Ending(**{**data, "deck": _cards(data["deck"])})


def _cards(cards: list[str] | None) -> tuple[str, ...] | None:
    return None if cards is None else tuple(cards)
