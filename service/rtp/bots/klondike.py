"""The reference bot for the Klondike family (Vegas draw one and three, Klondike).

A deterministic heuristic that sees only what a player sees: it gets the sealed table, where
every card the player has not seen is a number, and it never reads those numbers (it only looks
at face-up cards and at the waste, which it has seen). Each turn it takes the first of these
that applies:

1. turns a face-down top card (Vegas: turning is the player's);
2. plays a card to a foundation when that is safe: an Ace or a Two, or a card no more than
   three ranks above both foundations of the other colour (so the cards that could still want
   to go on it are few). With unlimited passes every card that fits goes up. Among these, a
   card whose move uncovers a face-down card goes first, then the other column cards, then the
   waste card;
3. uncovers a face-down card: moves the whole face-up run of a column onto another column
   (a King's run into an empty column), or its single card to a foundation, taking the column
   with the most face-down cards first and preferring a column to a foundation;
4. plays the waste card: onto a column or to a foundation (the foundation first only when
   the card goes up safely);
5. frees a card: moves part of a column's run onto another column when the card it leaves on
   top then goes up safely, or takes the waste card, or takes the whole run of a column that
   has face-down cards; empties a column with no face-down cards when a King is waiting (the
   waste card, or a King with face-down cards beneath) and no column is empty; or takes a card
   back off a foundation (one that would not go up safely) when the waste card, or such a whole
   run, then fits on it;
6. draws;
7. when it cannot draw, plays every card that fits a foundation, then recycles if passes
   remain;
8. at the very end, moves part of a run when the card beneath then fits a foundation;
9. otherwise stops and collects.

Every move between columns uncovers a card, empties a column for a waiting King, or frees a
card that the next turn plays, and a card comes off a foundation only to take a card that goes
on it at once, so the bot cannot move cards back and forth; the simulator stops it when a
whole pass through the stock changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Turn
from service.rules.cards import KING, RANK_OF, RED, Card
from service.rules.game import GameRules
from service.rules.table import Pile, Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "klondike"
BOT_VERSION = "klondike-bot/1"

COLUMNS = 7
#: A card goes up safely when it is at most this many ranks above both foundations of the
#: other colour (with limited passes; with unlimited passes every card does).
SAFE_MARGIN = 3

_OTHER_COLOUR = {"S": "HD", "C": "HD", "H": "SC", "D": "SC"}


def _fits(card: Card, onto: Card) -> bool:
    """Does ``card`` go on ``onto`` in a column?"""
    return RANK_OF[onto] == RANK_OF[card] + 1 and RED[onto] != RED[card]


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop and collect."""
    draw: Draw | None = None
    recycle: Recycle | None = None
    moves: list[MoveCards] = []
    for action in legal:
        if isinstance(action, Turn):
            return action  # 1.
        if isinstance(action, Draw):
            draw = action
        elif isinstance(action, Recycle):
            recycle = action
        elif isinstance(action, MoveCards):
            moves.append(action)

    cols: list[Pile] = [table.pile(f"tableau:{i}") for i in range(COLUMNS)]
    found = {"S": 0, "H": 0, "D": 0, "C": 0}  # the rank each suit has reached
    for i in range(4):
        top = table.pile(f"foundation:{i}").top
        if top is not None:
            found[top[1]] = RANK_OF[top]
    waste_top = table.pile("waste").top
    # The first card of each face-up run that lies on face-down cards: moving it uncovers one.
    waiting = [c.up[0] for c in cols if c.down and c.up]

    def safe(card: Card) -> bool:
        rank = RANK_OF[card]
        if rank <= 2 or rules.passes is None:
            return True
        other = _OTHER_COLOUR[card[1]]
        return rank <= min(found[other[0]], found[other[1]]) + SAFE_MARGIN

    def column(pile_id: str) -> Pile:
        return cols[int(pile_id[8:])]

    def card_of(m: MoveCards) -> Card:
        """The bottom card of the run ``m`` moves."""
        if m.source.startswith("tableau:"):
            return column(m.source).up[-(m.count or 1)]
        top = table.pile(m.source).top  # the waste or a foundation
        assert top is not None
        return top

    def uncovers(m: MoveCards) -> bool:
        if not m.source.startswith("tableau:"):
            return False
        col = column(m.source)
        return col.down > 0 and (m.count or 1) == len(col.up)

    def depth(m: MoveCards) -> int:
        """Minus the face-down cards under the source (the waste counts as none)."""
        return -column(m.source).down if m.source.startswith("tableau:") else 1

    def welcome(card: Card) -> bool:
        """Would the waste card or a waiting run go on ``card``?"""
        if waste_top is not None and _fits(waste_top, card):
            return True
        return any(_fits(w, card) for w in waiting)

    to_foundation = [
        m
        for m in moves
        if m.target.startswith("foundation") and not m.source.startswith("foundation")
    ]
    between_columns = [
        m for m in moves if m.source.startswith("tableau:") and m.target.startswith("tableau:")
    ]

    # 2. Safe foundation plays.
    safe_up = [m for m in to_foundation if safe(card_of(m))]
    if safe_up:
        return min(safe_up, key=lambda m: (not uncovers(m), depth(m)))

    # 3. Uncover a face-down card.
    uncovering = [m for m in (*between_columns, *to_foundation) if uncovers(m)]
    if uncovering:
        return min(uncovering, key=lambda m: (depth(m), m.target.startswith("foundation")))

    # 4. The waste card.
    from_waste = [m for m in moves if m.source == "waste"]
    if from_waste:
        column_first = waste_top is not None and not safe(waste_top)
        return min(from_waste, key=lambda m: m.target.startswith("foundation") != column_first)

    # 5. Free a card.
    no_empty_column = all(c.cards for c in cols)
    king_waiting = any(RANK_OF[w] == KING for w in waiting) or (
        waste_top is not None and RANK_OF[waste_top] == KING
    )
    for m in between_columns:
        col = column(m.source)
        n = m.count or 1
        if n < len(col.up):
            freed = col.up[-n - 1]
            if (RANK_OF[freed] == found[freed[1]] + 1 and safe(freed)) or welcome(freed):
                return m
        elif col.down == 0 and no_empty_column and king_waiting:
            return m
    for m in moves:
        if m.source.startswith("foundation"):
            card = card_of(m)
            if not safe(card) and welcome(card):
                return m

    # 6. Draw.
    if draw is not None:
        return draw

    # 7. Every foundation play, then recycle.
    if to_foundation:
        return min(to_foundation, key=lambda m: (not uncovers(m), depth(m)))
    if recycle is not None:
        return recycle

    # 8. The end: free a card that then goes up.
    for m in between_columns:
        col = column(m.source)
        n = m.count or 1
        if n < len(col.up):
            freed = col.up[-n - 1]
            if RANK_OF[freed] == found[freed[1]] + 1:
                return m
    return None
