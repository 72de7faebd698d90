"""Read models kept in the same transaction as the events they reflect: players and betting
history (balances are kept by the ledger's own postings). Each row is computed by a pure
function of the folded game or event, shared by the live path and the rebuild."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
import psycopg

from service.core.game_decider import Game
from service.games import GAMES

# Unfinished games whose last event is older than the idle time, by the database clock (the
# idle collector's scan, service/services/idle.py).
IDLE_GAMES_SQL = """
SELECT game_id, version FROM game_history
 WHERE ended_at IS NULL AND last_event_at < statement_timestamp() - %(idle)s
 ORDER BY last_event_at
 LIMIT %(limit)s
"""

# Does the database answer? (The readiness probe.)
PING_SQL = "SELECT 1"


@dataclass(frozen=True, slots=True)
class PlayerRow:
    player_id: uuid.UUID
    external_ref: str
    currency: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One line of betting history."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    variant: str
    stake: int
    currency: str
    win_rate: int
    status: str
    foundation_count: int
    payout: int
    refund: int
    certification: bool
    end_reason: str | None
    version: int
    started_at: datetime
    last_event_at: datetime
    ended_at: datetime | None

    @property
    def net(self) -> int:
        """What the game made for the player: payout + refund - stake."""
        return self.payout + self.refund - self.stake

    @property
    def units(self) -> int:
        return self.foundation_count  # the column predates other games: it holds units

    @property
    def title(self) -> str:
        known = GAMES.get(self.variant)
        return known.title if known else self.variant

    @property
    def max_units(self) -> int | None:
        known = GAMES.get(self.variant)
        return known.max_units if known else None


def history_row(
    game: Game, started_at: datetime, last_event_at: datetime, ended_at: datetime | None
) -> HistoryRow:
    return HistoryRow(
        **history_fields(game),
        started_at=started_at,
        last_event_at=last_event_at,
        ended_at=ended_at,
    )


def history_fields(game: Game) -> dict[str, Any]:
    """A game's history row but for its times (when its events were recorded)."""
    return {
        "game_id": uuid.UUID(game.game_id),
        "player_id": uuid.UUID(game.player_id),
        "variant": game.variant,
        "stake": game.stake,
        "currency": game.currency,
        "win_rate": game.win_rate,
        "status": game.status,
        "foundation_count": game.units,  # the column predates other games: it holds units
        "payout": game.payout or 0,
        "refund": game.refund or 0,
        "certification": game.certification,
        "end_reason": game.end_reason,
        "version": game.version,
    }


HISTORY_COLUMNS = (
    "game_id, player_id, variant, stake, currency, win_rate, status, foundation_count, payout, "
    "refund, certification, end_reason, version, started_at, last_event_at, ended_at"
)

# Insert or refresh one game's history row by the database's one rule for it (migration 0014:
# an older version never overwrites a newer one; an end time, once set, stays).
SAVE_HISTORY_SQL = """
SELECT save_game_history(jsonb_populate_record(NULL::game_history, %(row)s::text::jsonb))
"""

# A player's games, newest first, a page at a time (cursor: the last row's start and id).
HISTORY_PAGE_SQL = f"""
SELECT {HISTORY_COLUMNS}
  FROM game_history
 WHERE player_id = %(player_id)s
   AND (%(before_started)s::timestamptz IS NULL
        OR (started_at, game_id) < (%(before_started)s::timestamptz, %(before_game)s::uuid))
 ORDER BY started_at DESC, game_id DESC
 LIMIT %(limit)s
"""

# The player's unfinished game, if any (at most one: a unique index says so).
OPEN_GAME_SQL = f"""
SELECT {HISTORY_COLUMNS} FROM game_history
 WHERE player_id = %(player_id)s AND ended_at IS NULL
"""

# One game's history row.
GAME_ROW_SQL = f"SELECT {HISTORY_COLUMNS} FROM game_history WHERE game_id = %(game_id)s"

PLAYER_SQL = """
SELECT player_id, external_ref, currency, created_at FROM players WHERE player_id = %(player_id)s
"""

# The player's row, locked until the transaction ends (migrations/0036 lock_player): taken before
# the checks that read what the player's other writes add (their open game, limits, exclusion,
# session-time limit), so of two such transactions the second waits and then reads the first's.
PLAYER_LOCKED_SQL = """
SELECT player_id, external_ref, currency, created_at FROM lock_player(%(player_id)s)
"""

