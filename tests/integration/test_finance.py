"""Finance through the real PostgreSQL: the checkpointed daily totals, the daily report, and the
reconciliation of the ledger against the game events."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg
import pytest

from events.catalog import FundsDeposited, PlayerRegistered
from events.records import NewEvent
from service.app import create_app
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core import shuffle
from service.core.paytable import winnings
from service.core.streams import player_stream
from service.games import GAMES
from service.games.golf import GOLF
from service.services import finance_books as finance
from tests.credentials import staff
from tests.integration.conftest import OPERATOR, World, as_player
from tests.workers import celery_processes


def _today() -> date:
    return datetime.now(UTC).date()


def _scenario(world: World) -> dict[str, str]:
    """Draw-1: one game collected with 3 cards (150), a certification deal, so played for the
    sandbox currency (XTS); one voided; draw-3: one left open. The last two are real money."""
    a = world.player(balance=10_000)
    won = world.easy_game(a)
    gid = uuid.UUID(won.state.game_id)
    for _ in range(3):
        world.c.games.play(as_player(a.player_id), gid, g.Draw())
        world.c.games.play(as_player(a.player_id), gid, g.MoveCards("waste", "foundation"))
    world.c.games.collect(as_player(a.player_id), gid)
    b = world.player(balance=10_000)
    voided = world.game(b, stake=1_040)
    world.c.games.void(OPERATOR, uuid.UUID(voided.state.game_id), "malfunction")
    c = world.player(balance=10_000)
    open_game = world.game(c, stake=2_080, variant="vegas-draw3")
    return {
        "won": won.state.game_id,
        "voided": voided.state.game_id,
        "open": open_game.state.game_id,
    }


def test_daily_totals_are_projected_once_however_often_the_projector_runs(
    fresh_container: Container,
) -> None:
    _scenario(World(fresh_container))
    with fresh_container.background_unit_of_work() as uow:
        first = finance.catch_up(uow)
    with fresh_container.background_unit_of_work() as uow:
        again = finance.catch_up(uow)
    # 3 stakes, 1 collect, 1 void, and the 3 players' deposits; nothing new the 2nd time
    assert (first, again) == (5 + 3, 0)
    with fresh_container.unit_of_work() as uow:
        report = finance.daily_report(uow, _today(), _today(), "GBP")
        sandbox = finance.daily_report(uow, _today(), _today(), "XTS")
    assert (report.sandbox, sandbox.sandbox) == (False, True)
    by_variant = {line.variant: line for line in report.lines}
    draw1, draw3 = by_variant["vegas-draw1"], by_variant["vegas-draw3"]
    # Real money: the voided game only; the certification game is never in real GGR or RTP.
    assert (draw1.totals.games_started, draw1.totals.games_finished) == (1, 1)
    assert (draw1.totals.stakes, draw1.totals.payouts, draw1.totals.refunds) == (1_040, 0, 1_040)
    assert (draw1.totals.ggr, draw1.totals.rtp, draw1.held_at_end) == (0, None, 0)
    assert (draw3.totals.games_started, draw3.totals.games_finished) == (1, 0)
    assert draw3.held_at_end == 2_080
    assert draw3.totals.rtp == "0.0000"
    assert report.lifetime.stakes == 3_120
    assert report.month_to_date.payouts == 0
    # The sandbox's own report: the certification game, and nothing else.
    (played,) = [line for line in sandbox.lines if line.totals.games_started]
    assert played.variant == "vegas-draw1"
    assert (played.totals.games_finished, played.totals.stakes, played.totals.payouts) == (
        1,
        520,
        150,
    )
    assert (played.totals.ggr, played.totals.rtp) == (520 - 150, "0.2885")  # 150 / 520
    assert (sandbox.lifetime.stakes, sandbox.lifetime.payouts) == (520, 150)


def test_stakes_held_carry_over_days_without_play_and_into_later_ranges(
    fresh_container: Container,
) -> None:
    """Held at a day's end is everything staked by then minus everything settled by then,
    whether the stake was placed inside the range asked for or before it."""
    _scenario(World(fresh_container))  # draw-3: 2,080 staked today and still open
    with fresh_container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    today, day = _today(), timedelta(days=1)

    def held(start: date, end: date) -> list[tuple[date, int]]:
        with fresh_container.unit_of_work() as uow:
            report = finance.daily_report(uow, start, end, "GBP")
        return [
            (line.day, line.held_at_end) for line in report.lines if line.variant == "vegas-draw3"
        ]

    assert held(today - day, today + day) == [
        (today - day, 0),
        (today, 2_080),
        (today + day, 2_080),
    ]
    # A range that begins after the stake: held from its first day, a day with no row at all.
    assert held(today + day, today + 2 * day) == [(today + day, 2_080), (today + 2 * day, 2_080)]


def _lifetime_matches_the_days(container: Container) -> list[tuple[Any, ...]]:
    """lifetime_totals against the sums of daily_totals, currency by currency and variant by
    variant (a pair whose days were deleted has a lifetime of zeros); the lifetime's rows."""
    with container.unit_of_work() as uow:
        lifetime = uow.conn.execute(
            "SELECT * FROM lifetime_totals WHERE (games_started, games_finished, stakes, payouts,"
            " refunds, stakes_settled, certification_games) <> (0, 0, 0, 0, 0, 0, 0)"
            " ORDER BY currency, variant"
        ).fetchall()
        days = uow.conn.execute(
            "SELECT currency, variant, sum(games_started), sum(games_finished), sum(stakes),"
            " sum(payouts), sum(refunds), sum(stakes_settled), sum(certification_games)"
            "  FROM daily_totals GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
    assert [tuple(r) for r in lifetime] == [tuple(r) for r in days]
    return [tuple(r) for r in lifetime]


def test_the_lifetime_totals_are_every_day_s_sum_whoever_writes_the_days(
    fresh_container: Container,
) -> None:
    """The report's lifetime and held-before read lifetime_totals, which the database keeps as
    the sum of daily_totals whatever writes a day's row: the projector, a day deleted, an older
    day added; and the service login may only read it."""
    _scenario(World(fresh_container))
    with fresh_container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    assert _lifetime_matches_the_days(fresh_container)
    yesterday = _today() - timedelta(days=1)
    # an older day's money, as a rebuild would add it
    with fresh_container.background_unit_of_work() as uow:
        uow.conn.execute(
            "INSERT INTO daily_totals (day, currency, variant, games_started, stakes)"
            " VALUES (%s, 'GBP', 'golf', 2, 1000)",
            (yesterday,),
        )
        uow.commit()
    _lifetime_matches_the_days(fresh_container)
    with fresh_container.unit_of_work() as uow:
        before_today = finance.daily_report(uow, yesterday, yesterday, "GBP")
        up_to_today = finance.daily_report(uow, yesterday, _today(), "GBP")
    assert before_today.lifetime.stakes == 1_000  # today's stakes are after its end
    assert up_to_today.lifetime.stakes == 1_000 + 3_120
    golf = {line.day: line.held_at_end for line in up_to_today.lines if line.variant == "golf"}
    assert golf == {yesterday: 1_000, _today(): 1_000}
    with fresh_container.background_unit_of_work() as uow:
        uow.conn.execute("DELETE FROM daily_totals WHERE day = %s", (_today(),))
        uow.commit()
    assert _lifetime_matches_the_days(fresh_container) == [("GBP", "golf", 2, 0, 1_000, 0, 0, 0, 0)]
    with fresh_container.unit_of_work() as uow, pytest.raises(psycopg.errors.InsufficientPrivilege):
        uow.conn.execute("UPDATE lifetime_totals SET stakes = 0")


def _cashier_today(container: Container, currency: str = "GBP") -> tuple[int, int, int]:
    """Today's (deposits, withdrawals, depositing players) as the daily report has them."""
    with container.unit_of_work() as uow:
        report = finance.daily_report(uow, _today(), _today(), currency)
    (day,) = report.safer_gambling
    return day.deposits, day.withdrawals, day.depositing_players


def test_the_cashier_by_day_counts_each_transfer_once_and_each_depositor_once_a_day(
    fresh_container: Container,
) -> None:
    """The projector folds deposits and withdrawals after a checkpoint of its own, however its
    runs split the day: a player who deposits again later that day is no new depositor."""
    world = World(fresh_container)
    a = world.player(balance=1_000)
    world.player(balance=2_500)
    world.player(balance=700, currency="EUR")
    fresh_container.players.withdraw(OPERATOR, a.player_id, 300, f"out-{uuid.uuid4()}")
    with fresh_container.background_unit_of_work() as uow:
        assert finance.catch_up(uow) == 4  # three deposits and a withdrawal
    assert _cashier_today(fresh_container) == (3_500, 300, 2)
    fresh_container.players.deposit(OPERATOR, a.player_id, 50, f"again-{uuid.uuid4()}")
    with fresh_container.background_unit_of_work() as uow:
        assert finance.catch_up(uow) == 1
    with fresh_container.background_unit_of_work() as uow:
        assert finance.catch_up(uow) == 0
    assert _cashier_today(fresh_container) == (3_550, 300, 2)  # a again: no new depositor
    assert _cashier_today(fresh_container, "EUR") == (700, 0, 1)
    with fresh_container.unit_of_work() as uow:
        yesterday = finance.daily_report(uow, _today() - timedelta(days=1), _today(), "GBP")
    assert [(d.deposits, d.depositing_players) for d in yesterday.safer_gambling] == [
        (0, 0),
        (3_550, 2),
    ]


def test_a_money_event_committed_after_a_later_position_is_still_folded(
    fresh_container: Container,
) -> None:
    """Positions are taken at insert, not at commit: the projector reads only up to the log's
    horizon, so a deposit whose transaction commits after a later append (a play takes no lock)
    is folded, not stepped over by a checkpoint moved past it."""
    player = World(fresh_container).player()
    deposit = FundsDeposited(1_234, "GBP", f"late-{uuid.uuid4()}")
    meta = {"actor": "tester", "role": "operator"}
    with fresh_container.owner_unit_of_work() as late:
        late.events.append(
            player_stream(player.player_id), [NewEvent.of(deposit, meta)], expected_version=1
        )
        with fresh_container.owner_unit_of_work() as other:  # a later position, committed first
            other.events.append(
                f"player-{uuid.uuid4()}",
                [NewEvent.of(PlayerRegistered(str(uuid.uuid4()), "x", "GBP"), meta)],
                expected_version=0,
            )
            other.commit()
        folded: list[int] = []

        def project() -> None:
            with fresh_container.background_unit_of_work() as uow:
                folded.append(finance.catch_up(uow))

        projector = threading.Thread(target=project)
        projector.start()
        projector.join(0.5)
        assert projector.is_alive()  # waiting out the open transaction below the horizon
        late.commit()
    projector.join(10)
    assert folded == [1]
    assert _cashier_today(fresh_container) == (1_234, 0, 1)


def test_the_report_has_zero_rows_for_days_without_play(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    start = _today() - timedelta(days=2)
    with fresh_container.unit_of_work() as uow:
        report = finance.daily_report(uow, start, _today(), "GBP")
    assert [(line.day, line.variant) for line in report.lines] == [
        (start + timedelta(days=d), v) for d in range(3) for v in sorted(GAMES)
    ]  # every registered game, every day, played or not
    quiet = [line for line in report.lines if line.day < _today()]
    assert all(line.totals.stakes == 0 and line.held_at_end == 0 for line in quiet)
    assert all(line.totals.rtp is None for line in quiet)
    with fresh_container.unit_of_work() as uow:
        euros = finance.daily_report(uow, _today(), _today(), "EUR")
    assert all(line.totals.games_started == 0 for line in euros.lines)
    assert not euros.sandbox


def test_the_report_as_csv(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.background_unit_of_work() as uow:
        finance.catch_up(uow)
    with fresh_container.unit_of_work() as uow:
        text = finance.report_csv(finance.daily_report(uow, _today(), _today(), "GBP"))
    lines = text.splitlines()
    assert lines[0].split(",") == [
        "day", "variant", "currency", "games_started", "games_finished", "stakes", "payouts",
        "refunds", "ggr", "rtp", "held_at_end",
    ]  # fmt: skip
    assert f"{_today().isoformat()},vegas-draw1,GBP,1,1,1040,0,1040,0,,0" in lines
    assert lines[-1].startswith("lifetime,all,GBP,2,1,3120,0,1040,2080")
    # The certification game is on the sandbox's own report, labelled by its currency.
    with fresh_container.unit_of_work() as uow:
        text = finance.report_csv(finance.daily_report(uow, _today(), _today(), "XTS"))
    lines = text.splitlines()
    assert f"{_today().isoformat()},vegas-draw1,XTS,1,1,520,150,0,370,0.2885,0" in lines
    assert lines[-1].startswith("lifetime,all,XTS,1,1,520,150,0,370")


def test_a_day_reconciles_when_the_ledger_matches_the_events(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.unit_of_work() as uow:
        result = finance.reconcile(uow, _today())
    assert result["reconciled"] is True
    assert result["mismatches"] == []
    gbp, sandbox = result["currencies"]["GBP"], result["currencies"]["XTS"]
    no_duels = {"duel-fee": 0, "duel-prize": 0, "duel-refund": 0}
    assert (
        gbp["events"]
        == gbp["ledger"]
        == {
            "stake": 3_120,
            "winnings": 0,
            "refund": 1_040,
            **no_duels,
        }
    )
    assert (gbp["balanced"], gbp["sandbox"]) == (True, False)
    # The certification game's money reconciles on the sandbox's own line.
    expected = {"stake": 520, "winnings": 150, "refund": 0, **no_duels}
    assert sandbox["events"] == sandbox["ledger"] == expected
    assert (sandbox["balanced"], sandbox["sandbox"]) == (True, True)


def test_reconciliation_lists_a_tampered_transaction_by_game(
    fresh_container: Container, fresh_admin_conn: psycopg.Connection[Any]
) -> None:
    games = _scenario(World(fresh_container))
    with fresh_admin_conn.transaction():
        fresh_admin_conn.execute("SET LOCAL session_replication_role = replica")
        fresh_admin_conn.execute(
            "UPDATE ledger_transactions SET amount = 999"
            " WHERE cause_stream = %s AND kind = 'winnings'",
            (f"game-{games['won']}",),
        )
    with fresh_container.unit_of_work() as uow:
        result = finance.reconcile(uow, _today())
    assert result["reconciled"] is False
    assert result["mismatches"] == [
        {
            "game_id": games["won"],
            "event": f"game-{games['won']} v9",
            "check": "ledger-vs-events",
            "expected": "winnings 150 XTS",
            "found": "winnings 999 XTS",
        }
    ]
    assert result["currencies"]["XTS"]["balanced"] is False
    assert result["currencies"]["GBP"]["balanced"] is True


def test_a_stored_reconciliation_is_read_back(fresh_container: Container) -> None:
    _scenario(World(fresh_container))
    with fresh_container.audit_unit_of_work() as uow:
        stored = finance.store_reconciliation(uow, _today())
    with fresh_container.unit_of_work() as uow:
        found = finance.stored_reconciliation(uow, _today())
    assert found is not None
    assert found[1] == stored


def test_the_report_lists_every_game_with_its_own_money(
    fresh_container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A golf game collected with three column cards cleared and a pyramid game left open."""
    # The golf game's known seed; the pyramid game a seed of its own (the database keeps a
    # secret only for a commitment no other game has: migrations/0032).
    seeds, fresh = iter([bytes([2]) * 32]), shuffle.new_server_seed
    monkeypatch.setattr(shuffle, "new_server_seed", lambda: next(seeds, None) or fresh())
    world = World(fresh_container)
    golfer = world.player(balance=1_040)
    golf_id = uuid.UUID(world.game(golfer, stake=1_040, variant="golf").state.game_id)
    for _ in range(3):
        state = world.c.games.game(golf_id).state
        move = next(c for c in g.legal_commands(state) if isinstance(c, g.MoveCards))
        world.c.games.play(as_player(golfer.player_id), golf_id, move)
    done = world.c.games.collect(as_player(golfer.player_id), golf_id)
    paid = winnings(3, 1_040, GOLF.multiplier, GOLF.max_units)
    assert done.state.payout == paid == 104  # 3 x 1040 x 1.17 / 35 = 104.29, rounded down
    world.game(world.player(balance=520), stake=520, variant="pyramid")  # left open

    with fresh_container.background_unit_of_work() as uow:
        assert finance.catch_up(uow) == 3 + 2  # 2 stakes, 1 collect; the 2 players' deposits
    with fresh_container.unit_of_work() as uow:
        report = finance.daily_report(uow, _today(), _today(), "GBP")
    assert [line.variant for line in report.lines] == sorted(GAMES)
    by_variant = {line.variant: line for line in report.lines}
    golf, pyramid = by_variant["golf"], by_variant["pyramid"]
    assert (golf.totals.games_started, golf.totals.games_finished) == (1, 1)
    assert (golf.totals.stakes, golf.totals.payouts, golf.totals.refunds) == (1_040, paid, 0)
    assert (golf.totals.ggr, golf.totals.rtp, golf.held_at_end) == (1_040 - paid, "0.1000", 0)
    assert (pyramid.totals.games_started, pyramid.totals.games_finished) == (1, 0)
    assert (pyramid.totals.stakes, pyramid.held_at_end) == (520, 520)
    others = [line for line in report.lines if line.variant not in ("golf", "pyramid")]
    assert all(line.totals.games_started == 0 and line.held_at_end == 0 for line in others)
    assert (report.period.stakes, report.period.payouts) == (1_560, paid)
    lines = finance.report_csv(report).splitlines()
    assert f"{_today().isoformat()},golf,GBP,1,1,1040,104,0,936,0.1000,0" in lines
    assert f"{_today().isoformat()},pyramid,GBP,1,0,520,0,0,520,0.0000,520" in lines


def test_the_web_process_asks_background_work_to_fold_the_log_before_a_report(
    fresh_container: Container,
) -> None:
    """The web process holds neither the audit's login nor background work's, and may not write
    the finance projections (migrations/0042): a report asks the worker to fold the log and
    waits for it, so its figures are the log's as it stood when asked; with no worker to answer
    in time, 503 projection-unavailable (no figures behind the log)."""
    settings = fresh_container.settings
    world = World(fresh_container)
    player = world.player(balance=5_000)
    fresh_container.games.collect(
        as_player(player.player_id), uuid.UUID(world.game(player).state.game_id)
    )
    headers = {"Authorization": f"Bearer {staff(fresh_container, 'finance').credential}"}
    url = f"/v1/reports/daily?from={_today()}&to={_today()}&currency=GBP"
    answers = []
    for timeout, worker in ((1.0, False), (60.0, True)):
        web = build(
            replace(settings, projection_catch_up_timeout=timeout),
            migrate=False,
            audit_login=False,
            background_login=False,
        )
        try:
            client = create_app(web).test_client()
            if worker:
                with celery_processes(settings):
                    answers.append(client.get(url, headers=headers))
            else:
                answers.append(client.get(url, headers=headers))
        finally:
            web.close()
    unanswered, answered = answers
    assert unanswered.status_code == 503, unanswered.get_json()
    assert unanswered.get_json()["type"].endswith("/projection-unavailable")
    assert answered.status_code == 200, answered.get_json()
    assert answered.get_json()["period"]["stakes"] == 520
