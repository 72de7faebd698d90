"""Stream names (pure): the one place that spells them. A game's events are ``game-<id>``, a
duel's ``duel-<id>``, a player's ``player-<id>``, and the operator's switches are the one
``gaming-controls`` stream; the audit's units, the finance projections
and the verifiers read a stream's kind and id from its name with these too. (SQL that builds a
name in the database, as the audit's plan does, spells the same prefixes; migrations/0031
stream_kind reads a stream's kind from its name the same way, and refuses any other name.)"""

from __future__ import annotations

import uuid

GAME = "game-"
DUEL = "duel-"
PLAYER = "player-"
#: The operator's switches of gaming (GamingSwitched): one stream for the whole casino.
CONTROLS = "gaming-controls"
#: A round's wallet transactions in seamless mode (issue 37), named by the round's game id.
WALLET = "wallet-"


def game_stream(game_id: uuid.UUID | str) -> str:
    return f"{GAME}{game_id}"


def duel_stream(duel_id: uuid.UUID | str) -> str:
    return f"{DUEL}{duel_id}"


def player_stream(player_id: uuid.UUID | str) -> str:
    return f"{PLAYER}{player_id}"


def wallet_stream(round_id: uuid.UUID | str) -> str:
    return f"{WALLET}{round_id}"


def is_wallet(stream: str) -> bool:
    return stream.startswith(WALLET)


def is_game(stream: str) -> bool:
    return stream.startswith(GAME)


def is_duel(stream: str) -> bool:
    return stream.startswith(DUEL)


def is_player(stream: str) -> bool:
    return stream.startswith(PLAYER)


def kind_of(stream: str) -> str | None:
    """A stream's kind by its name ("game", "duel", "player", "wallet" or "controls"), None for
    a name no service stream has (the prefixes with a lowercase uuid, as names are made
    above)."""
    if stream == CONTROLS:
        return "controls"
    for prefix in (GAME, DUEL, PLAYER, WALLET):
        if stream.startswith(prefix):
            named = stream[len(prefix) :]
            try:
                canonical = str(uuid.UUID(named)) == named
            except ValueError:
                return None
            return prefix[:-1] if canonical else None
    return None


def is_controls(stream: str) -> bool:
    return stream == CONTROLS


def id_of(stream: str) -> str:
    """The id a stream's name carries (its game's, duel's, player's or round's)."""
    for prefix in (GAME, DUEL, PLAYER, WALLET):
        if stream.startswith(prefix):
            return stream[len(prefix) :]
    raise ValueError(f"not a stream name: {stream!r}")
