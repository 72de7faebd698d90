"""Card moves: tableau building, foundations, kings to empty columns, and every refusal."""

from __future__ import annotations

import pytest

from events.catalog import CardMoved, GameEvent
from service import errors
from service.core import game_decider as g
from service.core.game_views import player_view
from service.errors import RuleViolation
from service.games import klondike
from service.games.klondike import VEGAS_DRAW1, Move
from service.rules.table import Pile, Table
from tests.builders import column, game_on, layout, pile, play

# A face-down column and a stock card keep auto-complete out of the way in hand-made layouts.
HIDDEN = "4C 9C|"
STOCK = "JC"


def _lay(tableau: list[str], **kwargs: object) -> Table:
    """A table with the given columns first and a face-down column last."""
    cols = [*tableau, *[""] * (6 - len(tableau)), HIDDEN]
    kwargs.setdefault("stock", STOCK)
    return layout(cols, **kwargs)  # type: ignore[arg-type]


def _move(
    lay: Table, source: str, target: str, count: int | None = None
) -> tuple[g.Game, list[GameEvent]]:
    return play(game_on(lay), g.MoveCards(source, target, count))


def _refused(lay: Table, source: str, target: str, count: int | None = None) -> str:
    game = game_on(lay)
    with pytest.raises(RuleViolation) as info:
        g.decide(game, g.MoveCards(source, target, count))
    return info.value.code


def _foundations(game: g.Game) -> list[Pile]:
    return [pile(game, f"foundation:{i}") for i in range(4)]


# --- waste --------------------------------------------------------------------------------------


def test_waste_top_card_moves_onto_a_column() -> None:
    game, events = _move(_lay(["3D|8H"], waste="AS 7C"), "waste", "tableau:0")
    assert events == [CardMoved("waste", "tableau:0", ("7C",))]
    assert pile(game, "tableau:0") == column("3D|8H 7C")
    assert pile(game, "waste") == Pile(("AS",))


def test_waste_top_card_moves_onto_a_foundation() -> None:
    game, events = _move(_lay([], foundations=["AH"], waste="KS 2H"), "waste", "foundation:0")
    assert events == [CardMoved("waste", "foundation:0", ("2H",))]
    assert pile(game, "foundation:0") == Pile(("AH", "2H"))
    assert pile(game, "waste") == Pile(("KS",))
    assert game.units == 2
    assert game.winnings == 2 * 50


def test_only_the_top_waste_card_is_played() -> None:
    # 2H beneath would fit the foundation, but the top card 5S is the one taken.
    code = _refused(_lay([], foundations=["AH"], waste="2H 5S"), "waste", "foundation:0")
    assert code == errors.FOUNDATION_WRONG_SUIT


# --- column to column ---------------------------------------------------------------------------


def test_column_single_card_moves_onto_one_rank_higher_opposite_colour() -> None:
    game, events = _move(_lay(["3S|9D", "|TC"]), "tableau:0", "tableau:1")
    assert events == [CardMoved("tableau:0", "tableau:1", ("9D",))]
    assert pile(game, "tableau:0") == column("3S|")  # nothing turns by itself
    assert pile(game, "tableau:1") == column("|TC 9D")


def test_column_whole_run_moves_with_explicit_count() -> None:
    game, events = _move(_lay(["4S|9D 8C 7H", "|TS"]), "tableau:0", "tableau:1", 3)
    assert events == [CardMoved("tableau:0", "tableau:1", ("9D", "8C", "7H"))]
    assert pile(game, "tableau:0") == column("4S|")
    assert pile(game, "tableau:1") == column("|TS 9D 8C 7H")


def test_column_split_moves_a_middle_card_with_the_cards_on_it() -> None:
    game, events = _move(_lay(["4S|9D 8C 7H", "2D|9H"]), "tableau:0", "tableau:1", 2)
    assert events == [CardMoved("tableau:0", "tableau:1", ("8C", "7H"))]
    assert pile(game, "tableau:0") == column("4S|9D")
    assert pile(game, "tableau:1") == column("2D|9H 8C 7H")


def test_column_omitted_count_takes_the_one_run_that_fits_a_split() -> None:
    _, events = _move(_lay(["4S|9D 8C 7H", "2D|9H"]), "tableau:0", "tableau:1")
    assert events == [CardMoved("tableau:0", "tableau:1", ("8C", "7H"))]


def test_column_omitted_count_takes_the_whole_run_when_it_fits() -> None:
    _, events = _move(_lay(["4S|9D 8C 7H", "|TS"]), "tableau:0", "tableau:1")
    assert events == [CardMoved("tableau:0", "tableau:1", ("9D", "8C", "7H"))]


