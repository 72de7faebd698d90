"""Verifying a recorded game from nothing but its events and its ledger postings.

Pure functions: the caller reads the records and postings. Each check passes, fails with
findings (what was expected, what was found, and exactly where), is pending (a seed not yet
revealed) or does not apply (a certification deck has no seed). The same code serves the
regulatory replay, the whole-history audit and its benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from events import chain
from events.catalog import (
    ClockStarted,
    Collected,
    Dealt,
    GameEvent,
    Reshuffled,
    StakePlaced,
    Undone,
    Voided,
)
from events.codec import InvalidEvent, UnknownEvent, decode_game
from events.records import RecordedEvent
from service.core import game_decider as g
from service.core import ledger, shuffle
from service.core.clock import parse_instant
from service.core.paytable import Paytable, PaytableBook, winnings
from service.core.streams import id_of
from service.errors import RuleViolation
from service.games import game_named
from service.rules import fold as table_fold
from service.rules.cards import Card
from service.rules.game import GameRules, Shuffle

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
    readable: int | None = None  # events that fold; None: every one

    @property
    def ok(self) -> bool:
        return not self.findings

    def stop(self, version: int, expected: object, found: object) -> GameVerification:
        """The record stops making sense at ``version``: a rules finding there, and every
        check still undecided becomes pending (it cannot be decided on this record)."""
        self.fail("rules", f"{self.stream_id} v{version}", expected, found)
        self.readable = version - 1
        for check, status in self.checks.items():
            if status == "pass" and check not in ("hash-chain", "ledger"):
                self.checks[check] = "pending"
        self.checks["rules"] = "fail"
        return self

    def fail(self, check: str, location: str, expected: object, found: object) -> None:
        self.checks[check] = "fail"
        self.findings.append(Finding(check, location, str(expected), str(found)))


@dataclass(frozen=True, slots=True)
class Revealed:
    """A secret revealed elsewhere than in the game's own ending: a duel's seed (or given deck
    and its salt), revealed when the duel settles, for each seat's game."""

    server_seed: str | None
    deck: tuple[Card, ...] | None = None


def verify_game(
    records: Sequence[RecordedEvent],
    postings: Sequence[PostingRow],
    paytables: Mapping[str, Paytable],
    duel: Revealed | None = None,
) -> GameVerification:
    """Every check on one game stream; a duel seat's game with its duel's revealed secret
    (without it, the seed and deck checks are pending, as for a game still in play)."""
    stream = records[0].stream_id if records else "?"
    result = GameVerification(stream)
    check_chain(records, result.fail)
    events: list[GameEvent] = []
    for record in records:
        try:
            events.append(decode_game(record.type, record.schema_version, record.data))
        except (InvalidEvent, UnknownEvent) as exc:
            return result.stop(record.version, "a valid game event", exc)
    if (
        len(events) < 2
        or not isinstance(events[0], StakePlaced)
        or not isinstance(events[1], Dealt)
    ):
        return result.stop(1, "StakePlaced then Dealt", [e.TYPE for e in events[:2]])
    try:
        rules = g.fold(events[:1]).rules
    except RuleViolation as exc:  # an unknown game: nothing else can be checked
        return result.stop(1, "a game this server knows", exc)
    assert rules is not None
    # The seed and the ledger are checked from the records alone; the rest folds the stream.
    deck = _check_seed(result, events, rules, duel)
    _check_ledger(result, events, postings)
    replay = _replay(events)
    if isinstance(replay, Misfit):  # not foldable: the rules and the payout cannot be checked
        return result.stop(replay.version, "an event that fits the table", replay.problem)
    shown = replay.shown
    redeals = _redealer(events, duel) if deck is not None else None
    _check_rules(
        result, events, replay.states, paytables, deck, {n: c for _, n, c in shown}, redeals
    )
    if deck is not None and result.checks["deck"] != "not-applicable":
        _check_shown(result, shown, rules, deck)
    _check_payout(result, events, paytables)
    return result


def _location(stream: str, version: int) -> str:
    return f"{stream} v{version}"


