"""A fast search model of a Scorpion position, a solver for a world with every card known, and
the reference bot's policy for play-outs (pure). It mirrors the rules of
``service.games.scorpion`` for search only: the real decider stays the judge (every action a
player returns is checked there), and tests/unit/test_experts_scorpion.py drives random
positions through the real rules and checks that this model agrees move for move, and that its
bot plays as ``service.rtp.bots.scorpion`` does.

A card is its index in ``CANONICAL_DECK`` (0-51; both decks of Super Scorpion share the codes).
What may go on what comes from the game module's own predicates: ``PARENT`` is built from
``same_suit_down``, ``KINGS`` from ``is_king``, the empty-column rule is checked against ``fits``.

A position is ``(cols, downs, stock)``: each column's cards bottom first (``bytes``, one card a
byte), how many of them lie face down, and the stock still to deal in deal order (next card
first). A world knows every card. A move is ``(i, j, n)``: the top ``n`` cards of column ``i``
onto column ``j``; ``DRAW`` deals the stock's next row.

Search moves (:func:`search_moves`) are the rules' moves less those that cannot help: a King
already at the bottom of its column; a card already on its parent (on two decks it may go onto
the twin parent only when that puts it in order and it was not); a King to an empty column
other than the first once the stock is dealt (empty columns are then alike). Every search move
puts a card on its parent that was not on it, or a King at the bottom of a column, or deals, so
no line goes round in a circle, and units never fall along one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from service.games.scorpion import Scorpion, fits
from service.rules.actions import Draw, MoveCards, PlayAction
from service.rules.building import is_king, same_suit_down
from service.rules.cards import CANONICAL_DECK, Card
from service.rules.table import Pile, Table

CODE: dict[Card, int] = {c: i for i, c in enumerate(CANONICAL_DECK)}
#: The card each card goes on (the same suit one rank higher), or -1 for a King.
PARENT: tuple[int, ...] = tuple(
    next((CODE[p] for p in CANONICAL_DECK if same_suit_down(c, p)), -1) for c in CANONICAL_DECK
)
#: The card that goes on each card, or -1 for an Ace (nothing goes on an Ace).
CHILD: tuple[int, ...] = tuple(PARENT.index(i) if i in PARENT else -1 for i in range(52))
KINGS: tuple[bool, ...] = tuple(is_king(c) for c in CANONICAL_DECK)
KING_CODES: tuple[int, ...] = tuple(i for i in range(52) if KINGS[i])
#: A card a player's view has not seen.
UNSEEN = 255
#: An empty column takes a King only (``fits`` on an empty pile), checked once here.
assert all(fits(c, Pile()) == KINGS[CODE[c]] for c in CANONICAL_DECK)


def _descent(card: int) -> bytes:
    out = [card]
    while CHILD[out[-1]] >= 0:
        out.append(CHILD[out[-1]])
    return bytes(out)


#: The run that lies on a card in order: the card, its child, its child's child ... the Ace.
DESC: tuple[bytes, ...] = tuple(_descent(c) for c in range(52))

Cols = tuple[bytes, ...]
State = tuple[Cols, tuple[int, ...], bytes]
Move = tuple[int, int, int]
DRAW: Move = (-1, -1, 0)


def run_from(col: bytes | list[int], k: int) -> int:
    """The length of the same-suit descending run from ``col[k]`` up."""
    seg = col[k:]
    d = DESC[col[k]]
    if isinstance(seg, bytes) and d.startswith(seg):
        return len(seg)
    n = 1
    m = min(len(seg), len(d))
    while n < m and seg[n] == d[n]:
        n += 1
    return n


def _places(col: list[int], card: int, lo: int) -> list[int]:
    """Where ``card`` lies in ``col`` at index ``lo`` or above (both copies on two decks)."""
    k = col.index(card)
    if col.count(card) == 1:
        return [k] if k >= lo else []
    k2 = col.index(card, k + 1)
    return [x for x in (k, k2) if x >= lo]


def col_units(col: bytes | list[int], down: int) -> int:
    """The cards in order in one column (``service.games.scorpion.cards_in_order``)."""
    if down or not col or not KINGS[col[0]]:
        return 0
    return run_from(col, 0)


class Model:
    """One game's shape (columns, cards a draw deals, decks), and positions of its tables."""

    __slots__ = ("columns", "decks", "draw_count", "max_units", "rules")

    def __init__(self, rules: Scorpion) -> None:
        self.rules = rules
        self.columns = rules.columns
        self.decks = rules.decks
        self.draw_count = rules.draw_count
        self.max_units = rules.max_units

    # --- tables <-> positions -----------------------------------------------------------------

    def view(self, table: Table) -> State:
        """What a player sees, as a position with ``UNSEEN`` for every card not seen (taken by
        position: a sealed number's value is never read). In Scorpion a card is unseen exactly
        while it lies face down in a column or in the stock."""
        cols = []
        for t in self.rules.t:
            pile = table.piles[t]
            col = bytes(UNSEEN if isinstance(s, int) else CODE[s] for s in pile.cards)
            assert UNSEEN not in col[pile.down :], "a face-up card is always seen"
            cols.append(col)
        downs = tuple(table.piles[t].down for t in self.rules.t)
        return tuple(cols), downs, bytes([UNSEEN]) * len(table.piles[self.rules.s].cards)

    @staticmethod
    def fill(state: State, cards: Sequence[int]) -> State:
        """A world: ``state`` (a view, or where the bot's play took it without showing a card)
        with its unseen cards given ``cards`` in sealed-slot order: the columns' face-down cards
        from the left, bottom first, then the stock in deal order."""
        cols, downs, stock = state
        out = []
        at = 0
        for col, d in zip(cols, downs, strict=True):
            if d:
                col = bytes(cards[at : at + d]) + col[d:]
                at += d
            out.append(col)
        assert len(cards) - at == len(stock)
        return tuple(out), downs, bytes(cards[at:])

    def until_shown(self, state: State) -> tuple[State, Move | None]:
        """The bot's play from ``state`` up to (not including) its first move that shows an
        unseen card (one that turns a card, or the draw): that position and that move, or where
        the bot stops and None. Its moves before then read face-up cards only, so in every world
        of a view they are the same."""
        play = _Play(state, self.draw_count)
        for _ in range(1_000):
            m = play.bot_step()
            if m is None:
                break
            i, _, n = m
            if i < 0:
                return play.state(), m
            d = play.downs[i]
            if d and len(play.cols[i]) - n == d:
                return play.state(), m
            play.apply(m)
        return play.state(), None

    def world(self, table: Table) -> State:
        """The position of a table whose every slot is a card code (a world)."""
        cols = tuple(bytes(CODE[str(s)] for s in table.piles[t].cards) for t in self.rules.t)
        downs = tuple(table.piles[t].down for t in self.rules.t)
        stock = bytes(CODE[str(s)] for s in reversed(table.piles[self.rules.s].cards))
        return cols, downs, stock

    def action(self, move: Move) -> PlayAction:
        if move == DRAW:
            return Draw()
        i, j, n = move
        return MoveCards(self.rules.tableau_piles[i], self.rules.tableau_piles[j], n)

    def move_of(self, action: PlayAction) -> Move:
        if isinstance(action, Draw):
            return DRAW
        assert isinstance(action, MoveCards)
        assert action.count is not None
        piles = self.rules.tableau_piles
        return piles.index(action.source), piles.index(action.target), action.count

    # --- the rules, mirrored --------------------------------------------------------------------

    def all_moves(self, state: State) -> list[Move]:
        """Every move the rules allow (for the conformance test): draw first, then by source
        column, from the top card down, then by target column."""
        cols, downs, stock = state
        out: list[Move] = [DRAW] if stock else []
        for i, col in enumerate(cols):
            for n in range(1, len(col) - downs[i] + 1):
                card = col[-n]
                for j, onto in enumerate(cols):
                    if j != i and (KINGS[card] if not onto else onto[-1] == PARENT[card]):
                        out.append((i, j, n))
        return out

    def apply(self, state: State, move: Move) -> State:
        cols, downs, stock = state
        if move == DRAW:
            k = min(self.draw_count, len(stock))
            new = list(cols)
            for c in range(k):
                new[c] = cols[c] + stock[c : c + 1]
            return tuple(new), downs, stock[k:]
        i, j, n = move
        src = cols[i]
        rest = src[:-n]
        new = list(cols)
        new[i] = rest
        new[j] = cols[j] + src[-n:]
        d = downs[i]
        if d and len(rest) == d:  # a face-down card became the top: it turns
            return tuple(new), (*downs[:i], d - 1, *downs[i + 1 :]), stock
        return tuple(new), downs, stock

    def units(self, state: State) -> int:
        cols, downs, _ = state
        return sum(col_units(c, d) for c, d in zip(cols, downs, strict=True))

    # --- the reference bot's policy, mirrored (the play-outs' policy) ---------------------------

    def bot_move(self, state: State) -> Move | None:
        """The move ``service.rtp.bots.scorpion`` plays here (the same filters, score and
        tie-breaks), DRAW when it would deal, None when it would stop."""
        return _Play(state, self.draw_count).bot_step()

    def bot_candidates(self, state: State) -> list[Move]:
        """The moves the reference bot weighs, best first by its score (ties in its order),
        then the draw if the stock holds cards."""
        scored = _Play(state, self.draw_count).scored()
        order = sorted(range(len(scored)), key=lambda k: scored[k][0], reverse=True)
        out = [scored[k][1] for k in order]
        if state[2]:
            out.append(DRAW)
        return out

    def cached_rollout(self, state: State, cache: dict[object, int], limit: int = 1_000) -> int:
        """:meth:`rollout`'s units, remembering them for every position the play-out passes
        (in one world the bot's play from a position is always the same)."""
        play = _Play(state, self.draw_count)
        passed: list[object] = []
        units = -1
        for _ in range(limit):
            key = play.key()
            hit = cache.get(key)
            if hit is not None:
                units = hit
                break
            passed.append(key)
            m = play.bot_step()
            if m is None:
                break
            play.apply(m)
        if units < 0:
            units = sum(play.runs)
        for seen in passed:
            cache[seen] = units
        return units

    def rollout(self, state: State, limit: int = 1_000) -> tuple[int, State]:
        """The units the bot's policy ends with from ``state`` (in a world), and where."""
        play = _Play(state, self.draw_count)
        for _ in range(limit):
            m = play.bot_step()
            if m is None:
                break
            play.apply(m)
        return sum(play.runs), play.state()


