"""The duels' read models: one row a duel and one a seat, kept in the same transaction as the
duel's events. Joining, the sweep and the lists read them; the duel's stream stays the truth."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg

from service.core.clock import parse_instant
from service.core.duel_decider import Duel


@dataclass(frozen=True, slots=True)
class DuelRow:
    duel_id: uuid.UUID
    status: str
    currency: str
    fee: int
    seats: int
    taken: int
    pot: int
    rake: int
    certification: bool
    opened_at: datetime
    fill_by: datetime
    deal_by: datetime | None
    ended_at: datetime | None
    version: int


@dataclass(frozen=True, slots=True)
class SeatRow:
    duel_id: uuid.UUID
    seat: int
    player_id: uuid.UUID
    game_id: uuid.UUID | None
    deadline: datetime | None
    points: int | None
    end_reason: str | None
    payout: int
    refund: int


def duel_rows(duel: Duel, ended_at: datetime | None) -> tuple[DuelRow, list[SeatRow]]:
    """The read-model rows of a folded duel (a pure function, shared with any rebuild)."""
    opened = duel.opened
    assert opened is not None
    duel_id = uuid.UUID(opened.duel_id)
    paid = {p.seat: p.amount for p in getattr(duel.ending, "payouts", ())}
    refunded = {p.seat: p.amount for p in getattr(duel.ending, "refunds", ())}
    seats = [
        SeatRow(
            duel_id,
            s.seat,
            uuid.UUID(s.player_id),
            uuid.UUID(s.game_id) if s.game_id else None,
            parse_instant(s.deadline) if s.deadline else None,
            s.result.points if s.result else None,
            s.result.reason if s.result else None,
            paid.get(s.seat, 0),
            refunded.get(s.seat, 0),
        )
        for s in duel.seats
    ]
    row = DuelRow(
        duel_id=duel_id,
        status=duel.status,
        currency=opened.currency,
        fee=opened.fee,
        seats=opened.seats,
        taken=len(duel.seats),
        pot=sum(s.fee for s in duel.seats),
        rake=getattr(duel.ending, "rake", 0),
        certification=opened.certification,
        opened_at=parse_instant(opened.opened_at),
        fill_by=parse_instant(opened.fill_by),
        deal_by=duel.deal_by,
        ended_at=ended_at,
        version=duel.version,
    )
    return row, seats


DUEL_COLUMNS = (
    "duel_id, status, currency, fee, seats, taken, pot, rake, certification, opened_at, fill_by, "
    "deal_by, ended_at, version"
)
SEAT_COLUMNS = "duel_id, seat, player_id, game_id, deadline, points, end_reason, payout, refund"

# Insert or refresh a duel's row; an older version never overwrites a newer one.
UPSERT_DUEL_SQL = f"""
INSERT INTO duels ({DUEL_COLUMNS})
VALUES (%(duel_id)s, %(status)s, %(currency)s, %(fee)s, %(seats)s, %(taken)s, %(pot)s,
        %(rake)s, %(certification)s, %(opened_at)s, %(fill_by)s, %(deal_by)s, %(ended_at)s,
        %(version)s)
ON CONFLICT (duel_id) DO UPDATE
   SET status = EXCLUDED.status, taken = EXCLUDED.taken, pot = EXCLUDED.pot,
       rake = EXCLUDED.rake, deal_by = EXCLUDED.deal_by, ended_at = EXCLUDED.ended_at,
       version = EXCLUDED.version
 WHERE duels.version < EXCLUDED.version
"""

# Insert or refresh one seat's row (its duel's row was written just before, in order).
UPSERT_SEAT_SQL = f"""
INSERT INTO duel_seats ({SEAT_COLUMNS})
VALUES (%(duel_id)s, %(seat)s, %(player_id)s, %(game_id)s, %(deadline)s, %(points)s,
        %(end_reason)s, %(payout)s, %(refund)s)
