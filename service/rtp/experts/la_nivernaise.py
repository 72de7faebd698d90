"""La Nivernaise's strong player and clairvoyant bound, searching a fast model of the game.

What is hidden: only the stock's order during the first pass (72 cards at the deal, fewer as
Deals and refills take them). The flanks and the whole Line lie face up, and a redeal gathers
the Line in a fixed order (no shuffle), so from the first redeal on every card is known.

The model (for search only; the real rules decide every move played). A card is an int,
``suit * 13 + rank - 1`` (suits in ``SUITS`` order: this is also its place in the canonical
deck, so ``knowledge.unseen`` lists them sorted); both copies of a card are the same int. A
position (:class:`Pos`) is the stock (next card first), the six Line columns (bottom first),
the eight flanks (a card or -1), and per suit the top rank of its up foundation (0: not
started) and of its down foundation (14: not started): a card goes up when it is one rank
above the up top (an Ace starts it) and down when one rank below the down top (a King starts
it), as ``service.games.la_nivernaise.takes`` says. Moves (``(kind, index, direction)``): a
flank card (kind 0) or a Line column's top (kind 1) to its suit's up (1) or down (2)
foundation; a Line top to the first empty flank (kind 2); the Deal (kind 3); the redeal (kind
4). An emptied Line column is refilled from the stock at once, and the redeal gathers the
Line last column first, each bottom to top, then refills, as the game module does.
tests/unit/test_experts_la_nivernaise.py drives random play through the real rules and checks
the model's moves and positions against them move for move.

Rollout policy (:func:`rollout`), what both players improve on: a flank card, else a Line top
(left to right), that fits a foundation (up, unless it fits down too and only the card that
would follow it down is at hand); else dig: move a Line top to a flank when that reaches,
within the empty flanks, a card that fits now (the shallowest); else Deal; else redeal; else
stop. About a millisecond a game.

Decisions. A card that fits one foundation only goes there at once, flanks first (it frees a
flank or uncovers a Line card, and its twin can only go the other way). Any other position is
a choice among: the rollout policy's own move, a card that fits both foundations (either
way), each Line top to a flank, and the Deal or the redeal. Each candidate is scored by
playing it and then the rollout policy to the game's end; the best total wins, ties to the
order above (so the rollout policy's move first). If the best scores no card more than now and
neither a Deal nor a redeal is among the candidates, the player stops.

- STRONG (``la-nivernaise-strong/1``) sees what a player sees: while the stock hides cards it
  scores each candidate over 16 stocks (:data:`WORLDS`) shuffled from the unseen cards
  (``knowledge.unseen``, which are exactly the stock's) with its own ``rng``, the same 16 for
  every candidate: 16 x (candidates, typically 3 to 8) rollouts a decision. Once every card is
  known (after the first redeal) it scores them on the one known stock: one rollout per
  candidate. About 0.3 s of CPU a deal.
- CLAIRVOYANT (``la-nivernaise-clairvoyant/1``) knows the stock. It plans the game once:
  (a) the same decisions scored on the true stock alone (a pilot method: its line never scores
  less than the rollout policy's), and (b) the strong player's own line, replayed in the model
  with a copy of the random numbers it is given (the runner seeds every player of a deal
  alike); it plays the one reaching more units, so it is never below the strong player. About
  0.3 s a deal. A lower bound on the most any player could take from the deal, not the exact
  maximum.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.games.la_nivernaise import (
    FL,
    FLANK_PILES,
    FOUNDATION_PILES,
    LINE,
    LINE_PILES,
    PASSES,
    ROWS,
    UP,
    F,
    L,
    S,
)
from service.rtp import knowledge
from service.rtp.players import Choose, Player, replaying
from service.rules.actions import Draw, MoveCards, PlayAction, Redeal
from service.rules.cards import ACE, KING, RANK_OF, RANKS, SUITS, Card
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

STRONG_VERSION = "la-nivernaise-strong/1"
CLAIRVOYANT_VERSION = "la-nivernaise-clairvoyant/1"

#: Stocks sampled per decision of the strong player while the stock hides cards.
WORLDS = 16

EMPTY = -1
NOT_STARTED_UP, NOT_STARTED_DOWN = ACE - 1, KING + 1
UP_, DOWN_ = 1, 2  # a move's direction (bits of :func:`fits`)
FLANK_TO_FOUNDATION, LINE_TO_FOUNDATION, LINE_TO_FLANK, DEAL, REDEAL = range(5)
Move = tuple[int, int, int]
DEAL_MOVE: Move = (DEAL, 0, 0)
REDEAL_MOVE: Move = (REDEAL, 0, 0)


def card_id(card: Card) -> int:
    return SUITS.index(card[1]) * KING + RANK_OF[card] - 1


CODE = tuple(RANKS[i % KING] + SUITS[i // KING] for i in range(len(SUITS) * KING))


class Pos:
    """A position of the model (see the module docstring)."""

    __slots__ = ("down", "flanks", "line", "passes", "stock", "units", "up")

    def __init__(
        self,
        stock: list[int],
        line: list[list[int]],
        flanks: list[int],
        up: list[int],
        down: list[int],
        passes: int,
        units: int,
    ) -> None:
        self.stock = stock
        self.line = line
        self.flanks = flanks
        self.up = up
        self.down = down
        self.passes = passes
        self.units = units

    def copy(self) -> Pos:
        return Pos(
            self.stock,  # never changed in place: Deals and refills slice it
            [col[:] for col in self.line],
            self.flanks[:],
            self.up[:],
            self.down[:],
            self.passes,
            self.units,
        )

    def key(self) -> tuple[object, ...]:
        return (
            tuple(self.stock),
            tuple(map(tuple, self.line)),
            tuple(self.flanks),
            tuple(self.up),
            tuple(self.down),
            self.passes,
            self.units,
        )


def read(table: Table, stock: Sequence[int] | None = None) -> Pos:
    """The model of a table; the stock's cards are ``stock`` (next first) when given, else
    the table's own (every slot a code, as after a redeal)."""
    if stock is None:  # every slot a code
        stock = [card_id(card) for card in reversed(table.piles[S].cards)]  # type: ignore[arg-type]
    up = [NOT_STARTED_UP] * len(SUITS)
    down = [NOT_STARTED_DOWN] * len(SUITS)
    units = 0
    for f, index in enumerate(F):
        cards = table.piles[index].up
        units += len(cards)
        if cards:
            suit = SUITS.index(cards[0][1])
            if f < UP:
                up[suit] = RANK_OF[cards[-1]]
            else:
                down[suit] = RANK_OF[cards[-1]]
    return Pos(
        list(stock),
        [[card_id(card) for card in table.piles[index].up] for index in L],
        [card_id(table.piles[index].up[0]) if table.piles[index].cards else EMPTY for index in FL],
        up,
        down,
        table.passes_left or 0,
        units,
    )


