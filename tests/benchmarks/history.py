"""A fast loader of past history, for benchmarks that need a big log (issue 25: does the cost
stay flat as the log grows?). ``python -m tests.benchmarks.history --events N`` loads about N
events into a scratch database (kept, its URLs printed); ``load_history`` does it for a suite.

What it writes, exactly as the service would have written it over many past days:

- players, each opened by an operator (PlayerRegistered, their wallet and the house's accounts
  in their currency, the players row) and paying in before a deal their wallet cannot cover
  (FundsDeposited), now and then taking money out (FundsWithdrawn);
- games of every game a player deals alone, each dealt as the service deals (a seed, its
  commitment, sometimes a client seed), played by random legal commands through the pure
  decider, one request a command, and ended: mostly collected by the player, some collected by
  the idle collector a day after the last command (reason timeout, with its idempotency key),
  some voided by an operator (the stake refunded, a significant event). Each game's stake
  and winnings (or refund) are posted, big wins logged, its sealed seed kept encrypted under
  the service's key, its betting-history row and its last snapshot (MACed) written;
- classic duels (``klondike-duel``), two seats at a time at a few tables of regulars: opened
  and joined (each fee into the duel's pot), each seat's game dealt from the duel's committed
  seed and played against its five minutes on the server's clock, every seat stopped, and the
  duel settled (prize and rake posted, the seed revealed), with the duel's rows;
- the finance projector's daily totals and cashier by day, caught up to the end of the log, as
  beat keeps them;
- checkpoints of the log signed by the service's key every CHECKPOINT_EVERY of the history's
  time (when anything was appended), and a last one at its end, as beat signs them.

Games are generated once per game (and currency) as templates, a few dozen of each, by the same
pure deciders the service uses (service.core.game_decider, duel_decider); each game of the
history is a template with new ids, a new player and new times (the seed and so the deck are
the template's: several games share a commitment, which nothing checks and nothing forbids).
Duels are decided afresh, their events carrying their times.

How, and why the result cannot be told from a real history. Everything is computed here, in
log order, then streamed into the tables with COPY (a few buffered statements a table, never
one per event): each event's position (the log's next), its stream version, its time (one
timestamp an append, as append_events stamps a request's events; the log's times never go
back), its previous hash and hash (events.chain's encoding, which append_events computes in
SQL); each posting's balance before and after in posting order; each checkpoint's running hash,
heads and signature. So every check the service makes holds: game verification and replay,
duel verification, each player stream against the cashier's postings, the ledger chained from
zero and balanced, the log against its checkpoints (placement and back-dating included),
ledger causes and read-model rows, the rebuild of the projections, the reconciliation of any day
(tests/integration/test_history_loader.py proves them on a small history). A real history has
no append at a time not its own: the service's functions stamp the server's clock and refuse
to write into the past (append_events, post_transaction, add_checkpoint, store_reconciliation),
so the loader writes the tables directly, as their owner. Logged in as a superuser it sets
``session_replication_role = replica`` on its own sessions, which switches off the row triggers
for them only (the append-only guards, which a COPY does not trip anyway, the foreign keys and
the deferred double-entry checks, whose per-row lookups would cost more than the load); it
then checks what they would have checked with a few set-based queries (every transaction has
postings summing to zero, every posting and balance names an account, every head its
checkpoint, every seat its duel). Logged in as the owner (not a superuser) it leaves every
trigger on. Constraints, unique indexes and CHECKs hold either way. The identity columns are
written with the values computed here (COPY writes given identity values) and their sequences
set past them, so the service's next append and posting follow on; the tables are then
vacuumed and analysed, as autovacuum would have left them.

Not written (nothing the benchmarks read depends on them): player sessions and keys beyond the
operator's one key, the idempotency keys of player requests, safer-gambling limits,
exclusions and reality checks, certification games, duels cancelled or timed out by the sweep.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
import os
import queue
import random
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import orjson
import psycopg
from psycopg import sql

from events import codec
from events.anchor import START, Checkpoint, Signer, heads_digest
from events.catalog import (
    Collected,
    DuelEvent,
    DuelOpened,
    DuelSettled,
    FundsDeposited,
    FundsWithdrawn,
    GameEvent,
    PlayerRegistered,
    SeatTaken,
    StakePlaced,
)
from events.chain import GENESIS
from events.json_text import canonical_json
from service.bootstrap import Container
from service.core import duel_decider as d
from service.core import game_decider as g
from service.core import ledger, scoring, shuffle, snapshots
from service.core.paytable import Paytable, default_paytables
from service.core.streams import duel_stream, game_stream, player_stream
from service.games import STANDALONE, game_named
from service.games.klondike import KLONDIKE_DUEL
from service.runtime import database as db
from service.runtime.config import PROJECT_ROOT
from service.services.checkpoints import embedded_signing_key, load_keys
from service.services.finance_books import COUNTERS
from service.services.seed_vault import SeedVault, embedded_key
from service.storage.duels import duel_rows
from service.storage.projections import HISTORY_COLUMNS, history_fields
from tests.dbtools import OWNER_ROLE, SERVICE_ROLE, server_admin_url

#: Events of the history a day, and a player's share of them: a longer history has more days
#: and more players, each as busy as in a shorter one.
EVENTS_PER_DAY = 100_000
EVENTS_PER_PLAYER = 2_000
#: Templates generated per game (and per currency, fewer for the lesser ones).
TEMPLATES_PER_GAME = 24
#: The share of the events in duels, and the players at each duel table.
DUEL_SHARE = 0.04
DUEL_REGULARS = 3
#: How a game ends besides its player's collect.
VOID_SHARE = 0.01
IDLE_SHARE = 0.02
#: How often beat signs a checkpoint of the history (when anything was appended since).
CHECKPOINT_EVERY = timedelta(minutes=15)
#: Events a COPY batch holds before it is sent.
BATCH_EVENTS = 100_000
#: Players' currencies, by share.
CURRENCIES = (("GBP", 0.8), ("EUR", 0.1), ("USD", 0.1))
MAX_COMMANDS = 120
#: Who the history's operator is (a staff key, as the API names staff in events).
OPERATOR_ROLE = "operator"
IDLE_COLLECTOR = ("idle-collector", "system")
BIG_WIN_THRESHOLD = 100_000

US = 1_000_000
#: How far apart the statements of one request run (one append to the next, the ledger after
#: the appends): a request's rows are stamped a few tens of microseconds apart, as in life.
APPEND_STEP = 40
LEDGER_DELAY = 120
SIDE_DELAY = 150

PLACEHOLDER = "00000000-0000-4000-8000-000000000000"

# --- times ---------------------------------------------------------------------------------------

_SECONDS: dict[int, tuple[str, str]] = {}


def _stamp(at: int) -> tuple[str, str]:
    """A time in microseconds since the epoch as the hash chain writes it (events.chain) and as
    COPY reads a timestamptz."""
    second, micro = divmod(at, US)
    base = _SECONDS.get(second)
    if base is None:
        moment = datetime.fromtimestamp(second, UTC)
        base = (moment.strftime("%Y-%m-%dT%H:%M:%S"), moment.strftime("%Y-%m-%d %H:%M:%S"))
        if len(_SECONDS) > 200_000:
            _SECONDS.clear()
        _SECONDS[second] = base
    return f"{base[0]}.{micro:06d}Z", f"{base[1]}.{micro:06d}+00"


def _copy_time(at: int) -> Raw:
    return Raw(_stamp(at)[1])


def _moment(at: int) -> datetime:
    return datetime.fromtimestamp(at // US, UTC).replace(microsecond=at % US)


def _micros(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * US + delta.microseconds


def _day(at: int) -> date:
    return datetime.fromtimestamp(at // US, UTC).date()


# --- COPY text --------------------------------------------------------------------------------


def _text(value: str) -> str:
    """A text value in COPY's text format (JSON texts hold no tab or newline: only backslashes
    need doubling)."""
    return value.replace("\\", "\\\\")


class Raw(str):
    """A value already in COPY's text format (a time from _copy_time)."""


