"""A fast search model of a Klondike position, for the RTP lab's players (pure).

It mirrors ``service.games.klondike`` (Vegas draw one, Vegas draw three, Klondike) for search
only: the rules stay the game module's, and tests/unit/test_experts_klondike.py drives random
positions through the real rules and checks this model agrees move for move (legal moves,
resulting position, units). Its building tables are computed from the game's own predicates
(``alternate_colour_down``, ``same_suit_up``, ``is_king``) over every pair of cards, its pile
counts and draw/pass/turn settings are the rules object's, so the model restates no rule.

A position is a tuple ``(columns, downs, found, stock, waste, passes)``:

- ``columns``: 7 tuples of card numbers, bottom first (a card's number is its index in
  ``CANONICAL_DECK``: 13 x suit + rank - 1); ``downs``: how many of each lie face down;
- ``found``: for each suit (``SUITS`` order), how many cards its foundation holds (which
  foundation pile holds which suit is the rules' business: :func:`real_action` asks them);
- ``stock`` and ``waste``: card numbers, bottom first (the last is the top); ``passes`` the
  table's ``passes_left`` (None: unlimited).

In a position the player only partly knows, a sealed slot is ``UNKNOWN`` (taken by position,
its number never read) until a sampled world fills it.

A move is a tuple whose first item says what it is: ``(DRAW,)``, ``(RECYCLE,)``, ``(TURN, i)``,
``(COL_COL, i, j, n)`` (the top ``n`` cards of column i onto column j), ``(COL_FOUND, i)``,
``(WASTE_COL, j)``, ``(WASTE_FOUND,)``, ``(FOUND_COL, suit, j)``.

:class:`Solver` searches a world (every card known) depth first for the line reaching the most
cards on the foundations: draws are folded into *stock moves* (draw, and recycle where passes
allow, until a given card is on top of the waste, then play it), the moves that can never hurt
are played at once (turning a face-down card; a card to its foundation when both foundations
of the other colour already hold the cards that could go on it), a transposition set searches
each position once, and a node budget bounds it (exhaustive: exact; else a lower bound).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Collection, Iterator, Sequence
from typing import TypeVar

from service.games import klondike as kl
from service.rtp.experts.cards import CARDS, HEIGHT, NUMBER, SUIT
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Turn
from service.rules.building import alternate_colour_down, is_king
from service.rules.cards import RED, Card
from service.rules.game import GameRules
from service.rules.table import Table

COLUMNS = kl.COLUMNS
UNKNOWN = -1

KING: tuple[bool, ...] = tuple(is_king(c) for c in CARDS)
#: ONTO[a]: the cards a column card ``a`` may be built on, from the rules' predicate.
ONTO: tuple[frozenset[int], ...] = tuple(
    frozenset(j for j, b in enumerate(CARDS) if alternate_colour_down(a, b)) for a in CARDS
)
#: UNDER[b]: the cards that may be built on ``b`` (the inverse of ONTO).
UNDER: tuple[frozenset[int], ...] = tuple(
    frozenset(a for a in range(len(CARDS)) if b in ONTO[a]) for b in range(len(CARDS))
)
PARENTS: tuple[tuple[int, ...], ...] = tuple(tuple(sorted(o)) for o in ONTO)
CHILDREN_OF: tuple[tuple[int, ...], ...] = tuple(tuple(sorted(u)) for u in UNDER)
KINGS: tuple[int, ...] = tuple(a for a in range(len(CARDS)) if KING[a])

FULL = 13  # a suit's foundation complete
#: OTHER_COLOUR[s]: the suits of the other colour.
OTHER_COLOUR: tuple[tuple[int, ...], ...] = tuple(
    tuple(t for t in range(4) if RED[CARDS[13 * t]] != RED[CARDS[13 * s]]) for s in range(4)
)
#: SAFE_FROM[a]: ``a`` goes up safely once both other-colour foundations hold this many cards
#: (then every card that could be built on it is up); an Ace or a Two always does.
SAFE_FROM: tuple[int, ...] = tuple(0 if HEIGHT[a] <= 1 else HEIGHT[a] for a in range(len(CARDS)))

DRAW, RECYCLE, TURN, COL_COL, COL_FOUND, WASTE_COL, WASTE_FOUND, FOUND_COL = range(8)

Cols = tuple[tuple[int, ...], ...]
State = tuple[Cols, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int | None]
Move = tuple[int, ...]
T_ = TypeVar("T_")


def units(st: State) -> int:
    f = st[2]
    return f[0] + f[1] + f[2] + f[3]


def card_number(slot: int | Card) -> int:
    """A slot's card number, or UNKNOWN for a sealed slot (its number is never read)."""
    return NUMBER[slot] if isinstance(slot, str) else UNKNOWN


