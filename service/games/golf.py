"""Golf (seed 004): clear the seven columns onto the waste, one rank up or down at a time.

Deal: 7 columns of 5 cards, all face up, dealt row by row, left to right; the next card turns
face up onto the waste and the other 16 are the stock, the next card in deal order on top. The
top card of any column goes onto the waste when it is one rank above or below the waste's top
card, suits ignored, with no wrapping: nothing goes on a King, and only a 2 goes on an Ace.
Draw turns the stock's next card onto the waste, one at a time, one pass. Units are the cards
cleared from the columns. Pile ids: ``stock``, ``waste``, ``tableau:0``..``tableau:6``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved, GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules import stock
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle
from service.rules.building import is_king, rank_adjacent
from service.rules.cards import Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Layout, Pile, PileSpec, Table, numbered

COLUMNS = 7
ROWS = 5
TABLEAU_CARDS = COLUMNS * ROWS  # 35

STOCK = "stock"
WASTE = "waste"
TABLEAU_PILES = tuple(f"tableau:{i}" for i in range(COLUMNS))

LAYOUT = Layout([PileSpec(STOCK, "stock"), PileSpec(WASTE, "waste"), *numbered("tableau", COLUMNS)])
S, W = LAYOUT.index[STOCK], LAYOUT.index[WASTE]
T = tuple(LAYOUT.index[p] for p in TABLEAU_PILES)


def fits_waste(card: Card, waste_top: Card | None) -> bool:
    """May ``card`` go onto a waste whose top card is ``waste_top``? One rank apart, suits
    ignored, no wrapping; nothing goes on a King."""
    return waste_top is not None and not is_king(waste_top) and rank_adjacent(card, waste_top)


class Golf(GameRules):
    id = "golf"
    title = "Golf"
    family = "golf"
    #: /2: M 1.3 -> 1.18, priced against the strong player (RTP.md); play unchanged.
    #: /3: M 1.17, priced against a stronger one (golf-strong/2); play unchanged.
    rules_version = "golf/3"
    earlier_prices = (("golf/1", "1.3"), ("golf/2", "1.18"))
    decks = 1
    max_units = TABLEAU_CARDS
    multiplier = "1.17"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    undo_rule = "undo takes back only the last move of a column card to the waste, never a draw"
    actions = ("draw", "move", "undo")
    units_are = "cards cleared from the columns"
    passes = 1
    draw_count = 1
    summary = (
        "7 columns of 5 cards, all face up; the next card starts the waste; 16 in the stock.",
        "Move the top card of any column onto the waste when it is one rank above or below the "
        "waste's top card, suits ignored.",
        "No wrapping: nothing goes on a King, and only a 2 goes on an Ace.",
        "Draw the stock's next card onto the waste, one at a time; one pass through the stock.",
        "Undo: the last move of a column card to the waste.",
        "Pays stake x M x cards cleared / 35 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        piles = [Pile()] * len(LAYOUT.specs)
        for c in range(COLUMNS):
            piles[T[c]] = Pile(tuple(deck[c:TABLEAU_CARDS:COLUMNS]))  # row by row: every 7th
        piles[W] = Pile((deck[TABLEAU_CARDS],))
        stock = tuple(deck[TABLEAU_CARDS + 1 :])[::-1]  # the next card in deal order on top
        piles[S] = Pile(stock, len(stock))
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [stock.draw(table, 1, reveal, "Golf has one pass through it")]
        if isinstance(action, MoveCards):
            card = self._check_move(table, action)
            return [CardMoved(action.source, WASTE, (card,))]
        if isinstance(action, Recycle):
            raise RuleViolation(
                errors.ACTION_NOT_ALLOWED,
                "Golf has one pass through the stock; the waste is never turned over",
            )
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"Golf has no {action.NAME} action")

    def _check_move(self, table: Table, action: MoveCards) -> Card:
        """The card a column-to-waste move plays, or the rule it breaks."""
        source = table.piles[self.pile_index(action.source)]
        self.pile_index(action.target)
        if action.source not in TABLEAU_PILES:
            raise RuleViolation(
                errors.INVALID_SOURCE,
                f"cards leave only the columns tableau:0..tableau:6, not {action.source}; "
                "draw to take a stock card",
            )
        if action.target != WASTE:
            raise RuleViolation(
                errors.INVALID_DESTINATION, f"cards go only onto the waste, not {action.target}"
            )
        if action.count not in (None, 1):
            raise RuleViolation(errors.INVALID_COUNT, "cards go to the waste one at a time")
        card = source.top
        if card is None:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{action.source} is empty")
        onto = table.piles[W].top
        if onto is None:
            raise RuleViolation(errors.WASTE_EMPTY, "the waste is empty; draw from the stock")
        if is_king(onto):
            raise RuleViolation(
                errors.NOTHING_ON_A_KING, f"{card} cannot go on {onto}: nothing goes on a King"
            )
        if not rank_adjacent(card, onto):
            raise RuleViolation(
                errors.NOT_ONE_RANK_APART,
                f"{card} cannot go on {onto}: a card goes on the waste one rank above or below "
                "it (no wrapping: only a 2 goes on an Ace)",
            )
        return card

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = []
        if table.piles[S].cards:
            actions.append(Draw())
        onto = table.piles[W].top
        for c, t in enumerate(T):
            card = table.piles[t].top
            if card is not None and fits_waste(card, onto):
                actions.append(MoveCards(TABLEAU_PILES[c], WASTE, 1))
        return actions

    # --- undo, units --------------------------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """Only a column-to-waste move; a draw showed a new card."""
        return isinstance(event, CardMoved)

    def units(self, table: Table) -> int:
        return TABLEAU_CARDS - sum(len(table.piles[t]) for t in T)


GOLF = Golf()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (GOLF,)
SHELF = 20
