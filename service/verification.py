"""Verifying a recorded game from nothing but its events and its ledger postings.

Pure functions: the caller reads the records and postings. Each check passes, fails with
findings (what was expected, what was found, and exactly where), is pending (a seed not yet
revealed) or does not apply (a certification deck has no seed). The same code serves the
regulatory replay, the whole-history audit and its benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from events import chain
from events.catalog import (
    AutoCompleted,
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
    StockRecycled,
    Undone,
    Voided,
)
from events.codec import InvalidEvent, UnknownEvent, decode_game
from events.records import RecordedEvent
from service import game as g
from service import ledger, shuffle
from service.errors import RuleViolation
from service.paytable import CARDS_IN_DECK, FULL_PAYOUT_MULTIPLE, Paytable

Status = Literal["pass", "fail", "pending", "not-applicable"]
CHECKS = ("hash-chain", "seed-commitment", "deck", "rules", "payout", "ledger")


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    location: str  # "game-<id> v7", "posting 1234", ...
    expected: str
    found: str


@dataclass(frozen=True, slots=True)
class PostingRow:
    """A ledger posting with its transaction, as the audit reads it."""

    posting_id: int
    client_transaction_id: str
    kind: str
    transaction_amount: int
    cause_stream: str
    cause_version: int
    account_id: str
    amount: int
    balance_before: int
    balance_after: int


@dataclass
class GameVerification:
    stream_id: str
    checks: dict[str, Status] = field(default_factory=lambda: dict.fromkeys(CHECKS, "pass"))
    findings: list[Finding] = field(default_factory=list)
    state: g.Game = g.INITIAL  # the state replayed from the recorded events

    @property
    def ok(self) -> bool:
        return not self.findings

    def fail(self, check: str, location: str, expected: object, found: object) -> None:
        self.checks[check] = "fail"
        self.findings.append(Finding(check, location, str(expected), str(found)))


def verify_game(
    records: Sequence[RecordedEvent],
    postings: Sequence[PostingRow],
    paytables: Mapping[str, Paytable],
) -> GameVerification:
    """Every check on one game stream."""
    stream = records[0].stream_id if records else "?"
    result = GameVerification(stream)
    broken = chain.verify(records)
    if broken is not None:
        result.fail(
            "hash-chain",
            f"{broken.stream_id} v{broken.version}",
            f"{broken.problem}: {broken.expected}",
            broken.found,
        )
    events: list[GameEvent] = []
    for record in records:
        try:
            events.append(decode_game(record.type, record.schema_version, record.data))
        except (InvalidEvent, UnknownEvent) as exc:
            result.fail("rules", f"{stream} v{record.version}", "a valid game event", exc)
            return result
    if (
        len(events) < 2
        or not isinstance(events[0], StakePlaced)
        or not isinstance(events[1], Dealt)
    ):
        result.fail("rules", f"{stream} v1", "StakePlaced then Dealt", [e.TYPE for e in events[:2]])
        return result
    _check_rules(result, events, paytables)
    _check_seed(result, events)
    _check_payout(result, events)
    _check_ledger(result, events, postings)
    return result


def _location(stream: str, version: int) -> str:
    return f"{stream} v{version}"


def _recorded_paytable(placed: StakePlaced, paytables: Mapping[str, Paytable]) -> Paytable:
    """The paytable the game recorded: today's configuration if it is the same id and version,
    else one reconstructed from the event (which still enforces multiples of 52)."""
    configured = paytables.get(placed.currency)
    if configured is not None and (configured.id, configured.version) == (
        placed.paytable_id,
        placed.paytable_version,
    ):
        return configured
    return Paytable(
        placed.paytable_id,
        placed.paytable_version,
        placed.currency,
        placed.stake,
        placed.stake,
        placed.stake,
        (placed.stake,),
    )


def _command_for(event: GameEvent) -> g.Command | None:
    """The player's (or operator's) command that produces this event first."""
    if isinstance(event, CardDrawn):
        return g.Draw()
    if isinstance(event, StockRecycled):
        return g.Recycle()
    if isinstance(event, CardMoved):
        return g.MoveCards(event.source, event.target, len(event.cards))
    if isinstance(event, CardTurned):
        return g.Turn(event.column)
    if isinstance(event, Undone):
        return g.Undo()
    if isinstance(event, Collected):
        reason: Literal["player", "timeout"] = "timeout" if event.reason == "timeout" else "player"
        return g.Collect(reason=reason, server_seed=event.server_seed)
    if isinstance(event, Voided):
        return g.Void(event.reason, event.server_seed)
    return None


def _check_rules(
    result: GameVerification, events: list[GameEvent], paytables: Mapping[str, Paytable]
) -> None:
    """Replay the commands the events imply through the decider: every rule is checked again,
    and the decider must produce exactly the recorded events (auto-complete included)."""
    stream = result.stream_id
    placed, dealt = events[0], events[1]
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    try:
        start = g.StartGame(
            game_id=placed.game_id,
            player_id=placed.player_id,
            variant=placed.variant,
            stake=placed.stake,
            paytable=_recorded_paytable(placed, paytables),
            deck=dealt.deck,
            shuffle_algorithm=dealt.shuffle_algorithm,
            seed_commitment=dealt.seed_commitment,
            client_seed=dealt.client_seed,
            certification=placed.certification,
        )
        expected = g.decide(g.INITIAL, start)
    except (RuleViolation, ValueError) as exc:
        result.fail("rules", _location(stream, 1), "a valid deal", exc)
        expected = []
    if expected != events[:2]:
        result.fail("rules", _location(stream, 1), expected, events[:2])
    state = g.fold(events[:2])
    i = 2
    while i < len(events):
        event = events[i]
        command = _command_for(event)
        if command is None:  # an AutoCompleted that no command caused
            result.fail("rules", _location(stream, i + 1), "a command's event", event.TYPE)
            state = g.evolve(state, event)
            i += 1
            continue
        width = 2 if i + 1 < len(events) and isinstance(events[i + 1], AutoCompleted) else 1
        recorded = events[i : i + width]
        try:
            decided = g.decide(state, command)
        except RuleViolation as exc:
            result.fail("rules", _location(stream, i + 1), "a legal command", f"{exc.code}: {exc}")
        else:
            if decided != recorded:
                result.fail("rules", _location(stream, i + 1), decided, recorded)
        state = g.fold(recorded, state)
        i += width
    result.state = state


def _check_seed(result: GameVerification, events: list[GameEvent]) -> None:
    dealt = events[1]
    assert isinstance(dealt, Dealt)
    if dealt.seed_commitment is None:
        result.checks["seed-commitment"] = result.checks["deck"] = "not-applicable"
        return
    ending = events[-1]
    seed = ending.server_seed if isinstance(ending, Collected | Voided) else None
    if not isinstance(ending, Collected | Voided):
        result.checks["seed-commitment"] = result.checks["deck"] = "pending"
        return
    where = _location(result.stream_id, len(events))
    if seed is None or not shuffle.seed_matches(seed, dealt.seed_commitment):
        result.fail("seed-commitment", where, dealt.seed_commitment, seed)
        result.checks["deck"] = "pending"
        return
    derived = shuffle.derive_deck(bytes.fromhex(seed), dealt.client_seed)
    if derived != dealt.deck:
        first = next(i for i, (a, b) in enumerate(zip(derived, dealt.deck, strict=True)) if a != b)
        result.fail(
            "deck",
            _location(result.stream_id, 2),
            f"position {first}: {derived[first]}",
            dealt.deck[first],
        )


def _check_payout(result: GameVerification, events: list[GameEvent]) -> None:
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    where = _location(result.stream_id, 1)
    if placed.win_rate * CARDS_IN_DECK != placed.stake * FULL_PAYOUT_MULTIPLE:
        result.fail("payout", where, f"win rate {placed.stake} x 5 / 52", placed.win_rate)
    ending = events[-1]
    state = result.state
    where = _location(result.stream_id, len(events))
    if isinstance(ending, Collected):
        # The state before the ending event is what was on the foundations at collection.
        count = g.fold(events[:-1]).foundation_count
        if ending.foundation_count != count:
            result.fail("payout", where, f"{count} cards on foundations", ending.foundation_count)
        if ending.winnings != count * placed.win_rate:
            result.fail("payout", where, count * placed.win_rate, ending.winnings)
    elif isinstance(ending, Voided):
        if ending.refund != placed.stake:
            result.fail("payout", where, placed.stake, ending.refund)
    elif state.status in ("in_progress", "complete"):
        result.checks["payout"] = "pending"


def _check_ledger(
    result: GameVerification, events: list[GameEvent], postings: Sequence[PostingRow]
) -> None:
    """Each money event has exactly its ledger transaction, balanced, and nothing else does."""
    stream = result.stream_id
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    expected: dict[int, ledger.Entry] = {}
    for version, event in enumerate(events, start=1):
        entry = ledger.entry_for(event, stream, version, placed.player_id, placed.game_id)
        if entry is not None:
            expected[version] = entry
    actual: dict[int, list[PostingRow]] = {}
    for row in postings:
        actual.setdefault(row.cause_version, []).append(row)
    for version in sorted(set(expected) | set(actual)):
        entry, rows = expected.get(version), actual.get(version, [])
        where = _location(stream, version)
        if entry is None:
            result.fail(
                "ledger", f"posting {rows[0].posting_id}", "no money for this event", rows[0].kind
            )
            continue
        if not rows:
            result.fail("ledger", where, f"{entry.kind} of {entry.amount}", "no ledger transaction")
            continue
        wanted = {a.account_id: amount for a, amount in entry.postings}
        for row in rows:
            if row.transaction_amount != entry.amount or row.kind != entry.kind:
                result.fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"{entry.kind} {entry.amount}",
                    f"{row.kind} {row.transaction_amount}",
                )
            if wanted.get(row.account_id) != row.amount:
                result.fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"{row.account_id} {wanted.get(row.account_id)}",
                    row.amount,
                )
            if row.balance_after != row.balance_before + row.amount:
                result.fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"balance after {row.balance_before + row.amount}",
                    row.balance_after,
                )
        if {r.account_id for r in rows} != set(wanted) or sum(r.amount for r in rows) != 0:
            result.fail(
                "ledger",
                where,
                f"postings {sorted(wanted.items())}",
                sorted((r.account_id, r.amount) for r in rows),
            )


def verify_ledger(postings: Sequence[PostingRow], balances: Mapping[str, int]) -> list[Finding]:
    """The whole ledger: each account's postings chain their balances from zero, each
    transaction sums to zero, and the balance projection equals the last posting."""
    findings: list[Finding] = []
    last: dict[str, int] = {}
    sums: dict[str, tuple[int, int]] = {}  # transaction -> (sum, first posting)
    for row in sorted(postings, key=lambda r: r.posting_id):
        where = f"posting {row.posting_id}"
        before = last.get(row.account_id, 0)
        if row.balance_before != before:
            findings.append(
                Finding("ledger", where, f"balance before {before}", str(row.balance_before))
            )
        if row.balance_after != row.balance_before + row.amount:
            findings.append(
                Finding(
                    "ledger",
                    where,
                    f"balance after {row.balance_before + row.amount}",
                    str(row.balance_after),
                )
            )
        last[row.account_id] = row.balance_after
        total, first = sums.get(row.client_transaction_id, (0, row.posting_id))
        sums[row.client_transaction_id] = (total + row.amount, first)
    for tx, (total, first) in sorted(sums.items(), key=lambda item: item[1][1]):
        if total != 0:
            findings.append(
                Finding("ledger", f"posting {first} ({tx})", "postings summing to 0", str(total))
            )
    for account, balance in sorted(balances.items()):
        if last.get(account, 0) != balance:
            findings.append(
                Finding(
                    "ledger", f"account {account}", f"balance {last.get(account, 0)}", str(balance)
                )
            )
    return findings


def verify_player_stream(
    records: Sequence[RecordedEvent], postings: Sequence[PostingRow]
) -> list[Finding]:
    """A player's stream: its hash chain, and one cashier transaction per deposit or
    withdrawal event, of the same amount."""
    findings: list[Finding] = []
    broken = chain.verify(records)
    if broken is not None:
        findings.append(
            Finding(
                "hash-chain",
                f"{broken.stream_id} v{broken.version}",
                f"{broken.problem}: {broken.expected}",
                broken.found,
            )
        )
    if not records:
        return findings
    stream = records[0].stream_id
    player_id = stream.removeprefix("player-")
    by_version: dict[int, list[PostingRow]] = {}
    for row in postings:
        by_version.setdefault(row.cause_version, []).append(row)
    for record in records:
        try:
            event = record.decode()
        except (InvalidEvent, UnknownEvent) as exc:
            findings.append(
                Finding("events", f"{stream} v{record.version}", "a valid event", str(exc))
            )
            continue
        entry = ledger.entry_for(event, stream, record.version, player_id, None)
        rows = by_version.pop(record.version, [])
        if entry is None:
            if rows:
                findings.append(
                    Finding(
                        "ledger",
                        f"posting {rows[0].posting_id}",
                        "no money for this event",
                        rows[0].kind,
                    )
                )
            continue
        wanted = {a.account_id: amount for a, amount in entry.postings}
        got = {r.account_id: r.amount for r in rows}
        if got != wanted:
            findings.append(
                Finding(
                    "ledger",
                    f"{stream} v{record.version}",
                    str(sorted(wanted.items())),
                    str(sorted(got.items())),
                )
            )
    for version, rows in sorted(by_version.items()):
        findings.append(
            Finding(
                "ledger",
                f"posting {rows[0].posting_id}",
                f"an event at {stream} v{version}",
                "none",
            )
        )
    return findings
