"""Finance: daily totals projected from the game events (and the cashier's by day from the
players'), the daily report, and the reconciliation of the ledger against the game events.

The projector is checkpointed: it locks its checkpoint rows, folds the events after them into
daily_totals and daily_cashier, and moves the checkpoints, all in one transaction, so running it
twice (Celery delivers at least once, and the report endpoint catches up inline) never counts an
event twice.

Definitions (per day, currency and variant, days in UTC):
- games started, and their stakes, on the day of their StakePlaced;
- games finished (collected or voided), their payouts and refunds, on the day they ended;
- GGR = stakes - payouts - refunds;
- RTP = payouts / (stakes - refunds): voided stakes were never really wagered;
- held at end of day = stakes of games started by then and not finished by then;
- the cashier's deposits and withdrawals, and the players who deposited, on the day of their
  FundsDeposited and FundsWithdrawn events.

Every figure is per currency, so certification games, played for the sandbox currency XTS
(service.core.ledger), never mix into a real currency's GGR or RTP: the sandbox has lines of its
own, labelled as such. (Certification games recorded before the sandbox existed really moved real
money, and count where they were paid.)

Duels are the ``klondike-duel`` line: a seat taken is a game started and its entry fee a stake;
a settlement finishes every seat, its prizes are the payouts (so GGR is the rake); a
cancellation finishes every seat with its fee refunded. A seat's own game moves no money and is
not counted again.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from events.catalog import (
    DuelCancelled,
    DuelSettled,
    FundsDeposited,
    FundsWithdrawn,
    SeatTaken,
    StakePlaced,
)
from events.codec import decode, decode_duel, decode_game
from service.core.game_verification import Finding
from service.core.ledger import duel_movement, game_movement, is_sandbox
from service.core.streams import DUEL, GAME, id_of, is_duel
from service.games import GAMES
from service.services.unit_of_work import UnitOfWork
from service.storage.finance import FinanceStore
from service.storage.reconciliations import ReconciliationStore
from service.storage.wallet import WalletTransaction

CHECKPOINT = "daily-totals"
#: The cashier-by-day projection's checkpoint (migrations/0024).
CASHIER_CHECKPOINT = "daily-cashier"
#: The significant events the daily report lists as its advantage-play rows (service/advantage).
ADVANTAGE_PLAY = "advantage-play"
BATCH = 2_000


def utc_day(at: datetime) -> date:
    return at.astimezone(UTC).date()


def utc_span(first: date, last: date) -> tuple[datetime, datetime]:
    """The first and the last instant of the UTC days ``first`` to ``last``, both inclusive
    (not midnight after ``last``, which does not exist after 9999-12-31)."""
    return (
        datetime.combine(first, time.min, tzinfo=UTC),
        datetime.combine(last, time.max, tzinfo=UTC),
    )


def catch_up(uow: UnitOfWork) -> int:
    """Fold the money events after each projection's checkpoint into it (the games' into
    daily_totals, the cashier's into daily_cashier) and move the checkpoints, in this unit of
    work's transaction (committed here). Returns how many events it folded."""
    store = FinanceStore(uow.conn)
    games_at = store.lock_checkpoint(CHECKPOINT)
    cashier_at = store.lock_checkpoint(CASHIER_CHECKPOINT)
    # Up to the log's horizon: later appends, and any still open below it, wait for the next run.
    # (A checkpoint already past it, as the log's last position moved it before, stays.)
    horizon = store.horizon()
    folded = _fold_games(store, games_at, horizon) + _fold_cashier(store, cashier_at, horizon)
    uow.commit()
    return folded


def projected_through(uow: UnitOfWork) -> tuple[int, int]:
    """(how far both finance projections have folded the log, the log's horizon now): a report
    waits for the first to reach the second (FinanceCatchUp)."""
    store = FinanceStore(uow.conn)
    folded = min(
        store.checkpoint_position(CHECKPOINT), store.checkpoint_position(CASHIER_CHECKPOINT)
    )
    return folded, store.horizon()


