"""Finance's SQL (service/services/finance_books.py holds what it means): the daily-totals
projector's checkpoint, the money events it folds and the totals it adds, the daily report's lines
and sums, and the reconciliation's day of events and ledger."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import psycopg

from service.core.safer_gambling import LENGTHS

# Hold the projector's checkpoint for this transaction (creating it at 0 the first time).
LOCK_CHECKPOINT_SQL = """
INSERT INTO projection_checkpoints (name, position) VALUES (%(name)s, 0)
ON CONFLICT (name) DO NOTHING
"""
SELECT_CHECKPOINT_SQL = """
SELECT position FROM projection_checkpoints WHERE name = %(name)s FOR UPDATE
"""
# A projection's checkpoint as it stands, for the audit (no lock: it reads its own snapshot).
CHECKPOINT_POSITION_SQL = "SELECT position FROM projection_checkpoints WHERE name = %(name)s"
# Every row of each projection, for the audit to compare with the log it folds again.
ALL_TOTALS_SQL = """
SELECT day, currency, variant, games_started, games_finished, stakes, payouts, refunds,
       stakes_settled, certification_games
  FROM daily_totals
"""
ALL_CASHIER_SQL = "SELECT day, currency, deposits, withdrawals, depositors FROM daily_cashier"
MOVE_CHECKPOINT_SQL = """
UPDATE projection_checkpoints SET position = %(position)s, updated_at = statement_timestamp()
 WHERE name = %(name)s
"""

# Money events of games and duels after a position and up to the log's horizon, in log order.
MONEY_EVENTS_SQL = """
SELECT position, stream_id, type, schema_version, data, recorded_at
  FROM events
 WHERE position > %(after)s AND position <= %(upto)s
   AND ((stream_id LIKE 'game-%%' AND type IN ('StakePlaced', 'Collected', 'Voided'))
        OR (stream_id LIKE 'duel-%%' AND type IN ('SeatTaken', 'DuelSettled', 'DuelCancelled')))
 ORDER BY position
 LIMIT %(limit)s
"""

# The cashier's events after a position and up to the log's horizon, in log order (the
# cashier-by-day projection).
CASHIER_EVENTS_SQL = """
SELECT position, stream_id, type, schema_version, data, recorded_at
  FROM events
 WHERE position > %(after)s AND position <= %(upto)s
   AND stream_id LIKE 'player-%%' AND type IN ('FundsDeposited', 'FundsWithdrawn')
 ORDER BY position
 LIMIT %(limit)s
"""

# How far the projector may read (migration 0014, events/postgres.py): every position up to the
# horizon that will ever be visible already is. The log's last visible position would not do: a
# money event's transaction may commit after a later position's (a play's, which takes no lock),
# and a checkpoint moved past it would never fold it. The checkpoint moves to the horizon once
# caught up.
HORIZON_SQL = "SELECT log_horizon()"

# The first event of these streams (a game's StakePlaced: variant, currency and stake for its
# ending; a duel's DuelOpened: its currency and seats).
STAKES_SQL = """
SELECT stream_id, data FROM events WHERE stream_id = ANY(%(streams)s) AND version = 1
"""

# Add one day's increments.
ADD_TOTALS_SQL = """
INSERT INTO daily_totals (day, currency, variant, games_started, games_finished, stakes,
                          payouts, refunds, stakes_settled, certification_games)
VALUES (%(day)s, %(currency)s, %(variant)s, %(games_started)s, %(games_finished)s,
        %(stakes)s, %(payouts)s, %(refunds)s, %(stakes_settled)s, %(certification_games)s)
ON CONFLICT (day, currency, variant) DO UPDATE SET
    games_started = daily_totals.games_started + EXCLUDED.games_started,
    games_finished = daily_totals.games_finished + EXCLUDED.games_finished,
    stakes = daily_totals.stakes + EXCLUDED.stakes,
    payouts = daily_totals.payouts + EXCLUDED.payouts,
    refunds = daily_totals.refunds + EXCLUDED.refunds,
    stakes_settled = daily_totals.stakes_settled + EXCLUDED.stakes_settled,
    certification_games = daily_totals.certification_games + EXCLUDED.certification_games
