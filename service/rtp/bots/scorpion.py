"""The reference Scorpion bot (Scorpion and Super Scorpion): a deterministic greedy player that
sees only what a player sees.

Heuristic, each turn:

1. Leave out the moves that cannot help: a King already at the bottom of its column, and a
   card already lying on its own parent (the same suit one rank higher: on two decks it could
   only shuttle between the two twins). Every move left puts a card on its parent that was not
   on it, or brings a King to the bottom of a column, so play can never go round in a circle.
2. Of those, play the best by, in order: it turns a face-down card (the cards moved are all
   the face-up cards of a column with face-down cards under them); the cards in order it adds;
   it brings a King (with what lies on it) from a column with face-down cards, and the more of
   those the better; it brings any other King to an empty column; the card it leaves on top
   of its column takes a face-up card that is not yet on its parent; it empties a column while
   a King waits above other cards. On a tie, the first listed (leftmost source, fewest cards,
   leftmost target).
3. With no such move, deal the stock (the reserve, or the hand's next row).
4. With neither, stop (collect).

It reads only face-up cards and pile sizes, never a sealed slot's value, so given the sealed
table it cannot cheat. Its moves never break a run of cards in order, so the units never fall.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardMoved
from service.games.scorpion import Scorpion
from service.rules import fold
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import is_king, same_suit_down
from service.rules.cards import Card
from service.rules.game import GameRules
from service.rules.table import Pile, Table

#: The game family it plays (service.rtp.bots finds it by this).
FAMILY = "scorpion"
BOT_VERSION = "scorpion-bot/1"

Score = tuple[int, int, int, int, int, int]


def choose(rules: GameRules, table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
    """The bot's next action, one of ``legal``, or None to stop."""
    assert isinstance(rules, Scorpion)
    piles = rules.tableau_piles
    columns = [table.pile(p) for p in piles]
    loose = _loose_cards(columns)
    king_waiting = any(is_king(card) for card in loose)
    units = rules.units(table)
    best: MoveCards | None = None
    best_score: Score | None = None
    for action in legal:
        if not isinstance(action, MoveCards) or action.count is None:
            continue
        source = columns[piles.index(action.source)]
        target = columns[piles.index(action.target)]
        score = _score(rules, table, action, source, target, loose, king_waiting, units)
        if score is not None and (best_score is None or score > best_score):
            best, best_score = action, score
    if best is not None:
        return best
    return next((a for a in legal if isinstance(a, Draw)), None)


def _loose_cards(columns: Sequence[Pile]) -> list[Card]:
    """Face-up cards not lying on their parent (nor a King at the bottom of its column)."""
    loose: list[Card] = []
    for column in columns:
        up = column.up
        for k, card in enumerate(up):
            if k:
                if not same_suit_down(card, up[k - 1]):
                    loose.append(card)
            elif column.down or not is_king(card):
                loose.append(card)
    return loose


def _score(
    rules: Scorpion,
    table: Table,
    move: MoveCards,
    source: Pile,
    target: Pile,
    loose: list[Card],
    king_waiting: bool,
    units: int,
) -> Score | None:
    """How much a move helps, or None for a move that cannot."""
    assert move.count is not None
    up, n = source.up, move.count
    card = up[-n]
    whole_up = n == len(up)
    turns = whole_up and source.down > 0
    below = None if whole_up else up[-n - 1]
    if not turns:
        if whole_up and is_king(card):
            return None  # a King already at the bottom of its column
        if below is not None and same_suit_down(card, below):
            return None  # already on its parent
    after = fold.apply(table, CardMoved(move.source, move.target, up[-n:]))
    gained = rules.units(after) - units
    king_out = is_king(card) and not target.cards
    digs = source.down if king_out else 0
    opens = below is not None and any(same_suit_down(c, below) for c in loose if c != card)
    empties = whole_up and not source.down and king_waiting and not is_king(card)
    return (int(turns), gained, digs, int(king_out), int(opens), int(empties))
