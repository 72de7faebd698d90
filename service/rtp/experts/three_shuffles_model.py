"""A fast search model of a Three Shuffles and a Draw position, for the RTP lab's players (pure).

It mirrors ``service.games.three_shuffles`` for search only: the rules stay the game module's,
and tests/unit/test_experts_three_shuffles.py drives random positions through the real rules and
checks this model agrees move for move (legal moves, resulting position, units). Its building
tables are computed from the game's own predicates (``same_suit_down``, ``same_suit_up``), a
redeal deals with the game's own ``deal_fans`` and labels, so the model restates no rule.

A position is a tuple ``(fans, found, passes, picks)``: the 16 fans (card numbers bottom first; a
card's number is its index in ``CANONICAL_DECK``), how many cards each suit's foundation holds
(its Ace included), the deals still allowed (the table's ``passes_left``) and the Draws left
(``picks_left``). Every card lies face up, so a position is all a player sees; only the
redeals' shuffles are secret.

A move is ``(MOVE, i, j)`` (fan i's top card onto fan j, or ``FOUNDATION``), ``(PICK, i, k, j)``
(the buried card at index k of fan i onto j) or ``(REDEAL,)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service.games import three_shuffles as ts
from service.rtp.experts.cards import CARDS, HEIGHT, NUMBER, RANK, SUIT
from service.rules.actions import MoveCards, Pick, PlayAction, Redeal
from service.rules.building import same_suit_down
from service.rules.cards import SUITS, Card
from service.rules.table import Table

FANS = ts.FANS
FOUNDATION = -1
MOVE, PICK, REDEAL = range(3)

#: ONTO[a]: the one card ``a`` may be built on in a fan (-1: none), from the rules' predicate.
ONTO: tuple[int, ...] = tuple(
    next((j for j, b in enumerate(CARDS) if same_suit_down(a, b)), -1) for a in CARDS
)

#: The Aces the deal puts up do not count (the rules' units).
ACES_UP = len(SUITS)

Fans = tuple[tuple[int, ...], ...]
State = tuple[Fans, tuple[int, ...], int, int]
Move = tuple[int, ...]
#: A redeal's shuffle: (label, card codes in the order gathered) -> the codes shuffled.
Shuffle = Callable[[str, Sequence[Card]], Sequence[Card]]


def units(st: State) -> int:
    f = st[1]
    return f[0] + f[1] + f[2] + f[3] - ACES_UP


def state_of(table: Table) -> State:
    p = table.piles
    fans = tuple(tuple(NUMBER[c] for c in p[t].up) for t in ts.T)
    found = tuple(len(p[f].cards) for f in ts.F)
    return fans, found, table.passes_left or 0, table.picks_left or 0


def redeal_label(passes: int) -> str:
    """The label of the redeal made with ``passes`` deals still allowed (the rules')."""
    return f"redeal-{ts.DEALS - passes + 1}"


def gathered(st: State) -> list[int]:
    """The fans' cards in the order a redeal gathers them."""
    return [c for fan in st[0] for c in fan]


def dealt(st: State, cards: Sequence[int]) -> State:
    """The position after a redeal that shuffled the gathered cards into ``cards``."""
    fans = [tuple(f) for f in ts.deal_fans(list(cards))]
    fans += [()] * (FANS - len(fans))
    return tuple(fans), st[1], st[2] - 1, st[3]


def legal(st: State) -> list[Move]:
    """Every move the rules allow, in the rules' order."""
    fans, found, passes, picks = st
    tops = {fan[-1]: i for i, fan in enumerate(fans) if fan}
    out: list[Move] = []
    for i, fan in enumerate(fans):
        if fan:
            a = fan[-1]
            if found[SUIT[a]] == HEIGHT[a]:
                out.append((MOVE, i, FOUNDATION))
            j = tops.get(ONTO[a], i)
            if j != i:
                out.append((MOVE, i, j))
    if picks:
        for i, fan in enumerate(fans):
            for k in range(len(fan) - 1):
                a = fan[k]
                if found[SUIT[a]] == HEIGHT[a]:
                    out.append((PICK, i, k, FOUNDATION))
                j = tops.get(ONTO[a], -1)
                if j >= 0:
                    out.append((PICK, i, k, j))
    if passes > 1 and any(fans):
        out.append((REDEAL,))
    return out


def apply(st: State, m: Move, shuffle: Shuffle | None = None) -> State:
    """The position after a move (a redeal needs the shuffle)."""
    fans, found, passes, picks = st
    if m[0] == REDEAL:
        if shuffle is None:
            raise ValueError("a redeal needs its shuffle")
        cards = shuffle(redeal_label(passes), [CARDS[c] for c in gathered(st)])
        return dealt(st, [NUMBER[c] for c in cards])
    fl = list(fans)
    if m[0] == MOVE:
        i, j = m[1], m[2]
        a = fans[i][-1]
        fl[i] = fans[i][:-1]
    else:
        i, k, j = m[1], m[2], m[3]
        a = fans[i][k]
        fl[i] = fans[i][:k] + fans[i][k + 1 :]
        picks -= 1
    if j == FOUNDATION:
        s = SUIT[a]
        found = (*found[:s], found[s] + 1, *found[s + 1 :])
    else:
        fl[j] = fl[j] + (a,)
    return tuple(fl), found, passes, picks


def greedy_move(st: State) -> Move | None:
    """The next move of the closure: the first fan whose top card goes up, else the highest
    card that goes onto another fan (first fan first among equals). Both are safe (the
    reference bot's argument); taking the highest first keeps every chain open: a card that
    could go onto its successor while that successor could itself move on would otherwise
    bury it."""
    fans, found = st[0], st[1]
    for i, fan in enumerate(fans):
        if fan and found[SUIT[fan[-1]]] == HEIGHT[fan[-1]]:
            return (MOVE, i, FOUNDATION)
    tops = {fan[-1]: i for i, fan in enumerate(fans) if fan}
    best: Move | None = None
    high = -1
    for i, fan in enumerate(fans):
        if fan:
            a = fan[-1]
            j = tops.get(ONTO[a], i)
            if j != i and RANK[a] > high:
                best, high = (MOVE, i, j), RANK[a]
    return best


def closure(st: State, line: list[Move] | None = None) -> State:
    """Play the closure's moves (:func:`greedy_move`) until none is left (appending them to
    ``line``)."""
    while (m := greedy_move(st)) is not None:
        if line is not None:
            line.append(m)
        st = apply(st, m)
    return st


def picks_of(st: State) -> list[Move]:
    """The Draws of a buried card the rules allow now."""
    return [m for m in legal(st) if m[0] == PICK] if st[3] else []


def move_of(action: PlayAction, table: Table) -> Move:
    """The model's move for a real action."""
    if isinstance(action, Redeal):
        return (REDEAL,)
    if isinstance(action, MoveCards):
        j = (
            FOUNDATION
            if action.target.startswith("foundation")
            else ts.FAN_PILES.index(action.target)
        )
        return (MOVE, ts.FAN_PILES.index(action.source), j)
    assert isinstance(action, Pick)
    i = ts.FAN_PILES.index(action.source)
    k = table.pile(action.source).cards.index(action.card)
    j = FOUNDATION if action.target.startswith("foundation") else ts.FAN_PILES.index(action.target)
    return (PICK, i, k, j)


def real_action(st: State, m: Move) -> PlayAction:
    """The real action for a model move in position ``st``."""
    if m[0] == REDEAL:
        return Redeal()
    fans = st[0]
    if m[0] == MOVE:
        a = fans[m[1]][-1]
        j = m[2]
    else:
        a = fans[m[1]][m[2]]
        j = m[3]
    target = ts.foundation_of(CARDS[a]) if j == FOUNDATION else ts.FAN_PILES[j]
    if m[0] == MOVE:
        return MoveCards(ts.FAN_PILES[m[1]], target, 1)
    return Pick(ts.FAN_PILES[m[1]], CARDS[a], target)
