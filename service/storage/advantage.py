"""Reads for the advantage-play watcher (service/services/advantage.py): players' and games' latest
collected games, from the betting history (game_history). Voided games are left out: their
stakes were refunded, never wagered."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

# Every (player, game, sandbox or not) with a game collected since %(since)s, and that pair's
# latest %(window)s collected games, newest first. The lateral read walks
# game_history_collected_by_player (migration 0015) and stops at the window.
PLAYER_WINDOWS_SQL = """
WITH active AS (
    SELECT DISTINCT player_id, variant, certification
      FROM game_history
     WHERE status = 'collected' AND ended_at >= %(since)s
)
SELECT a.player_id, a.variant, a.certification, w.currency, w.stake, w.payout
  FROM active a
  CROSS JOIN LATERAL (
        SELECT h.currency, h.stake, h.payout
          FROM game_history h
         WHERE h.player_id = a.player_id AND h.variant = a.variant
           AND h.status = 'collected' AND h.certification = a.certification
         ORDER BY h.ended_at DESC
         LIMIT %(window)s
  ) w
 ORDER BY a.player_id, a.variant, a.certification
"""

# A game's latest %(window)s collected games of real money in one currency (certification
# games play chosen decks, so they say nothing about a game's price), newest first, by
# game_history_collected_by_variant.
GAME_WINDOW_SQL = """
SELECT stake, payout
  FROM game_history
 WHERE variant = %(variant)s AND status = 'collected' AND NOT certification
   AND currency = %(currency)s
 ORDER BY ended_at DESC
 LIMIT %(window)s
"""

# Whether a subject (a player's game, or a game) was reported under a kind lately, so an hourly
# watcher reports each once a day.
REPORTED_SQL = """
SELECT 1 FROM significant_events
 WHERE kind = %(kind)s AND details->>'subject' = %(subject)s
   AND occurred_at > statement_timestamp() - %(within)s
 LIMIT 1
"""

# The advantage-play reports of a currency's period, oldest first (the daily report's rows).
REPORTS_SQL = """
SELECT occurred_at, player_id, details
  FROM significant_events
 WHERE kind = %(kind)s AND currency = %(currency)s
   AND occurred_at BETWEEN %(start)s AND %(end)s
 ORDER BY id
"""


@dataclass(frozen=True, slots=True)
class PlayerWindow:
    player_id: uuid.UUID
    variant: str
    certification: bool
    currency: str
    games: list[tuple[int, int]]  # (stake, payout), newest first


class AdvantageReads:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def player_windows(self, since: datetime, window: int) -> list[PlayerWindow]:
        found: dict[tuple[uuid.UUID, str, bool], PlayerWindow] = {}
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_WINDOWS_SQL, {"since": since, "window": window})
            for player_id, variant, certification, currency, stake, payout in cur:
                key = (player_id, variant, certification)
                if key not in found:
                    found[key] = PlayerWindow(player_id, variant, certification, currency, [])
                found[key].games.append((int(stake), int(payout)))
        return list(found.values())

    def game_window(self, variant: str, currency: str, window: int) -> list[tuple[int, int]]:
        with self._conn.cursor() as cur:
            cur.execute(
                GAME_WINDOW_SQL, {"variant": variant, "currency": currency, "window": window}
            )
            return [(int(s), int(p)) for s, p in cur.fetchall()]

    def reported(self, kind: str, subject: str, within: Any) -> bool:
        with self._conn.cursor() as cur:
            cur.execute(REPORTED_SQL, {"kind": kind, "subject": subject, "within": within})
            return cur.fetchone() is not None

    def reports(
        self, kind: str, currency: str, start: datetime, end: datetime
    ) -> list[tuple[datetime, uuid.UUID | None, dict[str, Any]]]:
        with self._conn.cursor() as cur:
            cur.execute(
                REPORTS_SQL, {"kind": kind, "currency": currency, "start": start, "end": end}
            )
            return [(row[0], row[1], row[2]) for row in cur.fetchall()]