def test_column_omitted_count_takes_only_the_top_card_when_only_it_fits() -> None:
    _, events = _move(_lay(["4S|9D 8C 7H", "|8S"]), "tableau:0", "tableau:1")
    assert events == [CardMoved("tableau:0", "tableau:1", ("7H",))]


def test_column_explicit_count_whose_bottom_card_does_not_fit_is_refused() -> None:
    # 8C 7H would fit on 9H, but count 3 asks for 9D 8C 7H and 9D cannot go on 9H.
    code = _refused(_lay(["4S|9D 8C 7H", "2D|9H"]), "tableau:0", "tableau:1", 3)
    assert code == errors.NOT_ONE_RANK_LOWER


def test_king_with_its_run_moves_to_an_empty_column() -> None:
    game, events = _move(_lay(["4S|KH QC JD", ""]), "tableau:0", "tableau:1")
    assert events == [CardMoved("tableau:0", "tableau:1", ("KH", "QC", "JD"))]
    assert pile(game, "tableau:0") == column("4S|")
    assert pile(game, "tableau:1") == column("|KH QC JD")


def test_king_from_the_waste_moves_to_an_empty_column() -> None:
    game, events = _move(_lay(["", "3S|8D"], waste="KH"), "waste", "tableau:0")
    assert events == [CardMoved("waste", "tableau:0", ("KH",))]
    assert pile(game, "tableau:0") == column("|KH")


# --- columns and foundations --------------------------------------------------------------------


def test_column_top_card_moves_to_a_foundation() -> None:
    game, events = _move(_lay(["4S|2D"], foundations=["AD"]), "tableau:0", "foundation:0")
    assert events == [CardMoved("tableau:0", "foundation:0", ("2D",))]
    assert pile(game, "foundation:0") == Pile(("AD", "2D"))
    assert pile(game, "tableau:0") == column("4S|")


def test_column_to_foundation_takes_the_top_card_of_a_run() -> None:
    game, events = _move(_lay(["|3S 2D"], foundations=["AD"]), "tableau:0", "foundation:0")
    assert events == [CardMoved("tableau:0", "foundation:0", ("2D",))]
    assert pile(game, "tableau:0") == column("|3S")


def test_foundation_top_card_moves_back_onto_a_column() -> None:
    lay = _lay(["|4H"], foundations=["AS 2S 3S"])
    before = game_on(lay).winnings
    game, events = _move(lay, "foundation:0", "tableau:0")
    assert events == [CardMoved("foundation:0", "tableau:0", ("3S",))]
    assert pile(game, "foundation:0") == Pile(("AS", "2S"))
    assert pile(game, "tableau:0") == column("|4H 3S")
    assert (before, game.winnings) == (150, 100)
    assert game.units == 2


def test_foundation_king_moves_back_to_an_empty_column() -> None:
    lay = _lay([""], foundations=["AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"])
    game, events = _move(lay, "foundation:0", "tableau:0")
    assert events == [CardMoved("foundation:0", "tableau:0", ("KS",))]
    assert pile(game, "tableau:0") == column("|KS")


def test_an_ace_may_start_any_empty_foundation() -> None:
    game, events = _move(_lay([], waste="AS"), "waste", "foundation:3")
    assert events == [CardMoved("waste", "foundation:3", ("AS",))]
    assert _foundations(game) == [Pile(), Pile(), Pile(), Pile(("AS",))]


def test_a_foundation_started_with_any_ace_builds_in_that_suit() -> None:
    lay = _lay(["|2H"], foundations=["", "", "AH"])
    _, events = _move(lay, "tableau:0", "foundation:2")
    assert events == [CardMoved("tableau:0", "foundation:2", ("2H",))]


def test_any_foundation_sends_a_card_to_its_suit_pile() -> None:
    lay = _lay([], foundations=["AS", "AH 2H"], waste="3H")
    game, events = _move(lay, "waste", "foundation")
    assert events == [CardMoved("waste", "foundation:1", ("3H",))]
    assert pile(game, "foundation:1") == Pile(("AH", "2H", "3H"))


def test_any_foundation_sends_an_ace_to_the_first_empty_pile() -> None:
    lay = _lay([], foundations=["AS", "", "AH"], waste="AD")
    _, events = _move(lay, "waste", "foundation")
    assert events == [CardMoved("waste", "foundation:1", ("AD",))]