def _fold_cashier(store: FinanceStore, position: int, horizon: int) -> int:
    """The players' deposits and withdrawals after ``position`` into daily_cashier, by the UTC
    day of their events, up to ``horizon``, where the checkpoint moves."""
    moved, depositors, position, folded = _cashier_moves(store, position, horizon)
    store.add_cashier(moved, sorted(depositors))
    store.move_checkpoint(CASHIER_CHECKPOINT, max(position, horizon))
    return folded


CashierMoves = dict[tuple[date, str], tuple[int, int]]


def _cashier_moves(
    store: FinanceStore, position: int, horizon: int
) -> tuple[CashierMoves, set[tuple[date, str, str]], int, int]:
    """The cashier's events after ``position`` up to ``horizon``, folded (reads only):
    (deposits, withdrawals) by (UTC day, currency), who deposited each day, the last position
    read, and how many events."""
    folded = 0
    moved: dict[tuple[date, str], tuple[int, int]] = {}
    depositors: set[tuple[date, str, str]] = set()
    while True:
        rows = store.cashier_events(position, horizon, BATCH)
        for pos, stream, type_name, version, data, recorded_at in rows:
            folded += 1
            position = pos
            event = decode(type_name, version, data)
            assert isinstance(event, FundsDeposited | FundsWithdrawn)
            key = (utc_day(recorded_at), event.currency)
            deposits, withdrawals = moved.get(key, (0, 0))
            if isinstance(event, FundsDeposited):
                moved[key] = (deposits + event.amount, withdrawals)
                depositors.add((*key, id_of(stream)))
            else:
                moved[key] = (deposits, withdrawals + event.amount)
        if len(rows) < BATCH:
            break
    return moved, depositors, position, folded


def _fold_games(store: FinanceStore, position: int, horizon: int) -> int:
    """The games' and duels' money events after ``position`` into daily_totals, up to
    ``horizon``, where the checkpoint moves."""
    increments, position, folded = _game_increments(store, position, horizon)
    for (day, currency, variant), totals in increments.items():
        store.add_totals(day, currency, variant, {k: totals.get(k, 0) for k in COUNTERS})
    store.move_checkpoint(CHECKPOINT, max(position, horizon))
    return folded


Increments = dict[tuple[date, str, str], dict[str, int]]


