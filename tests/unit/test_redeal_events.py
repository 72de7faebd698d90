"""The fold of the redeal and buried-card events, written once for every game: what each one
does to a table, and the records that cannot have happened (an auditor is told, never handed a
folded nonsense table)."""

from __future__ import annotations

import pytest

from events.catalog import CardPicked, DealtPile, PilesGathered, Reshuffled
from service.rules import fold
from service.rules.table import Layout, Pile, PileSpec, Table, numbered, table

LAYOUT = Layout([PileSpec("stock", "stock"), *numbered("foundation", 1), *numbered("line", 3)])


def lay(stock: str = "", **lines: str) -> Table:
    """``lay(line_0="KS 2H")``: lines face up, bottom first; the stock face down, next first."""
    piles = {k.replace("_", ":"): Pile(tuple(v.split())) for k, v in lines.items()}
    cards = tuple(stock.split())[::-1]
    piles["stock"] = Pile(cards, len(cards))
    return table(LAYOUT, piles, passes_left=3, picks_left=1)


def test_gathering_lays_the_piles_face_down_first_gathered_drawn_first() -> None:
    before = lay(line_0="KS 2H", line_2="7C")
    event = PilesGathered(("line:2", "line:1", "line:0"), "stock", ("7C", "KS", "2H"), 2)
    assert fold.misfit(before, event) is None
    after = fold.apply(before, event)
    assert after.pile("stock") == Pile(("2H", "KS", "7C"), 3)  # 7C on top: drawn first
    assert all(not after.pile(f"line:{i}").cards for i in range(3))
    assert (after.passes_left, after.picks_left) == (2, 1)
    assert fold.reveals(before, event) == []  # every card gathered was face up


@pytest.mark.parametrize(
    ("before", "event", "why"),
    [
        (
            lay(line_0="KS 2H"),
            PilesGathered(("line:0", "line:0"), "stock", ("KS", "2H"), 2),
            "each pile once",
        ),
        (
            lay(line_0="KS 2H"),
            PilesGathered(("line:0",), "stock", ("2H", "KS"), 2),
            "in that order",
        ),
        (lay(line_0="KS 2H"), PilesGathered(("line:0",), "stock", ("KS",), 2), "in that order"),
        (lay(line_0="KS 2H"), PilesGathered(("line:0",), "line:0", ("KS", "2H"), 2), "empty pile"),
        (
            lay("QD", line_0="KS 2H"),
            PilesGathered(("line:0",), "stock", ("KS", "2H"), 2),
            "empty pile",
        ),
        (lay("QD"), PilesGathered(("stock",), "line:1", ("QD",), 2), "face-down"),
    ],
)
def test_a_gathering_that_cannot_have_happened_is_a_misfit(
    before: Table, event: PilesGathered, why: str
) -> None:
    problem = fold.misfit(before, event)
    assert problem is not None
    assert why in problem


def test_a_reshuffle_deals_the_gathered_cards_face_up_onto_the_piles_named() -> None:
    before = lay(line_0="KS 2H", line_1="7C")
    event = Reshuffled(
        "redeal-1",
        ("line:0", "line:1", "line:2"),
        (DealtPile("line:0", 0, ("7C", "2H")), DealtPile("line:1", 0, ("KS",))),
        2,
    )
    assert fold.misfit(before, event) is None
    after = fold.apply(before, event)
    assert [after.pile(f"line:{i}") for i in range(3)] == [
        Pile(("7C", "2H")),
        Pile(("KS",)),
        Pile(),
    ]
    assert after.passes_left == 2


@pytest.mark.parametrize(
    ("piles", "why"),
    [
        ((DealtPile("line:0", 0, ("7C", "2H", "AS")),), "not the cards gathered"),
        ((DealtPile("line:0", 0, ("7C",)),), "not the cards gathered"),
        ((DealtPile("line:0", 1, ("7C", "2H", "KS")),), "face up"),
        ((DealtPile("foundation:0", 0, ("7C", "2H", "KS")),), "piles it gathered"),
        (
            (DealtPile("line:0", 0, ("7C",)), DealtPile("line:0", 0, ("2H", "KS"))),
            "each pile once",
        ),
    ],
)
def test_a_reshuffle_that_cannot_have_happened_is_a_misfit(
    piles: tuple[DealtPile, ...], why: str
) -> None:
    before = lay(line_0="KS 2H", line_1="7C")
    event = Reshuffled("redeal-1", ("line:0", "line:1"), piles, 2)
    problem = fold.misfit(before, event)
    assert problem is not None
    assert why in problem


def test_a_picked_card_leaves_from_inside_its_pile_and_lands_on_top() -> None:
    before = lay(line_0="KS 2H 9C", line_1="3H")
    event = CardPicked("line:0", 1, "2H", "line:1", 0)
    assert fold.misfit(before, event) is None
    after = fold.apply(before, event)
    assert after.pile("line:0") == Pile(("KS", "9C"))
    assert after.pile("line:1") == Pile(("3H", "2H"))
    assert after.picks_left == 0
    onto_itself = fold.apply(before, CardPicked("line:0", 0, "KS", "line:0", 0))
    assert onto_itself.pile("line:0") == Pile(("2H", "9C", "KS"))


@pytest.mark.parametrize(
    "event",
    [
        CardPicked("line:0", 1, "9C", "line:1", 0),  # another card lies there
        CardPicked("line:0", 3, "2H", "line:1", 0),  # past the top
        CardPicked("stock", 0, "QD", "line:1", 0),  # face down
        CardPicked("line:0", 1, "2H", "nowhere", 0),  # not this game's pile
    ],
)
def test_a_pick_that_cannot_have_happened_is_a_misfit(event: CardPicked) -> None:
    assert fold.misfit(lay("QD", line_0="KS 2H 9C"), event) is not None