"""

# Add the cashier's increments of some days: who deposited is noted first, and only the players
# not yet noted on that day count as new depositors, however the projector's runs split the day.
ADD_CASHIER_SQL = """
WITH moved AS (
    SELECT * FROM unnest(%(days)s::date[], %(currencies)s::text[], %(deposits)s::bigint[],
                         %(withdrawals)s::bigint[]) AS m(day, currency, deposits, withdrawals)
), noted AS (
    INSERT INTO daily_depositors (day, currency, player_id)
    SELECT * FROM unnest(%(depositor_days)s::date[], %(depositor_currencies)s::text[],
                         %(depositors)s::uuid[])
    ON CONFLICT DO NOTHING
    RETURNING day, currency
), new_depositors AS (
    SELECT day, currency, count(*) AS n FROM noted GROUP BY day, currency
)
INSERT INTO daily_cashier (day, currency, deposits, withdrawals, depositors)
SELECT m.day, m.currency, m.deposits, m.withdrawals, coalesce(n.n, 0)
  FROM moved m
  LEFT JOIN new_depositors n ON n.day = m.day AND n.currency = m.currency
ON CONFLICT (currency, day) DO UPDATE SET
    deposits = daily_cashier.deposits + EXCLUDED.deposits,
    withdrawals = daily_cashier.withdrawals + EXCLUDED.withdrawals,
    depositors = daily_cashier.depositors + EXCLUDED.depositors
"""

# Each day and variant in a range, zeros where nothing happened, with the stakes still held at
# each day's end: what was held when the range began plus the range's own changes up to that
# day. Held when it began is everything staked before it minus everything settled before it:
# the lifetime's (lifetime_totals, migration 0025) less the days from the range's start on, so
# a long history costs nothing here (a range ending today reads only its own days).
REPORT_SQL = """
WITH days AS (
    SELECT d::date AS day FROM generate_series(%(start)s::date, %(end)s::date, interval '1 day') d
), variants AS (
    SELECT unnest(%(variants)s::text[]) AS variant
), grid AS (
    SELECT day, variant FROM days CROSS JOIN variants
), since_start AS (
    SELECT variant, sum(stakes - stakes_settled) AS held
      FROM daily_totals
     WHERE currency = %(currency)s AND day >= %(start)s
     GROUP BY variant
), held_before AS (
    SELECT l.variant, l.stakes - l.stakes_settled - coalesce(s.held, 0) AS held
      FROM lifetime_totals l
      LEFT JOIN since_start s USING (variant)
     WHERE l.currency = %(currency)s
), inside AS (
    SELECT day, variant, games_started, games_finished, stakes, payouts, refunds,
           stakes - stakes_settled AS held_change
      FROM daily_totals
     WHERE currency = %(currency)s AND day >= %(start)s AND day <= %(end)s
)
SELECT g.day, g.variant,
       coalesce(i.games_started, 0), coalesce(i.games_finished, 0), coalesce(i.stakes, 0),
       coalesce(i.payouts, 0), coalesce(i.refunds, 0),
       coalesce(b.held, 0)
         + coalesce(sum(i.held_change) OVER (PARTITION BY g.variant ORDER BY g.day), 0)
  FROM grid g
  LEFT JOIN inside i ON i.day = g.day AND i.variant = g.variant
  LEFT JOIN held_before b ON b.variant = g.variant
 ORDER BY g.day, g.variant
"""

# Every day's totals up to a day: the lifetime's (lifetime_totals, migration 0025) less the days
# after it (none when it is today).
LIFETIME_SQL = """
WITH lifetime AS (
    SELECT coalesce(sum(games_started), 0) AS games_started,
           coalesce(sum(games_finished), 0) AS games_finished,
           coalesce(sum(stakes), 0) AS stakes, coalesce(sum(payouts), 0) AS payouts,
           coalesce(sum(refunds), 0) AS refunds
      FROM lifetime_totals
     WHERE currency = %(currency)s
), later AS (
    SELECT coalesce(sum(games_started), 0) AS games_started,
           coalesce(sum(games_finished), 0) AS games_finished,
           coalesce(sum(stakes), 0) AS stakes, coalesce(sum(payouts), 0) AS payouts,
           coalesce(sum(refunds), 0) AS refunds
      FROM daily_totals
     WHERE currency = %(currency)s AND day > %(end)s
)
SELECT l.games_started - a.games_started, l.games_finished - a.games_finished,
       l.stakes - a.stakes, l.payouts - a.payouts, l.refunds - a.refunds
  FROM lifetime l, later a