def _recorded_paytable(placed: StakePlaced, paytables: Mapping[str, Paytable]) -> Paytable:
    """The paytable the game recorded, in the game's own currency: today's configuration if it
    is the same id and version, else that version as the configuration log recorded it (a
    ``PaytableBook``: the copy that priced the game as recorded, if any did), else one
    reconstructed from the event. ValueError if the event's stake is off the grid."""
    if isinstance(paytables, PaytableBook):
        found = paytables.tables(placed.paytable_id, placed.paytable_version, placed.currency)
        if not found and placed.certification:
            # The sandbox's currency with the player's table: the table in any currency.
            found = paytables.tables(placed.paytable_id, placed.paytable_version, None)
        copies = [replace(t, currency=placed.currency) for t in found]
        rules = game_named(placed.variant)
        for table in copies:
            if placed.duel_id is None and placed.multiplier in _priced_at(rules, placed, table):
                return table
        if copies:
            return copies[0]
    else:
        configured = paytables.get(placed.currency)
        if configured is not None and (configured.id, configured.version) == (
            placed.paytable_id,
            placed.paytable_version,
        ):
            return configured
    # A version neither configured nor logged: its stake range is not known, so the stake
    # stands in. Its own rate for this game is the M the game recorded only where no log was
    # given: every start logs the tables it deals with, so with a log a version missing from it
    # has no rate of its own, and the rules' prices apply.
    logged = isinstance(paytables, PaytableBook) and paytables.logged
    return Paytable(
        placed.paytable_id,
        placed.paytable_version,
        placed.currency,
        placed.stake,
        placed.stake,
        placed.stake,
        (placed.stake,),
        () if logged else ((placed.variant, placed.multiplier),),
    )


def _command_for(event: GameEvent) -> g.Command | None:
    """The player's (or operator's) command that produces this event first: a play event's
    spec names it (None for the rules' own play, only ever a command's consequence)."""
    play = table_fold.spec(event)
    if play is not None:
        return play.command(event) if play.command is not None else None
    if isinstance(event, Undone):
        return g.Undo()
    if isinstance(event, Collected):
        reason: Literal["player", "timeout", "finished"] = (
            "timeout" if event.reason == "timeout" else "player"
        )
        return g.Collect(reason=reason, server_seed=event.server_seed, deck=event.deck)
    if isinstance(event, Voided):
        return g.Void(event.reason, event.server_seed, event.deck)
    return None


@dataclass(frozen=True, slots=True)
class Misfit:
    """The first recorded event that cannot have happened where it stands, and why."""

    version: int
    problem: str


@dataclass(frozen=True, slots=True)
class Replay:
    """A stream folded once: the state before each event (``states[k]``: after the first k;
    the last is the final state) and every sealed card it showed (as g.shown_cards has them)."""

    states: list[g.Game]
    shown: list[tuple[int, int, Card]]


def _replay(events: Sequence[GameEvent]) -> Replay | Misfit:
    """Fold the stream once, checking that every event fits the state it lands on: the rest of
    the checks use these states, which trusts that every event fits."""
    state = g.fold(events[:1])
    rules = state.rules
    assert rules is not None
    dealt = events[1]
    assert isinstance(dealt, Dealt)
    if dealt.piles is None and (dealt.deck is None or len(dealt.deck) != 52 * rules.decks):
        return Misfit(2, f"a deal of {rules.id}: its piles (or, recorded before sealing, its deck)")
    if table_fold.piles_named(dealt) - set(rules.layout.ids):
        return Misfit(2, f"piles of {rules.id}")
    states = [g.INITIAL, state]
    shown: list[tuple[int, int, Card]] = []
    state = g.evolve(state, dealt)
    states.append(state)
    for version, event in enumerate(events[2:], start=3):
        if isinstance(event, StakePlaced | Dealt):
            return Misfit(version, "a game is staked and dealt once")
        if isinstance(event, Collected | Voided) and version != len(events):
            return Misfit(version, "nothing follows the end of a game")
        table = state.table
        assert table is not None
        if isinstance(event, Undone):
            if state.undo is None:
                return Misfit(version, "an undo of nothing that can be undone")
        elif not isinstance(event, Collected | Voided):
            problem = table_fold.misfit(table, event)
            if problem is not None:
                return Misfit(version, problem)
        shown.extend((version, n, c) for n, c in table_fold.reveals(table, event))
        state = g.evolve(state, event)
        states.append(state)
    return Replay(states, shown)