def search_moves(cols: Cols, downs: tuple[int, ...], stock: bool, two: bool) -> list[Move]:
    """The search moves (module docstring), most promising first: a move that turns a card,
    then by the units it adds, then a King out of a column with the most face-down cards; the
    draw last."""
    flat = b"".join(cols)
    starts = [0, *accumulate(map(len, cols))]
    scored: list[tuple[int, int, int, int, Move]] = []
    empty_seen = False
    for j, tgt in enumerate(cols):
        if not tgt:
            if empty_seen and not stock:
                continue  # once the stock is dealt, empty columns are alike
            empty_seen = True
            for king in KING_CODES:
                p = flat.find(king)
                while p >= 0:
                    i = bisect_right(starts, p) - 1
                    k = p - starts[i]
                    d = downs[i]
                    if k >= d and k:
                        src = cols[i]
                        scored.append((int(k == d), run_from(src, k), d, -i, (i, j, len(src) - k)))
                    p = flat.find(king, p + 1) if two else -1
            continue
        top = tgt[-1]
        child = CHILD[top]
        if child < 0:
            continue
        p = flat.find(child)
        full = -1  # does the target's run reach its top? (computed on demand)
        while p >= 0:
            i = bisect_right(starts, p) - 1
            k = p - starts[i]
            d = downs[i]
            if i != j and k >= d:
                src = cols[i]
                if full < 0:
                    full = int(col_units(tgt, downs[j]) == len(tgt))
                if k > d and src[k - 1] == top:
                    # already on a twin parent: only to come into order
                    if full and col_units(src, d) < k:
                        scored.append((0, run_from(src, k), 0, -i, (i, j, len(src) - k)))
                else:
                    gain = run_from(src, k) if full else 0
                    scored.append((int(k == d and d > 0), gain, 0, -i, (i, j, len(src) - k)))
            p = flat.find(child, p + 1) if two else -1
    scored.sort(reverse=True)
    out = [m[4] for m in scored]
    if stock:
        out.append(DRAW)
    return out


