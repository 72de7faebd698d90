"""What a player may see of a game, and the full picture an auditor sees.

The player view never contains a face-down card, the stock order, the deck or an unrevealed seed:
only counts. The full view holds every card where it lies.
"""

from __future__ import annotations

from typing import Any

from service import klondike
from service.game import (
    Collect,
    Draw,
    Game,
    MoveCards,
    PlayCommand,
    Recycle,
    Turn,
    Undo,
    legal_commands,
)
from service.klondike import Layout


def command_as_dict(command: PlayCommand) -> dict[str, Any]:
    """A legal command as the API names it: the action and its arguments."""
    if isinstance(command, MoveCards):
        return {
            "action": "move",
            "from": command.source,
            "to": command.target,
            "count": command.count,
        }
    if isinstance(command, Turn):
        return {"action": "turn", "column": command.column}
    names: dict[type[PlayCommand], str] = {
        Draw: "draw",
        Recycle: "recycle",
        Undo: "undo",
        Collect: "collect",
    }
    return {"action": names[type(command)]}


def _game_fields(game: Game) -> dict[str, Any]:
    variant = game.variant
    info = game.info
    return {
        "id": game.game_id,
        "player_id": game.player_id,
        "variant": variant.name if variant else None,
        "status": game.status,
        "version": game.version,
        "stake": game.stake,
        "currency": game.currency,
        "win_rate": game.win_rate,
        "winnings": game.winnings,
        "foundation_count": game.foundation_count,
        "payout": game.payout,
        "refund": game.refund,
        "end_reason": game.end_reason,
        "certification": game.certification,
        "paytable": {"id": info.paytable_id, "version": info.paytable_version} if info else None,
        "rules_version": info.rules_version if info else None,
        "seed_commitment": game.seed_commitment,
        "client_seed": game.client_seed,
        "server_seed": game.server_seed,  # None until the game ends
        "can_undo": game.undo is not None and game.status == "in_progress",
        "legal_moves": [command_as_dict(c) for c in legal_commands(game)],
    }


def _pile_counts(layout: Layout) -> dict[str, Any]:
    return {
        "stock_count": len(layout.stock),
        "passes_left": layout.passes_left,
        "waste": list(layout.visible_waste),
        "waste_count": len(layout.waste),
        "waste_playable": klondike.waste_playable(layout),
        "foundations": [f[-1] if f else None for f in layout.foundations],
    }


def player_view(game: Game) -> dict[str, Any]:
    """The game as its player sees it: face-down cards and the stock are counts only."""
    view = _game_fields(game)
    layout = game.layout
    if layout is None:
        return view
    view.update(_pile_counts(layout))
    view["tableau"] = [{"face_down": len(c.down), "face_up": list(c.up)} for c in layout.tableau]
    return view


def full_view(game: Game) -> dict[str, Any]:
    """Everything, for auditors: every pile card by card, the deck and the deal inputs."""
    view = _game_fields(game)
    view["deck"] = list(game.deck)
    view["shuffle_algorithm"] = game.info.shuffle_algorithm if game.info else None
    layout = game.layout
    if layout is None:
        return view
    view.update(_pile_counts(layout))
    view["stock"] = list(layout.stock)
    view["waste_all"] = list(layout.waste)
    view["foundation_piles"] = [list(f) for f in layout.foundations]
    view["tableau"] = [
        {"face_down": len(c.down), "face_down_cards": list(c.down), "face_up": list(c.up)}
        for c in layout.tableau
    ]
    return view