"""

# Totals over a span of days.
SUM_SQL = """
SELECT coalesce(sum(games_started), 0), coalesce(sum(games_finished), 0),
       coalesce(sum(stakes), 0), coalesce(sum(payouts), 0), coalesce(sum(refunds), 0)
  FROM daily_totals
 WHERE currency = %(currency)s AND day >= %(start)s AND day <= %(end)s
"""

# The day's game and duel money events.
DAY_EVENTS_SQL = """
SELECT stream_id, version, type, schema_version, data
  FROM events
 WHERE recorded_at >= %(start)s AND recorded_at <= %(last)s
   AND ((stream_id LIKE 'game-%%' AND type IN ('StakePlaced', 'Collected', 'Voided'))
        OR (stream_id LIKE 'duel-%%' AND type IN ('SeatTaken', 'DuelSettled', 'DuelCancelled')))
"""

# The day's game and duel money in the ledger.
DAY_LEDGER_SQL = """
SELECT cause_stream, cause_version, kind, amount, currency
  FROM ledger_transactions
 WHERE created_at >= %(start)s AND created_at <= %(last)s
   AND kind IN ('stake', 'winnings', 'refund', 'duel-fee', 'duel-prize', 'duel-refund')
"""

# A duel's currency, from its first event.
DUEL_CURRENCY_SQL = """
SELECT stream_id, data->>'currency' FROM events WHERE stream_id = ANY(%(streams)s) AND version = 1
"""

# Counterparts dated on another day (a transaction straddling midnight), looked up by cause.
EVENTS_BY_KEY_SQL = """
SELECT e.stream_id, e.version, e.type, e.schema_version, e.data
  FROM events e
  JOIN unnest(%(streams)s::text[], %(versions)s::int[]) AS k(stream_id, version)
    ON e.stream_id = k.stream_id AND e.version = k.version
"""
LEDGER_BY_KEY_SQL = """
SELECT t.cause_stream, t.cause_version, t.kind, t.amount, t.currency
  FROM ledger_transactions t
  JOIN unnest(%(streams)s::text[], %(versions)s::int[]) AS k(stream_id, version)
    ON t.cause_stream = k.stream_id AND t.cause_version = k.version