def _field(value: object) -> str:
    if isinstance(value, Raw):
        return value
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")
    if isinstance(value, bytes):
        return "\\\\x" + value.hex()
    return _text(str(value)).replace("\t", "\\t").replace("\n", "\\n")


def _line(*values: object) -> str:
    return "\t".join(_field(v) for v in values) + "\n"


#: Each table the loader writes, with the columns its COPY names (in the order it writes them:
#: a table after the tables its rows refer to).
TABLES: dict[str, str] = {
    "api_keys": "key_id, name, role, key_hash, created_at",
    "players": "player_id, external_ref, currency, created_at",
    "accounts": "account_id, kind, currency, player_id, created_at",
    "events": (
        "position, stream_id, version, event_id, type, schema_version, data, metadata, "
        "recorded_at, prev_hash, hash"
    ),
    "ledger_transactions": (
        "transaction_id, client_transaction_id, kind, fingerprint, currency, amount, "
        "cause_stream, cause_version, request_id, created_at"
    ),
    "postings": (
        "posting_id, transaction_id, account_id, amount, balance_before, balance_after, "
        "cause_stream, cause_version, created_at"
    ),
    "game_history": HISTORY_COLUMNS,
    "game_snapshots": "stream_id, version, state, mac, started_at, last_event_at",
    "game_seeds": "game_id, key_id, ciphertext, kind, created_at",
    "idempotency_keys": "scope, key, fingerprint, result, created_at",
    "significant_events": (
        "kind, occurred_at, actor, game_id, player_id, amount, currency, details"
    ),
    "duels": (
        "duel_id, status, currency, fee, seats, taken, pot, rake, certification, opened_at, "
        "fill_by, deal_by, ended_at, version"
    ),
    "duel_seats": (
        "duel_id, seat, player_id, game_id, deadline, points, end_reason, payout, refund"
    ),
    "log_checkpoints": "seq, position, message, signature, key_id, requested_by, created_at",
    "checkpoint_heads": "seq, stream_id, version, hash",
    "account_balances": "account_id, kind, currency, balance",
    "daily_totals": (
        "day, currency, variant, games_started, games_finished, stakes, payouts, refunds, "
        "stakes_settled, certification_games"
    ),
    "daily_cashier": "day, currency, deposits, withdrawals, depositors",
    "daily_depositors": "day, currency, player_id",
    "projection_checkpoints": "name, position, updated_at",
}

# --- what a request writes -----------------------------------------------------------------------


#: One event as stored: (type, schema version, data as canonical JSON, that JSON for COPY).
Encoded = tuple[str, int, str, str]


def _encoded(event: Any) -> Encoded:
    type_name, version, data = codec.encode(event)
    text = canonical_json(data)
    return type_name, version, text, _text(text)


@dataclass(slots=True)
class Append:
    """One call of append_events: a stream's new events and the request's metadata."""

    stream: str
    events: Sequence[Encoded]
    meta: str  # canonical JSON


@dataclass(slots=True)
class Write:
    """One request's transaction: appends (recorded ``APPEND_STEP`` apart from ``at``), ledger
    entries (with the request id the service posts them under), accounts opened, rows of the
    other tables as COPY lines, and increments of the daily totals."""

    at: int
    appends: list[Append] = field(default_factory=list)
    entries: list[tuple[ledger.Entry, str | None]] = field(default_factory=list)
    accounts: list[ledger.Account] = field(default_factory=list)
    rows: list[tuple[str, str]] = field(default_factory=list)
    totals: list[tuple[date, str, str, str, int]] = field(default_factory=list)
    #: The cashier's: (day, currency, player id, deposited, withdrawn).
    cashier: list[tuple[date, str, str, int, int]] = field(default_factory=list)


def _meta(actor: str, role: str, paytable: tuple[str, int] | None, rules: str | None) -> str:
    """The request's event metadata (service.core.context.event_metadata), a new request id."""
    meta: dict[str, Any] = {"actor": actor, "role": role, "request_id": str(uuid.uuid4())}
    if paytable is not None:
        meta["paytable"] = {"id": paytable[0], "version": paytable[1]}
    if rules is not None:
        meta["rules_version"] = rules
    return canonical_json(meta)


def _request_id(meta: str) -> str:
    return str(orjson.loads(meta)["request_id"])


# --- game templates ------------------------------------------------------------------------------

Ending = Literal["player", "timeout", "void"]


@dataclass(frozen=True, slots=True)
class Template:
    """A game played once by the deciders, to be written many times with new ids and times."""

    variant: str
    currency: str
    stake: int
    rules_version: str
    placed: StakePlaced  # with placeholder ids
    steps: tuple[tuple[Encoded, ...], ...]  # one a request: the deal, each command, the end
    ending: Ending
    final: g.Game
    snapshot: tuple[int, g.Game] | None  # the step that wrote the last snapshot, and its state
    money: tuple[tuple[int, int, GameEvent], ...]  # (step, version, event) of what moves money
    seed: bytes
    events: int


def _stake(rng: random.Random, table: Paytable) -> int:
    """Mostly everyday stakes (up to 104.00), now and then a high roller's."""
    everyday = [s for s in table.ladder if s <= 10_400]
    high = [s for s in table.ladder if s > 10_400]
    return rng.choice(high if high and rng.random() < 0.03 else everyday)


