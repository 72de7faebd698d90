"""Safer gambling's rules (pure): a player's limits, when a change takes effect, and whether a
wager or a deposit keeps within them.

The limits (GLI-19 s2.5.5, A.3.7-A.3.8; UKGC RTS 12A/12B):

- ``deposit-day``, ``deposit-week``, ``deposit-month``: gross deposits in the period;
- ``loss-day``, ``loss-week``, ``loss-month``: net loss in the period, every real-money movement
  of the player's wallet but the cashier's (stakes and duel fees out, winnings, refunds and
  duel prizes back), so an open game's stake counts until it pays;
- ``max-stake``: the most one game's stake (or one duel's entry fee) may be;
- ``session-time``: minutes a player session may play (GLI-19 A.3.7's time limit): once that
  long has passed since the session began, no deal, play action or duel join in it (collecting
  stays open); a new session counts afresh;
- ``reality-check``: minutes between reality checks (RTS 13): once that long has passed in a
  player session since it began or since the last check acknowledged in it, play pauses (no
  deal, play action or duel join; collecting stays open) until the player acknowledges the
  check in that session, which shows the session's time, and the stakes it placed and what
  they paid (its own play only: not another session's, nor a game staked before it began).

Time-outs (24 hours, one week, one month, six weeks) and self-exclusion (six months, one year,
five years) apply at once (LCCP SR 3.5.3): no deal, duel join or deposit until they end;
withdrawals, and playing out and collecting a game already dealt, stay open. Neither can be
ended early: a new one only ever extends the exclusion in force.

Periods are UTC calendar periods: the day from midnight, the week from Monday, the month from
its first day; each resets at the next one. Money is minor units of the player's currency.

A stricter value (lower, or a limit where there was none) takes effect at once and replaces any
loosening still pending; a looser one (higher, or none) only after :data:`LOOSENING_DELAY`, the
old value holding until then. A limit's state is therefore its last change: the value it
replaced, the value set and when that takes effect (``LimitChanged`` on the player's stream).
The database checks the loosening rule and "an exclusion only extends" again, on its own clock,
as the events are appended (migrations/0031 refusal_of, their deliberate second copy; the
insider tests in tests/integration/test_insider.py hold the two to the same answers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any, Literal

from events.catalog import LimitChanged, PlayerExcluded
from service.core.clock import instant, parse_instant
from service.errors import Excluded, InvalidArgument, LimitExceeded, RealityCheckDue

Period = Literal["day", "week", "month"]
PERIODS: tuple[Period, ...] = ("day", "week", "month")
DEPOSIT_LIMITS = {f"deposit-{p}": p for p in PERIODS}
LOSS_LIMITS = {f"loss-{p}": p for p in PERIODS}
MAX_STAKE = "max-stake"
#: Minutes between reality checks (RTS 13): set like a limit (shorter at once, longer or none
#: a day later), it limits no money.
REALITY_CHECK = "reality-check"
#: Minutes a player session may play: set like a limit, it limits no money either.
SESSION_TIME = "session-time"
#: The limits counted in minutes, not money (none uses anything up or resets by the calendar).
MINUTE_LIMITS = (SESSION_TIME, REALITY_CHECK)
#: Every limit a player may set, by name (the API's and the events' spelling).
LIMITS: tuple[str, ...] = (*DEPOSIT_LIMITS, *LOSS_LIMITS, MAX_STAKE, *MINUTE_LIMITS)
#: The highest value a limit may take (a billion major units: no one means more).
MOST = 10**11
#: ... and a limit in minutes (a session's, a reality check's interval): a day.
MOST_MINUTES = 24 * 60
#: How long a looser limit waits before it takes effect.
LOOSENING_DELAY = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Limit:
    """One limit's state: its last change."""

    previous: int | None = None
    value: int | None = None
    effective_from: datetime | None = None

    def at(self, now: datetime) -> int | None:
        """The value in force at ``now``."""
        if self.effective_from is None or now >= self.effective_from:
            return self.value
        return self.previous

    def pending(self, now: datetime) -> tuple[int | None, datetime] | None:
        """A loosening not yet in force: (its value, from when)."""
        if self.effective_from is None or now >= self.effective_from:
            return None
        return self.value, self.effective_from