def _start_command(
    events: Sequence[GameEvent], paytables: Mapping[str, Paytable], deck: Sequence[Card]
) -> g.StartGame:
    """The deal the first events record: a timed game's on its recorded clock, a duel seat's
    under its duel's paytable."""
    placed, dealt = events[0], events[1]
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    clock = events[2] if len(events) > 2 else None
    seat = placed.duel_id is not None
    return g.StartGame(
        game_id=placed.game_id,
        player_id=placed.player_id,
        variant=placed.variant,
        stake=placed.stake,
        # A seat's fee is its duel paytable's (recorded as such): only the currency is read.
        paytable=Paytable("duel-seat", 1, placed.currency, 52, 52, 52, (52,))
        if seat
        else _recorded_paytable(placed, paytables),
        deck=tuple(deck),
        shuffle_algorithm=dealt.shuffle_algorithm,
        seed_commitment=dealt.seed_commitment or "",
        client_seed=dealt.client_seed,
        certification=placed.certification,
        duel_id=placed.duel_id,
        now=parse_instant(clock.started_at) if isinstance(clock, ClockStarted) else None,
        duel_paytable=(placed.paytable_id, placed.paytable_version) if seat else None,
    )


def _revealed(events: Sequence[GameEvent], duel: Revealed | None) -> Revealed | None:
    """The game's secret as revealed: by its duel for a seat's game, else by its ending."""
    placed, ending = events[0], events[-1]
    assert isinstance(placed, StakePlaced)
    if placed.duel_id is not None:
        return duel
    if isinstance(ending, Collected | Voided):
        return Revealed(ending.server_seed, ending.deck)
    return None


def _redealer(events: Sequence[GameEvent], duel: Revealed | None) -> Shuffle | None:
    """The redeal shuffle of a game whose seed (or certification deck's salt) is revealed."""
    dealt, revealed = events[1], _revealed(events, duel)
    assert isinstance(dealt, Dealt)
    if revealed is None or revealed.server_seed is None:
        return None
    return shuffle.redealer(bytes.fromhex(revealed.server_seed), dealt.client_seed)


def _check_rules(
    result: GameVerification,
    events: list[GameEvent],
    states: Sequence[g.Game],
    paytables: Mapping[str, Paytable],
    deck: tuple[Card, ...] | None,
    sealed: Mapping[int, Card],
    redeals: Shuffle | None,
) -> None:
    """Replay the commands the events imply through the decider: every rule is checked again,
    and the decider must produce exactly the recorded events (automatic play included). Sealed
    cards come from what the stream showed; the deck check holds those to the revealed deck.
    A reshuffle is re-derived from the revealed seed (a deck finding if it differs); while the
    seed is secret it cannot be, and the deck check is pending."""
    stream = result.stream_id
    placed, dealt = events[0], events[1]
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    start = 3 if len(events) > 2 and isinstance(events[2], ClockStarted) else 2
    try:
        command = _start_command(events, paytables, deck or ())
        staked = _as_priced(g.stake_placed(command), placed, command.paytable)
        if staked != placed:
            result.fail("rules", _location(stream, 1), staked, placed)
        if deck is not None and dealt.deck is None:
            expected = g.decide(g.INITIAL, command)
            start = len(expected)
            if expected[1:] != events[1:start]:
                result.fail("deck", _location(stream, 2), expected[1:], events[1:start])
    except (RuleViolation, ValueError) as exc:
        result.fail("rules", _location(stream, 1), "a valid deal", exc)
    state = states[start]
    now = _clock_for(events, state)
    i = start
    while i < len(events):
        event = events[i]
        command_i = _command_for(event)
        if command_i is None:  # automatic play that no command caused
            result.fail("rules", _location(stream, i + 1), "a command's event", event.TYPE)
            i += 1
            state = states[i]
            continue
        try:
            decided = g.decide(state, command_i, sealed, redeals, now)
        except RuleViolation as exc:
            result.fail("rules", _location(stream, i + 1), "a legal command", f"{exc.code}: {exc}")
            decided = [event]
        except g.SealedCardMissing as exc:
            if not (isinstance(event, Reshuffled) and redeals is None):
                result.fail("rules", _location(stream, i + 1), "a card the stream showed", exc)
            decided = [event]  # a shuffle of a seed still secret: taken as recorded, for now
        recorded = events[i : i + len(decided)]
        if decided != recorded:
            check = "deck" if isinstance(event, Reshuffled) else "rules"
            result.fail(check, _location(stream, i + 1), decided, recorded)
        i += len(recorded)
        state = states[i]  # the recorded events folded onto the state they were decided on
    result.state = state


