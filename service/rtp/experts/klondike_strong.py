"""The Klondike family's strong player (``klondike-strong/3``): determinized Monte Carlo over the
C solver (``klondike_solver``), the method of Bjarnason, Fern and Tadepalli (2009, "Lower
bounding Klondike solitaire with Monte-Carlo planning") with a stronger inner search.

It sees only what a player sees: the sealed table, its sealed slots taken by position
(``klondike_model.state_of`` makes them UNKNOWN), the composition of the cards it has not seen
(``knowledge.unseen``), and the cards it has seen and remembers (below). Each decision:

1. a face-down top card is turned (it only shows a card), and a card that goes up safely (an
   Ace or Two, or a card whose other-colour foundations hold every card that could be built on
   it) goes up, without search;
2. in Klondike (unlimited passes) it first draws through the whole stock once: recycling costs
   nothing there, and the stock's order is then known;
3. the candidates are the first moves of the search's moves from here (``Solver.candidates``
   of the fast model, in its order, which breaks ties: a plain draw or recycle for the
   stock), less any that leads back to a position it has already decided in (every position
   it stands at is marked decided first, so a tie cannot wander round the stock); one
   candidate is played at once;
4. peeking: where the rules let a draw be undone and it has been offered an undo (the lab
   offers one to it, ``Player.takes_undo``, so its published figures include peeking), before
   weighing candidates with the next draw's cards unseen it draws and undoes: the cards the
   draw showed are then known, and it remembers them by their slot in the stock (from the
   bottom, so a renumbered table cannot confuse it) until they are drawn for real;
5. otherwise it samples ``worlds`` worlds (every assignment of the unseen cards, peeked ones
   apart, to the sealed slots equally likely, from its own rng; with few unseen cards, every
   assignment once), and in each world values every candidate by the solver
   (``Solver.evaluate``: the most cards on the foundations a search of at most ``budget``
   positions, widening by ``widen`` levels, finds after it). It plays the candidate with the
   best total (ties: the solver's order), stopping early when after ``TIE_CHECK`` worlds every
   candidate has scored the same in each; it stops and collects only when every candidate's
   mean is below the cards already up.

Budget per decision: at most worlds x candidates x budget positions of the C search: in Vegas
draw three 128 x ~4 x 375, widening (about 1 s of CPU a deal); in Vegas draw one and Klondike
128 x ~4 x 60, depth first (about 0.2-0.3 s a deal), where a longer search played worse
(``FOR_GAME``; RTP.md has the sweeps).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.games import klondike as kl
from service.rtp import knowledge
from service.rtp.experts import klondike_model as km
from service.rtp.experts import klondike_solver as ks
from service.rtp.experts.cards import NUMBER
from service.rtp.players import Choose, Player
from service.rules.actions import Draw, PlayAction, Turn, Undo
from service.rules.game import GameRules, Secrets
from service.rules.table import Table

#: Worlds sampled per decision, and positions searched per candidate in each. Many worlds and
#: a small search beat few worlds and a deep one at the same cost (vegas-draw3, deals
#: 2000-2399: 128 x 375 took 15.3 cards a deal, 64 x 750 14.9, 16 x 3,000 13.5, 16 x 10,000
#: 12.8): a deep search in one world leans on cards it cannot know.
WORLDS = 128
BUDGET = 375
#: After this many worlds, a decision whose candidates all scored alike in each is settled.
TIE_CHECK = 4


def determinized_player(
    version: str, worlds: int, budget: int, widen: int = ks.WIDEN, peek: bool = True
) -> Player:
    search = f"widening by {widen} levels" if widen else "depth first"

    def start(rules: GameRules, rng: random.Random, secrets: Secrets | None) -> Choose:
        model = km.Model(rules)
        solver = ks.Solver(model)
        moves = km.Solver(model)  # the search's moves, for the candidates (its order)
        decided: set[km.State] = set()  # positions it has decided in
        peeked: dict[int, int] = {}  # a stock slot (from the bottom) -> the card a peek showed
        peeking: int | None = None  # the stock's size before the draw that peeks
        undo_offered = False
        may_peek = peek and getattr(rules, "undo", False)

        def choose(table: Table, legal: Sequence[PlayAction]) -> PlayAction | None:
            nonlocal peeking, undo_offered
            if any(isinstance(a, Undo) for a in legal):
                undo_offered = True
            if peeking is not None:
                # The draw just made was a peek: remember what it showed, then take it back.
                size, peeking = peeking, None
                _remember(table, size, peeked)
                if Undo() in legal:
                    return Undo()
            actions = [a for a in legal if not isinstance(a, Undo)]
            if not actions:
                return None
            st = _view(table, peeked)
            for a in actions:
                if isinstance(a, Turn):
                    return a  # it only shows a card
            _settled, auto = solver.settle(st)
            if auto:
                return km.real_action(table, auto[0])
            legal_moves = {model.move_of(table, a) for a in actions}
            stock = st[3]
            if rules.passes is None and km.UNKNOWN in stock and (km.DRAW,) in legal_moves:
                return Draw()  # unlimited passes: see the whole stock first, for nothing
            decided.add(st)
            cands = moves.candidates(st, legal_moves, decided)
            if not cands:
                return None
            if len(cands) == 1:
                return km.real_action(table, cands[0])
            nxt = stock[-model.draw_count :]
            if may_peek and undo_offered and km.UNKNOWN in nxt and (km.DRAW,) in legal_moves:
                peeking = len(stock)
                return Draw()  # then weighs from the view with the peeked cards
            best = _weigh(rules, solver, table, st, peeked, cands, rng, worlds, budget, widen)
            return None if best is None else km.real_action(table, best)

        return choose

    return Player(
        "strong",
        version,
        start,
        f"determinized Monte Carlo over a C Klondike solver: {worlds} sampled worlds per "
        f"decision, each candidate searched for at most {budget} positions in each ({search}; "
        "a draw is peeked at and undone where the rules allow; Klondike: the stock is drawn "
        "through once first)",
        budget=f"{worlds} worlds x {budget:,} positions a candidate ({search})",
        takes_undo=peek,
    )


def _remember(table: Table, size: int, peeked: dict[int, int]) -> None:
    """The cards the last draw showed, by their slots in the stock it took them from (the draw
    put the stock's top card first on the waste, then the next)."""
    drawn = size - len(table.piles[kl.S].cards)
    waste = table.piles[kl.W].cards
    for i in range(drawn):
        card = waste[len(waste) - drawn + i]
        assert isinstance(card, str)  # a drawn card is face up
        peeked[size - 1 - i] = NUMBER[card]


def _view(table: Table, peeked: dict[int, int]) -> km.State:
    """The position the player sees, with the stock cards it has peeked at filled in (a slot
    drawn since is forgotten: the table shows that card now)."""
    st = km.state_of(table)
    stock = list(st[3])
    for slot in [s for s in peeked if s >= len(stock)]:
        del peeked[slot]
    for slot, card in peeked.items():
        if stock[slot] == km.UNKNOWN:
            stock[slot] = card
    return st[0], st[1], st[2], tuple(stock), st[4], st[5]


def _weigh(
    rules: GameRules,
    solver: ks.Solver,
    table: Table,
    st: km.State,
    peeked: dict[int, int],
    cands: list[km.Move],
    rng: random.Random,
    worlds: int,
    budget: int,
    widen: int,
) -> km.Move | None:
    """The candidate with the best total over sampled worlds, or None (collect) when every
    candidate's mean is below the cards already up."""
    known = set(peeked.values())
    unseen = [NUMBER[c] for c in knowledge.unseen(rules, table) if NUMBER[c] not in known]
    slots = sum(col.count(km.UNKNOWN) for col in st[0]) + st[3].count(km.UNKNOWN)
    assert len(unseen) == slots, "the unseen cards must fill the unknown slots exactly"
    filled = km.worlds(st, unseen, worlds, rng)
    totals = [0] * len(cands)
    scores: list[list[int]] = [[] for _ in cands]
    for w, world in enumerate(filled):
        values, _nodes = solver.evaluate(world, cands, budget, widen)
        for k, v in enumerate(values):
            totals[k] += v
            scores[k].append(v)
        if w + 1 == TIE_CHECK and all(s == scores[0] for s in scores):
            break
    best = max(range(len(cands)), key=lambda k: (totals[k], -k))
    if totals[best] < km.units(st) * len(scores[best]):
        return None
    return cands[best]


VERSION = "klondike-strong/3"
#: The family's (Vegas draw three's): a search widening by 5 levels.
STRONG = determinized_player(VERSION, WORLDS, BUDGET)
#: Each other variant's own budget. With one pass of draw one, or unlimited passes, a short
#: depth-first search over many worlds plays best (RTP.md's sweeps): a longer one plans on
#: face-down cards and a stock order no player can know.
FOR_GAME: dict[str, Player] = {
    game_id: determinized_player(VERSION, worlds, budget, widen=0)
    for game_id, (worlds, budget) in {"vegas-draw1": (128, 60), "klondike": (128, 60)}.items()
}