def state_of(table: Table) -> State:
    """The position a table shows (sealed slots UNKNOWN)."""
    p = table.piles
    cols = tuple(tuple(card_number(s) for s in p[t].cards) for t in kl.T)
    downs = tuple(p[t].down for t in kl.T)
    found = [0, 0, 0, 0]
    for f in kl.F:
        top = p[f].top
        if top is not None:
            found[SUIT[NUMBER[top]]] = len(p[f].cards)
    stock = tuple(card_number(s) for s in p[kl.S].cards)
    waste = tuple(card_number(s) for s in p[kl.W].cards)
    return cols, downs, tuple(found), stock, waste, table.passes_left


def worlds(st: State, unseen: list[int], n: int, rng: random.Random) -> list[State]:
    """The worlds a sampling player weighs a decision over: every assignment of the ``unseen``
    cards to the position's UNKNOWN slots once when there are at most ``n``, else ``n`` drawn
    from ``rng`` (``unseen`` is shuffled in place)."""
    if math.factorial(len(unseen)) <= n:
        return [fill(st, p) for p in itertools.permutations(unseen)]
    found = []
    for _ in range(n):
        rng.shuffle(unseen)
        found.append(fill(st, unseen))
    return found


def fill(st: State, cards: Sequence[int]) -> State:
    """The position with its UNKNOWN slots given ``cards`` in slot order: columns 0..6 bottom
    to top, then the stock bottom to top (the order ``state_of`` lists them)."""
    deal = iter(cards)
    cols, downs, found, stock, waste, passes = st
    cols = tuple(
        tuple(next(deal) if c == UNKNOWN else c for c in col) if UNKNOWN in col else col
        for col in cols
    )
    if UNKNOWN in stock:
        stock = tuple(next(deal) if c == UNKNOWN else c for c in stock)
    return cols, downs, found, stock, waste, passes