def fits(p: Pos, x: int) -> int:
    """Where card ``x`` goes now: bit UP_ (its suit's up foundation), bit DOWN_ (down)."""
    suit, r = divmod(x, KING)
    return (r == p.up[suit]) | ((r + 2 == p.down[suit]) << 1)


def _place(p: Pos, x: int, direction: int) -> None:
    suit, r = divmod(x, KING)
    if direction == UP_:
        p.up[suit] = r + 1
    else:
        p.down[suit] = r + 1
    p.units += 1


def _refill(p: Pos) -> None:
    """Empty Line columns take the stock's next cards, the lowest numbered first."""
    for c in range(LINE):
        if not p.line[c] and p.stock:
            p.line[c] = p.stock[:ROWS]
            p.stock = p.stock[ROWS:]


def moves(p: Pos) -> list[Move]:
    """Every model move the position allows (one Line-to-flank move per column: every empty
    flank is as good as another, the real rules list each)."""
    out: list[Move] = []
    for k, x in enumerate(p.flanks):
        if x != EMPTY:
            f = fits(p, x)
            out.extend((FLANK_TO_FOUNDATION, k, d) for d in (UP_, DOWN_) if f & d)
    free = EMPTY in p.flanks
    for c, col in enumerate(p.line):
        if col:
            f = fits(p, col[-1])
            out.extend((LINE_TO_FOUNDATION, c, d) for d in (UP_, DOWN_) if f & d)
            if free:
                out.append((LINE_TO_FLANK, c, 0))
    if p.stock:
        out.append(DEAL_MOVE)
    elif p.passes > 1 and any(p.line):
        out.append(REDEAL_MOVE)
    return out


def apply(p: Pos, move: Move) -> None:
    """Play a model move in place, the refills it causes included."""
    kind, i, d = move
    if kind == FLANK_TO_FOUNDATION:
        _place(p, p.flanks[i], d)
        p.flanks[i] = EMPTY
    elif kind == LINE_TO_FOUNDATION:
        col = p.line[i]
        _place(p, col.pop(), d)
        if not col:
            _refill(p)
    elif kind == LINE_TO_FLANK:
        col = p.line[i]
        p.flanks[p.flanks.index(EMPTY)] = col.pop()
        if not col:
            _refill(p)
    elif kind == DEAL:
        stock = p.stock
        for c in range(LINE):
            chunk = stock[ROWS * c : ROWS * (c + 1)]
            if not chunk:
                break
            p.line[c].extend(chunk)
        p.stock = stock[ROWS * LINE :]
    else:
        gathered: list[int] = []
        for c in reversed(range(LINE)):
            gathered.extend(p.line[c])
            p.line[c] = []
        p.stock = gathered
        p.passes -= 1
        _refill(p)


