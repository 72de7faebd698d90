"""What a player may ask of a game: the play actions, each with its codec.

A game module says which of them it accepts; the generic decider hands them to it. Each action
is one class that carries everything said about it anywhere: its stable name (the ``action`` of
the API's generic command route and of the legal actions a view lists), the fields it takes
(required and allowed, as the API's schema reads them), how it is written as JSON
(:meth:`described`) and read back (:meth:`parsed`), and why it cannot be undone. The API's
schema, the views, the routes and the decider's undo refusal all read it from here, so a new
action is this one class (and the game that accepts it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class _Plain:
    """An action without fields: its JSON is its name alone."""

    NAME: ClassVar[str]
    #: The schema's field names (``source``/``target`` read ``from``/``to``).
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    ALLOWED: ClassVar[frozenset[str]] = frozenset()
    #: Why the decider refuses to undo it (the game's own undo rule follows).
    CANNOT_UNDO: ClassVar[str]

    def described(self) -> dict[str, Any]:
        return {"action": self.NAME}

    @classmethod
    def parsed(cls, fields: Mapping[str, Any]) -> PlayAction:
        return cls()  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Draw(_Plain):
    """Draw from the stock (or hand) by the game's rule."""

    NAME = "draw"
    CANNOT_UNDO = "cards drawn from the stock or hand cannot be put back"


@dataclass(frozen=True, slots=True)
class Recycle(_Plain):
    """Turn the waste back into the stock, order kept."""

    NAME = "recycle"
    CANNOT_UNDO = "recycling the stock cannot be undone"


@dataclass(frozen=True, slots=True)
class MoveCards:
    """Move cards from the top of one pile to another; ``count`` cards, or when omitted the
    one run that fits the destination."""

    source: str
    target: str
    count: int | None = None
    NAME: ClassVar[str] = "move"
    REQUIRED: ClassVar[frozenset[str]] = frozenset({"source", "target"})
    ALLOWED: ClassVar[frozenset[str]] = frozenset({"source", "target", "count"})
    CANNOT_UNDO: ClassVar[str] = "that move cannot be undone"

    def described(self) -> dict[str, Any]:
        return {"action": self.NAME, "from": self.source, "to": self.target, "count": self.count}

    @classmethod
    def parsed(cls, fields: Mapping[str, Any]) -> PlayAction:
        return cls(fields["source"], fields["target"], fields.get("count"))


@dataclass(frozen=True, slots=True)
class Turn:
    """Turn the face-down top card of a pile (games with an explicit turn)."""

    pile: str
    NAME: ClassVar[str] = "turn"
    # One of the two, checked by the schema: Vegas front-ends name the column.
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    ALLOWED: ClassVar[frozenset[str]] = frozenset({"pile", "column"})
    CANNOT_UNDO: ClassVar[str] = "turning a card face up cannot be undone"
    _COLUMN: ClassVar[str] = "tableau:"

    def described(self) -> dict[str, Any]:
        described: dict[str, Any] = {"action": self.NAME, "pile": self.pile}
        if self.pile.startswith(self._COLUMN):
            described["column"] = int(self.pile[len(self._COLUMN) :])
        return described

    @classmethod
    def parsed(cls, fields: Mapping[str, Any]) -> PlayAction:
        return cls(fields["pile"] if "pile" in fields else f"{cls._COLUMN}{fields['column']}")


@dataclass(frozen=True, slots=True)
class Remove:
    """Take two available cards whose ranks total 13, or a King alone, off the table."""

    piles: tuple[str, ...]
    NAME: ClassVar[str] = "remove"
    REQUIRED: ClassVar[frozenset[str]] = frozenset({"piles"})
    ALLOWED: ClassVar[frozenset[str]] = REQUIRED
    CANNOT_UNDO: ClassVar[str] = "that removal cannot be undone"

    def described(self) -> dict[str, Any]:
        return {"action": self.NAME, "piles": list(self.piles)}

    @classmethod
    def parsed(cls, fields: Mapping[str, Any]) -> PlayAction:
        return cls(tuple(fields["piles"]))


@dataclass(frozen=True, slots=True)
class Redeal(_Plain):
    """Gather the piles the game redeals and deal them again by its rule (shuffled with the
    game's seed, or in a fixed order)."""

    NAME = "redeal"
    CANNOT_UNDO = "a redeal cannot be undone"


@dataclass(frozen=True, slots=True)
class Pick:
    """Take ``card``, buried in ``source`` (not its top card), and play it onto ``target``:
    Three Shuffles and a Draw's once-per-game Draw."""

    source: str
    card: str
    target: str
    NAME: ClassVar[str] = "pick"
    REQUIRED: ClassVar[frozenset[str]] = frozenset({"source", "card", "target"})
    ALLOWED: ClassVar[frozenset[str]] = REQUIRED
    CANNOT_UNDO: ClassVar[str] = "the draw of a buried card cannot be undone"

    def described(self) -> dict[str, Any]:
        return {"action": self.NAME, "from": self.source, "card": self.card, "to": self.target}

    @classmethod
    def parsed(cls, fields: Mapping[str, Any]) -> PlayAction:
        return cls(fields["source"], fields["card"], fields["target"])


@dataclass(frozen=True, slots=True)
class Undo(_Plain):
    """Reverse the last action, where the game allows it."""

    NAME = "undo"
    CANNOT_UNDO = "an undo cannot itself be undone, and only the last action can be"


PlayAction = Draw | Recycle | MoveCards | Turn | Remove | Redeal | Pick | Undo

#: Every play action by name.
ACTIONS: dict[str, type[PlayAction]] = {
    cls.NAME: cls for cls in (Draw, Recycle, MoveCards, Turn, Remove, Redeal, Pick, Undo)
}


def describe(action: PlayAction) -> dict[str, Any]:
    """The action as the API names it: ``{"action": "move", "from": ..., "to": ..., ...}``."""
    return action.described()


def parse(name: str, fields: Mapping[str, Any]) -> PlayAction:
    """The action named ``name`` with its fields as the API's schemas read them (``source`` and
    ``target`` for ``from`` and ``to``; a Vegas turn may name its column): the other way of
    :func:`describe`. Every route and the generic ``actions`` route of games and duels read
    their actions here."""
    return ACTIONS[name].parsed(fields)
