"""What the drill's clients were told (acknowledgements) set against what the database holds
(facts): lost (acknowledged but not there) and duplicated (applied more than once). Pure: the
facts are read by ``tests.drill.facts``, the acknowledgements recorded by ``tests.drill.load``.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

# --- what the clients were told (2xx answers) -------------------------------------------------


@dataclass(frozen=True)
class Deposit:
    request_id: str
    player_id: str
    transaction_id: str
    amount: int


@dataclass(frozen=True)
class Deal:
    request_id: str
    player_id: str
    game_id: str
    stake: int


@dataclass(frozen=True)
class Command:
    """A game command (or a collect) answered with the game at ``version``."""

    request_id: str
    game_id: str
    version: int


@dataclass(frozen=True)
class Settled:
    """An answer showing a game ended (a collect, or a command that finished it)."""

    request_id: str
    game_id: str
    status: str
    payout: int


@dataclass
class Acks:
    """Every acknowledgement, and the id of every state-changing request sent (answered or
    not: a request applied twice is a duplicate whether or not its answer arrived)."""

    deposits: list[Deposit] = field(default_factory=list)
    deals: list[Deal] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    settled: list[Settled] = field(default_factory=list)
    sent: set[str] = field(default_factory=set)
    deal_requests: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, ack: Deposit | Deal | Command | Settled) -> None:
        with self._lock:
            if isinstance(ack, Deposit):
                self.deposits.append(ack)
            elif isinstance(ack, Deal):
                self.deals.append(ack)
            elif isinstance(ack, Command):
                self.commands.append(ack)
            else:
                self.settled.append(ack)

    def sending(self, request_id: str, *, deal: bool = False) -> None:
        with self._lock:
            self.sent.add(request_id)
            if deal:
                self.deal_requests.add(request_id)

    @property
    def total(self) -> int:
        return len(self.deposits) + len(self.deals) + len(self.commands)


# --- what the database holds ------------------------------------------------------------------


@dataclass(frozen=True)
class EventFact:
    stream_id: str
    version: int
    type: str
    request_id: str | None
    #: The database transaction that wrote it (xmin).
    txid: str
    #: A deposit's or withdrawal's transaction id (FundsDeposited / FundsWithdrawn).
    transaction_id: str | None = None


@dataclass(frozen=True)
class LedgerFact:
    client_transaction_id: str
    kind: str
    amount: int
    request_id: str | None
    txid: str


@dataclass(frozen=True)
class GameFact:
    game_id: str
    status: str
    payout: int


@dataclass
class Facts:
    events: list[EventFact]
    ledger: list[LedgerFact]
    games: dict[str, GameFact]


@dataclass(frozen=True)
class Finding:
    what: str
    why: str


def game_stream(game_id: str) -> str:
    return f"game-{game_id}"


def player_stream(player_id: str) -> str:
    return f"player-{player_id}"


def lost(acks: Acks, facts: Facts) -> list[Finding]:
    """Acknowledged work the database does not show (or shows otherwise than answered)."""
    by_position = {(e.stream_id, e.version): e for e in facts.events}
    ledger = {t.client_transaction_id: t for t in facts.ledger}
    deposits_in_streams = {
        (e.stream_id, e.transaction_id) for e in facts.events if e.type == "FundsDeposited"
    }
    found: list[Finding] = []
    for d in acks.deposits:
        what = f"deposit {d.transaction_id}"
        posted = ledger.get(f"cashier:{d.transaction_id}")
        if posted is None or posted.kind != "deposit":
            found.append(Finding(what, "no ledger transaction"))
        elif posted.amount != d.amount:
            found.append(Finding(what, f"ledger says {posted.amount}, answered {d.amount}"))
        elif (player_stream(d.player_id), d.transaction_id) not in deposits_in_streams:
            found.append(Finding(what, "no FundsDeposited event in the player's stream"))
    for deal in acks.deals:
        what = f"deal {deal.game_id}"
        stake = ledger.get(f"stake:{deal.game_id}")
        if (game_stream(deal.game_id), 1) not in by_position:
            found.append(Finding(what, "no game stream"))
        elif stake is None or stake.amount != deal.stake:
            found.append(Finding(what, "stake not in the ledger as answered"))
        elif deal.game_id not in facts.games:
            found.append(Finding(what, "not in the betting history"))
    for c in acks.commands:
        event = by_position.get((game_stream(c.game_id), c.version))
        if event is None or event.request_id != c.request_id:
            found.append(Finding(f"command {c.request_id}", f"no event v{c.version} of it"))
    for s in acks.settled:
        what = f"settlement of {s.game_id}"
        game = facts.games.get(s.game_id)
        winnings = ledger.get(f"winnings:{s.game_id}")
        paid = winnings.amount if winnings is not None else 0
        if game is None or game.status != s.status or game.payout != s.payout:
            found.append(Finding(what, f"history says {game}, answered {s.status} {s.payout}"))
        elif paid != s.payout:
            found.append(Finding(what, f"ledger paid {paid}, answered {s.payout}"))
    return found


def duplicated(acks: Acks, facts: Facts) -> list[Finding]:
    """Work applied more than once: one request's effects written by more than one database
    transaction, two games for one deal, one transfer id twice in a stream or the ledger."""
    found: list[Finding] = []
    event_txs: defaultdict[str, set[str]] = defaultdict(set)
    for e in facts.events:
        if e.request_id in acks.sent:
            event_txs[e.request_id].add(e.txid)
    ledger_txs: defaultdict[str, set[str]] = defaultdict(set)
    for t in facts.ledger:
        if t.request_id in acks.sent:
            ledger_txs[t.request_id].add(t.txid)
    for request_id in sorted(set(event_txs) | set(ledger_txs)):
        writes = max(len(event_txs[request_id]), len(ledger_txs[request_id]))
        if writes > 1:
            found.append(Finding(f"request {request_id}", f"applied by {writes} transactions"))
    games_per_deal = Counter(
        e.request_id
        for e in facts.events
        if e.version == 1 and e.stream_id.startswith("game-") and e.request_id in acks.deal_requests
    )
    for request_id, games in sorted(games_per_deal.items()):
        if games > 1:
            found.append(Finding(f"deal {request_id}", f"{games} games"))
    transfers = Counter(
        (e.stream_id, e.transaction_id)
        for e in facts.events
        if e.type in ("FundsDeposited", "FundsWithdrawn")
    )
    for (stream, transaction_id), times in sorted(transfers.items()):
        if times > 1:
            found.append(Finding(f"transfer {transaction_id}", f"{times} times in {stream}"))
    postings = Counter(t.client_transaction_id for t in facts.ledger)
    for client_id, times in sorted(postings.items()):
        if times > 1:
            found.append(Finding(f"ledger {client_id}", f"{times} transactions"))
    return found