"""


# Safer gambling by UTC day, for one currency's players: the cashier's gross deposits and
# withdrawals and how many players deposited (the projector's daily_cashier, one row a day); the
# refusals recorded as significant events (service/services/safer_gambling.py), by what refused;
# and the time-outs, self-exclusions and acknowledged reality checks of the log
# (events_safer_gambling_by_time).
SAFER_GAMBLING_SQL = """
WITH days AS (
    SELECT d::date AS day FROM generate_series(%(first)s::date, %(last)s::date, '1 day') AS d
), cashier AS (
    SELECT day, deposits, withdrawals, depositors
      FROM daily_cashier
     WHERE currency = %(currency)s AND day BETWEEN %(first)s AND %(last)s
), refusals AS (
    SELECT (occurred_at AT TIME ZONE 'UTC')::date AS day,
           count(*) FILTER (WHERE details->>'refused' = 'limit') AS limits,
           count(*) FILTER (WHERE details->>'refused' = 'excluded') AS exclusions,
           count(*) FILTER (WHERE details->>'refused' = 'reality-check') AS reality_checks
      FROM significant_events
     WHERE kind = 'safer-gambling' AND currency = %(currency)s
       AND occurred_at BETWEEN %(start)s AND %(end)s
     GROUP BY 1
), taken AS (
    SELECT (e.recorded_at AT TIME ZONE 'UTC')::date AS day,
           count(*) FILTER (WHERE e.type = 'PlayerExcluded'
                              AND e.data->>'length' = ANY(%(time_outs)s)) AS time_outs,
           count(*) FILTER (WHERE e.type = 'PlayerExcluded'
                              AND e.data->>'length' = ANY(%(self_exclusions)s))
               AS self_exclusions,
           count(*) FILTER (WHERE e.type = 'RealityCheckAcknowledged') AS reality_checks
      FROM events e
      JOIN players p ON p.player_id = substr(e.stream_id, 8)::uuid
     WHERE e.type IN ('PlayerExcluded', 'RealityCheckAcknowledged')
       AND e.recorded_at BETWEEN %(start)s AND %(end)s
       AND p.currency = %(currency)s
     GROUP BY 1
)
SELECT days.day,
       coalesce(c.deposits, 0), coalesce(c.withdrawals, 0), coalesce(c.depositors, 0),
       coalesce(r.limits, 0), coalesce(r.exclusions, 0), coalesce(r.reality_checks, 0),
       coalesce(t.time_outs, 0), coalesce(t.self_exclusions, 0), coalesce(t.reality_checks, 0)
  FROM days
  LEFT JOIN cashier c USING (day)
  LEFT JOIN refusals r USING (day)
  LEFT JOIN taken t USING (day)
 ORDER BY days.day
