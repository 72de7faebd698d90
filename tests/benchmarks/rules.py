"""Rules-core figures: events folded per second replaying recorded random games, and the mean
time of one decide+evolve step; for Vegas, then for every registered game.

The Vegas corpus (10,000 random games by default) is generated once with both cores and cached
as encoded events under ``.data/bench/`` so repeated runs measure replay, not generation.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from events import codec
from events.catalog import GameEvent
from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import default_paytables
from service.games import STANDALONE as REGISTERED  # a duel seat game is benched by duels
from service.games import game_named
from service.rtp.simulate import play_one
from service.rules.cards import Card

GAMES = int(os.environ.get("BENCH_GAMES", "10000"))
PER_GAME = int(os.environ.get("BENCH_GAMES_PER_GAME", "300"))
MAX_COMMANDS = 120
RTP_DEALS = int(os.environ.get("BENCH_RTP_DEALS", "40"))
CACHE = Path(".data/bench") / f"games-{GAMES}-{shuffle.ALGORITHM.replace('/', '-')}-sealed.jsonl"
PAYTABLE = default_paytables()["GBP"]


def _start(
    index: int, rng: random.Random, variant: str | None
) -> tuple[g.Game, list[GameEvent], bytes, tuple[Card, ...]]:
    seed = rng.randbytes(32)
    rules = game_named(variant or rng.choice(("vegas-draw1", "vegas-draw3")))
    deck = shuffle.derive_deck(seed, None, rules.decks)
    command = g.StartGame(
        game_id=f"bench-{index}",
        player_id=f"player-{index % 97}",
        variant=rules.id,
        stake=rng.choice(PAYTABLE.ladder),
        paytable=PAYTABLE,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(seed),
    )
    events = g.decide(g.INITIAL, command)
    return g.fold(events), events, seed, g.hidden_cards(rules, deck)


def play_random_game(
    index: int, variant: str | None = None
) -> tuple[list[GameEvent], list[g.Command], tuple[Card, ...], g.Shuffle]:
    """One game of random legal commands, collected at the end; its events, its commands, its
    sealed cards and its redeal shuffle. Without a variant, Vegas draw one or three at random."""
    rng = random.Random(index)
    state, events, seed, sealed = _start(index, rng, variant)
    redeals = shuffle.redealer(seed, None)
    commands: list[g.Command] = []
    for _ in range(rng.randint(10, MAX_COMMANDS)):
        options = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not options:
            break
        command = rng.choice(options)
        new = g.decide(state, command, sealed, redeals)
        state = g.fold(new, state)
        events.extend(new)
        commands.append(command)
    collect = g.Collect(server_seed=seed.hex())
    events.extend(g.decide(state, collect))
    commands.append(collect)
    return events, commands, sealed, redeals


def _encoded_game(index: int) -> str:
    events, *_ = play_random_game(index)
    return json.dumps([codec.encode(e) for e in events])


def load_corpus() -> list[list[tuple[str, int, dict[str, object]]]]:
    if not CACHE.exists():
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            lines = list(pool.map(_encoded_game, range(GAMES), chunksize=250))
        CACHE.write_text("\n".join(lines) + "\n")
        print(f"  (generated {GAMES} random games in {time.perf_counter() - started:.1f} s)")
    return [[(t, v, d) for t, v, d in json.loads(line)] for line in CACHE.read_text().splitlines()]


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def run() -> Iterator[str]:
    corpus = load_corpus()
    started = time.perf_counter()
    decoded = [[codec.decode_game(t, v, d) for t, v, d in game] for game in corpus]
    decode_s = time.perf_counter() - started
    events = sum(len(game) for game in decoded)

    def fold_all() -> None:
        for game in decoded:
            g.fold(game)

    fold_s = min(_timed(fold_all) for _ in range(3))
    yield f"replay corpus: {len(corpus)} games, {events} events ({events / len(corpus):.1f}/game)"
    yield f"fold only: {events / fold_s:,.0f} events/s ({len(corpus) / fold_s:,.0f} games/s)"
    rate = events / decode_s
    yield f"decode stored JSON (compiled schema loaders, validating): {rate:,.0f} events/s"
    yield f"decode + fold: {events / (decode_s + fold_s):,.0f} events/s"

    sample = [play_random_game(i) for i in range(300)]
    yield f"decide+evolve: {_decide_evolve_us(sample):.1f} us mean per command"
    states = [g.fold(recorded[:-1]) for recorded, *_ in sample]
    started = time.perf_counter()
    for state in states:
        g.legal_commands(state)
    listing = (time.perf_counter() - started) / len(states)
    yield f"legal moves listing (end of game): {listing * 1e6:.0f} us per call"

    for game_id in REGISTERED:
        games = [play_random_game(i, game_id) for i in range(PER_GAME)]
        played = [recorded for recorded, *_ in games]
        count = sum(len(recorded) for recorded in played)

        def fold_these(these: list[list[GameEvent]] = played) -> None:
            for recorded in these:
                g.fold(recorded)

        folded = min(_timed(fold_these) for _ in range(3))
        yield (
            f"{game_id}: decide+evolve {_decide_evolve_us(games):.1f} us per action, "
            f"fold {count / folded:,.0f} events/s ({PER_GAME} random games, {count} events)"
        )

    yield from _rtp_rates()


def _rtp_rates() -> Iterator[str]:
    """Deals per second one RTP-lab worker plays (``simulate.play_one``: deal, bot, decider),
    per game; the slowest game bounds how long a measurement takes."""
    rates: dict[str, float] = {}
    for game_id in REGISTERED:
        rates[game_id] = RTP_DEALS / _timed(
            lambda g=game_id: [play_one(g, i) for i in range(RTP_DEALS)]
        )
    slowest = min(rates, key=rates.__getitem__)
    listed = ", ".join(f"{game_id} {rate:,.0f}" for game_id, rate in rates.items())
    yield (
        f"RTP simulation, slowest game: {slowest} at {rates[slowest]:,.1f} deals/s per worker "
        f"({RTP_DEALS} deals each; all, deals/s: {listed})"
    )


Sample = list[tuple[list[GameEvent], list[g.Command], tuple[Card, ...], g.Shuffle]]


def _decide_evolve_us(sample: Sample) -> float:
    """One decide+evolve step, measured by re-deciding recorded commands on their states."""
    steps = 0
    started = time.perf_counter()
    for recorded, commands, sealed, redeals in sample:
        state = g.fold(recorded[:2])
        for command in commands:
            state = g.fold(g.decide(state, command, sealed, redeals), state)
            steps += 1
    return (time.perf_counter() - started) / steps * 1e6
