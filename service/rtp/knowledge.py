"""What a player knows at the table, and the worlds consistent with it (pure).

A player sees every face-up card, every card they have seen before (a slot holding a code, face
down or not), how many cards lie face down where, and the decks the game is dealt from. The
cards they have not seen are therefore known as a *composition* (the decks less every code on
the table) but not as an order. A strong player that searches samples *worlds*: the table
with each sealed slot given one of the unseen cards, every assignment equally likely, and the
redeals' shuffles drawn from the player's own random numbers (nobody but the server knows the
game's seed).

Nothing here reads a sealed number's value: slots are taken by position (pile, then bottom to
top), so renumbering every sealed card, as the sealed-table test does, samples the same worlds.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from service.rules.cards import CANONICAL_DECK, Card
from service.rules.game import GameRules, Secrets, Shuffle
from service.rules.table import Pile, Table


def seen(table: Table) -> Counter[Card]:
    """Every card on the table whose code the player knows."""
    return Counter(s for p in table.piles for s in p.cards if isinstance(s, str))


def unseen(rules: GameRules, table: Table) -> list[Card]:
    """The cards the player has not seen, in canonical order (a multiset for two decks)."""
    left = Counter(CANONICAL_DECK * rules.decks)
    left.subtract(seen(table))
    return [c for c in CANONICAL_DECK for _ in range(left[c])]


def sealed_count(table: Table) -> int:
    return sum(1 for p in table.piles for s in p.cards if isinstance(s, int))


def sample_world(rules: GameRules, table: Table, rng: random.Random) -> tuple[Table, Secrets]:
    """One world consistent with what the player sees: every sealed slot given an unseen card
    (a uniformly random assignment), and redeal shuffles of the player's own random numbers
    (fixed per world and label, so a search that redeals twice sees one world). The returned
    table holds codes only; its Secrets reveal a code as itself."""
    cards = unseen(rules, table)
    rng.shuffle(cards)
    deal = iter(cards)
    piles: list[Pile] = []
    for pile in table.piles:
        if any(isinstance(s, int) for s in pile.cards):
            pile = Pile(
                tuple(next(deal) if isinstance(s, int) else s for s in pile.cards), pile.down
            )
        piles.append(pile)
    return table.but(piles=tuple(piles)), Secrets(_as_itself, _ShuffleOf(rng.getrandbits(64)))


def clear_secrets(sealed: Sequence[Card], shuffle: Shuffle) -> Secrets:
    """The deal's true secrets, as the server holds them: for the clairvoyant bound only."""
    return Secrets(lambda s: sealed[s] if isinstance(s, int) else s, shuffle)


def clear_table(table: Table, secrets: Secrets) -> Table:
    """The table with every sealed slot replaced by its true card: what a clairvoyant sees."""
    return table.but(
        piles=tuple(
            Pile(tuple(secrets(s) if isinstance(s, int) else s for s in p.cards), p.down)
            for p in table.piles
        )
    )


def _as_itself(slot: int | Card) -> Card:
    if isinstance(slot, int):
        raise LookupError("a sampled world holds no sealed slot")
    return slot


class _ShuffleOf:
    """A redeal in a sampled world: the gathered cards in an order of the player's own random
    numbers (the real one comes from the game's secret seed)."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def __call__(self, label: str, cards: Sequence[Card]) -> tuple[Card, ...]:
        out = list(cards)
        random.Random(f"{self._seed}|{label}").shuffle(out)
        return tuple(out)