def _clock_for(events: Sequence[GameEvent], state: g.Game) -> datetime | None:
    """The server's clock to re-decide a timed game's commands on: the moment it ended, as its
    ending recorded (every command came before it), else its deadline (each was accepted, so
    none came after it). None for an untimed game."""
    info = state.info
    if info is None or info.deadline is None:
        return None
    ending = events[-1]
    if isinstance(ending, Collected) and ending.ended_at is not None:
        return parse_instant(ending.ended_at)
    return info.deadline


def _check_seed(
    result: GameVerification, events: list[GameEvent], rules: GameRules, duel: Revealed | None
) -> tuple[Card, ...] | None:
    """The seed (or given deck and its salt) against the commitment; the revealed deck, if
    any. Reads the deal and the ending only, so it holds for a stream that does not fold."""
    placed, dealt = events[0], events[1]
    assert isinstance(placed, StakePlaced)
    assert isinstance(dealt, Dealt)
    where = _location(result.stream_id, 2)
    given = dealt.shuffle_algorithm == shuffle.CERTIFICATION_DECK
    if dealt.shuffle_algorithm not in (shuffle.ALGORITHM, shuffle.CERTIFICATION_DECK):
        result.fail("seed-commitment", where, "a published shuffle", dealt.shuffle_algorithm)
        result.checks["deck"] = "pending"
        return None
    if given and not placed.certification:
        result.fail("seed-commitment", where, "a shuffled deal (real money)", "a given deck")
        result.checks["deck"] = "pending"
        return None
    if dealt.seed_commitment is None:
        if given and dealt.piles is None and dealt.deck is not None:
            # A v1 deal of a given deck: recorded in clear, it committed to nothing.
            result.checks["seed-commitment"] = result.checks["deck"] = "not-applicable"
            return dealt.deck
        result.fail("seed-commitment", where, "a commitment", "none")
        result.checks["deck"] = "pending"
        return None
    ending = _revealed(events, duel)
    if ending is None:
        result.checks["seed-commitment"] = result.checks["deck"] = "pending"
        return None
    seed = ending.server_seed
    if given:
        ok = (
            ending.deck is not None
            and seed is not None
            and shuffle.deck_matches(ending.deck, seed, dealt.seed_commitment)
        )
    else:
        ok = seed is not None and shuffle.seed_matches(seed, dealt.seed_commitment)
    if not ok:
        found = f"deck {ending.deck}, salt {seed}" if given else seed
        result.fail(
            "seed-commitment",
            _location(result.stream_id, len(events)),
            dealt.seed_commitment,
            found,
        )
        result.checks["deck"] = "pending"
        return None
    assert seed is not None
    if given:
        return ending.deck
    deck = shuffle.derive_deck(bytes.fromhex(seed), dealt.client_seed, rules.decks)
    if dealt.deck is not None and deck != dealt.deck:
        # A v1 deal recorded its deck: it must be the one the revealed seed derives.
        first = next(
            (i for i, (a, b) in enumerate(zip(deck, dealt.deck, strict=False)) if a != b),
            min(len(deck), len(dealt.deck)),
        )
        result.fail(
            "deck",
            where,
            f"position {first}: {deck[first] if first < len(deck) else 'no card'}",
            dealt.deck[first] if first < len(dealt.deck) else "no card",
        )
    return deck


