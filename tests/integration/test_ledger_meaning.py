"""What a ledger write means, checked by the database (issue 36, migrations/0028): the SQL copy
of the ledger mapping (ledger_entry_of) agrees with service/core/ledger.py's for every event the
services record and every event type of the catalog, and post_transaction posts nothing else."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from events import catalog
from events.catalog import AnyEvent, DuelEvent, DuelOpened, PlayerRegistered, StakePlaced
from events.codec import decode
from events.postgres import append_params
from events.records import NewEvent
from service.bootstrap import Container
from service.core import game_decider as g
from service.core import ledger
from service.core.clock import parse_instant
from service.core.ledger import Entry
from service.core.streams import id_of, is_duel, is_game, is_player, is_wallet, kind_of
from tests.dbtools import ScratchDatabase, move_db_clock
from tests.integration.conftest import OPERATOR, World, as_player
from tests.unit.test_events import EXAMPLES

Conn = psycopg.Connection[tuple[Any, ...]]

MONEY_TYPES = {
    "FundsDeposited",
    "FundsWithdrawn",
    "StakePlaced",
    "Collected",
    "Voided",
    "SeatTaken",
    "DuelSettled",
    "DuelCancelled",
    "BalanceCorrected",
}


#: One of each player and control event (tests/unit/test_events.py has the games' and duels').
PLAYER_EXAMPLES: list[AnyEvent] = [
    PlayerRegistered(str(uuid.uuid4()), "ext-1", "GBP"),
    catalog.FundsDeposited(5_000, "GBP", "t-1"),
    catalog.FundsWithdrawn(1_000, "GBP", "t-2"),
    catalog.PreferencesChanged(True, "green", 3),
    catalog.LimitChanged("deposit-day", None, 10_000, "2026-11-29T00:00:00.000000Z"),
    catalog.PlayerExcluded("24h", "time-out", "2026-11-30T00:00:00.000000Z"),
    catalog.RealityCheckAcknowledged(
        "2026-11-29T00:00:00.000000Z", "2026-11-29T01:00:00.000000Z", 3600, 520, 0, -520
    ),
    catalog.BalanceCorrected(
        str(uuid.uuid4()),
        1,
        (catalog.FindingNamed("hash-chain", "game-x v1", "a", "b"),),
        "forged winnings taken back",
        700,
        "GBP",
        "debit",
        "house-payouts",
    ),
    catalog.GamingSwitched("all", "all", False, "maintenance"),
]

#: One of each wallet event (seamless mode): a round's bet confirmed, flagged, for review.
ROUND = str(uuid.uuid4())
BET = str(uuid.uuid4())
WALLET_EXAMPLES: list[AnyEvent] = [
    catalog.WalletCallSent(
        ROUND,
        str(uuid.uuid4()),
        "bet",
        BET,
        None,
        520,
        520_000,
        "GBP",
        "vegas-draw1",
        False,
        str(uuid.uuid4()),
        "0" * 64,
        1,
        "1" * 64,
    ),
    catalog.WalletCallAnswered(
        BET,
        "bet",
        str(uuid.uuid4()),
        520,
        "GBP",
        "confirmed",
        "RS_OK",
        100_000,
        200,
        None,
        '{"status":"RS_OK"}',
        "c2ln",
    ),
    catalog.WalletPendingFlagged(BET, 3600),
    catalog.WalletReviewMarked(BET, "the wallet answered RS_ERROR_DUPLICATE_TRANSACTION"),
    catalog.WalletReviewResolved(BET, "bet", "settled", 520, "GBP", "applied, says the operator"),
]


def _python_entry(records: list[tuple[int, str, AnyEvent]], stream: str, at: int) -> Entry | None:
    """core/ledger's answer for the event at version ``at``, given the stream as the services
    read it (a player's id from its registration, a game's from its stake, a duel's opening)."""
    first = records[0][2]
    event = next(e for v, _, e in records if v == at)
    if is_duel(stream):
        if not isinstance(first, DuelOpened) or not isinstance(event, catalog.DUEL_EVENT_TYPES):
            return None
        duel_event: DuelEvent = event
        return ledger.duel_entry_for(duel_event, first.duel_id, first.currency, stream, at)
    if is_game(stream):
        if not isinstance(first, StakePlaced):
            return None
        return ledger.entry_for(event, stream, at, first.player_id, first.game_id)
    if is_player(stream) and isinstance(first, PlayerRegistered):
        return ledger.entry_for(event, stream, at, first.player_id, None)
    if is_wallet(stream):
        if not (
            isinstance(first, catalog.WalletCallSent)
            and first.round_id == id_of(stream)
            and isinstance(event, catalog.WalletCallAnswered | catalog.WalletReviewResolved)
        ):
            return None
        bet_confirmed = any(
            isinstance(e, catalog.WalletCallAnswered | catalog.WalletReviewResolved)
            and ledger.wallet_applied(e)
            and e.transaction_uuid == first.transaction_uuid
            for v, _, e in records
            if v < at
        )
        return ledger.wallet_entry_for(
            event, first.player_id, first.currency, bet_confirmed, (stream, at)
        )
    return None


def _sql_entry(conn: Conn, stream: str, version: int) -> tuple[Any, ...] | None:
    row = conn.execute(
        "SELECT client_transaction_id, kind, currency, amount, accounts, amounts"
        "  FROM ledger_entry_of(%s, %s)",
        (stream, version),
    ).fetchone()
    return tuple(row) if row else None


def _as_row(entry: Entry | None) -> tuple[Any, ...] | None:
    if entry is None:
        return None
    return (
        entry.client_transaction_id,
        entry.kind,
        entry.currency,
        entry.amount,
        [a.account_id for a, _ in entry.postings],
        [amount for _, amount in entry.postings],
    )


def _log(conn: Conn) -> dict[str, list[tuple[int, str, AnyEvent]]]:
    streams: dict[str, list[tuple[int, str, AnyEvent]]] = {}
    for stream, version, type_, schema, data in conn.execute(
        "SELECT stream_id, version, type, schema_version, data FROM events ORDER BY position"
    ):
        streams.setdefault(stream, []).append((version, type_, decode(type_, schema, data)))
    return streams


@pytest.fixture
def money_world(fresh_container: Container) -> Container:
    """Every kind of money the services move: deposits and a withdrawal, stakes, winnings of a
    won certification game and of a real one, a void's refund, a duel settled with its rake and
    one cancelled with its refund."""
    c = fresh_container
    world = World(c)
    a = world.player(balance=50_000)
    c.players.withdraw(OPERATOR, a.player_id, 1_000, f"out-{uuid.uuid4()}")
    won = world.easy_game(a)
    gid = uuid.UUID(won.state.game_id)
    for _ in range(2):
        c.games.play(as_player(a.player_id), gid, g.Draw())
        c.games.play(as_player(a.player_id), gid, g.MoveCards("waste", "foundation"))
    c.games.collect(as_player(a.player_id), gid)
    voided = world.game(a)
    c.games.void(OPERATOR, uuid.UUID(voided.state.game_id), "test")
    b = world.player(balance=50_000)
    # a duel of two, both seats dealt and collected at once: settled, the pot to the winner(s)
    duel = c.duels.join(as_player(a.player_id), a.player_id, 500)
    duel_id = uuid.UUID(duel.state.opened.duel_id)  # type: ignore[union-attr]
    c.duels.join(as_player(b.player_id), b.player_id, 500)
    for p in (a, b):
        c.duels.deal(as_player(p.player_id), duel_id, p.player_id)
        c.duels.play(as_player(p.player_id), duel_id, p.player_id, g.Collect())
    # a duel nobody else joins: cancelled when its time to fill has passed, the fee refunded
    lonely = c.duels.join(as_player(b.player_id), b.player_id, 200)
    fill_by = lonely.state.opened.fill_by  # type: ignore[union-attr]
    later = parse_instant(fill_by) + timedelta(seconds=1)
    c.duels.clock = lambda: later
    move_db_clock(c.settings.migration_database_url or "", later)  # the database's rule's clock
    c.duels.sweep()
    # an operator's corrections of a hold the audit recorded: one out of the wallet, one in
    finding = {"check": "ledger", "location": "posting 1", "expected": "a", "found": "b"}
    with c.audit_unit_of_work() as uow:
        hold = uow.significant.record(
            "withdrawal-held", "audit", {"findings": [finding]}, player_id=a.player_id
        )
        uow.commit()
    c.corrections.correct(OPERATOR, a.player_id, hold, "taken back", amount=300)
    c.corrections.correct(
        OPERATOR, a.player_id, hold, "restored", amount=200, direction="credit", account="cashier"
    )
    return c


@pytest.fixture
def owner(fresh_database: ScratchDatabase) -> Iterator[Conn]:
    with psycopg.connect(fresh_database.owner_url, autocommit=True) as conn:
        yield conn


def test_the_sql_mapping_agrees_with_core_ledger_on_every_recorded_event(
    money_world: Container, owner: Conn
) -> None:
    seen: set[str] = set()
    for stream, records in _log(owner).items():
        for version, type_, _ in records:
            python = _as_row(_python_entry(records, stream, version))
            assert _sql_entry(owner, stream, version) == python, (stream, version, type_)
            if python is not None:
                seen.add(type_)
    assert seen == MONEY_TYPES  # every kind of money was moved, and the two agree on each


def test_every_catalog_event_type_moves_money_only_where_both_say_so(owner: Conn) -> None:
    """Each example of the catalog appended after an honest first event of each kind of stream:
    core/ledger and the SQL give the same answer (for most types: no money)."""
    player, game, duel = (str(uuid.uuid4()) for _ in range(3))
    firsts: dict[str, AnyEvent] = {
        f"player-{player}": PlayerRegistered(player, f"ext-{player}", "GBP"),
        f"game-{game}": StakePlaced(
            game, player, "vegas-draw1", 520, "GBP", "5", 52, "gbp", 1, "r"
        ),
    }
    examples = {type(e).TYPE: e for e in [*EXAMPLES, *PLAYER_EXAMPLES, *WALLET_EXAMPLES]}
    opened = next(e for e in EXAMPLES if isinstance(e, DuelOpened))
    firsts[f"duel-{duel}"] = replace(opened, duel_id=duel)
    bet = WALLET_EXAMPLES[0]
    assert isinstance(bet, catalog.WalletCallSent)
    firsts[f"wallet-{ROUND}"] = replace(bet, player_id=player)
    assert set(examples) == {cls.TYPE for cls in catalog.ALL_EVENT_TYPES}
    for type_, example in examples.items():
        for stream, first in firsts.items():
            owner.execute("BEGIN")
            try:
                _append(owner, stream, [first, example])
                records = [(1, type(first).TYPE, first), (2, type_, example)]
                python = _as_row(_python_entry(records, stream, 2))
                sql = _sql_entry(owner, stream, 2)
                if python is not None and sql is None:
                    # The SQL refuses what does not follow from the stream (an example's
                    # figures are not this stream's); the services never record such an event.
                    assert type_ in MONEY_TYPES
                else:
                    assert sql == python, (stream, type_)
            finally:
                owner.execute("ROLLBACK")


def _append(conn: Conn, stream: str, events: list[AnyEvent]) -> None:
    params = append_params(stream, [NewEvent.of(e, {}) for e in events], 0)
    conn.execute("SELECT FROM append_events(%s, 0, %s)", (stream, params["events"]))


def test_each_stream_kind_has_the_catalog_s_event_types(owner: Conn) -> None:
    """migrations/0031 stream_event_types, the SQL copy of the catalog's lists, which
    record_events refuses any other type by."""
    for kind, types in (
        ("game", catalog.GAME_EVENT_TYPES),
        ("duel", catalog.DUEL_EVENT_TYPES),
        ("player", catalog.PLAYER_EVENT_TYPES),
        ("controls", catalog.CONTROL_EVENT_TYPES),
        ("wallet", catalog.WALLET_EVENT_TYPES),
    ):
        found = owner.execute("SELECT stream_event_types(%s)", (kind,)).fetchone()
        assert found == ([t.TYPE for t in types],), kind
    names = ("game-" + str(uuid.uuid4()), "duel-" + str(uuid.uuid4()), "gaming-controls")
    kinds = [owner.execute("SELECT stream_kind(%s)", (n,)).fetchone() for n in names]
    assert kinds == [("game",), ("duel",), ("controls",)]
    assert owner.execute("SELECT stream_kind('payouts-manual')").fetchone() == (None,)


def test_stream_kind_answers_as_streams_kind_of_for_names_near_a_service_stream_s(
    owner: Conn,
) -> None:
    """migrations/0035 stream_kind, which reads a name without 0031's bounded regular expressions
    (a LIKE for the length and the hyphens' places, an unbounded class for the characters, a
    count of hyphens): the same kind as service.core.streams.kind_of for each service name and
    for every name one character away from one (replaced, inserted or dropped), upper-cased,
    braced, without hyphens, with a hyphen moved or a line end after it."""
    names = ["", "gaming-controls", "gaming-controls\n", "game-", "duel-", "player-"]
    swaps = "0af9gzA-_ \n{}é"
    for prefix in ("game-", "duel-", "player-", "wallet-", "Game-", "games-", "playe-"):
        good = prefix + str(uuid.uuid4())
        names += [good, good.upper(), good + "\n", prefix + uuid.uuid4().hex]
        names.append(prefix + "{" + good[len(prefix) :] + "}")
        at = len(prefix) + 8  # the first hyphen, moved one place on
        names.append(good[:at] + good[at + 1] + "-" + good[at + 2 :])
        for i in range(len(good) + 1):
            for c in swaps:
                names += [good[:i] + c + good[i + 1 :], good[:i] + c + good[i:]]
            names.append(good[:i] + good[i + 1 :])
    rows = owner.execute(
        "SELECT n, stream_kind(n) FROM unnest(%s::text[]) AS t(n)", (names,)
    ).fetchall()
    assert len(rows) == len(names)
    wrong = [(name, kind) for name, kind in rows if kind != kind_of(name)]
    assert wrong == []
    assert {kind_of(n) for n in names} == {None, "game", "duel", "player", "controls", "wallet"}
