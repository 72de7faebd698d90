"""Random games of any registered game, played through the decider alone: every state a game
passes through and every event it records, from the deal to its collection (a duel seat's game
stops short of that: its duel reveals its seed)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from events.catalog import GameEvent
from service.core import game_decider as g
from service.core import shuffle
from service.games import GAMES
from tests.builders import GBP

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def played(
    variant: str, seed: int, steps: int = 60
) -> Iterator[tuple[g.Game, list[GameEvent], datetime]]:
    """Each step of a random game of ``variant``: the state after it, the events it recorded
    and the server's clock when it was taken."""
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
    events = g.decide(g.INITIAL, start, sealed)
    state = g.fold(events)
    now = T0
    yield state, events, now
    for _ in range(steps):
        legal = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not legal:
            break
        now += timedelta(seconds=1)
        events = g.decide(state, rng.choice(legal), sealed, redeals, now)
        state = g.fold(events, state)
        yield state, events, now
    if not rules.duel:  # a seat's game reveals nothing itself: its duel does
        now += timedelta(seconds=1)
        events = g.decide(state, g.Collect(server_seed=server_seed.hex()), sealed, redeals, now)
        yield g.fold(events, state), events, now


def states(variant: str, seed: int, steps: int = 60) -> Iterator[tuple[g.Game, datetime]]:
    """Each state of a random game of ``variant`` and the server's clock when it was reached."""
    for state, _, now in played(variant, seed, steps):
        yield state, now


def events(variant: str, seed: int, steps: int = 60) -> list[GameEvent]:
    """Every event of a random game of ``variant``, in order."""
    return [event for _, step, _ in played(variant, seed, steps) for event in step]