def make_template(variant: str, table: Paytable, rng: random.Random) -> Template:
    """Deal as the service deals, play random legal commands, end as a player, the idle
    collector or an operator would."""
    rules = game_named(variant)
    seed = rng.randbytes(shuffle.SEED_BYTES)
    client_seed = f"{rng.getrandbits(64):016x}" if rng.random() < 0.3 else None
    deck = shuffle.derive_deck(seed, client_seed, rules.decks)
    start = g.StartGame(
        game_id=PLACEHOLDER,
        player_id=PLACEHOLDER,
        variant=variant,
        stake=_stake(rng, table),
        paytable=table,
        deck=deck,
        shuffle_algorithm=shuffle.ALGORITHM,
        seed_commitment=shuffle.commitment(seed),
        client_seed=client_seed,
    )
    sealed = g.hidden_cards(rules, deck)
    redeals = shuffle.redealer(seed, client_seed)
    steps: list[list[GameEvent]] = [g.decide(g.INITIAL, start)]
    state = g.fold(steps[0])
    snapshot: tuple[int, g.Game] | None = (0, state) if snapshots.due(0, state.version) else None
    for _ in range(rng.randint(10, MAX_COMMANDS)):
        options = [c for c in g.legal_commands(state) if not isinstance(c, g.Collect)]
        if not options:
            break
        new = g.decide(state, rng.choice(options), sealed, redeals)
        before, state = state.version, g.fold(new, state)
        steps.append(new)
        if snapshots.due(before, state.version):
            snapshot = (len(steps) - 1, state)
    roll = rng.random()
    ending: Ending = "player"
    end: g.Command = g.Collect("player", server_seed=seed.hex())
    if roll < VOID_SHARE and state.status != "complete":
        ending, end = "void", g.Void("voided by the operator", server_seed=seed.hex())
    elif roll < VOID_SHARE + IDLE_SHARE:
        ending, end = "timeout", g.Collect("timeout", server_seed=seed.hex())
    new = g.decide(state, end)
    before, state = state.version, g.fold(new, state)
    steps.append(new)
    if snapshots.due(before, state.version):
        snapshot = (len(steps) - 1, state)
    money = []
    version = 0
    for index, events in enumerate(steps):
        for event in events:
            version += 1
            if ledger.game_movement(event) is not None:
                money.append((index, version, event))
    placed = steps[0][0]
    assert isinstance(placed, StakePlaced)
    encoded = tuple(tuple(_encoded(e) for e in events) for events in steps)
    return Template(
        variant=variant,
        currency=table.currency,
        stake=start.stake,
        rules_version=rules.rules_version,
        placed=placed,
        steps=encoded,
        ending=ending,
        final=state,
        snapshot=snapshot,
        money=tuple(money),
        seed=seed,
        events=state.version,
    )


def make_templates(
    paytables: Mapping[str, Paytable], per_game: int, rng: random.Random
) -> dict[str, list[Template]]:
    """Templates of every game a player deals alone, by currency (fewer in the lesser ones)."""
    found: dict[str, list[Template]] = {}
    for currency, share in CURRENCIES:
        count = max(2, round(per_game * share / CURRENCIES[0][1]))
        table = paytables[currency]
        found[currency] = [
            make_template(variant, table, rng) for variant in STANDALONE for _ in range(count)
        ]
    return found


def _with_ids(state: g.Game, game_id: str, player_id: str) -> g.Game:
    assert state.info is not None
    info = dataclasses.replace(state.info, game_id=game_id, player_id=player_id)
    return dataclasses.replace(state, info=info)


# --- the log, in order ------------------------------------------------------------------------


class Sink:
    """Rows by table, sent with COPY a batch at a time by a thread of its own (so generating
    the next batch and loading this one overlap), each batch one transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.rows: dict[str, list[str]] = {table: [] for table in TABLES}
        self._queue: queue.Queue[dict[str, list[str]] | None] = queue.Queue(maxsize=2)
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="history-copy", daemon=True)
        self._thread.start()

    def add(self, table: str, line: str) -> None:
        self.rows[table].append(line)

    def flush(self) -> None:
        if self._failed is not None:
            raise RuntimeError("loading a batch failed") from self._failed
        batch, self.rows = self.rows, {table: [] for table in TABLES}
        self._queue.put(batch)

    def close(self) -> None:
        self.flush()
        self._queue.put(None)
        self._thread.join()
        if self._failed is not None:
            raise RuntimeError("loading a batch failed") from self._failed

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._failed is not None:
                continue
            try:
                with self.conn.cursor() as cur:
                    for table, columns in TABLES.items():
                        lines = batch[table]
                        if not lines:
                            continue
                        statement = f"COPY {table} ({columns}) FROM STDIN"
                        with cur.copy(statement) as copy:
                            for start in range(0, len(lines), 20_000):
                                copy.write("".join(lines[start : start + 20_000]))
                self.conn.commit()
            except BaseException as exc:  # reported by the generating thread
                self._failed = exc
                self.conn.rollback()


@dataclass
class Counts:
    events: int = 0
    games: int = 0
    duels: int = 0
    players: int = 0
    postings: int = 0
    checkpoints: int = 0
    first: int = 0
    last: int = 0


class Log:
    """Takes each request's writes in time order and computes what the database would have:
    positions, versions, hashes, posting ids and balances, the checkpoints, the daily totals."""

    def __init__(
        self,
        sink: Sink,
        signer: Signer,
        checkpoint_every: timedelta,
        first_beat: int,
        rng: random.Random,
    ) -> None:
        self.sink = sink
        self.signer = signer
        self.rng = rng
        self.heads: dict[str, tuple[int, str]] = {}
        self.changed: dict[str, tuple[int, str]] = {}
        self.position = 0
        self.log_hash = GENESIS
        self.previous: tuple[int, str] = START
        self.seq = 0
        self.every = int(checkpoint_every.total_seconds() * US)
        self.next_beat = first_beat + self.every
        self.last_at = 0
        self.balances: dict[str, int] = {}
        self.account_rows: dict[str, ledger.Account] = {}
        self.posting_id = 0
        self.totals: dict[tuple[date, str, str], dict[str, int]] = {}
        # (deposits, withdrawals, who deposited) by (day, currency)
        self.cashier: dict[tuple[date, str], tuple[int, int, set[str]]] = {}
        self.counts = Counts()
        self._since_flush = 0

    def write(self, w: Write) -> None:
        if w.at >= self.next_beat:
            self._beat(w.at)
        if w.at < self.last_at:
            raise AssertionError("the history's writes must come in time order")
        self.last_at = w.at
        for account in w.accounts:
            if account.account_id not in self.account_rows:
                self.account_rows[account.account_id] = account
                self.balances[account.account_id] = 0
                self.sink.add(
                    "accounts",
                    _line(account.account_id, account.kind, account.currency,
                          account.player_id, _copy_time(w.at + APPEND_STEP)),
                )  # fmt: skip
        for k, append in enumerate(w.appends):
            self._append(append, w.at + k * APPEND_STEP)
        for entry, request_id in w.entries:
            self._post(entry, request_id, w.at + LEDGER_DELAY)
        for table, line in w.rows:
            self.sink.add(table, line)
        for day, currency, variant, counter, amount in w.totals:
            totals = self.totals.setdefault((day, currency, variant), {})
            totals[counter] = totals.get(counter, 0) + amount
        for day, currency, player_id, deposited, withdrawn in w.cashier:
            deposits, withdrawals, depositors = self.cashier.get((day, currency), (0, 0, set()))
            if deposited:
                depositors.add(player_id)
            moved = (deposits + deposited, withdrawals + withdrawn)
            self.cashier[(day, currency)] = (*moved, depositors)
        if self._since_flush >= BATCH_EVENTS:
            self.sink.flush()
            self._since_flush = 0

    def _append(self, append: Append, at: int) -> None:
        stream = append.stream
        version, previous = self.heads.get(stream, (0, GENESIS))
        hash_time, copy_time = _stamp(at)
        meta, meta_copy = append.meta, _text(append.meta)
        rows = self.sink.rows["events"]
        for type_name, schema_version, data, data_copy in append.events:
            version += 1
            self.position += 1
            bits = self.rng.getrandbits(128)
            h = f"{bits:032x}"
            event_id = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[bits & 3]}{h[17:20]}-{h[20:]}"
            digest = hashlib.sha256(
                f"{previous}\n{stream}\n{version}\n{event_id}\n{type_name}\n{schema_version}\n"
                f"{hash_time}\n{data}\n{meta}".encode("ascii")
            ).hexdigest()
            rows.append(
                f"{self.position}\t{stream}\t{version}\t{event_id}\t{type_name}\t"
                f"{schema_version}\t{data_copy}\t{meta_copy}\t{copy_time}\t{previous}\t{digest}\n"
            )
            self.log_hash = hashlib.sha256(
                f"{self.log_hash}\n{self.position}\n{stream}\n{version}\n{digest}".encode("ascii")
            ).hexdigest()
            previous = digest
        self.heads[stream] = self.changed[stream] = (version, previous)
        count = len(append.events)
        self.counts.events += count
        self._since_flush += count
        if not self.counts.first:
            self.counts.first = at
        self.counts.last = at

    def _post(self, entry: ledger.Entry, request_id: str | None, at: int) -> None:
        transaction_id = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        created = _copy_time(at)
        self.sink.add(
            "ledger_transactions",
            _line(
                transaction_id,
                entry.client_transaction_id,
                entry.kind,
                entry.fingerprint,
                entry.currency,
                entry.amount,
                entry.cause_stream,
                entry.cause_version,
                request_id,
                created,
            ),
        )
        if sum(amount for _, amount in entry.postings) != 0:
            raise AssertionError(f"{entry.client_transaction_id} does not balance")
        for account, amount in entry.postings:
            before = self.balances[account.account_id]
            after = before + amount
            if after < 0 and account.kind in ("player", "duel-pot"):
                raise AssertionError(f"{account.account_id} would go below zero")
            self.balances[account.account_id] = after
            self.posting_id += 1
            self.sink.add(
                "postings",
                f"{self.posting_id}\t{transaction_id}\t{account.account_id}\t{amount}\t{before}\t"
                f"{after}\t{entry.cause_stream}\t{entry.cause_version}\t{created}\n",
            )
        self.counts.postings += len(entry.postings)

    def _beat(self, now: int) -> None:
        """Beat's checkpoints up to ``now``: one at the first beat due, if anything was
        appended since the last; the next beat after ``now``."""
        beat = self.next_beat
        self.next_beat = beat + self.every * ((now - beat) // self.every + 1)
        if self.changed:
            self.checkpoint(min(beat + self.rng.randrange(5_000, 400_000), now - 1))

    def checkpoint(self, at: int) -> None:
        """Sign a checkpoint of everything appended so far, dated ``at``."""
        if not self.changed:
            return
        self.seq += 1
        heads = sorted((stream, v, h) for stream, (v, h) in self.changed.items())
        checkpoint = Checkpoint(
            seq=self.seq,
            position=self.position,
            events=self.position,
            log_hash=self.log_hash,
            previous_position=self.previous[0],
            previous_log_hash=self.previous[1],
            streams=len(heads),
            heads_digest=heads_digest(heads),
            created_at=_stamp(at)[0],
            key_id=self.signer.key_id,
        )
        signature = self.signer.sign(checkpoint)
        self.sink.add(
            "log_checkpoints",
            _line(self.seq, self.position, checkpoint.message().decode("ascii"), signature,
                  self.signer.key_id, "beat", _copy_time(at)),
        )  # fmt: skip
        rows = self.sink.rows["checkpoint_heads"]
        for stream, version, digest in heads:
            rows.append(f"{self.seq}\t{stream}\t{version}\t{digest}\n")
        self.previous = (self.position, self.log_hash)
        self.changed = {}
        self.counts.checkpoints += 1

    def finish(self, at: int) -> None:
        """The last checkpoint, the balances, the daily totals and cashier by day, and the
        projector's checkpoints."""
        self.checkpoint(at)
        for account_id, account in self.account_rows.items():
            self.sink.add(
                "account_balances",
                _line(account_id, account.kind, account.currency, self.balances[account_id]),
            )
        for (day, currency, variant), totals in sorted(self.totals.items()):
            values = [totals.get(c, 0) for c in COUNTERS]
            self.sink.add("daily_totals", _line(day.isoformat(), currency, variant, *values))
        self.sink.add("projection_checkpoints", _line("daily-totals", self.position, _moment(at)))
        for (day, currency), (deposits, withdrawals, depositors) in sorted(self.cashier.items()):
            self.sink.add(
                "daily_cashier",
                _line(day.isoformat(), currency, deposits, withdrawals, len(depositors)),
            )
            for player_id in sorted(depositors):
                self.sink.add("daily_depositors", _line(day.isoformat(), currency, player_id))
        self.sink.add("projection_checkpoints", _line("daily-cashier", self.position, _moment(at)))


