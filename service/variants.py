"""The two Vegas Klondike variants and the version of the rules this code implements."""

from __future__ import annotations

from dataclasses import dataclass

from service import errors
from service.errors import RuleViolation

#: Recorded in every StakePlaced; bump it whenever a rule's behaviour changes.
RULES_VERSION = "vegas-klondike/1"


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    draw_count: int  # cards moved from stock to waste by one draw
    passes: int  # passes through the stock, the first one included
    title: str


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("vegas-draw1", draw_count=1, passes=1, title="Vegas Klondike, draw one, one pass"),
        Variant(
            "vegas-draw3", draw_count=3, passes=3, title="Vegas Klondike, draw three, three passes"
        ),
    )
}


def variant_named(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        known = ", ".join(sorted(VARIANTS))
        raise RuleViolation(
            errors.UNKNOWN_VARIANT, f"unknown variant {name!r}; choose one of {known}"
        ) from None