def _game_increments(
    store: FinanceStore, position: int, horizon: int
) -> tuple[Increments, int, int]:
    """The games' and duels' money events after ``position`` up to ``horizon``, folded (reads
    only): the counters by (UTC day, currency, variant), the last position read, and how many
    events."""
    folded = 0
    increments: dict[tuple[date, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    while True:
        rows = store.money_events(position, horizon, BATCH)
        if not rows:
            break
        endings = [r[1] for r in rows if r[2] != "StakePlaced"]
        stakes: dict[str, dict[str, Any]] = {}
        if endings:
            stakes = store.first_events(sorted(set(endings)))
        for pos, stream, type_name, version, data, recorded_at in rows:
            day = utc_day(recorded_at)
            folded += 1
            position = pos
            if is_duel(stream):
                _fold_duel_money(increments, day, stakes[stream], type_name, version, data)
                continue
            event = decode_game(type_name, version, data)
            money = game_movement(event)
            if isinstance(event, StakePlaced):
                if money is None:
                    continue  # a seat's fee is its duel's SeatTaken
                totals = increments[(day, event.currency, event.variant)]
                totals["games_started"] += 1
                totals["stakes"] += money.amount
                totals["certification_games"] += int(event.certification)
                continue
            placed = stakes[stream]
            if placed.get("duel_id"):
                continue  # a seat's ending: its duel's settlement counts it
            totals = increments[(day, placed["currency"], placed["variant"])]
            totals["games_finished"] += 1
            totals["stakes_settled"] += int(placed["stake"])
            if money is not None:
                totals[_REPORTED[money.kind]] += money.amount
        if len(rows) < BATCH:
            break
    return increments, position, folded


def projected_totals_findings(uow: UnitOfWork) -> list[Finding]:
    """The finance projections against the log they fold (the whole-history audit's log unit,
    in its snapshot): every money event up to each projection's checkpoint folded again must
    give exactly daily_totals' and daily_cashier's rows, so a day's figures written around the
    projector (zeroed, say) are named, day by day."""
    store = FinanceStore(uow.conn)
    findings: list[Finding] = []
    increments, _, _ = _game_increments(store, 0, store.checkpoint_position(CHECKPOINT))
    expected = {
        key: tuple(totals.get(k, 0) for k in COUNTERS)
        for key, totals in increments.items()
        if any(totals.values())
    }
    found = {key: row for key, row in store.all_totals().items() if any(row)}
    for key in sorted(set(expected) | set(found)):
        want, got = expected.get(key), found.get(key)
        if want != got:
            findings.append(
                Finding(
                    "daily-totals",
                    "daily_totals " + " ".join(str(part) for part in key),
                    _counters(want),
                    _counters(got),
                )
            )
    cashier_at = store.checkpoint_position(CASHIER_CHECKPOINT)
    moved, depositors, _, _ = _cashier_moves(store, 0, cashier_at)
    who: dict[tuple[date, str], int] = defaultdict(int)
    for day, currency, _player in depositors:
        who[(day, currency)] += 1
    wanted = {when: (*sums, who[when]) for when, sums in moved.items()}
    kept = store.all_cashier()
    for when in sorted(set(wanted) | set(kept)):
        if wanted.get(when) != kept.get(when):
            findings.append(
                Finding(
                    "daily-cashier",
                    "daily_cashier " + " ".join(str(part) for part in when),
                    _cashier(wanted.get(when)),
                    _cashier(kept.get(when)),
                )
            )
    return findings


def _counters(row: tuple[int, ...] | None) -> str:
    if row is None:
        return "no row"
    return ", ".join(f"{name} {value}" for name, value in zip(COUNTERS, row, strict=True))


def _cashier(row: tuple[int, int, int] | None) -> str:
    if row is None:
        return "no row"
    return f"deposits {row[0]}, withdrawals {row[1]}, depositors {row[2]}"


def _fold_duel_money(
    increments: dict[tuple[date, str, str], dict[str, int]],
    day: date,
    opened: dict[str, Any],
    type_name: str,
    version: int,
    data: dict[str, Any],
) -> None:
    """A duel's money on its day: a seat's fee as a stake, a settlement's prizes as payouts,
    a cancellation's refunds, each finishing the seats it settles."""
    event = decode_duel(type_name, version, data)
    money = duel_movement(event, opened["currency"])
    totals = increments[(day, opened["currency"], opened["variant"])]
    if isinstance(event, SeatTaken):
        totals["games_started"] += 1
        totals["certification_games"] += int(bool(opened.get("certification")))
    elif isinstance(event, DuelSettled):
        totals["games_finished"] += int(opened["seats"])
        totals["payouts"] -= event.rake  # the prizes: the pot less the house's rake
    elif isinstance(event, DuelCancelled):
        totals["games_finished"] += len(event.refunds)
    if money is not None:
        totals[_REPORTED[money.kind]] += money.amount
        if money.kind != "duel-fee":
            totals["stakes_settled"] += money.amount


#: The daily totals' counter each kind of movement adds to.
_REPORTED = {
    "stake": "stakes",
    "winnings": "payouts",
    "refund": "refunds",
    "duel-fee": "stakes",
    "duel-prize": "payouts",
    "duel-refund": "refunds",
}

#: The daily totals' counters, in their columns' order (the history loader writes them too).
COUNTERS = (
    "games_started",
    "games_finished",
    "stakes",
    "payouts",
    "refunds",
    "stakes_settled",
    "certification_games",
)


@dataclass(frozen=True, slots=True)
class Totals:
    games_started: int
    games_finished: int
    stakes: int
    payouts: int
    refunds: int

    @property
    def ggr(self) -> int:
        return self.stakes - self.payouts - self.refunds

    @property
    def rtp(self) -> str | None:
        """Payouts over stakes net of refunds, four decimals; None with nothing wagered."""
        wagered = self.stakes - self.refunds
        if wagered <= 0:
            return None
        ratio = Decimal(self.payouts) / Decimal(wagered)
        return str(ratio.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN))


@dataclass(frozen=True, slots=True)
class DayLine:
    day: date
    variant: str
    totals: Totals
    held_at_end: int


@dataclass(frozen=True, slots=True)
class AdvantageLine:
    """A return the advantage-play watcher found significantly above a game's price."""

    at: datetime
    on: str  # "player" or "game"
    variant: str
    player_id: Any | None
    games: int
    rtp: str
    low: str
    high: str
    strong_rtp: str
    reason: str


@dataclass(frozen=True, slots=True)
class SaferGamblingDay:
    """One UTC day's safer gambling, for one currency's players."""

    day: date
    deposits: int
    withdrawals: int
    depositing_players: int
    limit_refusals: int
    exclusion_refusals: int
    reality_check_refusals: int
    time_outs: int
    self_exclusions: int
    reality_checks: int

    @property
    def net_deposits(self) -> int:
        return self.deposits - self.withdrawals


@dataclass(frozen=True, slots=True)
class DailyReport:
    currency: str
    start: date
    end: date
    lines: tuple[DayLine, ...]
    period: Totals
    month_to_date: Totals
    lifetime: Totals
    advantage_play: tuple[AdvantageLine, ...] = ()
    safer_gambling: tuple[SaferGamblingDay, ...] = ()

    @property
    def sandbox(self) -> bool:
        """Certification games' test money, not real money."""
        return is_sandbox(self.currency)

    def by_variant(self) -> dict[str, Totals]:
        """The period's totals of each game (variant), in the order the days list them."""
        sums: dict[str, list[int]] = {}
        for line in self.lines:
            t = line.totals
            row = sums.setdefault(line.variant, [0, 0, 0, 0, 0])
            for i, value in enumerate(
                (t.games_started, t.games_finished, t.stakes, t.payouts, t.refunds)
            ):
                row[i] += value
        return {variant: Totals(*row) for variant, row in sums.items()}


def daily_report(uow: UnitOfWork, start: date, end: date, currency: str) -> DailyReport:
    store = FinanceStore(uow.conn)
    lines = tuple(
        DayLine(r[0], r[1], Totals(r[2], r[3], r[4], r[5], r[6]), int(r[7]))
        for r in store.report_lines(start, end, currency, list(GAMES))
    )

    def summed(first: date, last: date) -> Totals:
        return Totals(*store.sums(currency, first, last))

    period = summed(start, end)
    month = summed(end.replace(day=1), end)
    lifetime = Totals(*store.lifetime(currency, end))
    first, after = utc_span(start, end)
    flagged = tuple(
        AdvantageLine(
            at,
            d["on"],
            d["variant"],
            player_id,
            int(d["games"]),
            d["rtp"],
            d["low"],
            d["high"],
            d["strong_rtp"],
            d["reason"],
        )
        for at, player_id, d in uow.advantage.reports(ADVANTAGE_PLAY, currency, first, after)
    )
    safer = tuple(
        SaferGamblingDay(row[0], *(int(v) for v in row[1:]))
        for row in store.safer_gambling(currency, (start, end), (first, after))
    )
    return DailyReport(currency, start, end, lines, period, month, lifetime, flagged, safer)


CSV_COLUMNS = (
    "day",
    "variant",
    "currency",
    "games_started",
    "games_finished",
    "stakes",
    "payouts",
    "refunds",
    "ggr",
    "rtp",
    "held_at_end",
)


def report_csv(report: DailyReport) -> str:
    """The report's rows, then the period, month-to-date and lifetime totals (variant "all")."""

    def row(day: str, variant: str, t: Totals, held: int | str) -> list[object]:
        return [
            day,
            variant,
            report.currency,
            t.games_started,
            t.games_finished,
            t.stakes,
            t.payouts,
            t.refunds,
            t.ggr,
            t.rtp or "",
            held,
        ]

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for line in report.lines:
        writer.writerow(row(line.day.isoformat(), line.variant, line.totals, line.held_at_end))
    writer.writerow(row("period", "all", report.period, ""))
    writer.writerow(row("month-to-date", "all", report.month_to_date, ""))
    writer.writerow(row("lifetime", "all", report.lifetime, ""))
    return out.getvalue()


# --- reconciliation ---------------------------------------------------------------------------


def _expected_money(
    stream: str, type_name: str, version: int, data: dict[str, Any], currencies: dict[str, str]
) -> tuple[str, int, str] | None:
    """(kind, amount, currency) a game or duel event puts in the ledger (the ledger's one
    rule, service.core.ledger); None if nothing."""
    if is_duel(stream):
        event = decode_duel(type_name, version, data)
        money = duel_movement(event, currencies.get(stream, ""))
    else:
        money = game_movement(decode_game(type_name, version, data))
    return None if money is None else (money.kind, money.amount, money.currency)


def _duel_currencies(store: FinanceStore, rows: list[Any]) -> dict[str, str]:
    streams = sorted({r[0] for r in rows if is_duel(str(r[0]))})
    return store.duel_currencies(streams) if streams else {}


def reconcile(uow: UnitOfWork, day: date) -> dict[str, Any]:
    """Ledger totals against totals derived from the game events for ``day``, and every
    mismatch, game by game."""
    start, last = utc_span(day, day)
    events: dict[tuple[str, int], tuple[str, int, str] | None] = {}
    entries: dict[tuple[str, int], tuple[str, int, str]] = {}
    store = FinanceStore(uow.conn)
    day_events = store.day_events(start, last)
    currencies = _duel_currencies(store, day_events)
    for stream, version, type_name, schema_version, data in day_events:
        events[(stream, version)] = _expected_money(
            stream, type_name, schema_version, data, currencies
        )
    day_ledger = store.day_ledger(start, last)
    for stream, version, kind, amount, currency in day_ledger:
        entries[(stream, version)] = (kind, int(amount), currency)
    # Look up each side's missing counterparts wherever they are dated.
    want_events = [k for k in entries if k not in events]
    want_ledger = [k for k, v in events.items() if v is not None and k not in entries]
    other_events: dict[tuple[str, int], tuple[str, int, str] | None] = {}
    if want_events:
        found_rows = store.events_by_key(want_events)
        currencies |= _duel_currencies(store, found_rows)
        for stream, version, type_name, schema_version, data in found_rows:
            other_events[(stream, version)] = _expected_money(
                stream, type_name, schema_version, data, currencies
            )
    other_entries: dict[tuple[str, int], tuple[str, int, str]] = {}
    if want_ledger:
        for stream, version, kind, amount, currency in store.ledger_by_key(want_ledger):
            other_entries[(stream, version)] = (kind, int(amount), currency)

    totals: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: {"events": _zero(), "ledger": _zero()}
    )
    for expected in events.values():
        if expected is not None:
            kind, amount, currency = expected
            totals[currency]["events"][kind] += amount
    for kind, amount, currency in entries.values():
        totals[currency]["ledger"][kind] += amount

    mismatches: list[dict[str, Any]] = []
    for key in sorted(set(events) | set(entries)):
        expected = events[key] if key in events else other_events.get(key)
        found = entries[key] if key in entries else other_entries.get(key)
        if key not in events and key not in other_events:
            expected = None
        if _same(expected, found):
            continue
        stream, version = key
        mismatches.append(
            {
                "game_id": stream.removeprefix(GAME).removeprefix(DUEL),
                "event": f"{stream} v{version}",
                "check": "ledger-vs-events",
                "expected": _describe(expected),
                "found": _describe(found),
            }
        )
    return {
        "date": day.isoformat(),
        "currencies": {
            cur: {
                **sides,
                "balanced": sides["events"] == sides["ledger"],
                "sandbox": is_sandbox(cur),
            }
            for cur, sides in sorted(totals.items())
        },
        "events_checked": len(day_events),
        "ledger_transactions_checked": len(day_ledger),
        "mismatches": mismatches,
        "reconciled": not mismatches,
    }