def test_any_foundation_works_from_a_column() -> None:
    lay = _lay(["5D|2S"], foundations=["AH", "AS"])
    _, events = _move(lay, "tableau:0", "foundation")
    assert events == [CardMoved("tableau:0", "foundation:1", ("2S",))]


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("tableau:7", "tableau:0"),
        ("tableau:0", "tableau:7"),
        ("foundation:4", "tableau:0"),
        ("waste", "foundation:4"),
        ("hand", "tableau:0"),
        ("tableau:0", "Tableau:1"),
        ("tableau:-1", "tableau:0"),
    ],
)
def test_unknown_pile_is_refused(source: str, target: str) -> None:
    assert _refused(_lay(["|8D", "|9S"], waste="KH"), source, target) == errors.UNKNOWN_PILE


def test_moving_from_the_stock_is_refused_invalid_source() -> None:
    assert _refused(_lay(["|KH"], stock="QS"), "stock", "tableau:0") == errors.INVALID_SOURCE


def test_moving_from_bare_foundation_is_refused_invalid_source() -> None:
    lay = _lay(["|3D"], foundations=["AS 2S"])
    assert _refused(lay, "foundation", "tableau:0") == errors.INVALID_SOURCE


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("tableau:0", "waste"),
        ("waste", "stock"),
        ("tableau:0", "stock"),
        ("foundation:0", "foundation:1"),
        ("foundation:0", "foundation"),
    ],
)
def test_invalid_destination_is_refused(source: str, target: str) -> None:
    lay = _lay(["|AD"], foundations=["AS"], waste="AH")
    assert _refused(lay, source, target) == errors.INVALID_DESTINATION


@pytest.mark.parametrize("pile", ["tableau:0", "waste", "foundation:0", "foundation"])
def test_same_pile_is_refused(pile: str) -> None:
    lay = _lay(["|KD"], foundations=["AS"], waste="QS")
    assert _refused(lay, pile, pile) == errors.SAME_PILE


def test_moving_from_an_empty_column_is_refused_source_empty() -> None:
    assert _refused(_lay(["|KD", ""]), "tableau:1", "tableau:0") == errors.SOURCE_EMPTY


def test_moving_from_an_empty_foundation_is_refused_source_empty() -> None:
    lay = _lay(["|3D"], foundations=["AS 2S"])
    assert _refused(lay, "foundation:2", "tableau:0") == errors.SOURCE_EMPTY


def test_moving_from_a_face_down_top_card_is_refused_source_face_down() -> None:
    assert _refused(_lay(["5D 7S|", "|8H"]), "tableau:0", "tableau:1") == errors.SOURCE_FACE_DOWN


def test_moving_from_an_empty_waste_is_refused_waste_empty() -> None:
    assert _refused(_lay(["|8H"], waste=""), "waste", "tableau:0") == errors.WASTE_EMPTY


@pytest.mark.parametrize(
    ("source", "target", "count"),
    [
        ("tableau:0", "tableau:1", 0),  # at least one card
        ("tableau:0", "tableau:1", -1),
        ("tableau:0", "tableau:1", 4),  # only three face up
        ("waste", "tableau:2", 2),  # only the top waste card
        ("tableau:0", "foundation:0", 2),  # one card at a time to a foundation
        ("tableau:0", "foundation", 2),
        ("foundation:0", "tableau:2", 2),  # only the top foundation card
    ],
)
def test_invalid_count_is_refused(source: str, target: str, count: int) -> None:
    lay = _lay(["4S|9D 8C 7H", "|TS", "|3C"], foundations=["AD"], waste="2H 2D")
    assert _refused(lay, source, target, count) == errors.INVALID_COUNT


def test_card_not_one_rank_lower_is_refused() -> None:
    assert _refused(_lay(["|7H", "|9S"]), "tableau:0", "tableau:1") == errors.NOT_ONE_RANK_LOWER


def test_card_of_the_same_colour_is_refused_not_opposite_colour() -> None:
    assert _refused(_lay(["|8H", "|9D"]), "tableau:0", "tableau:1") == errors.NOT_OPPOSITE_COLOUR


def test_same_colour_black_on_black_is_refused_not_opposite_colour() -> None:
    code = _refused(_lay(["|9C"], waste="8S"), "waste", "tableau:0")
    assert code == errors.NOT_OPPOSITE_COLOUR


def test_non_king_to_an_empty_column_is_refused() -> None:
    code = _refused(_lay(["5S|QH JC", ""]), "tableau:0", "tableau:1")
    assert code == errors.ONLY_KING_TO_EMPTY_COLUMN


def test_non_king_from_the_waste_to_an_empty_column_is_refused() -> None:
    assert (
        _refused(_lay([""], waste="QH"), "waste", "tableau:0") == errors.ONLY_KING_TO_EMPTY_COLUMN
    )


def test_non_king_from_a_foundation_to_an_empty_column_is_refused() -> None:
    lay = _lay([""], foundations=["AS 2S"])
    assert _refused(lay, "foundation:0", "tableau:0") == errors.ONLY_KING_TO_EMPTY_COLUMN


