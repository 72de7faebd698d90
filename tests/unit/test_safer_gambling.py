"""Safer gambling's pure rules (service/core/safer_gambling.py): periods in UTC, stricter at
once and looser a day later, and the checks exactly at each limit's boundary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.core import safer_gambling as sg
from service.errors import Excluded, InvalidArgument, LimitExceeded, RealityCheckDue
from service.runtime.config import Settings

NOW = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)  # a Thursday
NOTHING = sg.Usage(dict.fromkeys(sg.PERIODS, 0), dict.fromkeys(sg.PERIODS, 0))


def test_periods_are_utc_calendar_days_weeks_from_monday_and_months() -> None:
    assert sg.period_start("day", NOW) == datetime(2026, 12, 31, tzinfo=UTC)
    assert sg.period_start("week", NOW) == datetime(2026, 12, 28, tzinfo=UTC)
    assert sg.period_start("month", NOW) == datetime(2026, 12, 1, tzinfo=UTC)
    assert sg.period_end("day", NOW) == datetime(2027, 1, 1, tzinfo=UTC)
    assert sg.period_end("week", NOW) == datetime(2027, 1, 4, tzinfo=UTC)
    assert sg.period_end("month", NOW) == datetime(2027, 1, 1, tzinfo=UTC)
    assert sg.period_end("month", datetime(2027, 1, 31, tzinfo=UTC)) == datetime(
        2027, 2, 1, tzinfo=UTC
    )


def test_stricter_or_new_takes_effect_at_once_looser_or_none_a_day_later() -> None:
    first = sg.applied(sg.change("loss-day", sg.NO_LIMIT, 500, NOW))
    assert first.at(NOW) == 500
    looser = sg.applied(sg.change("loss-day", first, 800, NOW))
    assert (looser.at(NOW), looser.pending(NOW)) == (500, (800, NOW + timedelta(hours=24)))
    later = NOW + timedelta(hours=24)
    assert (looser.at(later - timedelta(microseconds=1)), looser.at(later)) == (500, 800)
    removed = sg.applied(sg.change("loss-day", first, None, NOW))
    assert (removed.at(NOW), removed.at(later)) == (500, None)
    tighter = sg.applied(sg.change("loss-day", looser, 400, NOW + timedelta(hours=1)))
    assert (tighter.at(later), tighter.pending(later)) == (400, None)
    with pytest.raises(ValueError, match="no limit"):
        sg.change("loss-hour", sg.NO_LIMIT, 5, NOW)


def test_a_wager_is_refused_only_past_a_limit() -> None:
    limits = {"loss-week": sg.Limit(None, 1_000, NOW), "max-stake": sg.Limit(None, 600, NOW)}
    used = sg.Usage(dict.fromkeys(sg.PERIODS, 0), {"day": 100, "week": 400, "month": 900})
    sg.check_wager(limits, used, 600, NOW)  # 400 + 600: exactly the weekly limit
    with pytest.raises(LimitExceeded) as over:
        sg.check_wager(limits, used, 601, NOW)
    assert (over.value.limit, over.value.remaining) == ("max-stake", 600)
    smaller = {"loss-week": sg.Limit(None, 999, NOW)}
    with pytest.raises(LimitExceeded) as past:
        sg.check_wager(smaller, used, 600, NOW)
    assert (past.value.limit, past.value.remaining) == ("loss-week", 599)
    assert past.value.resets_at == datetime(2027, 1, 4, tzinfo=UTC)
    sg.check_wager({}, used, 10**9, NOW)  # no limits, nothing refused


def test_a_deposit_is_refused_only_past_its_limit() -> None:
    limits = {"deposit-day": sg.Limit(None, 1_000, NOW)}
    sg.check_deposit(limits, NOTHING, 1_000, NOW)
    with pytest.raises(LimitExceeded) as over:
        sg.check_deposit(limits, NOTHING, 1_001, NOW)
    assert (over.value.limit, over.value.remaining) == ("deposit-day", 1_000)


def test_the_session_idle_time_is_configurable_and_30_minutes_by_default() -> None:
    assert Settings().session_idle == timedelta(minutes=30)
    env = {"APP_ENV": "test", "SESSION_IDLE_MINUTES": "15"}
    assert Settings.from_env(env).session_idle == timedelta(minutes=15)


def test_months_end_on_the_same_day_or_the_month_s_last() -> None:
    assert sg.add_months(datetime(2027, 1, 31, 9, tzinfo=UTC), 1) == datetime(
        2027, 2, 28, 9, tzinfo=UTC
    )
    assert sg.add_months(datetime(2027, 8, 31, tzinfo=UTC), 6) == datetime(2028, 2, 29, tzinfo=UTC)
    assert sg.add_months(NOW, 60) == datetime(2031, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_an_exclusion_only_ever_extends() -> None:
    week = sg.excluded(sg.exclude(None, "one-week", NOW))
    assert (week.kind, week.until) == ("time-out", NOW + timedelta(weeks=1))
    day = sg.excluded(sg.exclude(week, "24-hours", NOW))
    assert day == week  # a shorter one changes nothing
    self_excluded = sg.excluded(sg.exclude(week, "six-months", NOW))
    assert (self_excluded.kind, self_excluded.until) == ("self-exclusion", sg.add_months(NOW, 6))
    after = self_excluded.until + timedelta(seconds=1)
    fresh = sg.excluded(sg.exclude(self_excluded, "24-hours", after))
    assert (fresh.kind, fresh.until) == ("time-out", after + timedelta(hours=24))
    with pytest.raises(Excluded):
        sg.check_not_excluded(week, NOW)
    sg.check_not_excluded(week, week.until)
    with pytest.raises(ValueError, match="no exclusion"):
        sg.exclude(None, "forever", NOW)


def test_a_reality_check_falls_due_an_interval_after_the_session_began_or_its_last_one() -> None:
    began = NOW - timedelta(minutes=30)
    assert sg.reality_check_due(None, began, None, NOW) is None
    assert sg.reality_check_due(30, began, None, NOW) == NOW
    assert sg.reality_check_due(31, began, None, NOW) is None
    acknowledged = (began, NOW - timedelta(minutes=10))
    assert sg.reality_check_due(30, began, acknowledged, NOW) is None
    assert sg.reality_check_due(10, began, acknowledged, NOW) == NOW
    another_session = (began - timedelta(days=1), NOW - timedelta(minutes=1))
    assert sg.reality_check_due(30, began, another_session, NOW) == NOW  # counts from this one
    money = sg.SessionMoney(stakes=1_040, payouts=300)
    shown = sg.prompt(began, NOW, money, NOW)
    assert (shown.session_seconds, shown.net) == (1_800, -740)
    with pytest.raises(RealityCheckDue):
        sg.check_no_reality_check_due(shown)


def test_a_session_stops_exactly_at_its_session_time_limit() -> None:
    limits = {"session-time": sg.Limit(None, 45, NOW)}
    began = NOW - timedelta(minutes=45)
    sg.check_session_time(limits, began + timedelta(microseconds=1), NOW)  # a moment short
    with pytest.raises(LimitExceeded) as over:
        sg.check_session_time(limits, began, NOW)
    assert (over.value.limit, over.value.remaining, over.value.resets_at) == (
        "session-time",
        0,
        None,
    )
    assert "session-time limit of 45 minutes" in str(over.value)
    sg.check_session_time(limits, None, NOW)  # a staff session has none
    sg.check_session_time({}, began - timedelta(days=1), NOW)  # no limit, no stop
    with pytest.raises(InvalidArgument, match="at most 1440 minutes"):
        sg.change("session-time", sg.NO_LIMIT, 1_441, NOW)
