"""What a player may ask of a game: the play actions, as plain data.

A game module says which of them it accepts; the generic decider hands them to it. Each has a
stable name, which is also the ``action`` of the API's generic command route and of the legal
actions a view lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw from the stock (or hand) by the game's rule."""

    NAME = "draw"


@dataclass(frozen=True, slots=True)
class Recycle:
    """Turn the waste back into the stock, order kept."""

    NAME = "recycle"


@dataclass(frozen=True, slots=True)
class MoveCards:
    """Move cards from the top of one pile to another; ``count`` cards, or when omitted the
    one run that fits the destination."""

    source: str
    target: str
    count: int | None = None
    NAME = "move"


@dataclass(frozen=True, slots=True)
class Turn:
    """Turn the face-down top card of a pile (games with an explicit turn)."""

    pile: str
    NAME = "turn"


@dataclass(frozen=True, slots=True)
class Remove:
    """Take two available cards whose ranks total 13, or a King alone, off the table."""

    piles: tuple[str, ...]
    NAME = "remove"


@dataclass(frozen=True, slots=True)
class Redeal:
    """Gather the piles the game redeals and deal them again by its rule (shuffled with the
    game's seed, or in a fixed order)."""

    NAME = "redeal"


@dataclass(frozen=True, slots=True)
class Pick:
    """Take ``card``, buried in ``source`` (not its top card), and play it onto ``target``:
    Three Shuffles and a Draw's once-per-game Draw."""

    source: str
    card: str
    target: str
    NAME = "pick"


@dataclass(frozen=True, slots=True)
class Undo:
    """Reverse the last action, where the game allows it."""

    NAME = "undo"


PlayAction = Draw | Recycle | MoveCards | Turn | Remove | Redeal | Pick | Undo

#: Every play action by name.
ACTIONS: dict[str, type[PlayAction]] = {
    cls.NAME: cls for cls in (Draw, Recycle, MoveCards, Turn, Remove, Redeal, Pick, Undo)
}


def describe(action: PlayAction) -> dict[str, Any]:
    """The action as the API names it: ``{"action": "move", "from": ..., "to": ..., ...}``."""
    if isinstance(action, MoveCards):
        return {"action": "move", "from": action.source, "to": action.target, "count": action.count}
    if isinstance(action, Turn):
        described: dict[str, Any] = {"action": "turn", "pile": action.pile}
        if action.pile.startswith("tableau:"):
            described["column"] = int(action.pile[8:])  # Vegas front-ends name the column
        return described
    if isinstance(action, Remove):
        return {"action": "remove", "piles": list(action.piles)}
    if isinstance(action, Pick):
        return {"action": "pick", "from": action.source, "card": action.card, "to": action.target}
    return {"action": action.NAME}


def parse(name: str, fields: Mapping[str, Any]) -> PlayAction:
    """The action named ``name`` with its fields as the API's schemas read them (``source`` and
    ``target`` for ``from`` and ``to``; a Vegas turn may name its column): the other way of
    :func:`describe`, so an action's two spellings live side by side. Every route and the
    generic ``actions`` route of games and duels read their actions here."""
    if name == "turn":
        pile = fields["pile"] if "pile" in fields else f"tableau:{fields['column']}"
        return Turn(pile)
    if name == "move":
        return MoveCards(fields["source"], fields["target"], fields.get("count"))
    if name == "remove":
        return Remove(tuple(fields["piles"]))
    if name == "pick":
        return Pick(fields["source"], fields["card"], fields["target"])
    plain: dict[str, PlayAction] = {
        "draw": Draw(),
        "recycle": Recycle(),
        "redeal": Redeal(),
        "undo": Undo(),
    }
    return plain[name]