def _zero() -> dict[str, int]:
    return {
        "stake": 0,
        "winnings": 0,
        "refund": 0,
        "duel-fee": 0,
        "duel-prize": 0,
        "duel-refund": 0,
    }


def _same(expected: tuple[str, int, str] | None, found: tuple[str, int, str] | None) -> bool:
    return expected == found


def _describe(value: tuple[str, int, str] | None) -> str:
    return "nothing" if value is None else f"{value[0]} {value[1]} {value[2]}"


def store_reconciliation(uow: UnitOfWork, day: date) -> dict[str, Any]:
    """Reconcile ``day`` and store the result as its newest (earlier ones are kept)."""
    result = reconcile(uow, day)
    ReconciliationStore(uow.conn).add(day, result)
    uow.commit()
    return result


def stored_reconciliation(uow: UnitOfWork, day: date) -> tuple[datetime, dict[str, Any]] | None:
    """The day's newest stored reconciliation, if any."""
    row = ReconciliationStore(uow.conn).latest(day)
    if row is None:
        return None
    result = row[1]
    # A result stored before the sandbox existed has no label: no XTS line was in it either.
    result["currencies"] = {
        cur: {"sandbox": is_sandbox(cur), **sides}
        for cur, sides in result.get("currencies", {}).items()
    }
    return row[0], result