ON CONFLICT (duel_id, seat) DO UPDATE
   SET game_id = EXCLUDED.game_id, deadline = EXCLUDED.deadline, points = EXCLUDED.points,
       end_reason = EXCLUDED.end_reason, payout = EXCLUDED.payout, refund = EXCLUDED.refund
"""

# The oldest duel still taking seats at this fee, seat count and currency that the player does
# not already sit in, and whose time to fill has not run out.
OPEN_DUEL_SQL = """
SELECT d.duel_id
  FROM duels d
 WHERE d.status = 'open' AND d.currency = %(currency)s AND d.fee = %(fee)s
   AND d.seats = %(seats)s AND d.fill_by > %(now)s AND d.certification = %(certification)s
   AND NOT EXISTS (SELECT 1 FROM duel_seats s
                    WHERE s.duel_id = d.duel_id AND s.player_id = %(player_id)s)
 ORDER BY d.opened_at, d.duel_id
 LIMIT 1
"""

# Seamless mode (issue 37): the same, counting as taken the seats held by a fee's bet on the
# wire, so a duel never holds more seats than it has; locked until the bet is recorded as sent,
# so two joins of one duel count each other's.
OPEN_DUEL_HELD_SQL = """
SELECT d.duel_id
  FROM duels d
 WHERE d.status = 'open' AND d.currency = %(currency)s AND d.fee = %(fee)s
   AND d.seats = %(seats)s AND d.fill_by > %(now)s AND NOT d.certification
   AND NOT EXISTS (SELECT 1 FROM duel_seats s
                    WHERE s.duel_id = d.duel_id AND s.player_id = %(player_id)s)
   AND (SELECT count(*) FROM duel_seats s WHERE s.duel_id = d.duel_id)
       + (SELECT count(*) FROM wallet_transactions w
           WHERE w.duel_id = d.duel_id AND w.method = 'bet' AND w.state = 'sent') < d.seats
 ORDER BY d.opened_at, d.duel_id
 LIMIT 1
 FOR UPDATE OF d
"""

# Duels the clock has something to do for: an open one past its fill-by time, a full one with a
# seat out of time (its game past its deadline, or never dealt by the deal-by time), or one
# whose every seat has finished but which has not settled.
DUE_SQL = """
SELECT d.duel_id
  FROM duels d
 WHERE (d.status = 'open' AND d.fill_by <= %(now)s)
    OR (d.status = 'full' AND (d.deal_by <= %(now)s
        OR EXISTS (SELECT 1 FROM duel_seats s
                    WHERE s.duel_id = d.duel_id AND s.points IS NULL
                      AND s.deadline <= %(now)s)
        OR NOT EXISTS (SELECT 1 FROM duel_seats s
                        WHERE s.duel_id = d.duel_id AND s.points IS NULL)))
 ORDER BY d.fill_by
 LIMIT %(limit)s
"""

# A player's duels, newest first, a page at a time (cursor: the last row's open time and id).
PLAYER_DUELS_SQL = f"""
SELECT {", ".join("d." + c.strip() for c in DUEL_COLUMNS.split(","))}
  FROM duels d JOIN duel_seats s USING (duel_id)
 WHERE s.player_id = %(player_id)s
   AND (%(before_opened)s::timestamptz IS NULL
        OR (d.opened_at, d.duel_id) < (%(before_opened)s::timestamptz, %(before_duel)s::uuid))
 ORDER BY d.opened_at DESC, d.duel_id DESC
 LIMIT %(limit)s
"""

# Every duel, newest first, optionally of one status and one player.
LIST_DUELS_SQL = f"""
SELECT {DUEL_COLUMNS}
  FROM duels d
 WHERE (%(status)s::text IS NULL OR d.status = %(status)s::text)
   AND (%(player_id)s::uuid IS NULL OR EXISTS (
        SELECT 1 FROM duel_seats s WHERE s.duel_id = d.duel_id AND s.player_id = %(player_id)s))
   AND (%(before_opened)s::timestamptz IS NULL
        OR (d.opened_at, d.duel_id) < (%(before_opened)s::timestamptz, %(before_duel)s::uuid))
 ORDER BY d.opened_at DESC, d.duel_id DESC
 LIMIT %(limit)s