class Model:
    """One variant's moves on the compact position (its draw count, passes, turning)."""

    def __init__(self, rules: GameRules) -> None:
        assert isinstance(rules, kl.Klondike)
        self.draw_count = rules.draw_count
        self.explicit_turn = rules.explicit_turn

    # --- the rules' moves, unpruned (what the conformance test checks) --------------------------

    @staticmethod
    def legal_stock(st: State) -> list[Move]:
        """A draw or a recycle, if the rules allow it."""
        stock, waste, passes = st[3], st[4], st[5]
        if stock:
            return [(DRAW,)]
        if waste and (passes is None or passes > 1):
            return [(RECYCLE,)]
        return []

    def legal(self, st: State) -> list[Move]:
        cols, downs, found, _stock, waste, _passes = st
        out = self.legal_stock(st)
        empty = [j for j in range(COLUMNS) if not cols[j]]
        tops = [col[-1] if len(col) > d else UNKNOWN for col, d in zip(cols, downs, strict=True)]

        def targets(a: int, skip: int) -> list[int]:
            if KING[a]:
                return [j for j in empty if j != skip]
            return [j for j in range(COLUMNS) if j != skip and tops[j] in ONTO[a]]

        if waste:
            w = waste[-1]
            if found[SUIT[w]] == HEIGHT[w]:
                out.append((WASTE_FOUND,))
            out.extend((WASTE_COL, j) for j in targets(w, -1))
        for i in range(COLUMNS):
            col, d = cols[i], downs[i]
            for n in range(1, len(col) - d + 1):
                out.extend((COL_COL, i, j, n) for j in targets(col[-n], i))
            if len(col) > d and found[SUIT[col[-1]]] == HEIGHT[col[-1]]:
                out.append((COL_FOUND, i))
        for s in range(4):
            if found[s]:
                out.extend((FOUND_COL, s, j) for j in targets(13 * s + found[s] - 1, -1))
        if self.explicit_turn:
            out.extend((TURN, i) for i in range(COLUMNS) if cols[i] and downs[i] == len(cols[i]))
        return out

    def apply(self, st: State, m: Move) -> State:
        """The position after one move (and nothing the rules then play by themselves)."""
        cols, downs, found, stock, waste, passes = st
        kind = m[0]
        if kind == DRAW:
            k = min(self.draw_count, len(stock))
            return cols, downs, found, stock[:-k], waste + stock[: -k - 1 : -1], passes
        if kind == RECYCLE:
            return cols, downs, found, waste[::-1], (), None if passes is None else passes - 1
        if kind == TURN:
            i = m[1]
            return cols, _set(downs, i, downs[i] - 1), found, stock, waste, passes
        if kind == COL_COL:
            i, j, n = m[1], m[2], m[3]
            src, dst = cols[i], cols[j]
            left = len(src) - n
            cols = _set2(cols, i, src[:left], j, dst + src[left:])
            if downs[i] > left:
                downs = _set(downs, i, left)
            return cols, downs, found, stock, waste, passes
        if kind == COL_FOUND:
            i = m[1]
            src = cols[i]
            a = src[-1]
            cols = _set(cols, i, src[:-1])
            if downs[i] > len(src) - 1:
                downs = _set(downs, i, len(src) - 1)
            return cols, downs, _set(found, SUIT[a], found[SUIT[a]] + 1), stock, waste, passes
        if kind == WASTE_COL:
            j = m[1]
            return _set(cols, j, cols[j] + waste[-1:]), downs, found, stock, waste[:-1], passes
        if kind == WASTE_FOUND:
            s = SUIT[waste[-1]]
            return cols, downs, _set(found, s, found[s] + 1), stock, waste[:-1], passes
        if kind == FOUND_COL:
            s, j = m[1], m[2]
            a = 13 * s + found[s] - 1
            return (
                _set(cols, j, cols[j] + (a,)),
                downs,
                _set(found, s, found[s] - 1),
                stock,
                waste,
                passes,
            )
        raise ValueError(m)

    def automatic(self, st: State) -> State:
        """What the rules then play by themselves: auto-turn (Klondike), auto-complete."""
        cols, downs, found, stock, waste, passes = st
        if not self.explicit_turn and any(
            d and d == len(c) for c, d in zip(cols, downs, strict=True)
        ):
            downs = tuple(
                d - 1 if d and d == len(c) else d for c, d in zip(cols, downs, strict=True)
            )
        if not stock and not waste and not any(downs) and any(cols):
            return ((),) * COLUMNS, downs, (FULL,) * 4, stock, waste, passes
        return cols, downs, found, stock, waste, passes

    def step(self, st: State, m: Move) -> State:
        """The position after a move and whatever the rules then play by themselves."""
        return self.automatic(self.apply(st, m))

    # --- to and from the real actions -----------------------------------------------------------

    @staticmethod
    def move_of(table: Table, action: PlayAction) -> Move:
        """The model's move for a real action (an Ace to any empty foundation is one move)."""
        if isinstance(action, Draw):
            return (DRAW,)
        if isinstance(action, Recycle):
            return (RECYCLE,)
        if isinstance(action, Turn):
            return (TURN, int(action.pile[8:]))
        assert isinstance(action, MoveCards)
        src, dst = action.source, action.target
        if src == kl.WASTE:
            return (WASTE_FOUND,) if dst.startswith("foundation") else (WASTE_COL, int(dst[8:]))
        if src.startswith("foundation"):
            top = table.pile(src).top
            assert top is not None
            return (FOUND_COL, SUIT[NUMBER[top]], int(dst[8:]))
        i = int(src[8:])
        if dst.startswith("foundation"):
            return (COL_FOUND, i)
        return (COL_COL, i, int(dst[8:]), action.count or 1)