def _check_shown(
    result: GameVerification,
    shown: Sequence[tuple[int, int, Card]],
    rules: GameRules,
    deck: Sequence[Card],
) -> None:
    """Every card the stream showed is the one the revealed deck put there."""
    hidden = g.hidden_cards(rules, deck)
    for version, number, card in shown:
        actual = hidden[number] if number < len(hidden) else None
        if actual != card:
            result.fail(
                "deck",
                _location(result.stream_id, version),
                f"sealed card {number}: {actual}",
                card,
            )


def _check_payout(
    result: GameVerification, events: list[GameEvent], paytables: Mapping[str, Paytable]
) -> None:
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    rules = result.state.rules
    where = _location(result.stream_id, 1)
    # The Ms its paytable paid this game at under the version it recorded (the operator's
    # rate, else the rules' then: today's or an earlier price); a seat's game records its
    # rules' M. A version the rules never had is the rules check's finding too.
    try:
        paytable = None if placed.duel_id is not None else _recorded_paytable(placed, paytables)
    except (RuleViolation, ValueError) as exc:  # an unknown game or a stake off the grid
        result.fail("payout", _location(result.stream_id, 1), "a stake on the grid", exc)
        return
    allowed = [] if rules is None else _priced_at(rules, placed, paytable)
    expected = allowed[0] if len(allowed) == 1 else " or ".join(allowed) or "none"
    if rules is not None and (
        placed.multiplier not in allowed or placed.max_units != rules.max_units
    ):
        result.fail(
            "payout",
            where,
            f"M {expected}, max units {rules.max_units}",
            f"M {placed.multiplier}, max units {placed.max_units}",
        )
    ending = events[-1]
    state = result.state
    where = _location(result.stream_id, len(events))
    if isinstance(ending, Collected):
        # Collecting changes no card: the replayed state holds the units collected on.
        units = state.units
        if ending.units != units:
            result.fail("payout", where, f"{units} units", ending.units)
        seat = placed.duel_id is not None  # a duel seat is paid (or refunded) by its duel
        owed = 0 if seat else winnings(units, placed.stake, placed.multiplier, placed.max_units)
        if ending.winnings != owed:
            result.fail("payout", where, owed, ending.winnings)
    elif isinstance(ending, Voided):
        refund = 0 if placed.duel_id is not None else placed.stake
        if ending.refund != refund:
            result.fail("payout", where, refund, ending.refund)
    elif state.status in ("in_progress", "complete"):
        result.checks["payout"] = "pending"


def _priced_at(rules: GameRules, placed: StakePlaced, paytable: Paytable | None) -> list[str]:
    """Every M a game of ``rules`` staked at ``paytable`` (None: a duel seat's, at its rules'
    M) recorded at its rules version."""
    return [
        m if paytable is None else paytable.multiplier_for(rules.id, m)
        for m in rules.prices_at(placed.rules_version)
    ]


def _as_priced(expected: StakePlaced, placed: StakePlaced, paytable: Paytable) -> StakePlaced:
    """Today's deal of the game, priced as the version it recorded, if that is today's or an
    earlier price of the same play (only M and the version differ); else as it is (and the
    comparison with the record fails)."""
    rules = game_named(placed.variant)
    priced_by = None if placed.duel_id is not None else paytable
    if placed.multiplier in _priced_at(rules, placed, priced_by):
        return replace(expected, rules_version=placed.rules_version, multiplier=placed.multiplier)
    return expected


def _check_ledger(
    result: GameVerification, events: list[GameEvent], postings: Sequence[PostingRow]
) -> None:
    """Each money event has exactly its ledger transaction, balanced, and nothing else does."""
    stream = result.stream_id
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    check_sandbox(result.fail, _location(stream, 1), placed.currency, placed.certification)
    expected: dict[int, ledger.Entry] = {}
    for version, event in enumerate(events, start=1):
        entry = ledger.entry_for(event, stream, version, placed.player_id, placed.game_id)
        if entry is not None:
            expected[version] = entry
    compare_ledger(result.fail, stream, expected, postings)


