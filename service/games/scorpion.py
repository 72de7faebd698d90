"""The Scorpion family (seed 004): Scorpion, and Super Scorpion on two decks (the product's own
rules, GAMES.md).

Deal, row by row, left to right over the columns: Scorpion lays 7 columns of 7 (in columns 0-3
the first three cards face down, the other four face up; columns 4-6 all face up) and keeps the
last 3 cards as the reserve; Super Scorpion lays 10 columns of 8 (in columns 0-4 the first three
face down, every other card face up) and keeps the other 24 as the hand. Either way that pile is
``stock``, face down, the next card in deal order on top.

Any face-up card moves together with every card on top of it onto a column's top card of the
same suit one rank higher; nothing goes on an Ace; an empty column takes only a King (with what
lies on it). A face-down card that becomes the top of its column turns face up at once. Draw
deals the stock at the player's choice: Scorpion's reserve once, one card face up onto each of
columns 0, 1 and 2; Super Scorpion's hand one card face up onto each column left to right (the
last deal 4 cards, for columns 0-3). Units are the cards in order: for each column whose bottom
card is a face-up King, the length of the same-suit descending run from that King up; a full win
is every card in such runs (four K->A runs, eight on two decks). Undo takes back a move that made
no card turn. Pile ids: ``stock``, ``tableau:0``.. (no waste, no foundations).

A move is refused, checked in this order, with: ``unknown-pile``; ``same-pile``;
``invalid-source`` (not a column); ``invalid-destination`` (not a column); ``source-empty``;
``source-face-down`` (a face-down top, which auto-turn never leaves); ``invalid-count`` (not 1 to
the face-up cards of the source); ``only-king-to-empty-column``; ``destination-face-down``;
``nothing-on-an-ace``; ``not-one-rank-lower``; ``not-same-suit``. A draw from an empty stock is
``stock-empty``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardDrawn, CardMoved, CardTurned, GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import check_same_suit_down, is_king, same_suit_down
from service.rules.cards import ACE, RANK_OF, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Layout, Pile, PileSpec, Table, numbered

STOCK = "stock"


def fits(card: Card, column: Pile) -> bool:
    """May ``card`` (with what lies on it) go onto ``column``? An empty column takes a King;
    otherwise a face-up top card of the same suit one rank higher (so nothing goes on an Ace)."""
    if not column.cards:
        return is_king(card)
    onto = column.top
    return onto is not None and same_suit_down(card, onto)


def cards_in_order(column: Pile) -> int:
    """The cards in order in one column: when its bottom card is a face-up King, the length of
    the same-suit descending run from that King up; else none."""
    if column.down or not column.cards:
        return 0
    cards = column.up  # every card, all face up
    if not is_king(cards[0]):
        return 0
    n = 1
    while n < len(cards) and same_suit_down(cards[n], cards[n - 1]):
        n += 1
    return n


class Scorpion(GameRules):
    family = "scorpion"
    #: /2: both games priced against the strong player (RTP.md): Scorpion's M 4.9 -> 4.04,
    #: Super Scorpion's 1.06 -> 1.03; play unchanged.
    rules_version = "scorpion/2"
    actions = ("draw", "move", "undo")
    units_are = "cards in order: the same-suit run from a King at the bottom of a column up"
    undo_rule = "undo takes back only the last move, and only one that made no card turn"
    passes = 1  # the stock is dealt out once

    def __init__(
        self,
        game_id: str,
        title: str,
        *,
        decks: int,
        columns: int,
        rows: int,
        closed_columns: int,
        multiplier: str,
        earlier_prices: tuple[tuple[str, str], ...],
        summary: tuple[str, ...],
    ) -> None:
        self.id = game_id
        self.title = title
        self.decks = decks
        self.columns = columns
        self.rows = rows
        #: Columns 0..closed_columns-1 deal their first three cards face down.
        self.closed_columns = closed_columns
        self.multiplier = multiplier
        self.earlier_prices = earlier_prices
        self.summary = summary
        self.max_units = 52 * decks
        self.tableau_cards = columns * rows
        self.stock_cards = self.max_units - self.tableau_cards
        #: A draw deals one card onto each column (Scorpion: its 3 reserve cards, onto 0-2).
        self.draw_count = min(columns, self.stock_cards)
        self.layout = Layout([PileSpec(STOCK, "stock"), *numbered("tableau", columns)])
        self.tableau_piles = tuple(f"tableau:{c}" for c in range(columns))
        self.s = self.layout.index[STOCK]
        self.t = tuple(self.layout.index[p] for p in self.tableau_piles)

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        n = self.columns
        piles = [Pile()] * len(self.layout.specs)
        for c in range(n):
            down = 3 if c < self.closed_columns else 0
            piles[self.t[c]] = Pile(tuple(deck[c : self.tableau_cards : n]), down)  # row by row
        stock = tuple(deck[self.tableau_cards :])[::-1]  # the next card in deal order on top
        piles[self.s] = Pile(stock, len(stock))
        return Table(self.layout, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return self._deal_stock(table, reveal)
        if isinstance(action, MoveCards):
            source, target, cards = self._check_move(table, action)
            return [CardMoved(source, target, cards)]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def _deal_stock(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """One card face up onto each column from the left, as many as the stock holds (at
        most one per column), the next card first."""
        stock = table.piles[self.s].cards
        if not stock:
            raise RuleViolation(
                errors.STOCK_EMPTY,
                f"the stock is empty: all {self.stock_cards} of its cards have been dealt",
            )
        dealt = stock[::-1][: self.columns]
        return [
            CardDrawn(STOCK, self.tableau_piles[c], (reveal(slot),)) for c, slot in enumerate(dealt)
        ]

    def _check_move(self, table: Table, action: MoveCards) -> tuple[str, str, tuple[Card, ...]]:
        """The cards a move takes, or the rule it breaks."""
        source, target, count = action.source, action.target, action.count
        self.pile_index(source)
        self.pile_index(target)
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if source not in self.tableau_piles:
            raise RuleViolation(
                errors.INVALID_SOURCE,
                f"cards move only from a column, not from the {source}; draw to deal it",
            )
        if target not in self.tableau_piles:
            raise RuleViolation(
                errors.INVALID_DESTINATION, f"cards move only onto a column, not the {target}"
            )
        column = table.pile(source)
        if not column.cards:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        up = column.up
        if not up:
            raise RuleViolation(errors.SOURCE_FACE_DOWN, f"the top card of {source} is face down")
        onto = table.pile(target)
        if count is None:
            # The one run that fits: the deepest face-up card that may go onto the target; if
            # none may, the top card alone is judged so that the refusal names a reason.
            n = next((n for n in range(len(up), 0, -1) if fits(up[-n], onto)), 1)
        elif 1 <= count <= len(up):
            n = count
        else:
            raise RuleViolation(
                errors.INVALID_COUNT,
                f"{source} has {len(up)} face-up card(s); count must be 1 to {len(up)}",
            )
        cards = up[-n:]
        self._check_target(cards[0], onto, target)
        return source, target, cards

    @staticmethod
    def _check_target(card: Card, column: Pile, where: str) -> None:
        if not column.cards:
            if not is_king(card):
                raise RuleViolation(
                    errors.ONLY_KING_TO_EMPTY_COLUMN,
                    f"{card} cannot go to the empty column {where}; only a King (with what lies "
                    "on it) can",
                )
            return
        onto = column.top
        if onto is None:
            raise RuleViolation(
                errors.DESTINATION_FACE_DOWN, f"the top card of {where} is face down"
            )
        if RANK_OF[onto] == ACE:
            raise RuleViolation(
                errors.NOTHING_ON_AN_ACE, f"{card} cannot go on {onto}: nothing goes on an Ace"
            )
        check_same_suit_down(card, onto, where)

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [Draw()] if table.piles[self.s].cards else []
        actions.extend(self.legal_moves(table))
        return actions

    def legal_moves(self, table: Table) -> list[MoveCards]:
        """Every move the rules allow now: by source column, then from the top card down, then
        by target column."""
        columns = [table.piles[t] for t in self.t]
        moves: list[MoveCards] = []
        for i, column in enumerate(columns):
            up = column.up
            for n in range(1, len(up) + 1):
                card = up[-n]
                moves.extend(
                    MoveCards(self.tableau_piles[i], self.tableau_piles[j], n)
                    for j, onto in enumerate(columns)
                    if j != i and fits(card, onto)
                )
        return moves

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """A move (the auto-turn a move causes clears it: that move showed a new card); never a
        draw from the stock."""
        return isinstance(event, CardMoved)

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """A face-down card that becomes the top of its column turns face up at once."""
        return [
            CardTurned(self.tableau_piles[c], reveal(table.piles[t].cards[-1]))
            for c, t in enumerate(self.t)
            if table.piles[t].cards and table.piles[t].top is None
        ]

    def units(self, table: Table) -> int:
        return sum(cards_in_order(table.piles[t]) for t in self.t)


SCORPION = Scorpion(
    "scorpion",
    "Scorpion",
    decks=1,
    columns=7,
    rows=7,
    closed_columns=4,
    multiplier="4.04",  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    earlier_prices=(("scorpion/1", "4.75"), ("scorpion/1", "4.9")),
    summary=(
        "7 columns of 7 cards; in columns 0-3 the first three are face down; the last 3 cards "
        "are the reserve.",
        "Move any face-up card, with every card on top of it, onto a column's top card of the "
        "same suit one rank higher. Nothing goes on an Ace; an empty column takes only a King "
        "(with what lies on it).",
        "A face-down card turns face up when it becomes the top of its column.",
        "Once, at your choice, deal the reserve: one card face up onto each of columns 0, 1 and 2.",
        "Undo: the last move, unless it turned a card.",
        "Units are the cards in order: for each column with a King at the bottom, the same-suit "
        "run from that King up. Pays stake x M x cards in order / 52 (rounded down).",
    ),
)
SUPER_SCORPION = Scorpion(
    "super-scorpion",
    "Super Scorpion",
    decks=2,
    columns=10,
    rows=8,
    closed_columns=5,
    multiplier="1.03",  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    earlier_prices=(("scorpion/1", "1.06"),),
    summary=(
        "Two decks: 10 columns of 8 cards; in columns 0-4 the first three are face down; the "
        "other 24 cards are the hand.",
        "Move any face-up card, with every card on top of it, onto a column's top card of the "
        "same suit one rank higher. Nothing goes on an Ace; an empty column takes only a King "
        "(with what lies on it).",
        "A face-down card turns face up when it becomes the top of its column.",
        "Deal from the hand at your choice: one card face up onto each column from left to "
        "right; the last deal has 4 cards, for columns 0-3.",
        "Undo: the last move, unless it turned a card.",
        "Units are the cards in order: for each column with a King at the bottom, the same-suit "
        "run from that King up. Pays stake x M x cards in order / 104 (rounded down).",
    ),
)

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (
    SCORPION,
    SUPER_SCORPION,
)
SHELF = 40