NO_LIMIT = Limit()


def stricter(new: int | None, old: int | None) -> bool:
    return new is not None and (old is None or new < old)


def loosens(new: int | None, held: int | None) -> bool:
    """Whether setting ``new`` where ``held`` is in force loosens the limit (higher, or none
    where there was one): then it waits :data:`LOOSENING_DELAY`."""
    return not (new == held or stricter(new, held))


def change(limit_name: str, state: Limit, value: int | None, now: datetime) -> LimitChanged:
    """The event setting ``limit_name`` to ``value`` at ``now``: at once if stricter than (or
    the same as) what holds now, else after the loosening delay."""
    if limit_name not in LIMITS:
        raise ValueError(f"no limit {limit_name!r}")
    if limit_name in MINUTE_LIMITS and value is not None and value > MOST_MINUTES:
        raise InvalidArgument("value", f"{limit_name} is at most {MOST_MINUTES} minutes")
    current = state.at(now)
    effective = now + LOOSENING_DELAY if loosens(value, current) else now
    return LimitChanged(limit_name, current, value, instant(effective))


def loosened_too_soon(
    state: Limit, event: LimitChanged, recorded_at: datetime, slack: timedelta = timedelta(0)
) -> bool:
    """Whether ``event``, recorded at ``recorded_at`` over ``state``, loosens the limit in force
    sooner than :data:`LOOSENING_DELAY` (the rule :func:`change` keeps; the audit asks it of
    the log). ``slack``: how long before its recording a change may have been decided (its
    transaction began then), which the delay is counted from."""
    effective = parse_instant(event.effective_from)
    return (
        loosens(event.value, state.at(recorded_at))
        and effective < recorded_at - slack + LOOSENING_DELAY
    )


def applied(event: LimitChanged) -> Limit:
    """A limit's state after its change (the fold: the last change is the state)."""
    return Limit(event.previous, event.value, parse_instant(event.effective_from))


def period_start(period: Period, now: datetime) -> datetime:
    """When the UTC calendar period holding ``now`` began."""
    day = now.astimezone(UTC).date()
    if period == "week":
        day -= timedelta(days=day.weekday())
    elif period == "month":
        day = day.replace(day=1)
    return datetime.combine(day, time.min, tzinfo=UTC)


def period_end(period: Period, now: datetime) -> datetime:
    """When the period holding ``now`` resets: the start of the next one."""
    start = period_start(period, now)
    if period == "day":
        return start + timedelta(days=1)
    if period == "week":
        return start + timedelta(days=7)
    year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
    return start.replace(year=year, month=month)


@dataclass(frozen=True, slots=True)
class Usage:
    """What the player's wallet did in each current period: gross deposits and net loss."""

    deposits: Mapping[Period, int]
    losses: Mapping[Period, int]


def check_wager(limits: Mapping[str, Limit], usage: Usage, amount: int, now: datetime) -> None:
    """Refuse (LimitExceeded) a stake or entry fee of ``amount`` that is over the maximum stake,
    or that would take a period's net loss past its limit were it lost."""
    most = limits.get(MAX_STAKE, NO_LIMIT).at(now)
    if most is not None and amount > most:
        raise LimitExceeded(MAX_STAKE, most, None)
    for name, period in LOSS_LIMITS.items():
        _within(name, limits, usage.losses[period], amount, period, now)


def check_deposit(limits: Mapping[str, Limit], usage: Usage, amount: int, now: datetime) -> None:
    """Refuse (LimitExceeded) a deposit that would take a period's gross deposits past its
    limit."""
    for name, period in DEPOSIT_LIMITS.items():
        _within(name, limits, usage.deposits[period], amount, period, now)