class Solver:
    """Depth-first search over the search moves of a world with every card known, most
    promising first, with a transposition set and a budget of positions: the line reaching the
    most units (exact when it runs out of positions before the budget does)."""

    __slots__ = (
        "best",
        "best_line",
        "budget",
        "draw_count",
        "exhausted",
        "nodes",
        "path",
        "seen",
        "stock",
        "top",
        "two",
    )

    def __init__(self, model: Model) -> None:
        self.draw_count = model.draw_count
        self.top = model.max_units
        self.two = model.decks > 1
        self.seen: set[tuple[Cols, tuple[int, ...], int]] = set()
        self.stock = b""
        self.best = 0
        self.best_line: list[Move] = []
        self.path: list[Move] = []
        self.nodes = 0
        self.budget = 0
        self.exhausted = True

    def solve(self, state: State, budget: int) -> tuple[int, list[Move], bool, int]:
        """(units, the line up to where it reaches them, exhaustive, positions searched)."""
        cols, downs, stock = state
        self.stock = stock
        self.seen = {(cols, downs, 0)}
        units = sum(col_units(c, d) for c, d in zip(cols, downs, strict=True))
        self.best = units
        self.best_line = []
        self.path = []
        self.nodes = 0
        self.budget = budget
        self.exhausted = True
        self._visit(cols, downs, 0, units)
        return self.best, self.best_line, self.exhausted or self.best == self.top, self.nodes

    def _visit(self, cols: Cols, downs: tuple[int, ...], s: int, units: int) -> None:
        self.nodes += 1
        if units > self.best:
            self.best, self.best_line = units, list(self.path)
            if units == self.top:
                return
        stock = self.stock
        seen = self.seen
        path = self.path
        for m in search_moves(cols, downs, s < len(stock), self.two):
            if self.nodes >= self.budget:
                self.exhausted = False
                return
            i, j, n = m
            if i < 0:
                row = stock[s : s + self.draw_count]
                new = list(cols)
                gained = 0
                for c in range(len(row)):
                    new[c] = cols[c] + row[c : c + 1]
                    gained += col_units(new[c], downs[c]) - col_units(cols[c], downs[c])
                key = (tuple(new), downs, s + len(row))
                if key in seen:
                    continue
                seen.add(key)
            else:
                src, tgt = cols[i], cols[j]
                rest = src[:-n]
                d = downs[i]
                new = list(cols)
                new[i] = rest
                new[j] = tgt + src[-n:]
                nd = downs
                if d and len(rest) == d:
                    nd = (*downs[:i], d - 1, *downs[i + 1 :])
                key = (tuple(new), nd, s)
                if key in seen:
                    continue
                seen.add(key)
                gained = (
                    col_units(rest, nd[i])
                    + col_units(new[j], downs[j])
                    - col_units(src, d)
                    - col_units(tgt, downs[j])
                )
            path.append(m)
            self._visit(key[0], key[1], key[2], units + gained)
            path.pop()
            if self.best == self.top:
                return