# --- who plays ---------------------------------------------------------------------------------


@dataclass
class Context:
    """What every group of players shares: the configuration, the keys, the templates."""

    paytables: Mapping[str, Paytable]
    duel_paytables: Mapping[str, d.DuelPaytable]
    vault: SeedVault
    operator: str  # the operator's actor id (key:<uuid>)
    big_win_threshold: int
    templates: dict[str, list[Template]]
    rng: random.Random

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


@dataclass
class Player:
    player_id: str
    currency: str
    balance: int = 0
    version: int = 0  # of the player's stream

    @property
    def stream(self) -> str:
        return player_stream(self.player_id)

    @property
    def account(self) -> ledger.Account:
        return ledger.player_account(self.player_id, self.currency)


def _operator_meta(ctx: Context, currency: str) -> str:
    table = ctx.paytables[currency]
    return _meta(ctx.operator, OPERATOR_ROLE, (table.id, table.version), None)


def register(ctx: Context, player: Player, at: int) -> Write:
    """An operator opens the player's account (Players.open_account)."""
    event = PlayerRegistered(player.player_id, f"casino-{ctx.uuid()}", player.currency)
    player.version = 1
    created = _copy_time(at)
    return Write(
        at,
        appends=[Append(player.stream, [_encoded(event)], _operator_meta(ctx, player.currency))],
        accounts=[player.account, *ledger.house_accounts(player.currency)],
        rows=[("players", _line(player.player_id, event.external_ref, player.currency, created))],
    )


def cashier(ctx: Context, player: Player, at: int, amount: int, deposit: bool) -> Write:
    """A deposit or a withdrawal by the operator (Players._transfer)."""
    transaction = f"{'dep' if deposit else 'wd'}-{ctx.uuid()}"
    player.version += 1
    cause = (player.stream, player.version)
    make = ledger.deposit if deposit else ledger.withdrawal
    entry = make(player.player_id, player.currency, amount, transaction, cause)
    event: Any = (FundsDeposited if deposit else FundsWithdrawn)(
        amount, player.currency, transaction
    )
    meta = _operator_meta(ctx, player.currency)
    player.balance += amount if deposit else -amount
    moved = (amount, 0) if deposit else (0, amount)
    return Write(
        at,
        appends=[Append(player.stream, [_encoded(event)], meta)],
        entries=[(entry, _request_id(meta))],
        cashier=[(_day(at), player.currency, player.player_id, *moved)],
    )


def _top_up(ctx: Context, player: Player, need: int, at: int) -> Write | None:
    if player.balance >= need:
        return None
    amount = max(need, 2_000) * ctx.rng.choice((5, 10, 20, 50))
    return cashier(ctx, player, at, amount, deposit=True)


def _gaps(rng: random.Random, steps: int) -> list[int]:
    """Microseconds between a game's requests: a few seconds a command."""
    return [rng.randrange(800_000, 12_000_000) for _ in range(steps)]