def _within(
    name: str,
    limits: Mapping[str, Limit],
    used: int,
    amount: int,
    period: Period,
    now: datetime,
) -> None:
    most = limits.get(name, NO_LIMIT).at(now)
    if most is not None and used + amount > most:
        raise LimitExceeded(name, left(most, used), period_end(period, now))


def left(most: int, used: int) -> int:
    """What a limit still allows after ``used`` (never below nothing)."""
    return max(most - used, 0)


def remaining(
    limits: Mapping[str, Limit], usage: Usage, now: datetime
) -> dict[str, tuple[int | None, int, datetime | None]]:
    """Each limit's (value in force, used so far, when it resets): what a player's limits page
    shows. The maximum stake uses nothing and never resets."""
    shown: dict[str, tuple[int | None, int, datetime | None]] = {}
    for name in LIMITS:
        value = limits.get(name, NO_LIMIT).at(now)
        if name in (MAX_STAKE, *MINUTE_LIMITS):
            shown[name] = (value, 0, None)
            continue
        period = DEPOSIT_LIMITS.get(name) or LOSS_LIMITS[name]
        used = (usage.deposits if name in DEPOSIT_LIMITS else usage.losses)[period]
        shown[name] = (value, used, period_end(period, now))
    return shown


def check_session_time(
    limits: Mapping[str, Limit], session_started: datetime | None, now: datetime
) -> None:
    """Refuse (LimitExceeded: nothing left, no reset but a new session) play in a player
    session that has lasted its ``session-time`` limit. Staff sessions (no start) have none."""
    if session_started is None:
        return
    minutes = limits.get(SESSION_TIME, NO_LIMIT).at(now)
    if minutes is not None and now >= session_started + timedelta(minutes=minutes):
        raise LimitExceeded(
            SESSION_TIME,
            0,
            None,
            f"this session has reached the player's session-time limit of {minutes} minutes; "
            "collecting a game stays open",
        )


# --- time-outs and self-exclusion -------------------------------------------------------------

ExclusionKind = Literal["time-out", "self-exclusion"]


def add_months(moment: datetime, months: int) -> datetime:
    """The same day and time ``months`` later (the month's last day when it is shorter)."""
    month0 = moment.month - 1 + months
    year, month = moment.year + month0 // 12, month0 % 12 + 1
    day = moment.day
    while True:
        try:
            return moment.replace(year=year, month=month, day=day)
        except ValueError:
            day -= 1


#: Every length a player may choose, by name: its kind and how long it lasts from ``now``.
LENGTHS: dict[str, tuple[ExclusionKind, Callable[[datetime], datetime]]] = {
    "24-hours": ("time-out", lambda now: now + timedelta(hours=24)),
    "one-week": ("time-out", lambda now: now + timedelta(weeks=1)),
    "one-month": ("time-out", lambda now: add_months(now, 1)),
    "six-weeks": ("time-out", lambda now: now + timedelta(weeks=6)),
    "six-months": ("self-exclusion", lambda now: add_months(now, 6)),
    "one-year": ("self-exclusion", lambda now: add_months(now, 12)),
    "five-years": ("self-exclusion", lambda now: add_months(now, 60)),
}


@dataclass(frozen=True, slots=True)
class Exclusion:
    """The exclusion in force (or last in force): its kind and when it ends."""

    kind: ExclusionKind
    until: datetime

    def active(self, now: datetime) -> bool:
        return now < self.until


def exclude(current: Exclusion | None, length: str, now: datetime) -> PlayerExcluded:
    """The event of a time-out or self-exclusion of ``length`` taken at ``now``: it ends then,
    unless the one in force ends later (an exclusion is never shortened)."""
    if length not in LENGTHS:
        raise ValueError(f"no exclusion of length {length!r}")
    kind, lasts = LENGTHS[length]
    until = lasts(now)
    if current is not None and current.active(now):
        if current.until >= until:
            kind, until = current.kind, current.until
        elif current.kind == "self-exclusion":
            kind = "self-exclusion"  # a longer time-out never lessens one in force
    return PlayerExcluded(length, kind, instant(until))