"""


class FinanceStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    # --- the projector ---------------------------------------------------------------------

    def lock_checkpoint(self, name: str) -> int:
        """Hold the projector's checkpoint for this transaction (made at 0 the first time);
        its position."""
        with self._conn.cursor() as cur:
            cur.execute(LOCK_CHECKPOINT_SQL, {"name": name})
            cur.execute(SELECT_CHECKPOINT_SQL, {"name": name})
            row = cur.fetchone()
        assert row is not None
        return int(row[0])

    def checkpoint_position(self, name: str) -> int:
        """How far a projection has folded the log (0: not yet)."""
        row = self._conn.execute(CHECKPOINT_POSITION_SQL, {"name": name}).fetchone()
        return 0 if row is None else int(row[0])

    def all_totals(self) -> dict[tuple[date, str, str], tuple[int, ...]]:
        """daily_totals by (day, currency, variant): its counters in finance_books.COUNTERS'
        order."""
        rows = self._conn.execute(ALL_TOTALS_SQL).fetchall()
        return {(r[0], r[1].strip(), r[2]): tuple(int(v) for v in r[3:]) for r in rows}

    def all_cashier(self) -> dict[tuple[date, str], tuple[int, int, int]]:
        """daily_cashier by (day, currency): (deposits, withdrawals, depositors)."""
        rows = self._conn.execute(ALL_CASHIER_SQL).fetchall()
        return {(r[0], r[1].strip()): (int(r[2]), int(r[3]), int(r[4])) for r in rows}

    def move_checkpoint(self, name: str, position: int) -> None:
        self._conn.execute(MOVE_CHECKPOINT_SQL, {"name": name, "position": position})

    def horizon(self) -> int:
        row = self._conn.execute(HORIZON_SQL).fetchone()
        assert row is not None
        return int(row[0])

    def money_events(self, after: int, upto: int, limit: int) -> list[tuple[Any, ...]]:
        """(position, stream, type, schema version, data, recorded at), in log order."""
        params = {"after": after, "upto": upto, "limit": limit}
        return self._conn.execute(MONEY_EVENTS_SQL, params).fetchall()

    def first_events(self, streams: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each stream's first event's data, by stream."""
        rows = self._conn.execute(STAKES_SQL, {"streams": list(streams)}).fetchall()
        return dict(rows)

    def cashier_events(self, after: int, upto: int, limit: int) -> list[tuple[Any, ...]]:
        """The cashier's events after a position: (position, stream, type, schema version,
        data, recorded at), in log order."""
        params = {"after": after, "upto": upto, "limit": limit}
        return self._conn.execute(CASHIER_EVENTS_SQL, params).fetchall()

    def add_cashier(
        self,
        moved: Mapping[tuple[date, str], tuple[int, int]],
        depositors: Iterable[tuple[date, str, str]],
    ) -> None:
        """Add (deposits, withdrawals) by (day, currency), and note who deposited each day
        (day, currency, player id): only players not noted that day yet count."""
        if not moved:
            return
        keys = list(moved)
        noted = list(depositors)
        self._conn.execute(
            ADD_CASHIER_SQL,
            {
                "days": [day for day, _ in keys],
                "currencies": [currency for _, currency in keys],
                "deposits": [moved[k][0] for k in keys],
                "withdrawals": [moved[k][1] for k in keys],
                "depositor_days": [day for day, _, _ in noted],
                "depositor_currencies": [currency for _, currency, _ in noted],
                "depositors": [player for _, _, player in noted],
            },
        )

    def add_totals(self, day: date, currency: str, variant: str, totals: Mapping[str, int]) -> None:
        self._conn.execute(
            ADD_TOTALS_SQL, {"day": day, "currency": currency, "variant": variant, **totals}
        )

    # --- the daily report --------------------------------------------------------------------

    def report_lines(
        self, start: date, end: date, currency: str, variants: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        params = {"start": start, "end": end, "currency": currency, "variants": list(variants)}
        return self._conn.execute(REPORT_SQL, params).fetchall()

    def safer_gambling(
        self, currency: str, days: tuple[date, date], span: tuple[datetime, datetime]
    ) -> list[tuple[Any, ...]]:
        """``days``: the first and last day; ``span``: their first and last instant."""
        params: dict[str, Any] = {"currency": currency, "first": days[0], "last": days[1]}
        params |= {"start": span[0], "end": span[1]}
        # Which lengths are time-outs and which self-exclusions: the core's rule, not SQL's.
        for kind, key in (("time-out", "time_outs"), ("self-exclusion", "self_exclusions")):
            params[key] = [length for length, (k, _) in LENGTHS.items() if k == kind]
        return self._conn.execute(SAFER_GAMBLING_SQL, params).fetchall()

    def lifetime(self, currency: str, end: date) -> tuple[int, ...]:
        """Every day's (games started, finished, stakes, payouts, refunds) up to ``end``."""
        row = self._conn.execute(LIFETIME_SQL, {"currency": currency, "end": end}).fetchone()
        assert row is not None
        return tuple(int(x) for x in row)

    def sums(self, currency: str, start: date, end: date) -> tuple[int, ...]:
        row = self._conn.execute(
            SUM_SQL, {"currency": currency, "start": start, "end": end}
        ).fetchone()
        assert row is not None
        return tuple(int(x) for x in row)

    # --- the reconciliation ------------------------------------------------------------------

    def day_events(self, start: datetime, last: datetime) -> list[tuple[Any, ...]]:
        """(stream, version, type, schema version, data) of the day's money events."""
        return self._conn.execute(DAY_EVENTS_SQL, {"start": start, "last": last}).fetchall()

    def day_ledger(self, start: datetime, last: datetime) -> list[tuple[Any, ...]]:
        """(cause stream, cause version, kind, amount, currency) of the day's game money."""
        return self._conn.execute(DAY_LEDGER_SQL, {"start": start, "last": last}).fetchall()

    def duel_currencies(self, streams: Sequence[str]) -> dict[str, str]:
        rows = self._conn.execute(DUEL_CURRENCY_SQL, {"streams": list(streams)}).fetchall()
        return dict(rows)

    def events_by_key(self, keys: Sequence[tuple[str, int]]) -> list[tuple[Any, ...]]:
        params = {"streams": [k[0] for k in keys], "versions": [k[1] for k in keys]}
        return self._conn.execute(EVENTS_BY_KEY_SQL, params).fetchall()

    def ledger_by_key(self, keys: Sequence[tuple[str, int]]) -> list[tuple[Any, ...]]:
        params = {"streams": [k[0] for k in keys], "versions": [k[1] for k in keys]}
        return self._conn.execute(LEDGER_BY_KEY_SQL, params).fetchall()
