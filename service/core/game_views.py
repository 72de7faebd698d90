"""What a player may see of a game, and the full picture an auditor sees once it has ended.

Written once for every game, from the pile kinds a game lays out. The player view never holds
a card the player has not seen: face-down cards are counted, never named (the fold does not
even know them). Staff see an unfinished game exactly as its player does; once the game has
ended and revealed its seed (or given deck), the full view re-derives the deal and shows every
card where it lies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from service.core import shuffle
from service.core.game_decider import Collect, Game, PlayCommand, hidden_cards, legal_commands
from service.rules.actions import MoveCards, Remove, describe
from service.rules.cards import Card
from service.rules.table import Pile, Table, unseal

#: What an unfinished game shows instead of a deck recorded in clear (v1 deals only).
MASKED = "hidden until the game ends"
#: The events that end a game (its state is then collected or voided).
ENDINGS = ("Collected", "Voided")


def ended(record_types: Iterable[str]) -> bool:
    """Has a game whose stream holds these event types ended? (Read from the types alone, so
    a stream an edit made unreadable still answers.)"""
    return any(t in ENDINGS for t in record_types)


def shown_data(record_type: str, data: Mapping[str, Any], hidden: bool) -> dict[str, Any]:
    """A recorded game event's data as shown: a v1 deal recorded its deck in clear, which is
    masked while ``hidden`` (the game unfinished, or a player's masked replay). The one rule for
    the events route and the replay."""
    shown = dict(data)
    if hidden and record_type == "Dealt" and shown.get("deck") is not None:
        shown["deck"] = MASKED
    return shown


def command_as_dict(command: PlayCommand) -> dict[str, Any]:
    """A legal command as the API names it: the action and its arguments."""
    if isinstance(command, Collect):
        return {"action": "collect"}
    return describe(command)


def _uses_waste(command: PlayCommand) -> bool:
    if isinstance(command, MoveCards):
        return command.source == "waste"
    return isinstance(command, Remove) and "waste" in command.piles


def _game_fields(game: Game, legal: list[PlayCommand]) -> dict[str, Any]:
    info = game.info
    rules = game.rules
    return {
        "id": game.game_id,
        "player_id": game.player_id,
        "variant": game.variant or None,
        "title": rules.title if rules else None,
        "status": game.status,
        "version": game.version,
        "stake": game.stake,
        "currency": game.currency,
        "win_rate": game.win_rate,
        "multiplier": info.multiplier if info else None,
        "units": game.units,
        "max_units": game.max_units,
        "winnings": game.winnings,
        "foundation_count": game.units,  # Vegas's units; kept for the first front-ends
        "payout": game.payout,
        "refund": game.refund,
        "end_reason": game.end_reason,
        "certification": game.certification,
        "paytable": {"id": info.paytable_id, "version": info.paytable_version} if info else None,
        "rules_version": info.rules_version if info else None,
        "seed_commitment": game.seed_commitment,
        "client_seed": game.client_seed,
        "server_seed": game.server_seed,  # None until the game ends
        "revealed_deck": list(game.revealed_deck) if game.revealed_deck else None,
        "can_undo": game.undo is not None and game.status == "in_progress",
        "legal_moves": [command_as_dict(c) for c in legal],
    }


def _visible_waste(table: Table, pile: Pile) -> list[Card]:
    """The fan: the latest draw's cards still on the waste, else the one card beneath."""
    up = pile.up
    return list(up[-table.fan :] if table.fan else up[-1:])


def _pile_view(table: Table, kind: str, pile_id: str, pile: Pile) -> dict[str, Any]:
    shown = _visible_waste(table, pile) if kind == "waste" else list(pile.up)
    return {
        "id": pile_id,
        "kind": kind,
        "count": len(pile.cards),
        "face_down": pile.down,
        "cards": shown,
    }


def _table_fields(table: Table, legal: list[PlayCommand]) -> dict[str, Any]:
    layout = table.layout
    piles = table.piles
    wastes = [piles[i] for i in layout.of_kind("waste")]
    waste = wastes[0] if wastes else Pile()
    stock_count = table.count("stock")
    return {
        "stock_count": stock_count,
        "passes_left": table.passes_left,
        "waste": _visible_waste(table, waste),
        "waste_count": len(waste.cards),
        "waste_playable": any(_uses_waste(c) for c in legal),
        "foundations": [piles[i].top for i in layout.of_kind("foundation")],
        "tableau": [
            {"face_down": piles[i].down, "face_up": list(piles[i].up)}
            for i in layout.of_kind("tableau")
        ],
        "piles": [
            _pile_view(table, spec.kind, spec.id, pile)
            for spec, pile in zip(layout.specs, piles, strict=True)
        ],
        "counters": _counters(table, stock_count),
    }


def _counters(table: Table, stock_count: int) -> dict[str, int | None]:
    counters = {"stock": stock_count, "passes_left": table.passes_left}
    if table.picks_left is not None:  # only the games that have a draw of a buried card
        counters["picks_left"] = table.picks_left
    return counters


def player_view(game: Game) -> dict[str, Any]:
    """The game as its player sees it: face-down cards are counts only."""
    legal = legal_commands(game)
    view = _game_fields(game, legal)
    if game.table is not None:
        view.update(_table_fields(game.table, legal))
    return view


def revealed_deck(game: Game) -> tuple[Card, ...] | None:
    """The whole deck in deal order, once the game has ended and revealed it (or a v1 deal
    that recorded it); None while it is sealed."""
    info = game.info
    if info is None:
        return None
    if info.legacy_deck is not None:
        return info.legacy_deck if game.is_over else None
    if game.revealed_deck is not None:
        return game.revealed_deck
    if game.server_seed is not None:
        seed = bytes.fromhex(game.server_seed)
        return shuffle.derive_deck(seed, info.client_seed, info.rules.decks)
    return None


def full_view(game: Game, deck: tuple[Card, ...] | None = None) -> dict[str, Any]:
    """For auditors. Until the game ends, exactly the player's view; after it, every pile card
    by card, the deck and the deal inputs. ``deck``: the revealed deck of the game this state
    is a step of (a replay shows every step of a finished game in full)."""
    view = player_view(game)
    deck = deck or revealed_deck(game)
    if deck is None or game.table is None or game.info is None:
        return view
    table = unseal(game.table, hidden_cards(game.info.rules, deck))
    piles = table.piles
    layout = table.layout
    view["deck"] = list(deck)
    view["shuffle_algorithm"] = game.info.shuffle_algorithm
    view["stock"] = [c for i in layout.of_kind("stock") for c in piles[i].cards[::-1]]
    view["waste_all"] = [c for i in layout.of_kind("waste") for c in piles[i].cards]
    view["foundation_piles"] = [list(piles[i].cards) for i in layout.of_kind("foundation")]
    for column, i in zip(view["tableau"], layout.of_kind("tableau"), strict=True):
        column["face_down_cards"] = list(piles[i].face_down)
    for shown, pile in zip(view["piles"], piles, strict=True):
        shown["face_down_cards"] = list(pile.face_down)
    return view