# --- seamless mode: the operator's wallet -----------------------------------------------------

#: The wallet CSV's fixed columns (issue 37), for the operator to match against its own.
WALLET_CSV_COLUMNS = (
    "round",
    "external_ref",
    "method",
    "transaction_uuid",
    "reference",
    "amount",
    "wire_amount",
    "currency",
    "first_sent",
    "final_state",
    "final_at",
    "attempts",
)


def wallet_state(state: str) -> str:
    """A movement's state as the wallet CSV and finance say it: still being sent is pending;
    a bet whose outcome was unknown is rolled back (its rollback is a row of its own)."""
    return {"due": "pending", "sent": "pending", "unknown": "rolled-back"}.get(state, state)


def wallet_line(row: WalletTransaction) -> dict[str, Any]:
    return {
        "round": row.round_id,
        "external_ref": row.external_ref,
        "method": row.method,
        "transaction_uuid": row.transaction_uuid,
        "reference": row.reference,
        "amount": row.amount,
        "wire_amount": row.wire_amount,
        "currency": row.currency,
        "first_sent": row.first_sent_at,
        "final_state": wallet_state(row.state),
        "final_at": row.final_at,
        "attempts": row.attempts,
        "review_reason": row.review_reason,
    }


def wallet_csv(rows: Sequence[WalletTransaction]) -> str:
    """A day's wallet transactions with their final state, one a line, in WALLET_CSV_COLUMNS
    (times ISO 8601 UTC, empty when none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(WALLET_CSV_COLUMNS)
    for row in rows:
        line = wallet_line(row)
        writer.writerow(
            [
                ""
                if line[name] is None
                else line[name].isoformat()
                if isinstance(line[name], datetime)
                else line[name]
                for name in WALLET_CSV_COLUMNS
            ]
        )
    return out.getvalue()


def wallet_liability(uow: UnitOfWork, currency: str) -> dict[str, dict[str, int]]:
    """What the server owes the operator's wallet as of now, in ``currency``: wins not yet
    acknowledged, rollbacks not yet acknowledged, and movements under review (count, amount)."""
    found = {
        "unacknowledged_wins": {"count": 0, "amount": 0},
        "unacknowledged_rollbacks": {"count": 0, "amount": 0},
        "under_review": {"count": 0, "amount": 0},
    }
    for cur, method, state, count, amount in uow.wallet.outstanding():
        if cur != currency:
            continue
        key = (
            "under_review"
            if state == "review"
            else "unacknowledged_wins"
            if method == "win"
            else "unacknowledged_rollbacks"
        )
        if method == "bet" and state != "review":
            continue  # a bet on the wire is the player's deal waiting, not money owed
        found[key]["count"] += count
        found[key]["amount"] += amount
    return found
