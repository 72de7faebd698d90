"""Salic Law (seed 004): two decks; the Queens set aside, each King heads a column, and eight
foundations build Ace up to Jack regardless of suit.

Deal: the deck is read in deal order. Every Queen goes face up onto ``queens``, in deck order
(seed 004: discarded; they never come back into play); the first King of spades starts
``tableau:0``, face up; every other card, in deck order, is the hand: face down, its first card
the next one drawn (95 cards).

Draw takes the hand's next card and shows it: a King starts a new column, the next one to the
right of the last column; any other card goes onto the last column (the rightmost that holds
cards). It is recorded as a CardDrawn from ``hand`` to that column. Every card on the table lies
face up, so nothing is ever turned.

Eight foundations build Ace up to Jack regardless of suit: an Ace starts an empty one, then any
card one rank higher; a foundation at its Jack is complete. Any column's top card may be played
to a foundation at any time. A King never moves (it is its column's base) and nothing comes
back off a foundation. Once the hand is empty, a column that holds only its King is a space: it
takes any column's top card. Otherwise nothing moves between columns (seed 004). Units are the
cards on the foundations (88, every foundation at its Jack, is a win). Pile ids: ``hand``,
``queens``, ``foundation:0``..``foundation:7``, ``tableau:0``..``tableau:7`` (eight Kings, so
at most eight columns); ``foundation`` as a destination means the first foundation that fits.

A move takes one card, the source's top card (``count`` 1, or omitted). It is refused, checked
in this order, with: ``unknown-pile``; ``same-pile``; ``invalid-source`` (the hand, the queens
or a foundation); ``invalid-destination`` (the hand or the queens); ``source-empty``;
``invalid-count`` (any count but 1); ``king-never-moves`` (the top card is the column's King);
then, to a foundation, ``foundation-needs-ace`` or ``foundation-wrong-rank`` (or
``no-foundation-fits`` for ``foundation``); onto a column, ``stock-not-empty`` (the hand still
holds cards) or ``not-a-space`` (the column does not hold its King alone). A draw from an empty
hand is ``stock-empty``; turn, recycle and remove are ``action-not-allowed``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardDrawn, CardMoved, GameEvent
from service import errors
from service.errors import RuleViolation
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import is_king
from service.rules.cards import ACE, JACK, QUEEN, RANK_OF, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Layout, Pile, PileSpec, Table, numbered

FOUNDATIONS = 8
COLUMNS = 8  # one per King of two decks
FIRST_KING = "KS"  # seed 004: the first King of spades starts column 0
HAND_CARDS = 104 - 8 - 1  # less the Queens and the first King of spades: 95

HAND = "hand"
QUEENS = "queens"
ANY_FOUNDATION = "foundation"
FOUNDATION_PILES = tuple(f"foundation:{i}" for i in range(FOUNDATIONS))
TABLEAU_PILES = tuple(f"tableau:{i}" for i in range(COLUMNS))

LAYOUT = Layout(
    [
        PileSpec(HAND, "stock"),
        PileSpec(QUEENS, "discard"),
        *numbered("foundation", FOUNDATIONS),
        *numbered("tableau", COLUMNS),
    ]
)
H, Q = LAYOUT.index[HAND], LAYOUT.index[QUEENS]
F = tuple(LAYOUT.index[p] for p in FOUNDATION_PILES)
T = tuple(LAYOUT.index[p] for p in TABLEAU_PILES)


# --- the rules the module plays by, shared with the reference bot ------------------------------


def builds_up_to_jack(card: Card, onto: Card | None) -> bool:
    """A foundation regardless of suit: an Ace starts an empty one, then any card one rank
    higher, up to the Jack (so nothing goes on a Jack)."""
    if onto is None:
        return RANK_OF[card] == ACE
    return RANK_OF[card] == RANK_OF[onto] + 1 <= JACK


def is_space(column: Pile) -> bool:
    """A column holding only its King (a space once the hand is empty)."""
    return len(column.cards) == 1 and column.top is not None and is_king(column.top)


def last_column(table: Table) -> int | None:
    """The rightmost column that holds cards (where a drawn card other than a King goes)."""
    used = [c for c, t in enumerate(T) if table.piles[t].cards]
    return used[-1] if used else None


def fitting_foundation(table: Table, card: Card) -> int | None:
    """The first foundation ``card`` goes on, or None."""
    for i, f in enumerate(F):
        if builds_up_to_jack(card, table.piles[f].top):
            return i
    return None


def legal_moves(table: Table) -> list[tuple[str, str]]:
    """Every move the rules allow now (one card each), as (source, target): source columns
    left to right, then the foundations, then (hand empty) the spaces, each left to right."""
    columns = [table.piles[t] for t in T]
    foundation_tops = [table.piles[f].top for f in F]
    hand_empty = not table.piles[H].cards
    spaces = [j for j, column in enumerate(columns) if hand_empty and is_space(column)]
    moves: list[tuple[str, str]] = []
    for i, column in enumerate(columns):
        card = column.top
        if card is None or is_king(card):
            continue
        source = TABLEAU_PILES[i]
        moves.extend(
            (source, FOUNDATION_PILES[j])
            for j, top in enumerate(foundation_tops)
            if builds_up_to_jack(card, top)
        )
        moves.extend((source, TABLEAU_PILES[j]) for j in spaces if j != i)
    return moves


class SalicLaw(GameRules):
    id = "salic-law"
    title = "Salic Law"
    family = "salic-law"
    #: /2: M 1.36 -> 1.14, priced against the strong player (RTP.md); play unchanged.
    rules_version = "salic-law/2"
    earlier_prices = (("salic-law/1", "1.36"),)
    decks = 2
    max_units = FOUNDATIONS * JACK  # 88
    multiplier = "1.14"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("draw", "move", "undo")
    units_are = "cards on the foundations"
    undo_rule = "undo takes back only the last move (a draw shows a new card and is never undone)"
    passes = 1  # the hand is dealt out once
    draw_count = 1
    summary = (
        "Two decks. The 8 Queens are set aside, face up; the first King of spades starts column "
        "0; the other 95 cards are the hand, face down.",
        "Draw the hand's next card, one at a time: a King starts a new column to the right; any "
        "other card goes onto the last column.",
        "Eight foundations build Ace up to Jack regardless of suit; an Ace starts an empty one. "
        "Any column's top card may go to a foundation at any time; Kings never move and nothing "
        "comes back off a foundation.",
        "Once the hand is empty, a column holding only its King is a space and takes any "
        "column's top card; otherwise nothing moves between columns.",
        "Undo: the last move; never a draw.",
        "Pays stake x M x cards on foundations / 88 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        first_king = list(deck).index(FIRST_KING)
        queens = tuple(c for c in deck if RANK_OF[c] == QUEEN)
        hand = tuple(c for i, c in enumerate(deck) if i != first_king and RANK_OF[c] != QUEEN)
        piles = [Pile()] * len(LAYOUT.specs)
        piles[Q] = Pile(queens)
        piles[T[0]] = Pile((FIRST_KING,))
        piles[H] = Pile(hand[::-1], len(hand))  # the next card in deal order on top
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return [self._draw(table, reveal)]
        if isinstance(action, MoveCards):
            source, target, card = self.resolve_move(
                table, action.source, action.target, action.count
            )
            return [CardMoved(source, target, (card,))]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    @staticmethod
    def _draw(table: Table, reveal: Reveal) -> CardDrawn:
        """The hand's next card, shown: a King to the next column right of the last one, any
        other card onto the last column."""
        hand = table.piles[H].cards
        if not hand:
            raise RuleViolation(
                errors.STOCK_EMPTY, f"the hand is empty: all {HAND_CARDS} of its cards are dealt"
            )
        card = reveal(hand[-1])
        last = last_column(table)
        assert last is not None  # the King of spades heads column 0 from the deal on
        target = last + 1 if is_king(card) else last
        assert target < COLUMNS  # two decks hold eight Kings, one per column
        return CardDrawn(HAND, TABLEAU_PILES[target], (card,))

    def resolve_move(
        self, table: Table, source: str, target: str, count: int | None = None
    ) -> tuple[str, str, Card]:
        """Validate a move; return its concrete source and target and the card it moves."""
        self.pile_index(source)
        if target != ANY_FOUNDATION:
            self.pile_index(target)
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if source not in TABLEAU_PILES:
            raise RuleViolation(errors.INVALID_SOURCE, _why_not_a_source(source))
        if target in (HAND, QUEENS):
            raise RuleViolation(
                errors.INVALID_DESTINATION,
                f"cards never go to the {target}; move them to a foundation or a space",
            )
        card = self._top_card(table, source, count)
        if target in TABLEAU_PILES:
            self._check_space(table, target)
            return source, target, card
        return source, self._foundation_for(table, card, target), card

    @staticmethod
    def _top_card(table: Table, source: str, count: int | None) -> Card:
        """The one card a move takes: the top of a column, never its King."""
        card = table.pile(source).top
        if card is None:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        if count not in (None, 1):
            raise RuleViolation(errors.INVALID_COUNT, "cards move one at a time: count must be 1")
        if is_king(card):
            raise RuleViolation(
                errors.KING_NEVER_MOVES,
                f"{card} heads {source}: a King never leaves its column",
            )
        return card

    @staticmethod
    def _check_space(table: Table, target: str) -> None:
        hand = table.piles[H].cards
        if hand:
            raise RuleViolation(
                errors.STOCK_NOT_EMPTY,
                f"the hand still holds {len(hand)} cards; cards move between columns only once "
                "it is empty",
            )
        if not is_space(table.pile(target)):
            raise RuleViolation(
                errors.NOT_A_SPACE,
                f"{target} is not a space: a column takes a card only while it holds its King "
                "alone",
            )

    @staticmethod
    def _foundation_for(table: Table, card: Card, target: str) -> str:
        """The foundation ``card`` goes to (``foundation``: the first that fits), or why not."""
        if target == ANY_FOUNDATION:
            found = fitting_foundation(table, card)
            if found is None:
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{card} does not fit on any foundation yet"
                )
            return FOUNDATION_PILES[found]
        top = table.pile(target).top
        if builds_up_to_jack(card, top):
            return target
        if top is None:
            raise RuleViolation(
                errors.FOUNDATION_NEEDS_ACE, f"{card} cannot start {target}: only an Ace can"
            )
        raise RuleViolation(
            errors.FOUNDATION_WRONG_RANK,
            f"{card} cannot go on {top} in {target}: foundations build up one rank at a time, "
            "any suit, Ace to Jack",
        )

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [Draw()] if table.piles[H].cards else []
        actions.extend(MoveCards(s, t, 1) for s, t in legal_moves(table))
        return actions

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """A move (between open piles, it shows nothing new); never a draw."""
        return isinstance(event, CardMoved)

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """Nothing: every card on the table lies face up, and nothing plays by itself."""
        return []

    def units(self, table: Table) -> int:
        return sum(len(table.piles[f].cards) for f in F)


def _why_not_a_source(source: str) -> str:
    """Why a pile that is not a column gives no card."""
    if source == HAND:
        return "the hand's cards come into play only by drawing them"
    if source == QUEENS:
        return "the Queens are set aside for the whole game"
    return f"cards never come back off a foundation ({source})"


SALIC_LAW = SalicLaw()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (SALIC_LAW,)
SHELF = 80
