"""Who may deal what: the certification dealing policy, one rule for games and duels.

A player deals their own games and takes their own seats, always from the service's own seed.
An operator deals only in certification mode (the operator's deals are for the sandbox
currency, never real money), for a named player, from a given seed or deck: a game names
exactly one of them; a duel's join may name at most one (opening a duel with it; without one it
joins, or opens, a certification duel the service deals). Pure: the routes hand it what was
asked and who asked, and it says what to deal or why not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from service.errors import CertificationDisabled, InvalidArgument


@dataclass(frozen=True, slots=True)
class CertificationDeal:
    """Certification mode only: deal from this seed (hex) or this deck (deal order)."""

    seed_hex: str | None = None
    deck: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Dealing:
    """What to deal: whose game or seat, and an operator's certification deal (``certify``:
    an operator's, for the sandbox; ``deal``: from a given seed or deck)."""

    player_id: Any
    certify: bool = False
    deal: CertificationDeal | None = None


#: What only an operator's certification deal may name, by what is dealt.
_OPERATORS_ONLY = {"game": {"seed", "deck"}, "duel": {"seed", "deck", "certification"}}
#: How many of a seed or deck an operator's deal names, by what is dealt.
_GIVEN = {"game": ("exactly one", range(1, 2)), "duel": ("at most one", range(2))}
_VERB = {"game": "deals a game", "duel": "opens or joins a duel"}


def dealing(
    what: Literal["game", "duel"],
    asked: Mapping[str, Any],
    own_player_id: Any | None,
    certification_mode: bool,
) -> Dealing:
    """The deal ``asked`` for (a route's body) by a player (``own_player_id``) or an operator
    (None); CertificationDisabled or InvalidArgument when the policy refuses it."""
    if own_player_id is not None:
        others = asked.get("player_id") not in (None, own_player_id)
        if _OPERATORS_ONLY[what] & asked.keys() or others:
            raise CertificationDisabled(
                f"only an operator, in certification mode, {_VERB[what]} from a given seed or "
                "deck or for another player"
            )
        return Dealing(own_player_id)
    if not certification_mode:
        raise CertificationDisabled(f"an operator {_VERB[what]} only in certification mode")
    given = len({"seed", "deck"} & asked.keys())
    how_many, allowed = _GIVEN[what]
    if "player_id" not in asked or given not in allowed:
        raise InvalidArgument("player_id", f"required, with {how_many} of seed or deck")
    deck = tuple(asked["deck"]) if "deck" in asked else None
    deal = CertificationDeal(asked.get("seed"), deck) if given else None
    return Dealing(asked["player_id"], True, deal)
