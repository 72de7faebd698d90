"""Small builders for tests: layouts written as text, decks built from a wanted layout, games
started on a chosen deck. Pure helpers; no database."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from events import chain, codec
from events.catalog import GameEvent
from events.records import RecordedEvent
from service.core import game_decider as g
from service.core import ledger, shuffle
from service.core.game_decider import Game, GameInfo
from service.core.game_verification import PostingRow
from service.core.paytable import Paytable, default_paytables
from service.errors import RuleViolation
from service.games import game_named
from service.games.klondike import COLUMNS, VEGAS_DRAW1
from service.rules.actions import MoveCards
from service.rules.cards import CANONICAL_DECK, Card, canonical_deck, is_deck
from service.rules.game import GameRules, Reveal
from service.rules.table import Pile, Table, table

GBP: Paytable = default_paytables()["GBP"]
SEED = bytes(range(32))  # the worked example's seed in service/core/SHUFFLE.md

#: The sealed cards of each game ``start`` dealt, so ``play`` can show them as the server would,
#: and the seed it was dealt (or salted) with, so ``play`` can redeal as the server would.
_SEALED: dict[GameInfo, tuple[Card, ...]] = {}
_SEEDS: dict[GameInfo, bytes] = {}


def column(text: str) -> Pile:
    """``"4S 9D|KH QC"``: face-down cards bottom first, a bar, then face-up cards bottom first.
    ``"|KH"`` is one face-up King; ``""`` is an empty column."""
    down, _, up = text.partition("|")
    cards = (*down.split(), *up.split())
    return Pile(cards, len(down.split()))


def layout(
    tableau: Sequence[str] = (),
    foundations: Sequence[str] = (),
    stock: str = "",
    waste: str = "",
    waste_fan: int | None = None,
    passes_left: int | None = 1,
    rules: GameRules = VEGAS_DRAW1,
) -> Table:
    """A hand-made Klondike-family table; unnamed columns and foundations are empty. ``stock``
    lists the next card drawn first. Need not hold 52 cards. Face-down cards are written as
    codes here (a rule test knows them; the decider shows them as it would a sealed card)."""
    piles = {f"tableau:{i}": column(t) for i, t in enumerate(tableau)}
    piles |= {f"foundation:{i}": Pile(tuple(f.split())) for i, f in enumerate(foundations)}
    stocked = tuple(stock.split())[::-1]
    piles["stock"] = Pile(stocked, len(stocked))
    wasted = tuple(waste.split())
    piles["waste"] = Pile(wasted)
    fan = min(len(wasted), 1) if waste_fan is None else waste_fan
    return table(rules.layout, piles, passes_left=passes_left, fan=fan)


def pile(game: Game, pile_id: str) -> Pile:
    """One pile of a game in play."""
    assert game.table is not None
    return game.table.pile(pile_id)


def stock_order(game: Game) -> tuple[object, ...]:
    """The stock, next card drawn first (sealed numbers where the player has not seen it)."""
    return pile(game, "stock").cards[::-1]


def start(
    deck: Sequence[Card] | None = None,
    variant: str = "vegas-draw1",
    stake: int = 520,
    seed: bytes = SEED,
) -> tuple[Game, list[GameEvent]]:
    """A dealt game and its first events. Without a deck, the deck comes from ``seed``."""
    rules = game_named(variant)
    if deck is None:
        cards, algorithm = shuffle.derive_deck(seed, None, rules.decks), shuffle.ALGORITHM
        commitment = shuffle.commitment(seed)
    else:
        cards, algorithm = tuple(deck), shuffle.CERTIFICATION_DECK
        commitment = shuffle.deck_commitment(cards, seed)  # the seed salts a given deck
    command = g.StartGame(
        game_id="game-1",
        player_id="player-1",
        variant=variant,
        stake=stake,
        paytable=GBP,
        deck=cards,
        shuffle_algorithm=algorithm,
        seed_commitment=commitment,
        certification=deck is not None,  # only a certification game is given its deck
    )
    events = g.decide(g.INITIAL, command)
    game = g.fold(events)
    assert game.info is not None
    _SEALED[game.info] = g.hidden_cards(rules, cards)
    _SEEDS[game.info] = seed
    return game, events


def sealed_of(game: Game) -> tuple[Card, ...]:
    """The sealed cards of a game ``start`` dealt (what the server keeps secret)."""
    assert game.info is not None
    return _SEALED.get(game.info, ())


def redeals_of(game: Game) -> g.Shuffle:
    """The redeal shuffle of a game ``start`` dealt: keyed by its seed (a given deck's salt)."""
    assert game.info is not None
    return shuffle.redealer(_SEEDS.get(game.info, SEED), game.info.client_seed)


def game_on(lay: Table, stake: int = 520, variant: str = "vegas-draw1") -> Game:
    """A game in progress on the table ``lay`` (Vegas: win rate 50 at the default stake)."""
    rules = game_named(variant)
    game, _ = start(stake=stake, variant=variant)
    status: g.Status = "complete" if rules.is_won(lay) else "in_progress"
    return replace(
        game, table=lay, last_action="deal", undo=None, units=rules.units(lay), status=status
    )


def play(
    game: Game, *commands: g.Command, sealed: Sequence[Card] | None = None
) -> tuple[Game, list[GameEvent]]:
    """Decide and fold each command in turn; return the final state and all events."""
    cards = sealed_of(game) if sealed is None else sealed
    emitted: list[GameEvent] = []
    for command in commands:
        events = g.decide(game, command, cards, redeals_of(game))
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


def recorded(game_id: str, events: Sequence[GameEvent]) -> list[RecordedEvent]:
    """The records a store would hold for ``events``: chained hashes, current shapes."""
    records: list[RecordedEvent] = []
    prev = chain.GENESIS
    at = datetime(2030, 1, 1, tzinfo=UTC)
    for version, event in enumerate(events, start=1):
        type_name, schema_version, data = codec.encode(event)
        record = RecordedEvent(
            position=version,
            stream_id=f"game-{game_id}",
            version=version,
            event_id=uuid.UUID(int=version),
            type=type_name,
            schema_version=schema_version,
            data=json.loads(json.dumps(data)),
            metadata={"role": "player", "actor": "player-1"},
            recorded_at=at + timedelta(seconds=version),
            prev_hash=prev,
            hash="",
        )
        record = replace(record, hash=chain.hash_of(record))
        records.append(record)
        prev = record.hash
    return records


def postings_for(game_id: str, events: Sequence[GameEvent]) -> list[PostingRow]:
    """The ledger postings the money events of a stream cause, balances chained."""
    rows: list[PostingRow] = []
    balances: dict[str, int] = {}
    for version, event in enumerate(events, start=1):
        entry = ledger.entry_for(event, f"game-{game_id}", version, "player-1", game_id)
        if entry is None:
            continue
        for account, amount in entry.postings:
            before = balances.get(account.account_id, 10**6)
            balances[account.account_id] = before + amount
            rows.append(
                PostingRow(
                    posting_id=len(rows) + 1,
                    client_transaction_id=entry.client_transaction_id,
                    kind=entry.kind,
                    transaction_amount=entry.amount,
                    cause_stream=entry.cause_stream,
                    cause_version=entry.cause_version,
                    account_id=account.account_id,
                    amount=amount,
                    balance_before=before,
                    balance_after=before + amount,
                )
            )
    return rows


def play_on(
    rules: GameRules, lay: Table, reveal: Reveal, *actions: g.PlayAction
) -> tuple[Table, list[GameEvent]]:
    """A game's rules played on a bare table, as the engine plays them: each action's events,
    then what the rules play by themselves, folded in turn."""
    events: list[GameEvent] = []
    for action in actions:
        decided = g.decide_on_table(rules, lay, action, reveal)
        lay = g.apply_all(lay, decided)
        events.extend(decided)
    return lay, events


def deck_with(placed: Mapping[int, Card], decks: int = 1) -> tuple[Card, ...]:
    """A deck in deal order with the given cards at the given positions, the rest of the
    ``decks`` canonical decks filling the other positions in canonical order; checked to be a
    full multiset (a card placed more often than the decks hold it fails)."""
    rest = list(canonical_deck(decks))
    for card in placed.values():
        rest.remove(card)
    filler = iter(rest)
    deck = tuple(placed[i] if i in placed else next(filler) for i in range(52 * decks))
    assert is_deck(deck, decks)
    return deck


def accepted_moves(rules: GameRules, lay: Table, reveal: Reveal, most: int) -> set[MoveCards]:
    """Every move of 1 to ``most`` cards between any two piles that the rules accept, found by
    trying them all: what a game's listed legal moves must equal."""
    found: set[MoveCards] = set()
    for source in rules.layout.ids:
        for target in rules.layout.ids:
            for count in range(1, most + 1):
                action = MoveCards(source, target, count)
                try:
                    rules.decide(lay, action, reveal)
                except RuleViolation:
                    continue
                found.add(action)
    return found
