"""The reference Upside-Down Pyramid bot: a deterministic greedy player that sees only what a
player sees.

Every column card lies face up, so the bot reads the columns, the foundations and the waste (all
face up); it never reads the stock, whose cards are sealed numbers. Each turn it takes the first
of these that applies, among the legal actions:

1. plays a card to a foundation, whenever one fits (the RTP lab found holding cards back for
   building, as the Klondike bot does with limited passes, pays less here): a column card
   first (the one whose move leaves the column's new top card playable to a foundation first,
   then the one from the tallest column), then the waste card;
2. moves a column's whole run onto another column when the card it leaves on top can then go
   to a foundation;
3. moves a run that lies on a card it is not built on: onto another column, or, headed by a
   King, into an empty column. It takes the run uncovering the card nearest to play first
   (the fewest ranks above its suit's higher foundation), then the tallest column;
4. empties a column (its whole run onto another column) when a King is waiting for it: the
   waste card, or a King-headed run lying on other cards;
5. plays the waste card onto a column;
6. draws;
7. recycles if passes remain;
8. otherwise stops and collects.

Every move between columns uncovers a card or empties a column: the number of places where a
column card is not built on the one below falls, or the number of columns in use does (a
King-headed run moves to an empty column only when it lies on other cards). So the bot never
moves runs back and forth; the simulator stops it when a whole pass changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.games.upside_down_pyramid import FOUNDATION_PILES, TABLEAU_PILES, WASTE, run_of
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle
from service.rules.building import same_suit_up
from service.rules.cards import KING, RANK_OF, Card
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "upside-down-pyramid"
BOT_VERSION = "upside-down-pyramid-bot/1"


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop and collect."""
    draw: Draw | None = None
    recycle: Recycle | None = None
    moves: list[MoveCards] = []
    for action in legal:
        if isinstance(action, Draw):
            draw = action
        elif isinstance(action, Recycle):
            recycle = action
        elif isinstance(action, MoveCards):
            moves.append(action)

    columns = {pile: table.pile(pile) for pile in TABLEAU_PILES}
    foundation_tops = [table.pile(p).top for p in FOUNDATION_PILES]
    # Per suit, the ranks its two foundations have reached (0: not started).
    reached: dict[str, list[int]] = {s: [] for s in "SHDC"}
    for top in foundation_tops:
        if top is not None:
            reached[top[1]].append(RANK_OF[top])
    highest = {s: max(r, default=0) for s, r in reached.items()}
    waste_top = table.pile(WASTE).top

    def goes_up(card: Card) -> bool:
        return any(same_suit_up(card, top) for top in foundation_tops)

    def need(card: Card) -> int:
        """How far ``card`` is from going up (0: it goes up now)."""
        return max(RANK_OF[card] - highest[card[1]] - 1, 0)

    def beneath(m: MoveCards) -> Card | None:
        """The card a column move leaves on top of its source (None: it empties it)."""
        column = columns[m.source]
        taken = m.count or 1
        return column.up[-taken - 1] if len(column.cards) > taken else None

    from_column = [m for m in moves if m.source in columns]
    to_foundation = [m for m in moves if m.target in FOUNDATION_PILES]
    between = [m for m in from_column if m.target in columns]

    def foundation_order(m: MoveCards) -> tuple[int, int]:
        """Column cards first: the one leaving a card that goes up, then the one from the
        tallest column; then the waste card."""
        column = columns.get(m.source)
        if column is None:
            return (2, 0)
        left = column.up[-2] if len(column.cards) > 1 else None
        return (0 if left is not None and goes_up(left) else 1, -len(column.cards))

    # 1. Every foundation play, column cards first.
    if to_foundation:
        return min(to_foundation, key=foundation_order)

    # 2. A run move that leaves a card that goes up.
    for m in between:
        left = beneath(m)
        if left is not None and goes_up(left):
            return m

    # 3. Uncover a card: a run lying on a card it is not built on.
    uncovering = [m for m in between if beneath(m) is not None]
    if uncovering:

        def nearest(m: MoveCards) -> tuple[int, int]:
            left = beneath(m)
            assert left is not None
            return need(left), -len(columns[m.source].cards)

        return min(uncovering, key=nearest)

    # 4. Empty a column when a King is waiting for it.
    king_waiting = (waste_top is not None and RANK_OF[waste_top] == KING) or any(
        RANK_OF[run_of(col)[0]] == KING and len(run_of(col)) < len(col.cards)
        for col in columns.values()
        if col.cards
    )
    no_empty_column = all(col.cards for col in columns.values())
    if king_waiting and no_empty_column:
        emptying = [m for m in between if beneath(m) is None and columns[m.target].cards]
        if emptying:
            return emptying[0]

    # 5. The waste card onto a column.
    for m in moves:
        if m.source == WASTE and m.target in columns:
            return m

    # 6. Draw.
    if draw is not None:
        return draw

    # 7. Recycle (None when no pass is left: stop).
    return recycle