def game_writes(ctx: Context, template: Template, player: Player, start: int) -> list[Write]:
    """One game of the template for the player, dealt at ``start``: a write a request."""
    rng = ctx.rng
    game_id = ctx.uuid()
    stream = game_stream(game_id)
    rules = template.rules_version
    table = ctx.paytables[template.currency]
    paytable = (table.id, table.version)
    placed = dataclasses.replace(template.placed, game_id=game_id, player_id=player.player_id)
    steps: list[tuple[Encoded, ...]] = list(template.steps)
    steps[0] = (_encoded(placed), *steps[0][1:])
    times = [start]
    for gap in _gaps(rng, len(steps) - 1):
        times.append(times[-1] + gap)
    if template.ending == "timeout":  # the idle collector, a day after the last command
        times[-1] = times[-2] + 86_400 * US + rng.randrange(1, 60 * US)
    player_meta = (player.player_id, "player")
    writes: list[Write] = []
    for index, events in enumerate(steps):
        who = player_meta
        last = index == len(steps) - 1
        if last and template.ending == "timeout":
            who = IDLE_COLLECTOR
        elif last and template.ending == "void":
            who = (ctx.operator, OPERATOR_ROLE)
        meta = _meta(who[0], who[1], paytable, rules)
        writes.append(Write(times[index], appends=[Append(stream, events, meta)]))
    # Money, at each event that moves it (Games._post_money: no request id).
    for index, version, event in template.money:
        entry = ledger.entry_for(event, stream, version, player.player_id, game_id)
        assert entry is not None
        writes[index].entries.append((entry, None))
        player.balance += -entry.amount if entry.kind == "stake" else entry.amount
    deal, end = writes[0], writes[-1]
    final = _with_ids(template.final, game_id, player.player_id)
    day_started, day_ended = _day(start), _day(end.at)
    currency, variant = template.currency, template.variant
    deal.totals += [
        (day_started, currency, variant, "games_started", 1),
        (day_started, currency, variant, "stakes", template.stake),
    ]
    end.totals += [
        (day_ended, currency, variant, "games_finished", 1),
        (day_ended, currency, variant, "stakes_settled", template.stake),
    ]
    if final.payout:
        end.totals.append((day_ended, currency, variant, "payouts", final.payout))
    if final.refund:
        end.totals.append((day_ended, currency, variant, "refunds", final.refund))
    # The sealed seed, the history row, the last snapshot, the significant events.
    ciphertext = ctx.vault.encrypt(template.seed)
    deal.rows.append(
        ("game_seeds", _line(game_id, ctx.vault.key_id, ciphertext, "seed",
                             _moment(start + SIDE_DELAY)))
    )  # fmt: skip
    ended = _moment(end.at)
    fields = history_fields(final)
    end.rows.append(
        (
            "game_history",
            _line(*fields.values(), _moment(start), ended, ended),
        )
    )
    if template.snapshot is not None:
        index, state = template.snapshot
        text = orjson.dumps(snapshots.encode(_with_ids(state, game_id, player.player_id))).decode()
        end.rows.append(
            (
                "game_snapshots",
                _line(stream, state.version, text, ctx.vault.mac(text.encode()),
                      _moment(start), _moment(writes[index].at)),
            )
        )  # fmt: skip
    ending = final.ending
    assert ending is not None
    if template.ending == "timeout":
        key = f"idle-collect:{game_id}"
        result = orjson.dumps({"game_id": game_id, "version": final.version}).decode()
        end.rows.append(
            (
                "idempotency_keys",
                _line(IDLE_COLLECTOR[0], key, f"idle-collect {game_id}", result,
                      _moment(end.at - 200)),
            )
        )  # fmt: skip
    significant: tuple[str, int, dict[str, Any]] | None = None
    if template.ending == "void":
        significant = ("void", ending.refund, {"reason": ending.reason})
    elif ending.payout >= ctx.big_win_threshold:
        significant = (
            "big-win",
            ending.payout,
            {
                "reason": ending.reason,
                "stake": final.stake,
                "units": final.units,
                "foundation_count": final.units,
                "threshold": ctx.big_win_threshold,
            },
        )
    if significant is not None:
        kind, amount, details = significant
        details["certification"] = False
        actor = orjson.loads(end.appends[0].meta)["actor"]
        end.rows.append(
            (
                "significant_events",
                _line(kind, _moment(end.at + SIDE_DELAY), actor, game_id, player.player_id,
                      amount, currency, canonical_json(details)),
            )
        )  # fmt: skip
    return writes


def solo_player(
    ctx: Context, player: Player, registered: int, games: list[tuple[Template, int]]
) -> Iterator[Write]:
    """A player's whole history: opened, paying in, dealing and ending games one at a time,
    now and then taking money out."""
    yield register(ctx, player, registered)
    for template, start in games:
        top_up = _top_up(ctx, player, template.stake, start - ctx.rng.randrange(2, 9) * US)
        if top_up is not None:
            yield top_up
        writes = game_writes(ctx, template, player, start)
        yield from writes
        if player.balance > 100 * max(template.stake, 2_000) and ctx.rng.random() < 0.5:
            amount = player.balance // 2
            yield cashier(ctx, player, writes[-1].at + ctx.rng.randrange(2, 9) * US, amount, False)


# --- duels -------------------------------------------------------------------------------------


@dataclass
class Seat:
    player: Player
    game_id: str
    requests: list[tuple[int, list[GameEvent], g.Game, bool]]  # (at, events, state, snapshot)


def _seat_game(
    ctx: Context, opened: DuelOpened, player: Player, game_id: str, at: int, deck: tuple[str, ...]
) -> list[GameEvent]:
    table = ctx.paytables[opened.currency]
    start = g.StartGame(
        game_id=game_id,
        player_id=player.player_id,
        variant=opened.variant,
        stake=opened.fee,
        paytable=table,
        deck=deck,
        shuffle_algorithm=opened.shuffle_algorithm,
        seed_commitment=opened.seed_commitment,
        certification=False,
        duel_id=opened.duel_id,
        now=_moment(at),
        duel_paytable=(opened.paytable_id, opened.paytable_version),
    )
    return g.decide(g.INITIAL, start)