Fail = Callable[[str, str, object, object], None]


def check_sandbox(fail: Fail, location: str, currency: str, certification: bool) -> None:
    """Only a certification game (or duel) is played for the sandbox currency: a real one in it
    would pay test money for real stakes. (A certification game in a real currency is one
    recorded before the sandbox existed: it really moved that money, and is checked so.)"""
    if ledger.is_sandbox(currency) and not certification:
        fail("ledger", location, "a real game in real money", f"{currency}, the sandbox's")


def check_chain(records: Sequence[RecordedEvent], fail: Fail) -> None:
    """The stream's hash chain, as its records hold it (any stream: game, duel)."""
    broken = chain.verify(records)
    if broken is not None:
        fail(
            "hash-chain",
            f"{broken.stream_id} v{broken.version}",
            f"{broken.problem}: {broken.expected}",
            broken.found,
        )


def compare_ledger(
    fail: Fail,
    stream: str,
    expected: Mapping[int, ledger.Entry],
    postings: Sequence[PostingRow],
    head: int | None = None,
) -> None:
    """The postings a stream caused against the transactions its events call for (by event
    version): each exactly, balanced, and nothing else. ``head``: the stream's last version,
    to tell a posting whose cause is missing from one whose cause moves no money."""
    actual: dict[int, list[PostingRow]] = {}
    for row in postings:
        actual.setdefault(row.cause_version, []).append(row)
    for version in sorted(set(expected) | set(actual)):
        entry, rows = expected.get(version), actual.get(version, [])
        where = _location(stream, version)
        if entry is None and head is not None and version > head:
            fail("ledger", f"posting {rows[0].posting_id}", f"an event at {where}", "none")
            continue
        if entry is None:
            fail("ledger", f"posting {rows[0].posting_id}", "no money for this event", rows[0].kind)
            continue
        if not rows:
            fail("ledger", where, f"{entry.kind} of {entry.amount}", "no ledger transaction")
            continue
        wanted = {a.account_id: amount for a, amount in entry.postings}
        for row in rows:
            if row.transaction_amount != entry.amount or row.kind != entry.kind:
                fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"{entry.kind} {entry.amount}",
                    f"{row.kind} {row.transaction_amount}",
                )
            if wanted.get(row.account_id) != row.amount:
                fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"{row.account_id} {wanted.get(row.account_id)}",
                    row.amount,
                )
            if row.balance_after != row.balance_before + row.amount:
                fail(
                    "ledger",
                    f"posting {row.posting_id}",
                    f"balance after {row.balance_before + row.amount}",
                    row.balance_after,
                )
        if {r.account_id for r in rows} != set(wanted) or sum(r.amount for r in rows) != 0:
            fail(
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
    """A player's stream: its hash chain, and exactly the cashier transaction each deposit or
    withdrawal event calls for, and each operator's correction (compare_ledger: its kind, amount
    and postings), and nothing else."""
    findings: list[Finding] = []

    def fail(check: str, location: str, expected: object, found: object) -> None:
        findings.append(Finding(check, location, str(expected), str(found)))

    check_chain(records, fail)
    if not records:
        return findings
    stream = records[0].stream_id
    player_id = id_of(stream)
    expected: dict[int, ledger.Entry] = {}
    for record in records:
        try:
            entry = ledger.entry_for(record.decode(), stream, record.version, player_id, None)
        except (InvalidEvent, UnknownEvent, ValueError) as exc:  # ValueError: no amount
            fail("events", _location(stream, record.version), "a valid event", exc)
            continue
        if entry is not None:
            expected[record.version] = entry
        if record.type == "BalanceCorrected" and record.metadata.get("role") != "operator":
            fail(
                "ledger",
                _location(stream, record.version),
                "a correction recorded with an operator's key",
                record.metadata.get("role"),
            )
    compare_ledger(fail, stream, expected, postings, records[-1].version)
    return findings