def test_building_on_a_face_down_top_card_is_refused_destination_face_down() -> None:
    code = _refused(_lay(["|7H", "5D 8S|"]), "tableau:0", "tableau:1")
    assert code == errors.DESTINATION_FACE_DOWN


def test_non_ace_to_an_empty_foundation_is_refused_foundation_needs_ace() -> None:
    assert _refused(_lay(["|2S"]), "tableau:0", "foundation:0") == errors.FOUNDATION_NEEDS_ACE


def test_wrong_suit_on_a_foundation_is_refused() -> None:
    lay = _lay([], foundations=["AS"], waste="2H")
    assert _refused(lay, "waste", "foundation:0") == errors.FOUNDATION_WRONG_SUIT


def test_wrong_rank_on_a_foundation_is_refused() -> None:
    lay = _lay([], foundations=["AS"], waste="3S")
    assert _refused(lay, "waste", "foundation:0") == errors.FOUNDATION_WRONG_RANK


def test_card_fitting_no_foundation_is_refused_no_foundation_fits() -> None:
    lay = _lay(["|3S"], foundations=["AS", "AH 2H"])
    assert _refused(lay, "tableau:0", "foundation") == errors.NO_FOUNDATION_FITS


def test_non_ace_with_all_foundations_empty_fits_no_foundation() -> None:
    assert _refused(_lay([], waste="2D"), "waste", "foundation") == errors.NO_FOUNDATION_FITS


def test_a_refused_move_emits_nothing_and_leaves_the_game_as_it_was() -> None:
    lay = _lay(["|8H", "|9D"])
    game = game_on(lay)
    with pytest.raises(RuleViolation) as info:
        g.decide(game, g.MoveCards("tableau:0", "tableau:1"))
    assert info.value.code == errors.NOT_OPPOSITE_COLOUR
    assert game.table == lay
    assert (game.version, game.last_action, game.undo) == (2, "deal", None)


# --- what the player can do ---------------------------------------------------------------------


def _small_layout() -> Table:
    return layout(
        ["3C|8H 7S", "|9C", "", "4C|KD", "|3H", "|AH", "5H 6C|"],
        foundations=["AS 2S"],
        waste="2D 6H",
        stock="5C",
    )


def test_legal_moves_lists_every_allowed_move_exactly() -> None:
    assert klondike.legal_moves(_small_layout()) == [
        Move("waste", "tableau:0", ("6H",)),
        Move("tableau:0", "tableau:1", ("8H", "7S")),
        Move("tableau:3", "tableau:2", ("KD",)),
        Move("tableau:5", "foundation:1", ("AH",)),
        Move("tableau:5", "foundation:2", ("AH",)),
        Move("tableau:5", "foundation:3", ("AH",)),
        Move("foundation:0", "tableau:4", ("2S",)),
    ]


def test_every_legal_move_is_accepted_as_listed() -> None:
    lay = _small_layout()
    for move in klondike.legal_moves(lay):
        assert VEGAS_DRAW1.resolve_move(lay, move.source, move.target, len(move.cards)) == move


def test_legal_moves_is_empty_when_nothing_fits() -> None:
    lay = layout(["2C|9H", "|5S", "7D 8D|"], foundations=["AC"], waste="4S", stock="6D")
    assert klondike.legal_moves(lay) == []


@pytest.mark.parametrize(
    ("lay", "playable"),
    [
        pytest.param(layout(["|9C"], waste=""), False, id="empty-waste"),
        pytest.param(layout(["|9C"], waste="AD"), True, id="ace-to-empty-foundation"),
        pytest.param(layout(["|9C"], foundations=["AD"], waste="2D"), True, id="foundation"),
        pytest.param(layout(["|9C"], waste="8D"), True, id="column"),
        pytest.param(layout(["|9C", ""], waste="KD"), True, id="king-to-empty-column"),
        pytest.param(
            layout(["|9C", "|QS", "2C|", "3C|", "4C|", "5C|", "6C|"], waste="KD"),
            False,
            id="king-no-empty-column",
        ),
        pytest.param(layout(["|9C"], waste="8D 5S"), False, id="only-the-top-card-counts"),
        pytest.param(layout(["|9C"], foundations=["AS"], waste="3S"), False, id="fits-nowhere"),
        pytest.param(layout(["|9C"], waste="8C"), False, id="same-colour"),
        pytest.param(layout(["7D 9S|"], waste="8D"), False, id="face-down-top-not-a-target"),
    ],
)
def test_waste_playable_arrow(lay: Table, playable: bool) -> None:
    assert player_view(game_on(lay))["waste_playable"] is playable