def duel_writes(ctx: Context, a: Player, b: Player, fee: int, at: int) -> list[Write]:
    """One two-seat duel: A opens it, B joins, both deal and play against the clock, both stop,
    and the last stop settles it (Duels.join, deal, play)."""
    rng = ctx.rng
    currency = a.currency
    duel_table = ctx.duel_paytables[currency]
    game_table = ctx.paytables[currency]
    duel_id = ctx.uuid()
    stream = duel_stream(duel_id)
    seed = rng.randbytes(shuffle.SEED_BYTES)
    deck = shuffle.derive_deck(seed, None, KLONDIKE_DUEL.decks)
    sealed = g.hidden_cards(KLONDIKE_DUEL, deck)
    rules = KLONDIKE_DUEL.rules_version
    duel_meta_table = (duel_table.id, duel_table.version)
    writes: list[Write] = []
    pot = ledger.duel_pot(duel_id, currency)
    rake = ledger.house_rake(currency)

    def duel_append(
        w: Write, state: d.Duel, events: list[DuelEvent], who: Player
    ) -> tuple[d.Duel, int]:
        """The duel's events appended (as the request's last append), their money posted."""
        meta = _meta(who.player_id, "player", duel_meta_table, rules)
        w.appends.append(Append(stream, [_encoded(e) for e in events], meta))
        w.accounts += [pot, rake]
        for offset, event in enumerate(events, start=1):
            entry = ledger.duel_entry_for(event, duel_id, currency, stream, state.version + offset)
            if entry is not None:
                w.entries.append((entry, _request_id(meta)))
            money = ledger.duel_movement(event, currency)
            day = _day(w.at)
            if isinstance(event, SeatTaken):
                w.totals += [
                    (day, currency, KLONDIKE_DUEL.id, "games_started", 1),
                    (day, currency, KLONDIKE_DUEL.id, "stakes", event.fee),
                ]
                who.balance -= event.fee
            elif isinstance(event, DuelSettled) and money is not None:
                w.totals += [
                    (day, currency, KLONDIKE_DUEL.id, "games_finished", len(state.seats)),
                    (day, currency, KLONDIKE_DUEL.id, "payouts", money.amount - event.rake),
                    (day, currency, KLONDIKE_DUEL.id, "stakes_settled", money.amount),
                ]
                for payout in event.payouts:
                    seated = a if payout.player_id == a.player_id else b
                    seated.balance += payout.amount
        recorded_at = w.at + (len(w.appends) - 1) * APPEND_STEP
        return d.fold(events, state), recorded_at

    # A opens the duel and takes the first seat; B takes the second.
    join_a = Write(at)
    opening = d.decide(
        d.INITIAL,
        d.OpenDuel(duel_id, duel_table, fee, 2, shuffle.ALGORITHM, shuffle.commitment(seed),
                   _moment(at - 300)),
    )  # fmt: skip
    taken = d.decide(d.fold(opening), d.TakeSeat(a.player_id, _moment(at - 300)))
    state, _ = duel_append(join_a, d.INITIAL, [*opening, *taken], a)
    join_a.rows.append(
        ("game_seeds", _line(duel_id, ctx.vault.key_id, ctx.vault.encrypt(seed), "seed",
                             _moment(at + SIDE_DELAY)))
    )  # fmt: skip
    writes.append(join_a)
    at += rng.randrange(2 * US, 90 * US)
    join_b = Write(at)
    taken = d.decide(state, d.TakeSeat(b.player_id, _moment(at - 300)))
    state, _ = duel_append(join_b, state, taken, b)
    writes.append(join_b)

    # Each seat deals and plays; both timelines are merged afterwards.
    seats: list[Seat] = []
    deal_at = at
    opened = state.opened
    assert opened is not None
    for player in (a, b):
        deal_at += rng.randrange(2 * US, 20 * US)
        game_id = ctx.uuid()
        events = _seat_game(ctx, opened, player, game_id, deal_at - 300, deck)
        game = g.fold(events)
        requests = [(deal_at, events, game, False)]
        deadline = game.info.deadline if game.info else None
        assert deadline is not None
        limit = _micros(deadline)
        t = deal_at
        for _ in range(rng.randint(5, 45)):
            t += rng.randrange(US, 6 * US)
            options = [c for c in g.legal_commands(game) if not isinstance(c, g.Collect)]
            if not options or game.is_over or t + 10 * US >= limit:
                break
            new = g.decide(game, rng.choice(options), sealed, None, _moment(t - 300))
            before, game = game.version, g.fold(new, game)
            requests.append((t, new, game, snapshots.due(before, game.version)))
            if game.is_over:
                break
        if not game.is_over:
            t += rng.randrange(US, 4 * US)
            new = g.decide(game, g.Collect("player"), sealed, None, _moment(t - 300))
            before, game = game.version, g.fold(new, game)
            requests.append((t, new, game, snapshots.due(before, game.version)))
        seats.append(Seat(player, game_id, requests))

    seat_paytable = (game_table.id, game_table.version)
    timeline = sorted(
        (at_, n, i) for n, seat in enumerate(seats) for i, (at_, *_) in enumerate(seat.requests)
    )
    game_events: dict[int, list[GameEvent]] = {0: [], 1: []}
    last_snapshot: dict[int, tuple[int, g.Game] | None] = {0: None, 1: None}
    settled_at = 0
    for t, n, i in timeline:
        seat = seats[n]
        _, events, game, snapshot_due = seat.requests[i]
        w = Write(t)
        meta = _meta(seat.player.player_id, "player", seat_paytable, rules)
        w.appends.append(Append(game_stream(seat.game_id), [_encoded(e) for e in events], meta))
        game_events[n] += events
        if snapshot_due:
            last_snapshot[n] = (t, game)
        duel_events: list[DuelEvent] = []
        if i == 0:
            deadline = game.info.deadline if game.info else None
            assert deadline is not None
            duel_events = d.decide(state, d.DealSeat(seat.player.player_id, seat.game_id, deadline))
        elif game.is_over:
            ending = events[-1]
            assert isinstance(ending, Collected)
            assert ending.ended_at is not None
            finished = d.decide(
                state,
                d.FinishSeat(n, seat.game_id, scoring.points(game_events[n]).total, ending.units,
                             ending.reason, ending.ended_at),
            )  # fmt: skip
            duel_events = finished
            after = d.fold(finished, state)
            if after.all_finished:
                duel_events = [*finished, *d.decide(after, d.Settle(seed.hex()))]
        if duel_events:
            state, recorded = duel_append(w, state, duel_events, seat.player)
            if state.is_over:
                settled_at = recorded
        writes.append(w)
        if game.is_over:
            final = writes[-1]
            snap = last_snapshot[n]
            if snap is not None:
                snap_at, snap_state = snap
                text = orjson.dumps(snapshots.encode(snap_state)).decode()
                final.rows.append(
                    (
                        "game_snapshots",
                        _line(game_stream(seat.game_id), snap_state.version, text,
                              ctx.vault.mac(text.encode()), _moment(seat.requests[0][0]),
                              _moment(snap_at)),
                    )
                )  # fmt: skip
    assert state.is_over
    assert settled_at
    row, seat_rows = duel_rows(state, _moment(settled_at))
    writes[-1].rows.append(("duels", _line(*dataclasses.astuple(row))))
    for seat_row in seat_rows:
        writes[-1].rows.append(("duel_seats", _line(*dataclasses.astuple(seat_row))))
    return writes


def duel_table(
    ctx: Context, players: list[Player], registered: list[int], duels: list[tuple[int, int]]
) -> Iterator[Write]:
    """Regulars who only play duels with each other: opened, paying in, a duel at a time."""
    for at, n in sorted((at, n) for n, at in enumerate(registered)):
        yield register(ctx, players[n], at)
    rng = ctx.rng
    for fee, at in duels:
        a, b = rng.sample(players, 2)
        for n, player in enumerate((a, b)):
            top_up = _top_up(ctx, player, fee, at - (2 - n) * 5 * US - rng.randrange(US))
            if top_up is not None:
                yield top_up
        yield from duel_writes(ctx, a, b, fee, at)


# --- the plan ----------------------------------------------------------------------------------


def _spread(
    rng: random.Random, count: int, first: int, last: int, lengths: Sequence[int], gap: int
) -> list[int]:
    """Start times in [first, last) for things of these ``lengths`` (in order), each after the
    one before has ended and a gap, all ended by ``last``: random times, pushed later where
    they overlap, then pulled earlier where they would run past the end; those that cannot
    fit come out before ``first``."""
    starts = sorted(rng.randrange(first, max(first + 1, last)) for _ in range(count))
    free = first
    for n, length in enumerate(lengths):
        starts[n] = max(starts[n], free)
        free = starts[n] + length + gap
    bound = last
    for n in range(count - 1, -1, -1):
        starts[n] = min(starts[n], bound - lengths[n])
        bound = starts[n] - gap
    return starts