"""

# One duel's seats, in seat order.
SEATS_SQL = f"SELECT {SEAT_COLUMNS} FROM duel_seats WHERE duel_id = %(duel_id)s ORDER BY seat"

# The duel a seat's game belongs to.
DUEL_OF_GAME_SQL = "SELECT duel_id FROM duel_seats WHERE game_id = %(game_id)s"

# Has the duel ended (settled or cancelled)? Asked of its stream, the truth, not of the duels
# read model: until then its seats' games are sealed from staff.
DUEL_OVER_SQL = """
SELECT EXISTS (SELECT 1 FROM events
                WHERE stream_id = 'duel-' || %(duel_id)s::text
                  AND type IN ('DuelSettled', 'DuelCancelled'))
"""


class DuelStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def save(self, row: DuelRow, seats: list[SeatRow]) -> None:
        with self._conn.cursor() as cur:
            cur.execute(UPSERT_DUEL_SQL, asdict(row))
            if seats:
                cur.executemany(UPSERT_SEAT_SQL, [asdict(s) for s in seats])

    def open_duel(
        self,
        currency: str,
        fee: int,
        seats: int,
        player_id: uuid.UUID,
        now: datetime,
        certification: bool,
        held: bool = False,
    ) -> uuid.UUID | None:
        """The oldest open duel the player may join (``held``: seamless mode's, counting the
        seats held by a fee on the wire, and locked; real money only)."""
        params = {
            "currency": currency,
            "fee": fee,
            "seats": seats,
            "player_id": player_id,
            "now": now,
            "certification": certification,
        }
        with self._conn.cursor() as cur:
            cur.execute(OPEN_DUEL_HELD_SQL if held else OPEN_DUEL_SQL, params)
            row = cur.fetchone()
            return row[0] if row else None

    def due(self, now: datetime, limit: int = 100) -> list[uuid.UUID]:
        with self._conn.cursor() as cur:
            cur.execute(DUE_SQL, {"now": now, "limit": limit})
            return [r[0] for r in cur.fetchall()]

    def of_player(
        self,
        player_id: uuid.UUID,
        *,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 20,
    ) -> list[DuelRow]:
        params = {
            "player_id": player_id,
            "before_opened": before[0] if before else None,
            "before_duel": before[1] if before else None,
            "limit": limit,
        }
        with self._conn.cursor() as cur:
            cur.execute(PLAYER_DUELS_SQL, params)
            return [DuelRow(*r) for r in cur.fetchall()]

    def listed(
        self,
        *,
        status: str | None = None,
        player_id: uuid.UUID | None = None,
        before: tuple[datetime, uuid.UUID] | None = None,
        limit: int = 50,
    ) -> list[DuelRow]:
        params = {
            "status": status,
            "player_id": player_id,
            "before_opened": before[0] if before else None,
            "before_duel": before[1] if before else None,
            "limit": limit,
        }
        with self._conn.cursor() as cur:
            cur.execute(LIST_DUELS_SQL, params)
            return [DuelRow(*r) for r in cur.fetchall()]

    def seats(self, duel_id: uuid.UUID) -> list[SeatRow]:
        with self._conn.cursor() as cur:
            cur.execute(SEATS_SQL, {"duel_id": duel_id})
            return [SeatRow(*r) for r in cur.fetchall()]

    def duel_of_game(self, game_id: uuid.UUID) -> uuid.UUID | None:
        with self._conn.cursor() as cur:
            cur.execute(DUEL_OF_GAME_SQL, {"game_id": game_id})
            row = cur.fetchone()
            return row[0] if row else None

    def is_over(self, duel_id: uuid.UUID | str) -> bool:
        with self._conn.cursor() as cur:
            cur.execute(DUEL_OVER_SQL, {"duel_id": str(duel_id)})
            row = cur.fetchone()
            return bool(row and row[0])