def solve(model: Model, state: State, budget: int) -> tuple[int, list[Move], bool, int]:
    """The line reaching the most units from ``state`` in a world (see :class:`Solver`)."""
    return Solver(model).solve(state, budget)


def replay(model: Model, state: State, line: Sequence[Move]) -> State:
    for m in line:
        state = model.apply(state, m)
    return state


class _Play:
    """A mutable position for fast play-outs: columns, face-down counts, the stock, where each
    card lies (``at[code]``: the columns holding it) and each column's units."""

    __slots__ = ("at", "cols", "downs", "draw_count", "runs", "s", "stock")

    def __init__(self, state: State | tuple[Cols, tuple[int, ...], bytes], draw_count: int) -> None:
        self.cols = [list(c) for c in state[0]]
        self.downs = list(state[1])
        self.stock = state[2]
        self.s = 0
        self.draw_count = draw_count
        self.at: list[list[int]] = [[] for _ in range(52)]
        for i, col in enumerate(self.cols):
            for c in col:
                if c != UNSEEN:
                    self.at[c].append(i)
        self.runs = [col_units(c, d) for c, d in zip(self.cols, self.downs, strict=True)]

    def apply(self, move: Move) -> None:
        i, j, n = move
        cols = self.cols
        if i < 0:
            row = self.stock[self.s : self.s + self.draw_count]
            self.s += len(row)
            for c, card in enumerate(row):
                cols[c].append(card)
                self.at[card].append(c)
                self.runs[c] = col_units(cols[c], self.downs[c])
            return
        src = cols[i]
        moved = src[-n:]
        del src[-n:]
        cols[j].extend(moved)
        at = self.at
        for c in moved:
            where = at[c]
            where.remove(i)
            where.append(j)
        d = self.downs[i]
        if d and len(src) == d:
            self.downs[i] = d = d - 1
        self.runs[i] = col_units(src, d)
        self.runs[j] = col_units(cols[j], self.downs[j])

    def key(self) -> tuple[Cols, tuple[int, ...], int]:
        return tuple(map(bytes, self.cols)), tuple(self.downs), len(self.stock) - self.s

    def state(self) -> State:
        return (
            tuple(bytes(c) for c in self.cols),
            tuple(self.downs),
            self.stock[self.s :],
        )

    def _kings(self) -> list[tuple[int, int]]:
        """Every face-up King not at the bottom of its column: (column, index)."""
        out: list[tuple[int, int]] = []
        cols, downs, at = self.cols, self.downs, self.at
        for king in KING_CODES:
            where = at[king]
            if not where:
                continue
            if len(where) == 1 or where[0] != where[1]:
                for i in where:
                    k = cols[i].index(king)
                    if k >= (downs[i] or 1):
                        out.append((i, k))
            else:
                i = where[0]
                out.extend((i, k) for k in _places(cols[i], king, downs[i] or 1))
        return out

    def _loose(self, x: int) -> bool:
        """Is a copy of ``x`` (never a King) face up and not on its parent?"""
        parent = PARENT[x]
        cols, downs, where = self.cols, self.downs, self.at[x]
        if len(where) < 2 or where[0] != where[1]:
            for i in where:
                col = cols[i]
                d = downs[i]
                k = col.index(x)
                if k >= d and (k == d or col[k - 1] != parent):
                    return True
            return False
        col = cols[where[0]]
        d = downs[where[0]]
        return any(k == d or col[k - 1] != parent for k in _places(col, x, d))

    def bot_step(self) -> Move | None:
        """The reference bot's choice here (see ``Model.bot_move``): the score's first four
        parts for every move, the last two only to break a tie."""
        top: list[tuple[int, int, int]] = []
        best: tuple[int, int, int, int] | None = None
        for move in self._moves():
            score = self._first(move)
            if score is None:
                continue
            if best is None or score > best:
                best, top = score, [move]
            elif score == best:
                top.append(move)
        if best is None:
            return DRAW if self.s < len(self.stock) else None
        if len(top) == 1:
            i, n, j = top[0]
            return i, j, n
        kings = None
        pick = top[0]
        pick_score = (-1, -1)
        for move in top:
            opens, empties, kings = self._last(move, kings)
            if (opens, empties) > pick_score:
                pick, pick_score = move, (opens, empties)
        i, n, j = pick
        return i, j, n

    def scored(self) -> list[tuple[tuple[int, int, int, int, int, int], Move]]:
        """The moves the reference bot weighs, with its score of each, in its order."""
        out: list[tuple[tuple[int, int, int, int, int, int], Move]] = []
        kings: list[tuple[int, int]] | None = None
        for move in self._moves():
            first = self._first(move)
            if first is None:
                continue
            opens, empties, kings = self._last(move, kings)
            i, n, j = move
            out.append(((*first, opens, empties), (i, j, n)))
        return out

    def _moves(self) -> list[tuple[int, int, int]]:
        """Every move onto a parent or a King into an empty column, as (source, count, target)
        in the rules' order."""
        cols, downs, at = self.cols, self.downs, self.at
        cands: list[tuple[int, int, int]] = []
        kings: list[tuple[int, int]] | None = None
        for j, tgt in enumerate(cols):
            if tgt:
                child = CHILD[tgt[-1]]
                if child < 0:
                    continue
                where = at[child]
                if not where:
                    continue
                if len(where) == 1 or where[0] != where[1]:
                    for i in where:
                        if i != j:
                            src = cols[i]
                            k = src.index(child)
                            if k >= downs[i]:
                                cands.append((i, len(src) - k, j))
                    continue
                i = where[0]
                if i != j:
                    src = cols[i]
                    cands.extend((i, len(src) - k, j) for k in _places(src, child, downs[i]))
            else:
                if kings is None:
                    kings = self._kings()
                for i, k in kings:
                    cands.append((i, len(cols[i]) - k, j))
        cands.sort()
        return cands

    def _first(self, move: tuple[int, int, int]) -> tuple[int, int, int, int] | None:
        """The bot's score's first four parts (turns, units gained, face-down cards a King
        leaves, King out), or None for a move it leaves out."""
        i, n, j = move
        src = self.cols[i]
        d = self.downs[i]
        size = len(src)
        card = src[-n]
        whole = n == size - d
        if not (whole and d):
            if whole and KINGS[card]:
                return None  # a King already at the bottom of its column
            if not whole and CHILD[src[-n - 1]] == card:
                return None  # already on its parent
        tgt = self.cols[j]
        runs = self.runs
        # units gained, as the bot counts them: before the card the move uncovers turns
        if tgt:
            gain = run_from(src, size - n) if runs[j] == len(tgt) else 0
            king_out = False
        else:
            king_out = KINGS[card]
            gain = run_from(src, size - n) if king_out else 0
        if runs[i] > size - n:
            gain -= runs[i] - (size - n)
        return (int(whole and d > 0), gain, d if king_out else 0, int(king_out))

    def _last(
        self, move: tuple[int, int, int], kings: list[tuple[int, int]] | None
    ) -> tuple[int, int, list[tuple[int, int]] | None]:
        """The score's last two parts (opens, empties), and the Kings if it found them."""
        i, n, _ = move
        src = self.cols[i]
        d = self.downs[i]
        whole = n == len(src) - d
        opens = 0
        if not whole:
            x = CHILD[src[-n - 1]]
            if x >= 0 and self._loose(x):
                opens = 1
        empties = 0
        if whole and not d and not KINGS[src[-n]]:
            if kings is None:
                kings = self._kings()
            empties = int(bool(kings))
        return opens, empties, kings