# An external reference locked until the transaction ends (an advisory lock of two int4 keys,
# the first naming references: apart from the writers' bigint lock): of two openings of one
# reference the second waits for the first to commit and then reads its player, instead of
# both reading none and the second's PlayerRegistered failing on players' unique external_ref
# (migrations/0033's trigger; it was answered 409 concurrent-update).
LOCK_REF_SQL = """
SELECT pg_advisory_xact_lock(hashtext('external-ref'), hashtext(%(external_ref)s))
"""

PLAYER_BY_REF_SQL = """
SELECT player_id, external_ref, currency, created_at FROM players
 WHERE external_ref = %(external_ref)s
"""


@dataclass(frozen=True, slots=True)
class Preferences:
    sound: bool = True
    colour: str = "green"
    card_back: int = 1


# A player's display preferences, if ever set.
PREFERENCES_SQL = """
SELECT sound, colour, card_back FROM player_preferences WHERE player_id = %(player_id)s
"""

# Set them (the projection of the latest PreferencesChanged).
SAVE_PREFERENCES_SQL = """
INSERT INTO player_preferences (player_id, sound, colour, card_back, updated_at)
VALUES (%(player_id)s, %(sound)s, %(colour)s, %(card_back)s, %(updated_at)s)
ON CONFLICT (player_id) DO UPDATE
   SET sound = EXCLUDED.sound, colour = EXCLUDED.colour, card_back = EXCLUDED.card_back,
       updated_at = EXCLUDED.updated_at
"""


class ProjectionStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    # players

    def player(self, player_id: uuid.UUID) -> PlayerRow | None:
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_SQL, {"player_id": player_id})
            row = cur.fetchone()
            return PlayerRow(*row) if row else None

    def player_locked(self, player_id: uuid.UUID) -> PlayerRow | None:
        """The player, their row locked for the checks this transaction makes (None: no such
        player)."""
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_LOCKED_SQL, {"player_id": player_id})
            row = cur.fetchone()
            return PlayerRow(*row) if row else None

    def lock_external_ref(self, external_ref: str) -> None:
        """Hold the reference until this transaction ends: the next opening of it waits."""
        with self._conn.cursor() as cur:
            cur.execute(LOCK_REF_SQL, {"external_ref": external_ref})

    def player_by_ref(self, external_ref: str) -> PlayerRow | None:
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_BY_REF_SQL, {"external_ref": external_ref})
            row = cur.fetchone()
            return PlayerRow(*row) if row else None

    def preferences(self, player_id: uuid.UUID) -> Preferences | None:
        with self._conn.cursor() as cur:
            cur.execute(PREFERENCES_SQL, {"player_id": player_id})
            row = cur.fetchone()
            return Preferences(*row) if row else None

    def save_preferences(
        self, player_id: uuid.UUID, preferences: Preferences, updated_at: datetime
    ) -> None:
        with self._conn.cursor() as cur:
            cur.execute(
                SAVE_PREFERENCES_SQL,
                {"player_id": player_id, "updated_at": updated_at, **asdict(preferences)},
            )

    # betting history

    def save_history(self, rows: Iterable[HistoryRow]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(SAVE_HISTORY_SQL, [{"row": history_json(r)} for r in rows])

    def history(
        self,
        player_id: uuid.UUID,
        *,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 20,
    ) -> list[HistoryRow]:
        params = {
            "player_id": player_id,
            "before_started": before[0] if before else None,
            "before_game": before[1] if before else None,
            "limit": limit,
        }
        with self._conn.cursor() as cur:
            cur.execute(HISTORY_PAGE_SQL, params)
            return [HistoryRow(*r) for r in cur.fetchall()]

    def open_game(self, player_id: uuid.UUID) -> HistoryRow | None:
        with self._conn.cursor() as cur:
            cur.execute(OPEN_GAME_SQL, {"player_id": player_id})
            row = cur.fetchone()
            return HistoryRow(*row) if row else None

    def game_row(self, game_id: uuid.UUID) -> HistoryRow | None:
        with self._conn.cursor() as cur:
            cur.execute(GAME_ROW_SQL, {"game_id": game_id})
            row = cur.fetchone()
            return HistoryRow(*row) if row else None

    def idle_games(self, idle: timedelta, limit: int) -> list[tuple[uuid.UUID, int]]:
        """Unfinished games idle for longer than ``idle``, longest first: (game, version)."""
        with self._conn.cursor() as cur:
            cur.execute(IDLE_GAMES_SQL, {"idle": idle, "limit": limit})
            return [(row[0], int(row[1])) for row in cur.fetchall()]

    def ping(self) -> None:
        self._conn.execute(PING_SQL)


def history_json(row: HistoryRow) -> str:
    """A history row as the database's functions take it (game_history's columns as JSON)."""
    return orjson.dumps(asdict(row)).decode()  # uuids and times as JSON strings
