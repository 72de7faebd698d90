"""The reference La Nivernaise bot: a deterministic greedy player with a short lookahead, that
sees only what a player sees.

Heuristic, each turn, the first that applies:

1. A flank card to a foundation (it frees the flank), the first the rules list.
2. A Line column's top card to a foundation (it uncovers the card beneath), the first listed.
3. A dig: a Line column's top card to an empty flank, when the cards it frees then play to the
   foundations. Each dig is scored by looking ahead over digs and foundation plays only (both
   fully known; a refill's cards are not): cards that reach the foundations, less a price for
   every flank it fills, plus a little for a column it empties while the stock can refill it.
   Up to two digs deep (four once the stock and the redeals are spent, when flanks are worth
   nothing more); the best plan with a positive score is begun, its first dig played.
4. Draw (the Deal: 4 cards onto each Line column).
5. Redeal.
6. Otherwise stop (collect).

Every action it takes either puts a card on a foundation, fills a flank (8 at most, and a
flank empties only onto a foundation), or spends the stock or a redeal, so it always ends. It
reads only face-up cards (the flanks, the Line and the foundations) and the stock's size, never
a stock slot, so given the sealed table it cannot cheat.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved
from service.games.la_nivernaise import (
    FLANK_PILES,
    FOUNDATION_PILES,
    LINE_PILES,
    S,
    redeals_left,
    wanted,
)
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction, Redeal
from service.rules.game import GameRules
from service.rules.table import Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "la-nivernaise"
BOT_VERSION = "la-nivernaise-bot/1"

#: What filling a flank costs, in cards on the foundations, while the game goes on.
FLANK_PRICE = 1.0
#: What emptying a Line column the stock then refills is worth (four new cards to play).
REFILL_BONUS = 0.5
#: Once the stock and the redeals are spent a flank is worth next to nothing (a hair, so that
#: of two plans freeing as many cards the one filling fewer flanks wins).
ENDGAME_PRICE = 0.01
DEPTH, ENDGAME_DEPTH = 2, 4


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    moves = [a for a in legal if isinstance(a, MoveCards)]
    return (
        _to_foundation(moves, FLANK_PILES)
        or _to_foundation(moves, LINE_PILES)
        or _dig(table, moves)
        or next((a for a in legal if isinstance(a, Draw)), None)
        or next((a for a in legal if isinstance(a, Redeal)), None)
    )


def _to_foundation(moves: Sequence[MoveCards], sources: Sequence[str]) -> MoveCards | None:
    return next((m for m in moves if m.source in sources and m.target in FOUNDATION_PILES), None)


def _dig(table: Table, moves: Sequence[MoveCards]) -> MoveCards | None:
    endgame = not table.piles[S].cards and redeals_left(table) == 0
    price = ENDGAME_PRICE if endgame else FLANK_PRICE
    depth = ENDGAME_DEPTH if endgame else DEPTH
    best, best_score = None, 0.0
    flank = next((m.target for m in moves if m.target in FLANK_PILES), None)
    for m in moves:
        if m.target != flank:  # every empty flank is as good as the first
            continue
        score = _dig_score(table, m.source, m.target, price, depth)
        if score > best_score:
            best, best_score = m, score
    return best


def _dig_score(table: Table, line: str, flank: str, price: float, depth: int) -> float:
    """What moving ``line``'s top card to ``flank`` is worth, with the best digs after it."""
    card = table.pile(line).top
    assert card is not None
    after, played = _settle(fold.apply(table, CardMoved(line, flank, (card,))))
    score = played - price
    if not after.pile(line).cards and after.piles[S].cards:
        return score + REFILL_BONUS  # what the refill deals is unknown: look no further
    if depth > 1:
        score += max(_best_dig(after, price, depth - 1), 0.0)
    return score


def _best_dig(table: Table, price: float, depth: int) -> float:
    flank = next((f for f in FLANK_PILES if not table.pile(f).cards), None)
    if flank is None:
        return 0.0
    return max(
        (
            _dig_score(table, line, flank, price, depth)
            for line in LINE_PILES
            if table.pile(line).cards
        ),
        default=0.0,
    )


def _settle(table: Table) -> tuple[Table, int]:
    """Play every flank and Line top card that fits a foundation, until none does; the table
    after, and how many cards went up."""
    played = 0
    while True:
        takes = wanted(table)
        for source in (*FLANK_PILES, *LINE_PILES):
            card = table.pile(source).top
            found = takes.get(card) if card is not None else None
            if card is not None and found is not None:
                table = fold.apply(table, CardMoved(source, FOUNDATION_PILES[found], (card,)))
                played += 1
                break
        else:
            return table, played