# --- the rollout policy -----------------------------------------------------------------------


def policy_move(p: Pos) -> Move | None:
    """The rollout policy's next move (see the module docstring), or None to stop."""
    up, down, flanks, line = p.up, p.down, p.flanks, p.line
    for k, x in enumerate(flanks):
        if x != EMPTY:
            suit, r = divmod(x, KING)
            if r == up[suit]:
                if r + 2 == down[suit] and _rather_down(p, x):
                    return (FLANK_TO_FOUNDATION, k, DOWN_)
                return (FLANK_TO_FOUNDATION, k, UP_)
            if r + 2 == down[suit]:
                return (FLANK_TO_FOUNDATION, k, DOWN_)
    for c in range(LINE):
        col = line[c]
        if col:
            x = col[-1]
            suit, r = divmod(x, KING)
            if r == up[suit]:
                if r + 2 == down[suit] and _rather_down(p, x):
                    return (LINE_TO_FOUNDATION, c, DOWN_)
                return (LINE_TO_FOUNDATION, c, UP_)
            if r + 2 == down[suit]:
                return (LINE_TO_FOUNDATION, c, DOWN_)
    free = flanks.count(EMPTY)
    best_depth, best = free + 1, -1
    for c in range(LINE):
        col = line[c]
        for depth in range(1, min(best_depth - 1, len(col) - 1) + 1):
            suit, r = divmod(col[-1 - depth], KING)
            if r == up[suit] or r + 2 == down[suit]:
                best_depth, best = depth, c
                break
    if best >= 0:
        return (LINE_TO_FLANK, best, 0)
    if p.stock:
        return DEAL_MOVE
    if p.passes > 1 and any(line):
        return REDEAL_MOVE
    return None


def _rather_down(p: Pos, x: int) -> bool:
    """A card that fits both of its suit's foundations goes down rather than up when the
    card that would follow it down is available (a flank or a Line top) and the one that
    would follow it up is not."""
    rank = x % KING
    return rank > 0 and _available(p, x - 1) and not (rank < KING - 1 and _available(p, x + 1))


def _available(p: Pos, x: int) -> bool:
    return x in p.flanks or any(col and col[-1] == x for col in p.line)


def rollout(p: Pos) -> int:
    """The rollout policy played to the end, in place: the units it reaches."""
    while (move := policy_move(p)) is not None:
        apply(p, move)
    return p.units


# --- the decisions ----------------------------------------------------------------------------


def _forced(p: Pos) -> Move | None:
    """A card that fits one foundation only: flanks first, then the Line left to right."""
    for k, x in enumerate(p.flanks):
        if x != EMPTY:
            f = fits(p, x)
            if f in (UP_, DOWN_):
                return (FLANK_TO_FOUNDATION, k, f)
    for c, col in enumerate(p.line):
        if col:
            f = fits(p, col[-1])
            if f in (UP_, DOWN_):
                return (LINE_TO_FOUNDATION, c, f)
    return None


def candidates(p: Pos) -> list[Move]:
    """The choices at a position with no forced move: the rollout policy's move first, then
    a card fitting both foundations either way, each Line top to a flank, the Deal or the
    redeal."""
    first = policy_move(p)
    out = [first] if first is not None else []
    for move in moves(p):
        if move != first:
            out.append(move)
    return out


def decide(p: Pos, worlds: Sequence[list[int]]) -> Move | None:
    """The move to play: forced, or the candidate whose rollouts over ``worlds`` (stocks,
    next card first) score most in total; None to stop."""
    forced = _forced(p)
    if forced is not None:
        return forced
    options = candidates(p)
    if not options:
        return None
    if len(options) == 1 and options[0][0] in (DEAL, REDEAL):
        return options[0]
    totals = [0] * len(options)
    for stock in worlds:
        for k, move in enumerate(options):
            q = p.copy()
            q.stock = stock
            apply(q, move)
            totals[k] += rollout(q)
    best = max(range(len(options)), key=lambda k: (totals[k], -k))
    if totals[best] <= p.units * len(worlds) and not any(m[0] in (DEAL, REDEAL) for m in options):
        return None  # nothing gains a card: stop rather than fill flanks
    return options[best]