def real_action(table: Table, m: Move) -> PlayAction:
    """The real action for a model move on ``table`` (the rules say which foundation)."""
    kind = m[0]
    if kind == DRAW:
        return Draw()
    if kind == RECYCLE:
        return Recycle()
    if kind == TURN:
        return Turn(kl.TABLEAU_PILES[m[1]])
    if kind == COL_COL:
        return MoveCards(kl.TABLEAU_PILES[m[1]], kl.TABLEAU_PILES[m[2]], m[3])
    if kind in (COL_FOUND, WASTE_FOUND):
        src = kl.WASTE if kind == WASTE_FOUND else kl.TABLEAU_PILES[m[1]]
        card = table.pile(src).top
        assert card is not None
        f = kl.Klondike.fitting_foundation(table, card)
        assert f is not None
        return MoveCards(src, kl.FOUNDATION_PILES[f], 1)
    if kind == WASTE_COL:
        return MoveCards(kl.WASTE, kl.TABLEAU_PILES[m[1]], 1)
    if kind == FOUND_COL:
        for f, pile_id in zip(kl.F, kl.FOUNDATION_PILES, strict=True):
            top = table.piles[f].top
            if top is not None and SUIT[NUMBER[top]] == m[1]:
                return MoveCards(pile_id, kl.TABLEAU_PILES[m[2]], 1)
    raise ValueError(m)


def _set(t: tuple[T_, ...], i: int, v: T_) -> tuple[T_, ...]:
    return (*t[:i], v, *t[i + 1 :])


def _set2(cols: Cols, i: int, a: tuple[int, ...], j: int, b: tuple[int, ...]) -> Cols:
    c = list(cols)
    c[i] = a
    c[j] = b
    return tuple(c)


# --- the search ---------------------------------------------------------------------------------

#: A stock move: the card, the stock, waste (less the card) and passes after it, and the draws
#: and recycles that bring it to the top of the waste.
Reach = tuple[int, tuple[int, ...], tuple[int, ...], int | None, tuple[Move, ...]]
Segment = tuple[Move, ...]