def _game_length(template: Template) -> int:
    """A game's time from deal to end, at most (its requests a few seconds apart)."""
    length = len(template.steps) * 12 * US
    return length + ((86_400 + 120) * US if template.ending == "timeout" else 0)


@dataclass(frozen=True)
class Report:
    events: int
    games: int
    duels: int
    players: int
    checkpoints: int
    first: datetime
    last: datetime
    seconds: float
    generate_seconds: float

    def describe(self) -> str:
        rate = self.events / self.seconds if self.seconds else 0.0
        return (
            f"{self.events:,} events ({self.games:,} games, {self.duels:,} duels, "
            f"{self.players:,} players, {self.checkpoints:,} checkpoints) from "
            f"{self.first:%Y-%m-%d} to {self.last:%Y-%m-%d %H:%M} UTC, loaded in "
            f"{self.seconds:.1f} s ({rate:,.0f} events/s; templates {self.generate_seconds:.1f} s)"
        )


def _history_end() -> datetime:
    """By default the history ends a minute before today (UTC) began: today is left to what
    the benchmarks do."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(minutes=1)


def _login(url: str) -> tuple[psycopg.Connection[Any], bool]:
    """A connection that may write the tables: a superuser's (then the loader's session runs
    as a replica: no row triggers), else the tables' owner's (every trigger stays on)."""
    for candidate in (url, db.with_user(url, OWNER_ROLE)):
        conn = psycopg.connect(candidate)
        row = conn.execute(
            "SELECT rolsuper, pg_get_userbyid(c.relowner) = current_user"
            "  FROM pg_roles r, pg_class c"
            " WHERE r.rolname = current_user AND c.oid = 'events'::regclass"
        ).fetchone()
        assert row is not None
        superuser, owner = bool(row[0]), bool(row[1])
        if superuser:
            conn.execute("SET session_replication_role = replica")
            conn.commit()
            return conn, True
        if owner:
            conn.commit()
            return conn, False
        conn.close()
    raise RuntimeError("load history as a superuser or as the tables' owner")


# What the triggers switched off for the loader's session would have refused, checked at once
# (the empty answer is a pass).
INTEGRITY_SQL = {
    "a ledger transaction whose postings do not balance": """
        SELECT t.client_transaction_id FROM ledger_transactions t
          LEFT JOIN (SELECT transaction_id, sum(amount) AS total, count(*) AS lines
                       FROM postings GROUP BY transaction_id) p USING (transaction_id)
         WHERE p.lines IS NULL OR p.lines < 2 OR p.total <> 0 LIMIT 1""",
    "a posting of no transaction": """
        SELECT p.posting_id FROM postings p
         WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t
                            WHERE t.transaction_id = p.transaction_id) LIMIT 1""",
    "a posting or balance of no account": """
        SELECT account_id FROM (SELECT DISTINCT account_id FROM postings
                                UNION SELECT account_id FROM account_balances) x
         WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = x.account_id) LIMIT 1""",
    "a checkpoint head of no checkpoint": """
        SELECT h.seq FROM checkpoint_heads h
         WHERE NOT EXISTS (SELECT 1 FROM log_checkpoints c WHERE c.seq = h.seq) LIMIT 1""",
    "a seat of no duel": """
        SELECT s.duel_id FROM duel_seats s
         WHERE NOT EXISTS (SELECT 1 FROM duels x WHERE x.duel_id = s.duel_id) LIMIT 1""",
}

# The lifetime totals from the days (migrations/0025): its trigger is off for a replica session.
REBUILD_LIFETIME_SQL = "SELECT rebuild_lifetime_totals()"

# Flush every dirty page to disk (a superuser may): the loaded history as a server holds it.
CHECKPOINT_SQL = "CHECKPOINT"

VACUUMED = (
    "events",
    "ledger_transactions",
    "postings",
    "accounts",
    "account_balances",
    "game_history",
    "game_snapshots",
    "game_seeds",
    "players",
    "duels",
    "duel_seats",
    "log_checkpoints",
    "checkpoint_heads",
    "daily_totals",
    "lifetime_totals",
    "daily_cashier",
    "daily_depositors",
    "significant_events",
    "idempotency_keys",
)


def load_history(
    url: str,
    events: int,
    *,
    vault: SeedVault,
    signer: Signer,
    paytables: Mapping[str, Paytable] | None = None,
    duel_paytables: Mapping[str, d.DuelPaytable] | None = None,
    end: datetime | None = None,
    big_win_threshold: int = BIG_WIN_THRESHOLD,
    checkpoint_every: timedelta = CHECKPOINT_EVERY,
    templates_per_game: int = TEMPLATES_PER_GAME,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Load about ``events`` events of past history (ending at ``end``, by default a minute
    before today began) into the empty log of the migrated database at ``url`` (a superuser's
    or the owner's login), sealed with ``vault``'s key and checkpointed with ``signer``'s, as
    a service with those keys would have written it."""
    started = time.perf_counter()
    rng = random.Random(seed if seed is not None else int.from_bytes(os.urandom(8), "big"))
    paytables = paytables or default_paytables()
    duel_paytables = duel_paytables or d.default_duel_paytables()
    end = end or _history_end()
    templates = make_templates(paytables, templates_per_game, rng)
    generated = time.perf_counter() - started
    operator = f"key:{uuid.UUID(int=rng.getrandbits(128), version=4)}"
    ctx = Context(paytables, duel_paytables, vault, operator, big_win_threshold, templates, rng)

    days = max(2, math.ceil(events / EVENTS_PER_DAY))
    last = _micros(end)
    first = last - days * 86_400 * US
    groups = _plan(ctx, events, first, last)
    conn, replica = _login(url)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM (SELECT 1 FROM events LIMIT 1) x")
            row = cur.fetchone()
            if row and row[0]:
                raise RuntimeError("the history loader writes into an empty log only")
        conn.commit()
        sink = Sink(conn)
        key_secret = hashlib.sha256(os.urandom(32)).hexdigest()
        sink.add(
            "api_keys",
            _line(operator.removeprefix("key:"), f"history-operator-{operator[-8:]}",
                  OPERATOR_ROLE, key_secret, _moment(first - 3_600 * US)),
        )  # fmt: skip
        log = Log(sink, signer, checkpoint_every, first, rng)
        shown = 0
        total_players = 0
        for w in _merged(groups):
            log.write(w)
            if progress is not None and log.counts.events >= shown + max(events // 20, 1):
                shown = log.counts.events
                progress(
                    f"{shown:,} events ({shown / max(events, 1):.0%}) in "
                    f"{time.perf_counter() - started:.0f} s"
                )
        total_players = sum(len(group.players) for group in groups)
        log.finish(max(log.counts.last + US, last + 30 * US))
        sink.close()
        _after_load(conn, replica, log)
    finally:
        conn.close()
    counts = log.counts
    return Report(
        events=counts.events,
        games=sum(group.games for group in groups),
        duels=sum(group.duels for group in groups),
        players=total_players,
        checkpoints=counts.checkpoints,
        first=_moment(counts.first),
        last=_moment(counts.last),
        seconds=time.perf_counter() - started,
        generate_seconds=generated,
    )


@dataclass
class Group:
    """Players whose requests one generator yields, in time order."""

    players: list[Player]
    writes: Iterator[Write]
    games: int = 0
    duels: int = 0


def _merged(groups: Sequence[Group]) -> Iterator[Write]:
    import heapq

    return heapq.merge(*(group.writes for group in groups), key=lambda w: w.at)


def _currency(rng: random.Random) -> str:
    roll, total = rng.random(), 0.0
    for currency, share in CURRENCIES:
        total += share
        if roll < total:
            return currency
    return CURRENCIES[0][0]


def _plan(ctx: Context, events: int, first: int, last: int) -> list[Group]:
    """Who plays what when: solo players dealing games of every game in turn, and duel
    tables, so that the history holds about ``events`` events from ``first`` to ``last``."""
    rng = ctx.rng
    players = max(8, round(events / EVENTS_PER_PLAYER))
    tables = max(1, round(players / 25)) if events >= 2_000 else 0
    duel_events = int(events * DUEL_SHARE) if tables else 0
    share = (events - duel_events) // players
    carried = 0  # events a player before could not fit, for the next one
    span = last - first
    variants = list(STANDALONE)
    rng.shuffle(variants)
    dealt = 0
    groups: list[Group] = []
    for _ in range(players):
        player = Player(ctx.uuid(), _currency(rng))
        by_variant: dict[str, list[Template]] = {}
        for template in ctx.templates[player.currency]:
            by_variant.setdefault(template.variant, []).append(template)
        chosen: list[Template] = []
        budget = share + carried
        planned = 2  # the registration and a deposit
        while planned < budget:
            template = rng.choice(by_variant[variants[dealt % len(variants)]])
            dealt += 1
            chosen.append(template)
            planned += template.events + 1
        registered = first + rng.randrange(0, max(1, span // 3))
        lengths = [_game_length(t) for t in chosen]
        opened = registered + 60 * US
        starts = _spread(rng, len(chosen), opened, last, lengths, 30 * US)
        games = [(t, at) for t, at in zip(chosen, starts, strict=True) if at >= opened]
        carried = budget - 2 - sum(t.events + 1 for t, _ in games)
        group = Group([player], iter(()), games=len(games))
        group.writes = solo_player(ctx, player, registered, games)
        groups.append(group)
    per_duel = 65  # about: two seats' games and the duel's own events
    for _ in range(tables):
        currency = _currency(rng)
        regulars = [Player(ctx.uuid(), currency) for _ in range(DUEL_REGULARS)]
        joined = [first + rng.randrange(0, max(1, span // 3)) for _ in regulars]
        count = max(1, duel_events // tables // per_duel)
        fees = ctx.duel_paytables[currency].fees
        opening = max(joined) + 120 * US
        length = 15 * 60 * US
        spread = _spread(rng, count, opening, last, [length] * count, 60 * US)
        starts = [at for at in spread if at >= opening]
        duels = [(rng.choice(fees[:4]), at) for at in starts]
        group = Group(regulars, duel_table(ctx, regulars, joined, duels), duels=len(duels))
        groups.append(group)
    return groups


def _after_load(conn: psycopg.Connection[Any], replica: bool, log: Log) -> None:
    """Sequences past the loaded values, the integrity the switched-off triggers would have
    checked, then vacuum and statistics."""
    with conn.cursor() as cur:
        for table, column, value in (
            ("events", "position", log.position),
            ("postings", "posting_id", log.posting_id),
        ):
            if value:
                cur.execute(
                    sql.SQL("SELECT setval(pg_get_serial_sequence({}, {}), {}, true)").format(
                        sql.Literal(table), sql.Literal(column), sql.Literal(value)
                    )
                )
        if replica:
            # The lifetime totals' trigger was off too: the days' sums, as it keeps them.
            cur.execute(REBUILD_LIFETIME_SQL)
            for problem, query in INTEGRITY_SQL.items():
                cur.execute(query)
                found = cur.fetchone()
                if found is not None:
                    raise AssertionError(f"the loaded history has {problem}: {found[0]}")
    conn.commit()
    conn.autocommit = True
    for table in VACUUMED:
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
    # Write the load's dirty pages out now: a log that grew over a year is in a steady state,
    # and the server's own checkpoint of gigabytes just loaded would otherwise slow every commit
    # measured next (a checkpoint figure of 11.6 ms at 10 million events, every query of it flat).
    conn.execute(CHECKPOINT_SQL)
    conn.autocommit = False


# --- the command line --------------------------------------------------------------------------


def keep_scratch_database(
    admin_server_url: str, prefix: str = "vegas_history"
) -> tuple[str, db.DatabaseUrls]:
    """A new migrated database on the server, set up as tests/dbtools sets up theirs, and
    kept: its superuser URL, and its service and owner URLs."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    urls = db.provision(admin_server_url, name, owner=OWNER_ROLE, service=SERVICE_ROLE)
    db.migrate(urls.migration)
    return db.with_database(admin_server_url, name), urls


def development_keys() -> tuple[SeedVault, Signer]:
    """The keys a development service reads: SEED_ENCRYPTION_KEYS and ANCHOR_SIGNING_KEY_FILE,
    else those kept in .data/ (generated on first use)."""
    data_dir = PROJECT_ROOT / ".data"
    keys = tuple(k for k in os.environ.get("SEED_ENCRYPTION_KEYS", "").split(",") if k)
    vault = SeedVault(keys or (embedded_key(data_dir),))
    key_file = os.environ.get("ANCHOR_SIGNING_KEY_FILE")
    pem = Path(key_file).read_bytes() if key_file else embedded_signing_key(data_dir)
    return vault, Signer.from_pem(pem)


def load_for(container: Container, url: str, events: int, **options: Any) -> Report:
    """``load_history`` as ``container``'s service would have written it: its seed key, its
    checkpoint key, its paytables and big-win threshold (a suite or a test that then measures
    or checks that service)."""
    settings = container.settings
    signer, _ = load_keys(settings)
    return load_history(
        url,
        events,
        vault=container.vault,
        signer=signer,
        paytables=settings.paytables,
        duel_paytables=settings.duel_paytables,
        big_win_threshold=settings.big_win_threshold,
        **options,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.history",
        description="Load about N events of valid past history into a database.",
    )
    parser.add_argument("--events", type=int, required=True, help="how many events, about")
    parser.add_argument(
        "--database",
        help="a migrated database with an empty log, as a superuser or its owner (default: a "
        "new scratch database on TEST_DATABASE_URL's server or the embedded one, kept)",
    )
    parser.add_argument("--seed", type=int, help="for the same history again")
    args = parser.parse_args(argv)
    vault, signer = development_keys()
    if args.database:
        target = args.database
        service_url = None
    else:
        target, urls = keep_scratch_database(server_admin_url())
        service_url = urls.service
        print(f"scratch database: {target}", flush=True)
    report = load_history(
        target, args.events, vault=vault, signer=signer, seed=args.seed, progress=print
    )
    print(report.describe())
    if service_url:
        print(f"DATABASE_URL={service_url}")
        print(f"MIGRATION_DATABASE_URL={urls.migration}")
    print(f"seed key id {vault.key_id}, checkpoint key id {signer.key_id}")


if __name__ == "__main__":
    main(sys.argv[1:])