def strong_decide(p: Pos, unseen: Sequence[int], rng: random.Random) -> Move | None:
    """The strong player's move. While ``unseen`` (the stock's cards, sorted) is not empty,
    ``p``'s stock stands only for its size: decisions are scored over stocks sampled from
    ``unseen``; after, over the one known stock."""
    if not unseen or _forced(p) is not None:
        return decide(p, [p.stock])
    options = candidates(p)
    if not options or (len(options) == 1 and options[0][0] in (DEAL, REDEAL)):
        return decide(p, [p.stock])  # no rollout needed
    worlds = []
    for _ in range(WORLDS):
        stock = list(unseen)
        rng.shuffle(stock)
        worlds.append(stock)
    return decide(p, worlds)


# --- the players ------------------------------------------------------------------------------


def _action(move: Move, legal: Sequence[PlayAction]) -> PlayAction:
    """The real action of a model move: to a foundation, the first of its direction that the
    rules list; to a flank, the first empty one (the model's)."""
    for action in legal:
        if _is(action, move):
            return action
    raise AssertionError(f"la-nivernaise: model move {move} is not legal here")


def _is(action: PlayAction, move: Move) -> bool:
    kind, i, d = move
    if kind == DEAL:
        return isinstance(action, Draw)
    if kind == REDEAL:
        return isinstance(action, Redeal)
    if not isinstance(action, MoveCards):
        return False
    source = FLANK_PILES[i] if kind == FLANK_TO_FOUNDATION else LINE_PILES[i]
    if action.source != source:
        return False
    if kind == LINE_TO_FLANK:
        return action.target in FLANK_PILES
    if action.target not in FOUNDATION_PILES:
        return False
    return (FOUNDATION_PILES.index(action.target) < UP) == (d == UP_)


def _strong_view(rules: GameRules, table: Table) -> tuple[Pos, list[int]]:
    """What the strong player sees: the position (the stock standing for its size while it
    hides cards) and the unseen cards, sorted."""
    unseen = [card_id(card) for card in knowledge.unseen(rules, table)]
    return read(table, unseen if unseen else None), unseen


def _start_strong(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
    def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
        p, unseen = _strong_view(rules, table)
        move = strong_decide(p, unseen, rng)
        return None if move is None else _action(move, legal)

    return choose


def _strong_line(p: Pos, rng: random.Random) -> list[Move]:
    """The strong player's line on the true stock, replayed in the model: before the first
    redeal it sees the stock's cards only as a sorted list (``knowledge.unseen``'s order).
    In place."""
    line: list[Move] = []
    while True:
        unseen = sorted(p.stock) if p.passes == PASSES else []
        move = strong_decide(p, unseen, rng)
        if move is None:
            return line
        line.append(move)
        apply(p, move)


def _pilot_line(p: Pos) -> list[Move]:
    """The decisions scored on the true stock alone, to the end. In place."""
    line: list[Move] = []
    while (move := decide(p, [p.stock])) is not None:
        line.append(move)
        apply(p, move)
    return line


def _clairvoyant_plan(
    rules: GameRules, table: Table, secrets: Secrets, rng: random.Random
) -> tuple[int, list[Move]]:
    """The better line of the pilot method's and the strong player's own (replayed with a
    copy of the random numbers it is given: the runner seeds every player of a deal alike),
    with the units it reaches; the pilot's on a tie."""
    world = knowledge.clear_table(table, secrets)
    p = read(world)
    line = _pilot_line(p)
    q = read(world)
    copy = random.Random()
    copy.setstate(rng.getstate())
    other = _strong_line(q, copy)
    if q.units > p.units:
        return q.units, other
    return p.units, line


def _clairvoyant_line(
    rules: GameRules, rng: random.Random, table: Table, secrets: Secrets
) -> list[Move]:
    return _clairvoyant_plan(rules, table, secrets, rng)[1]


def _clairvoyant_action(table: Table, move: Move, legal: Sequence[PlayAction]) -> PlayAction:
    return _action(move, legal)


STRONG = Player(
    "strong",
    STRONG_VERSION,
    _start_strong,
    f"forced foundation plays at once; every other choice scored by the rollout policy to the "
    f"game's end, over {WORLDS} sampled stocks while the stock hides cards, then on the known "
    f"one",
)
CLAIRVOYANT = Player(
    "clairvoyant",
    CLAIRVOYANT_VERSION,
    replaying(CLAIRVOYANT_VERSION, _clairvoyant_line, _clairvoyant_action),
    "knows the stock: every choice scored by the rollout policy on the true stock (a pilot "
    "method), or the strong player's own line if it reaches more; a lower bound",
)

#: The game family its players play (service.rtp.roster finds them by this).
FAMILY = "la-nivernaise"