def lessens(current: Exclusion | None, after: Exclusion, now: datetime) -> bool:
    """Whether ``after``, recorded at ``now``, ends or lessens an exclusion: it ends by then,
    or sooner than the one in force, or makes a self-exclusion in force a time-out. Never so
    for what :func:`exclude` gives; the audit asks it of the log."""
    if after.until <= now:
        return True
    if current is None or not current.active(now):
        return False
    return after.until < current.until or (
        current.kind == "self-exclusion" and after.kind != "self-exclusion"
    )


def excluded(event: PlayerExcluded) -> Exclusion:
    """The exclusion after its event (the fold: the last event is the state)."""
    kind: ExclusionKind = "self-exclusion" if event.kind == "self-exclusion" else "time-out"
    return Exclusion(kind, parse_instant(event.until))


def well_formed(event: LimitChanged | PlayerExcluded) -> str | None:
    """What is wrong with a limit's change or an exclusion as recorded (a limit, length or
    kind this server has no such thing as), if anything."""
    if isinstance(event, LimitChanged):
        return None if event.limit in LIMITS else f"no limit {event.limit!r}"
    if event.length not in LENGTHS:
        return f"no exclusion of length {event.length!r}"
    if event.kind not in ("time-out", "self-exclusion"):
        return f"no exclusion of kind {event.kind!r}"
    return None


def check_not_excluded(exclusion: Exclusion | None, now: datetime) -> None:
    """Refuse (Excluded) anything a time-out or self-exclusion stops: a deal (a duel seat's
    too), a duel's join, a deposit."""
    if exclusion is not None and exclusion.active(now):
        raise Excluded(exclusion.kind, exclusion.until)


# --- reality checks -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionMoney:
    """What a player session's play moved: the stakes and fees it placed out, and what those
    paid back, winnings, refunds and prizes (real money)."""

    stakes: int
    payouts: int

    @property
    def net(self) -> int:
        """The player's net win (negative: a loss)."""
        return self.payouts - self.stakes


@dataclass(frozen=True, slots=True)
class RealityCheck:
    """The prompt: the session so far, and since when the check has been due."""

    session_started: datetime
    due_at: datetime
    session_seconds: int
    stakes: int
    payouts: int
    net: int

    def shown(self) -> dict[str, Any]:
        """The prompt as the API shows it (a problem's reality_check, the check's route)."""
        return {
            "session_started": self.session_started.isoformat(),
            "due_at": self.due_at.isoformat(),
            "session_seconds": self.session_seconds,
            "stakes": self.stakes,
            "payouts": self.payouts,
            "net": self.net,
        }


def reality_check_due(
    interval: int | None,
    session_started: datetime,
    acknowledged: tuple[datetime, datetime] | None,
    now: datetime,
) -> datetime | None:
    """When the check of this session fell due, if it has: ``interval`` minutes after the
    session began, or after the last acknowledgement in this session (``acknowledged``: the
    session's start and when; another session's acknowledgement counts for nothing here)."""
    if interval is None:
        return None
    since = session_started
    if acknowledged is not None and acknowledged[0] == session_started:
        since = max(since, acknowledged[1])
    due_at = since + timedelta(minutes=interval)
    return due_at if now >= due_at else None


def prompt(
    session_started: datetime, due_at: datetime, money: SessionMoney, now: datetime
) -> RealityCheck:
    seconds = int((now - session_started).total_seconds())
    return RealityCheck(session_started, due_at, seconds, money.stakes, money.payouts, money.net)


def check_no_reality_check_due(due: RealityCheck | None) -> None:
    """Pause play (RealityCheckDue) while a reality check waits for its acknowledgement."""
    if due is not None:
        raise RealityCheckDue(due)