class Solver:
    """Depth-first search of a world (every card known) for the most cards on the
    foundations; see the module docstring."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.draw_count = model.draw_count
        self.explicit_turn = model.explicit_turn
        self._reach: dict[
            tuple[tuple[int, ...], tuple[int, ...], int | None],
            tuple[list[Reach], dict[int, list[int]]],
        ] = {}
        self._order: dict[tuple[int, ...], tuple[int, ...]] = {}

    # --- the moves that never hurt ---------------------------------------------------------

    def settle(self, st: State, line: list[Move]) -> State:
        """Turn face-down tops and play safe foundation moves until none is left (appending the
        player's own moves to ``line``); the rules' auto-complete ends it."""
        cols, downs, found, stock, waste, passes = st
        while True:
            if not stock and not waste and not any(downs):
                if any(cols):
                    return ((),) * COLUMNS, downs, (FULL,) * 4, stock, waste, passes
                return cols, downs, found, stock, waste, passes
            for i in range(COLUMNS):
                d = downs[i]
                if d and d == len(cols[i]):
                    downs = _set(downs, i, d - 1)
                    if self.explicit_turn:
                        line.append((TURN, i))
                    break
            else:
                for s in range(4):
                    h = found[s]
                    if h == FULL:
                        continue
                    a = 13 * s + h
                    o = OTHER_COLOUR[s]
                    if found[o[0]] < SAFE_FROM[a] or found[o[1]] < SAFE_FROM[a]:
                        continue
                    for i in range(COLUMNS):
                        col = cols[i]
                        if col and col[-1] == a:
                            cols = _set(cols, i, col[:-1])
                            found = _set(found, s, h + 1)
                            line.append((COL_FOUND, i))
                            break
                    else:
                        if waste and waste[-1] == a:
                            waste = waste[:-1]
                            found = _set(found, s, h + 1)
                            line.append((WASTE_FOUND,))
                        else:
                            continue
                    break
                else:
                    return cols, downs, found, stock, waste, passes

    # --- the stock ---------------------------------------------------------------------------

    def reach(
        self, stock: tuple[int, ...], waste: tuple[int, ...], passes: int | None
    ) -> tuple[list[Reach], dict[int, list[int]]]:
        """Every card that draws (and recycles) can bring to the top of the waste, fewest draws
        first (with unlimited passes each card once, at its first reach), and where each card
        is in that list."""
        key = (stock, waste, passes)
        found = self._reach.get(key)
        if found is not None:
            return found
        out: list[Reach] = []
        n = self.draw_count
        s, w, p = stock, waste, passes
        ops: list[Move] = []
        met = {len(w)} if passes is None else set()
        cards_met: set[int] = set()
        while True:
            if s:
                k = min(n, len(s))
                w = w + s[: -k - 1 : -1]
                s = s[:-k]
                ops.append((DRAW,))
            elif w and (p is None or p > 1):
                s, w = w[::-1], ()
                p = None if p is None else p - 1
                ops.append((RECYCLE,))
                continue
            else:
                break
            if passes is None:
                if len(w) in met:
                    break
                met.add(len(w))
                if w[-1] in cards_met:
                    continue
                cards_met.add(w[-1])
            out.append((w[-1], s, w[:-1], p, tuple(ops)))
        by_card: dict[int, list[int]] = {}
        for k, r in enumerate(out):
            by_card.setdefault(r[0], []).append(k)
        if len(self._reach) > 100_000:
            self._reach.clear()
        self._reach[key] = (out, by_card)
        return out, by_card

    def candidates(self, st: State, legal: Collection[Move], decided: set[State]) -> list[Move]:
        """The moves a searching player weighs from a settled position it sees (sealed cards
        UNKNOWN): the first move of each of the search's moves (a plain draw or recycle for
        the stock), legal at the table, once each, in the search's order (which breaks ties),
        less any whose position, after what plays by itself, it has already decided in (no
        loops: in Klondike a tie would otherwise wander round the stock)."""
        out: list[Move] = []
        for seg, _child in self.moves(st, stock_moves=False):
            m = seg[0]
            if (
                m in legal
                and m not in out
                and self.model.automatic(self.model.step(st, m)) not in decided
            ):
                out.append(m)
        return out

    # --- search -----------------------------------------------------------------------------

    def moves(self, st: State, stock_moves: bool = True) -> Iterator[tuple[Segment, State]]:
        """The moves the search tries from a settled position, most promising first, each as
        (the player's moves, the position after them, unsettled). With ``stock_moves`` False
        it offers a plain draw and recycle instead of stock moves (the stock may then hold
        UNKNOWN cards)."""
        cols, downs, found, stock, waste, passes = st
        at: dict[int, int] = {}  # a column's top card -> the column
        empty = -1
        for j in range(COLUMNS):
            col = cols[j]
            if col:
                at[col[-1]] = j
            elif empty < 0:
                empty = j
        # The card each foundation takes next.
        nxt = [13 * s + h for s, h in enumerate(found) if h < FULL]

        # 1. Uncover a face-down card: the whole face-up run onto a column (deepest first),
        #    or a lone face-up card to its foundation.
        order = self._order.get(downs)
        if order is None:
            order = self._order[downs] = tuple(
                sorted((i for i in range(COLUMNS) if downs[i]), key=lambda i: -downs[i])
            )
        bases: list[int] = []  # the face-up cards lying on face-down ones
        for i in order:
            col, d = cols[i], downs[i]
            n = len(col) - d
            if not n:
                continue  # a face-down top (an explicit turn comes first)
            a = col[d]
            bases.append(a)
            yield from _runs_onto(st, i, n, a, at, empty)
            if n == 1 and found[SUIT[a]] == HEIGHT[a]:
                yield ((COL_FOUND, i),), _col_found(st, i)
        # 2. The waste card, column tops, then stock cards: to a foundation or onto a column.
        w_top = -1
        if waste:
            a = w_top = waste[-1]
            if found[SUIT[a]] == HEIGHT[a]:
                yield ((WASTE_FOUND,),), _place(st, a, -1, stock, waste[:-1], passes)
            if KING[a]:
                if empty >= 0:
                    yield ((WASTE_COL, empty),), _place(st, a, empty, stock, waste[:-1], passes)
            else:
                for b in PARENTS[a]:
                    j = at.get(b, -1)
                    if j >= 0:
                        yield ((WASTE_COL, j),), _place(st, a, j, stock, waste[:-1], passes)
        for a in nxt:
            i = at.get(a, -1)
            if i >= 0 and (downs[i] == 0 or len(cols[i]) - downs[i] > 1):
                yield ((COL_FOUND, i),), _col_found(st, i)
        if not stock_moves:
            for m in self.model.legal_stock(st):
                yield (m,), self.model.apply(st, m)
        elif stock or waste:
            reach, by_card = self.reach(stock, waste, passes)
            wanted: list[tuple[int, int]] = []  # (reach index, target column or -1)
            for a in nxt:
                for k in by_card.get(a, ()):
                    wanted.append((k, -1))
            for b, j in at.items():
                for a in CHILDREN_OF[b]:
                    for k in by_card.get(a, ()):
                        wanted.append((k, j))
            if empty >= 0:
                for a in KINGS:
                    for k in by_card.get(a, ()):
                        wanted.append((k, empty))
            wanted.sort()
            for k, j in wanted:
                a, s2, w2, p2, ops = reach[k]
                yield (
                    (*ops, (WASTE_FOUND,) if j < 0 else (WASTE_COL, j)),
                    _place(st, a, j, s2, w2, p2),
                )
        # 3. Free a card: move part of a run when the card it leaves on top goes up or takes
        #    the waste card; empty a column with no face-down card when a King could use it.
        freeing = set(nxt)
        if w_top >= 0:
            freeing.update(PARENTS[w_top])
        for i in range(COLUMNS):
            col, d = cols[i], downs[i]
            if len(col) - d < 2 or freeing.isdisjoint(col[d:-1]):
                continue
            for k in range(d, len(col) - 1):
                if col[k] in freeing:
                    yield from _runs_onto(st, i, len(col) - k - 1, col[k + 1], at, empty)
        if empty < 0:
            king_waiting: bool | None = None
            for i in range(COLUMNS):
                col = cols[i]
                if downs[i] == 0 and col and not KING[col[0]]:
                    if king_waiting is None:
                        king_waiting = _king_waiting(st)
                    if not king_waiting:
                        break
                    n = len(col)
                    for b in PARENTS[col[0]]:
                        j = at.get(b, i)
                        if j != i:
                            yield ((COL_COL, i, j, n),), _col_col(st, i, j, n)
        # 4. A card back off a foundation when the waste card, or a run lying on face-down
        #    cards, could then go on it.
        faceup: set[int] | None = None
        for s in range(4):
            h = found[s]
            if h > 1:
                a = 13 * s + h - 1
                o = OTHER_COLOUR[s]
                if found[o[0]] >= SAFE_FROM[a] and found[o[1]] >= SAFE_FROM[a]:
                    continue  # settle would put it straight back
                kids = CHILDREN_OF[a]
                if faceup is None:
                    faceup = {w_top}
                    for i in range(COLUMNS):
                        if len(cols[i]) > downs[i]:
                            faceup.update(cols[i][downs[i] :])
                if kids[0] in faceup or kids[1] in faceup:
                    if KING[a]:
                        if empty >= 0:
                            yield ((FOUND_COL, s, empty),), _found_col(st, s, empty)
                    else:
                        for b in PARENTS[a]:
                            j = at.get(b, -1)
                            if j >= 0:
                                yield ((FOUND_COL, s, j),), _found_col(st, s, j)

    def solve(self, st: State, budget: int) -> tuple[int, list[Move], bool, int]:
        """The most cards on the foundations any line from ``st`` reaches (searching at most
        ``budget`` positions), the line (the player's moves), whether the search was
        exhaustive, and the positions searched."""
        line: list[Move] = []
        st = self.settle(st, line)
        best = units(st)
        best_line = list(line)
        seen: set[object] = set()
        nodes = 0
        exhausted = True
        path: list[Segment] = [tuple(line)]

        def visit(s: State) -> None:
            nonlocal nodes, best, best_line, exhausted
            cols, downs, found, _stock, waste, passes = s
            key = (cols, downs, found, len(waste), passes)
            if key in seen:
                return
            seen.add(key)
            nodes += 1
            u = found[0] + found[1] + found[2] + found[3]
            if u > best:
                best = u
                best_line = [m for seg in path for m in seg]
            if best == 52 or len(path) > 400:
                return
            for seg, child in self.moves(s):
                if nodes >= budget:
                    exhausted = False
                    return
                auto: list[Move] = []
                child = self.settle(child, auto)
                path.append(seg + tuple(auto))
                visit(child)
                path.pop()
                if best == 52:
                    return

        visit(st)
        return best, best_line, exhausted or best == 52, nodes


def _runs_onto(
    st: State, i: int, n: int, a: int, at: dict[int, int], empty: int
) -> Iterator[tuple[Segment, State]]:
    """The top ``n`` cards of column ``i`` (``a`` at their bottom) onto every column top they
    go on, or a King's run into the first empty column."""
    if KING[a]:
        if empty >= 0:
            yield ((COL_COL, i, empty, n),), _col_col(st, i, empty, n)
        return
    for b in PARENTS[a]:
        j = at.get(b, i)
        if j != i:
            yield ((COL_COL, i, j, n),), _col_col(st, i, j, n)


def _king_waiting(st: State) -> bool:
    """Is a King anywhere but at the bottom of a column or on a foundation (so it could use an
    empty column)?"""
    cols, found = st[0], st[2]
    placed = sum(1 for col in cols if col and col[0] != UNKNOWN and KING[col[0]])
    return placed + sum(1 for h in found if h == FULL) < 4


def _col_col(st: State, i: int, j: int, n: int) -> State:
    cols, downs, found, stock, waste, passes = st
    src, dst = cols[i], cols[j]
    left = len(src) - n
    return _set2(cols, i, src[:left], j, dst + src[left:]), downs, found, stock, waste, passes


def _col_found(st: State, i: int) -> State:
    cols, downs, found, stock, waste, passes = st
    src = cols[i]
    a = src[-1]
    s = SUIT[a]
    return _set(cols, i, src[:-1]), downs, _set(found, s, found[s] + 1), stock, waste, passes


def _place(
    st: State, a: int, j: int, stock: tuple[int, ...], waste: tuple[int, ...], passes: int | None
) -> State:
    """``a``, taken off the waste (leaving ``stock``/``waste``/``passes``), onto column ``j``
    or (-1) its foundation."""
    cols, downs, found = st[0], st[1], st[2]
    if j < 0:
        s = SUIT[a]
        return cols, downs, _set(found, s, found[s] + 1), stock, waste, passes
    return _set(cols, j, cols[j] + (a,)), downs, found, stock, waste, passes


def _found_col(st: State, s: int, j: int) -> State:
    cols, downs, found, stock, waste, passes = st
    a = 13 * s + found[s] - 1
    return _set(cols, j, cols[j] + (a,)), downs, _set(found, s, found[s] - 1), stock, waste, passes


def descend(solver: Solver, st: State, budget: int, total: int) -> tuple[int, list[Move]]:
    """A guided descent through a world: from each position, search every move's position
    (``budget`` positions each) and take the best, until a search finds the whole game or
    ``total`` positions are spent; the most cards any line it saw reached, and that line."""
    line: list[Move] = []
    st = solver.settle(st, line)
    best, best_line = units(st), list(line)
    spent = 0
    walked: set[State] = {st}
    while spent < total and best < 52:
        top: tuple[int, int] | None = None
        step: tuple[Segment, State] | None = None
        for k, (seg, child) in enumerate(solver.moves(st)):
            auto: list[Move] = []
            child = solver.settle(child, auto)
            if child in walked:
                continue
            u, sub, _ex, n = solver.solve(child, budget)
            spent += n
            if u > best:
                best, best_line = u, [*line, *seg, *auto, *sub]
                if u == 52:
                    return best, best_line
            if top is None or (u, -k) > top:
                top, step = (u, -k), ((*seg, *auto), child)
        if step is None:
            break
        line.extend(step[0])
        st = step[1]
        walked.add(st)
    return best, best_line
