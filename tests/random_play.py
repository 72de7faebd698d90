"""Random games of any registered game, played through the decider alone: every state a game
passes through, from the deal to its collection (a duel seat's game stops short of that: its
duel reveals its seed)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from service import game as g
from service import shuffle
from service.games import GAMES
from tests.builders import GBP

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def states(variant: str, seed: int, steps: int = 60) -> Iterator[tuple[g.Game, datetime]]:
    """Each state of a random game of ``variant`` and the server's clock when it was reached."""
    rules = GAMES[variant]
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    deck = shuffle.derive_deck(server_seed, None, rules.decks)
    sealed = g.hidden_cards(rules, deck)
    redeals = shuffle.redealer(server_seed, None)
    start = g.StartGame(
        game_id=str(uuid.UUID(int=rng.getrandbits(128))),
        player_id=str(uuid.UUID(int=rng.getrandbits(128))),
        variant=variant,
        stake=520,
        paytable=GBP,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(server_seed),
        duel_id=str(uuid.UUID(int=rng.getrandbits(128))) if rules.duel else None,
        now=T0 if rules.time_limit is not None else None,
    )
    state = g.fold(g.decide(g.INITIAL, start, sealed))
    now = T0
    yield state, now
    for _ in range(steps):
        legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not legal:
            break
        now += timedelta(seconds=1)
        state = g.fold(g.decide(state, rng.choice(legal), sealed, redeals, now), state)
        yield state, now
    if not rules.duel:  # a seat's game reveals nothing itself: its duel does
        now += timedelta(seconds=1)
        collect = g.Collect(server_seed=server_seed.hex())
        yield g.fold(g.decide(state, collect, sealed, redeals, now), state), now
