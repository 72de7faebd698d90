"""Rebuild every projection from the event log, and say where the live tables differ.

The live tables (players, preferences, betting history, duels and their seats, account balances)
are written in the same
transaction as the events they reflect. This recomputes them from nothing but the log, with the
same pure functions the live path uses for history rows and the same event-to-ledger mapping,
compares, and (unless asked only to check) replaces what differs. It runs under the append lock,
so the log cannot move while it reads.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from events.catalog import (
    DUEL_EVENT_TYPES,
    GAME_EVENT_TYPES,
    AnyEvent,
    DuelOpened,
    PlayerRegistered,
    PreferencesChanged,
    WalletCallAnswered,
    WalletCallSent,
    WalletReviewResolved,
)
from service.core import duel_decider as d
from service.core import game_decider as g
from service.core import ledger
from service.services.unit_of_work import UnitOfWork
from service.storage.duels import DuelRow, SeatRow, duel_rows
from service.storage.projections import (
    HistoryRow,
    PlayerRow,
    Preferences,
    history_row,
)
from service.storage.rebuild import RebuildStore

BATCH = 5_000
CHECKPOINT = "projections-rebuild"


@dataclass(frozen=True, slots=True)
class Difference:
    table: str
    key: str
    live: Any
    rebuilt: Any


@dataclass(frozen=True, slots=True)
class RebuildReport:
    position: int  # the last log position read
    events: int
    differences: tuple[Difference, ...]
    applied: bool


@dataclass
class _Rebuilt:
    players: dict[uuid.UUID, PlayerRow]
    history: dict[uuid.UUID, HistoryRow]
    balances: dict[str, int]
    preferences: dict[uuid.UUID, tuple[Preferences, datetime]]
    duels: dict[uuid.UUID, tuple[DuelRow, tuple[SeatRow, ...]]]


def _fold_log(uow: UnitOfWork) -> tuple[_Rebuilt, int, int]:
    players: dict[uuid.UUID, PlayerRow] = {}
    preferences: dict[uuid.UUID, tuple[Preferences, datetime]] = {}
    games: dict[str, tuple[g.Game, datetime, datetime, datetime | None]] = {}
    balances: dict[str, int] = defaultdict(int)
    owners: dict[str, str] = {}  # player stream -> player id
    duels: dict[str, tuple[d.Duel, datetime | None]] = {}
    #: Each round's wallet stream: its bet as sent, and whether the wallet confirmed it.
    rounds: dict[str, tuple[WalletCallSent, bool]] = {}
    position = events = 0
    while batch := uow.events.read_all(after_position=position, limit=BATCH):
        for record in batch:
            events += 1
            kind = record.stream_id.split("-", 1)[0]
            if kind not in ("game", "player", "duel", "wallet"):
                continue  # streams of no projection (none in production; tests write some)
            event: AnyEvent = record.decode()
            if kind == "wallet":
                # Seamless mode: the mirror of what the operator's wallet confirmed.
                bet = rounds.get(record.stream_id)
                if isinstance(event, WalletCallSent) and bet is None:
                    rounds[record.stream_id] = bet = (event, False)
                if isinstance(event, WalletCallAnswered | WalletReviewResolved) and bet is not None:
                    placed, confirmed = bet
                    entry = ledger.wallet_entry_for(
                        event,
                        placed.player_id,
                        placed.currency,
                        confirmed,
                        (record.stream_id, record.version),
                    )
                    for account, amount in entry.postings if entry else ():
                        balances[account.account_id] += amount
                    if event.method == "bet" and ledger.wallet_applied(event):
                        rounds[record.stream_id] = (placed, True)
                continue
            if kind == "duel" and isinstance(event, DUEL_EVENT_TYPES):
                duel, _ = duels.get(record.stream_id, (d.INITIAL, None))
                duel = d.evolve(duel, event)
                duels[record.stream_id] = (duel, record.recorded_at if duel.is_over else None)
                opened = duel.opened
                if isinstance(event, DuelOpened):
                    for account in (
                        ledger.duel_pot(event.duel_id, event.currency),
                        ledger.house_rake(event.currency),
                    ):
                        balances.setdefault(account.account_id, 0)
                if opened is not None:
                    duel_entry = ledger.duel_entry_for(
                        event, opened.duel_id, opened.currency, record.stream_id, record.version
                    )
                    for account, amount in duel_entry.postings if duel_entry else ():
                        balances[account.account_id] += amount
                continue
            game_id: str | None = None
            if kind == "game" and isinstance(event, GAME_EVENT_TYPES):
                state, started, _, ended = games.get(
                    record.stream_id, (g.INITIAL, record.recorded_at, record.recorded_at, None)
                )
                state = g.evolve(state, event)
                if state.is_over and ended is None:
                    ended = record.recorded_at
                games[record.stream_id] = (state, started, record.recorded_at, ended)
                player_id, game_id = state.player_id, state.game_id
            else:
                if isinstance(event, PlayerRegistered):
                    owners[record.stream_id] = event.player_id
                    pid = uuid.UUID(event.player_id)
                    players[pid] = PlayerRow(
                        pid, event.external_ref, event.currency, record.recorded_at
                    )
                    for account in (
                        ledger.player_account(event.player_id, event.currency),
                        *ledger.house_accounts(event.currency),
                    ):
                        balances.setdefault(account.account_id, 0)
                player_id = owners.get(record.stream_id, "")
                if isinstance(event, PreferencesChanged) and player_id:
                    chosen = Preferences(event.sound, event.colour, event.card_back)
                    preferences[uuid.UUID(player_id)] = (chosen, record.recorded_at)
            entry = ledger.entry_for(event, record.stream_id, record.version, player_id, game_id)
            if entry is not None:
                for account, amount in entry.postings:
                    balances[account.account_id] += amount
        position = batch[-1].position
    history = {}
    for state, started, last, ended in games.values():
        if state.info is not None and state.info.duel_id is not None:
            continue  # a seat's game is its duel's, not a line of betting history
        row = history_row(state, started, last, ended)
        history[row.game_id] = row
    duel_table = {}
    for duel, ended_at in duels.values():
        if duel.opened is not None:
            duel_row, seats = duel_rows(duel, ended_at)
            duel_table[duel_row.duel_id] = (duel_row, tuple(seats))
    rebuilt = _Rebuilt(players, history, dict(balances), preferences, duel_table)
    return rebuilt, position, events


def _live(uow: UnitOfWork) -> _Rebuilt:
    return _Rebuilt(*RebuildStore(uow.conn).live())


def _compare(live: dict[Any, Any], rebuilt: dict[Any, Any], table: str) -> list[Difference]:
    keys = sorted(set(live) | set(rebuilt), key=str)
    return [
        Difference(table, str(k), live.get(k), rebuilt.get(k))
        for k in keys
        if live.get(k) != rebuilt.get(k)
    ]


def rebuild(uow: UnitOfWork, *, apply: bool = True) -> RebuildReport:
    """Recompute the projections from the log in this unit of work; replace differing rows
    when ``apply`` (and commit), else only report them."""
    uow.lock_for_write()
    rebuilt, position, events = _fold_log(uow)
    live = _live(uow)
    differences = (
        _compare(live.players, rebuilt.players, "players")
        + _compare(live.history, rebuilt.history, "game_history")
        + _compare(live.balances, rebuilt.balances, "account_balances")
        + _compare(live.preferences, rebuilt.preferences, "player_preferences")
        + _compare(live.duels, rebuilt.duels, "duels")
    )
    if apply:
        _replace(uow, differences)
        RebuildStore(uow.conn).read_to(CHECKPOINT, position)
        uow.commit()
    return RebuildReport(position, events, tuple(differences), apply)


def _replace(uow: UnitOfWork, differences: list[Difference]) -> None:
    store = RebuildStore(uow.conn)
    for diff in differences:
        if diff.table == "players":
            store.restore_player(uuid.UUID(diff.key))
        elif diff.table == "game_history":
            store.restore_history(uuid.UUID(diff.key), diff.rebuilt)
        elif diff.table == "duels":
            store.delete_duel(uuid.UUID(diff.key))
            if diff.rebuilt is not None:
                row, seat_rows = diff.rebuilt
                uow.duels.save(row, list(seat_rows))
        elif diff.table == "player_preferences":
            player_id = uuid.UUID(diff.key)
            store.delete_preferences(player_id)
            if diff.rebuilt is not None:
                chosen, updated_at = diff.rebuilt
                uow.projections.save_preferences(player_id, chosen, updated_at)
        else:
            store.restore_balance(diff.key)
