"""The projections rebuild's SQL (service/services/rebuild.py holds what it means): every live row
of each read model, replacing one (the tables are read models; the log is the truth), and where the
rebuild read to."""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

import psycopg

from service.storage.duels import DUEL_COLUMNS, SEAT_COLUMNS, DuelRow, SeatRow
from service.storage.projections import (
    HISTORY_COLUMNS,
    HistoryRow,
    PlayerRow,
    Preferences,
    history_json,
)

# Every live row of each projection.
LIVE_PLAYERS_SQL = "SELECT player_id, external_ref, currency, created_at FROM players"
LIVE_HISTORY_SQL = f"SELECT {HISTORY_COLUMNS} FROM game_history"
LIVE_BALANCES_SQL = "SELECT account_id, balance FROM account_balances"
LIVE_PREFERENCES_SQL = (
    "SELECT player_id, sound, colour, card_back, updated_at FROM player_preferences"
)
LIVE_DUELS_SQL = f"SELECT {DUEL_COLUMNS} FROM duels"
LIVE_SEATS_SQL = f"SELECT {SEAT_COLUMNS} FROM duel_seats ORDER BY duel_id, seat"

# Replacing a projection's rows (the tables are read models; the log is the truth). players and
# game_history only through the owner's functions (migrations/0033): a player's row as their
# PlayerRegistered says; a game's row as rebuilt, which the function checks against the log (its
# player, version and end), or none for a game that should have none.
RESTORE_PLAYER_SQL = "SELECT restore_player(%(player_id)s)"
RESTORE_HISTORY_SQL = "SELECT restore_game_history(%(game_id)s, %(row)s::text::jsonb)"
DELETE_PREFERENCES_SQL = "DELETE FROM player_preferences WHERE player_id = %(player_id)s"
DELETE_SEATS_SQL = "DELETE FROM duel_seats WHERE duel_id = %(duel_id)s"
DELETE_DUEL_SQL = "DELETE FROM duels WHERE duel_id = %(duel_id)s"
# A balance is never set to a figure: it goes back to the balance after its account's latest
# posting (migrations/0016, restore_balances), which the rebuilt figure must equal.
SET_BALANCE_SQL = "SELECT restore_balances(ARRAY[%(account_id)s]::text[])"

# Remember how far the rebuild read.
CHECKPOINT_SQL = """
INSERT INTO projection_checkpoints (name, position) VALUES (%(name)s, %(position)s)
ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position, updated_at = statement_timestamp()
"""

#: The live read models: players, history, balances, preferences (with when they changed), and
#: duels with their seats, each by its key.
LiveRows = tuple[
    dict[uuid.UUID, PlayerRow],
    dict[uuid.UUID, HistoryRow],
    dict[str, int],
    dict[uuid.UUID, tuple[Preferences, Any]],
    dict[uuid.UUID, tuple[DuelRow, tuple[SeatRow, ...]]],
]


class RebuildStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def live(self) -> LiveRows:
        with self._conn.cursor() as cur:
            cur.execute(LIVE_PLAYERS_SQL)
            players = {r[0]: PlayerRow(*r) for r in cur.fetchall()}
            cur.execute(LIVE_HISTORY_SQL)
            history = {r[0]: HistoryRow(*r) for r in cur.fetchall()}
            cur.execute(LIVE_BALANCES_SQL)
            balances = {r[0]: int(r[1]) for r in cur.fetchall()}
            cur.execute(LIVE_PREFERENCES_SQL)
            preferences = {r[0]: (Preferences(r[1], r[2], r[3]), r[4]) for r in cur.fetchall()}
            cur.execute(LIVE_SEATS_SQL)
            seats: dict[uuid.UUID, list[SeatRow]] = defaultdict(list)
            for r in cur.fetchall():
                seats[r[0]].append(SeatRow(*r))
            cur.execute(LIVE_DUELS_SQL)
            duels = {r[0]: (DuelRow(*r), tuple(seats.get(r[0], ()))) for r in cur.fetchall()}
        return players, history, balances, preferences, duels

    def restore_player(self, player_id: uuid.UUID) -> None:
        self._conn.execute(RESTORE_PLAYER_SQL, {"player_id": player_id})

    def restore_history(self, game_id: uuid.UUID, row: HistoryRow | None) -> None:
        text = None if row is None else history_json(row)
        self._conn.execute(RESTORE_HISTORY_SQL, {"game_id": game_id, "row": text})

    def delete_duel(self, duel_id: uuid.UUID) -> None:
        """The duel's row and its seats' rows."""
        self._conn.execute(DELETE_SEATS_SQL, {"duel_id": duel_id})
        self._conn.execute(DELETE_DUEL_SQL, {"duel_id": duel_id})

    def delete_preferences(self, player_id: uuid.UUID) -> None:
        self._conn.execute(DELETE_PREFERENCES_SQL, {"player_id": player_id})

    def restore_balance(self, account_id: str) -> None:
        self._conn.execute(SET_BALANCE_SQL, {"account_id": account_id})

    def read_to(self, name: str, position: int) -> None:
        self._conn.execute(CHECKPOINT_SQL, {"name": name, "position": position})
