"""Small builders for tests: layouts written as text, decks built from a wanted layout, games
started on a chosen deck. Pure helpers; no database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from events.catalog import GameEvent
from service import game as g
from service import shuffle
from service.cards import CANONICAL_DECK, Card
from service.game import Game
from service.klondike import COLUMNS, Column, Layout
from service.paytable import Paytable, default_paytables

GBP: Paytable = default_paytables()["GBP"]
SEED = bytes(range(32))  # the worked example's seed in service/SHUFFLE.md


def column(text: str) -> Column:
    """``"4S 9D|KH QC"``: face-down cards bottom first, a bar, then face-up cards bottom first.
    ``"|KH"`` is one face-up King; ``""`` is an empty column."""
    down, _, up = text.partition("|")
    return Column(tuple(down.split()), tuple(up.split()))


def layout(
    tableau: Sequence[str] = (),
    foundations: Sequence[str] = (),
    stock: str = "",
    waste: str = "",
    waste_fan: int | None = None,
    passes_left: int = 1,
    draw_count: int = 1,
) -> Layout:
    """A hand-made layout; unnamed columns and foundations are empty. Need not hold 52 cards."""
    cols = [column(t) for t in tableau] + [Column()] * (COLUMNS - len(tableau))
    founds = [tuple(f.split()) for f in foundations] + [()] * (4 - len(foundations))
    wasted = tuple(waste.split())
    return Layout(
        tableau=tuple(cols),
        foundations=tuple(founds),
        stock=tuple(stock.split()),
        waste=wasted,
        waste_fan=min(len(wasted), 1) if waste_fan is None else waste_fan,
        passes_left=passes_left,
        draw_count=draw_count,
    )


def start(
    deck: Sequence[Card] | None = None,
    variant: str = "vegas-draw1",
    stake: int = 520,
    seed: bytes = SEED,
) -> tuple[Game, list[GameEvent]]:
    """A dealt game and its first two events. Without a deck, the deck comes from ``seed``."""
    if deck is None:
        cards, algorithm = shuffle.derive_deck(seed), shuffle.ALGORITHM
        commitment: str | None = shuffle.commitment(seed)
    else:
        cards, algorithm, commitment = tuple(deck), shuffle.CERTIFICATION_DECK, None
    command = g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant=variant,
        stake=stake,
        paytable=GBP,
        deck=cards,
        shuffle_algorithm=algorithm,
        seed_commitment=commitment,
    )
    events = g.decide(g.INITIAL, command)
    return g.fold(events), events


def game_on(lay: Layout, stake: int = 520) -> Game:
    """A game in progress whose layout is ``lay`` (win rate 50 at the default stake)."""
    game, _ = start(stake=stake)
    return replace(game, layout=lay, last_action="deal", undo=None)


def play(game: Game, *commands: g.Command) -> tuple[Game, list[GameEvent]]:
    """Decide and fold each command in turn; return the final state and all events."""
    emitted: list[GameEvent] = []
    for command in commands:
        events = g.decide(game, command)
        game = g.fold(events, game)
        emitted.extend(events)
    return game, emitted


def deck_for(columns: Sequence[Sequence[Card]], stock: Sequence[Card]) -> tuple[Card, ...]:
    """The deal-order deck that deals ``columns`` (column c: c+1 cards, bottom first, the last
    face up) and then ``stock`` (next card drawn first)."""
    assert [len(c) for c in columns] == list(range(1, COLUMNS + 1))
    deck: list[Card] = []
    for row in range(COLUMNS):
        for col in range(row, COLUMNS):
            deck.append(columns[col][row])
    deck.extend(stock)
    assert sorted(deck) == sorted(CANONICAL_DECK), "deck_for needs all 52 cards exactly once"
    return tuple(deck)


def easy_deck() -> tuple[Card, ...]:
    """A deck that wins by playing every stock card straight up, then clearing the tableau.

    The stock holds Ace to 6 of every suit in foundation order; the tableau holds 7 to King
    so that each column's top card is always the next one the foundations need."""
    order = [r + s for r in "A23456789TJQK" for s in "SHDC"]
    stock, rest = order[:24], order[24:]
    columns: list[list[Card]] = [[] for _ in range(COLUMNS)]
    # Deal `rest` from the top of the columns down: the card needed first sits on top.
    slots = [(depth, c) for c in range(COLUMNS) for depth in range(c + 1)]
    slots.sort(key=lambda dc: (dc[0], dc[1]))
    for card, (_depth, c) in zip(rest, slots, strict=True):
        columns[c].append(card)
    # columns[c] was filled top-first; deal order wants bottom-first.
    return deck_for([list(reversed(col)) for col in columns], stock)


def turnable_deck() -> list[str]:
    """Column 1 is one face-down card under the Ace of spades, so the Ace can go up and the
    column be turned; the rest is any order."""
    rest = [c for c in CANONICAL_DECK if c != "AS"]
    columns = [[rest.pop() for _ in range(c + 1)] for c in range(COLUMNS)]
    columns[1][-1], spare = "AS", columns[1][-1]
    rest.insert(0, spare)
    return list(deck_for(columns, rest))
