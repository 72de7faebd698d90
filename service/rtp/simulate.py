"""Simulated play for the RTP lab: a player plays seeded deals through the real decider.

Pure: no I/O. Deal ``i`` of game ``g`` is shuffled from SHA-256("rtp-lab/1|g|i"), so anyone can
replay any simulated deal, and every player (bot, strong, clairvoyant: ``service.rtp.players``)
plays the same deals, so their figures compare deal for deal. A player's own random numbers
come from SHA-256("rtp-lab/1|player|g|i"), never from a card. A chunk of deals returns a
histogram of the units each game ended with; histograms add up, so chunks can run on any
number of workers, and the RTP of any M is computed exactly (with the house's rounding down)
from one histogram.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import Paytable, winnings
from service.games import game_named
from service.rtp.knowledge import clear_secrets
from service.rtp.players import Kind
from service.rtp.roster import player_for
from service.rules.actions import Recycle

LAB = "rtp-lab/1"
#: The stake simulated games are played at: the default stake of the built-in tables (the
#: house's rounding down of fractions makes RTP depend a hair on the stake).
STAKE = 520
#: No simulated game takes more actions than this (a bot stuck in a loop is stopped).
MAX_ACTIONS = 2_000
_TABLE = Paytable("rtp-lab", 1, "XXX", STAKE, STAKE, STAKE, (STAKE,))


def deal_seed(game_id: str, index: int) -> bytes:
    return hashlib.sha256(f"{LAB}|{game_id}|{index}".encode()).digest()


def player_seed(game_id: str, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{LAB}|player|{game_id}|{index}".encode()).digest())


def play_one(game_id: str, index: int, kind: Kind = "bot") -> int:
    """The units the game's player of this kind ends deal ``index`` with."""
    rules = game_named(game_id)
    seed = deal_seed(game_id, index)
    deck = shuffle.derive_deck(seed, None, rules.decks)
    redeals = shuffle.redealer(seed, None)
    start = g.StartGame(
        game_id=f"sim-{index}",
        player_id="rtp-lab",
        variant=game_id,
        stake=STAKE,
        paytable=_TABLE,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment="",
    )
    state = g.fold(g.decide(g.INITIAL, start))
    sealed = g.hidden_cards(rules, deck)
    secrets = clear_secrets(sealed, redeals) if kind == "clairvoyant" else None
    player = player_for(rules, kind)
    choose = player.start(rules, random.Random(player_seed(game_id, index)), secrets)
    progress_at_recycle: tuple[int, ...] | None = None
    for _ in range(MAX_ACTIONS):
        table = state.table
        if state.status != "in_progress" or table is None:
            break
        legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        # Undo is offered to a player that takes it: a legal advantage the published figure
        # must include (a peek at the next draw, taken back), never a way round the guards
        # below (an undone draw leaves the table as it was, and the actions still count).
        offered = legal if player.takes_undo else [a for a in legal if not isinstance(a, g.Undo)]
        action = choose(table, offered)
        if action is None:
            break
        if isinstance(action, Recycle):
            # A whole pass that turned nothing up and played nothing: stop, as a player would.
            progress = (state.units, *(len(p.cards) for p in table.piles))
            if progress == progress_at_recycle:
                break
            progress_at_recycle = progress
        state = g.fold(g.decide(state, action, sealed, redeals), state)
    return state.units


def simulate(game_id: str, start: int, count: int, kind: Kind = "bot") -> dict[int, int]:
    """Deals ``start`` .. ``start + count - 1``: how many games ended with each number of
    units."""
    return dict(Counter(play_one(game_id, i, kind) for i in range(start, start + count)))


@dataclass(frozen=True, slots=True)
class RtpResult:
    game_id: str
    games: int
    mean_units: float
    full_wins: int
    rtp: Decimal
    low: Decimal
    high: Decimal
    multiplier: str


def rtp_of(game_id: str, histogram: Mapping[int, int], multiplier: str | None = None) -> RtpResult:
    """The return to player of a units histogram at M (the game's own by default): mean payout
    over stake, with its 95% interval (normal approximation over the per-game returns)."""
    rules = game_named(game_id)
    m = multiplier or rules.multiplier
    n = sum(histogram.values())
    if n == 0:
        raise ValueError("no games simulated")
    returns = {u: winnings(u, STAKE, m, rules.max_units) / STAKE for u in histogram}
    mean = sum(returns[u] * k for u, k in histogram.items()) / n
    var = sum(k * (returns[u] - mean) ** 2 for u, k in histogram.items()) / max(n - 1, 1)
    half = 1.96 * math.sqrt(var / n)
    units = sum(u * k for u, k in histogram.items()) / n

    def d(x: float) -> Decimal:
        return Decimal(f"{x:.4f}")

    return RtpResult(
        game_id, n, units, histogram.get(rules.max_units, 0), d(mean), d(mean - half),
        d(mean + half), m,
    )  # fmt: skip
