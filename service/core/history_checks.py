"""What the whole-history audit checks beyond each game's, duel's and player's own money
(service/core/game_verification.py): the safer-gambling and control streams folded against
their rules, each account's kind against its id, each transaction's cause on a stream the
ledger maps, and a sealed secret kept for every deal.

Pure: the caller (service/services/history_audits.py) reads the rows, all in one snapshot. The
database refuses each of these to the service's login (migrations/0028, 0031, 0032); these are
the second, independent guard, for data written any other way (an older release, the owner's
login, a restored backup). Every rule is asked of the module that keeps it, never restated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import timedelta

from events.catalog import BalanceCorrected, GamingSwitched, LimitChanged, PlayerExcluded
from events.codec import InvalidEvent, UnknownEvent
from events.records import RecordedEvent
from service.core import controls, ledger
from service.core import safer_gambling as sg
from service.core.game_verification import Finding, PostingRow, check_chain
from service.core.streams import id_of, kind_of

OPERATOR = "operator"
#: The events that open a sealed deal: a game's deal, a duel's opening (every seat's deal is
#: its duel's).
DEALS = ("Dealt", "DuelOpened")


def _where(record: RecordedEvent) -> str:
    return f"{record.stream_id} v{record.version}"


# --- safer gambling ---------------------------------------------------------------------------


def safer_gambling_findings(
    records: Sequence[RecordedEvent], slack: timedelta = timedelta(0)
) -> list[Finding]:
    """A player's limits and exclusions folded in order, each change judged on the state in
    force when it was recorded: an exclusion only extends (sg.lessens), a looser limit waits a
    day (sg.loosened_too_soon; ``slack``: how long before its recording a change may have been
    decided). An event that does not decode is the player unit's "events" finding already."""
    findings: list[Finding] = []
    limits: dict[str, sg.Limit] = {}
    exclusion: sg.Exclusion | None = None
    for record in records:
        if record.type not in (LimitChanged.TYPE, PlayerExcluded.TYPE):
            continue
        try:
            event = record.decode()
            assert isinstance(event, LimitChanged | PlayerExcluded)
            fault = sg.well_formed(event)
            if fault is not None:
                findings.append(Finding("safer-gambling", _where(record), "a known rule", fault))
                continue
            at = record.recorded_at
            if isinstance(event, PlayerExcluded):
                after = sg.excluded(event)
                if sg.lessens(exclusion, after, at):
                    findings.append(
                        Finding(
                            "safer-gambling",
                            _where(record),
                            "an exclusion that only extends, recorded at "
                            f"{at.isoformat()} over {_exclusion(exclusion)}",
                            _exclusion(after),
                        )
                    )
                exclusion = after  # what the service enforced after it, right or wrong
            else:
                state = limits.get(event.limit, sg.NO_LIMIT)
                if sg.loosened_too_soon(state, event, at, slack):
                    findings.append(
                        Finding(
                            "safer-gambling",
                            _where(record),
                            f"{event.limit} loosened from {state.at(at)} no sooner than "
                            f"{sg.LOOSENING_DELAY} after {at.isoformat()}",
                            f"{event.value} from {event.effective_from}",
                        )
                    )
                limits[event.limit] = sg.applied(event)
        except (InvalidEvent, UnknownEvent):
            continue
        except ValueError as exc:  # an instant that is none
            findings.append(Finding("safer-gambling", _where(record), "a valid instant", str(exc)))
    return findings


def _exclusion(exclusion: sg.Exclusion | None) -> str:
    if exclusion is None:
        return "none"
    return f"{exclusion.kind} until {exclusion.until.isoformat()}"


# --- the gaming controls ----------------------------------------------------------------------


def controls_findings(records: Sequence[RecordedEvent]) -> list[Finding]:
    """The gaming-controls stream: its hash chain, and each event a switch as
    controls.switched makes one, recorded by an operator."""
    findings: list[Finding] = []

    def fail(check: str, location: str, expected: object, found: object) -> None:
        findings.append(Finding(check, location, str(expected), str(found)))

    check_chain(records, fail)
    for record in records:
        try:
            event = record.decode()
        except (InvalidEvent, UnknownEvent) as exc:
            fail("controls", _where(record), "a valid GamingSwitched", exc)
            continue
        if not isinstance(event, GamingSwitched):
            fail("controls", _where(record), "a GamingSwitched", record.type)
            continue
        fault = controls.fault_of(event)
        if fault is not None:
            fail("controls", _where(record), "a switch as an operator makes one", fault)
        role = record.metadata.get("role")
        if role != OPERATOR:
            fail("controls", _where(record), f"recorded by the {OPERATOR} role", role)
    return findings


# --- accounts and the ledger's causes ---------------------------------------------------------


def account_findings(accounts: Iterable[ledger.Account]) -> list[Finding]:
    """Each account as its id names it (ledger.account_named): its kind, currency and player."""
    findings = []
    for account in accounts:
        named = ledger.account_named(account.account_id, account.currency)
        if named != account:
            findings.append(
                Finding(
                    "account-kind",
                    f"account {account.account_id}",
                    "no account of that id" if named is None else _account(named),
                    _account(account),
                )
            )
    return findings


def _account(account: ledger.Account) -> str:
    owner = f", player {account.player_id}" if account.player_id else ""
    return f"{account.kind} in {account.currency}{owner}"


def cause_stream_findings(postings: Iterable[PostingRow]) -> list[Finding]:
    """Each transaction's cause on a stream whose events the ledger maps (ledger.MONEY_STREAMS):
    the game, duel and player units hold each to its mapping; no unit reads any other stream's
    money. (The log unit names a cause missing from the log.)"""
    findings = []
    seen: set[str] = set()
    for row in sorted(postings, key=lambda r: r.posting_id):
        if row.client_transaction_id in seen:
            continue
        seen.add(row.client_transaction_id)
        kind = kind_of(row.cause_stream)
        if kind not in ledger.MONEY_STREAMS:
            findings.append(
                Finding(
                    "ledger-cause",
                    f"{row.cause_stream} v{row.cause_version}",
                    f"the cause of {row.kind} transaction {row.client_transaction_id} on a "
                    f"stream of a kind that moves money ({', '.join(ledger.MONEY_STREAMS)})",
                    f"a stream of kind {kind}" if kind else "a stream of no kind",
                )
            )
    return findings


# --- sealed secrets ---------------------------------------------------------------------------


def secret_of(records: Sequence[RecordedEvent]) -> str | None:
    """The id a game's or duel's sealed secret is kept under (game_seeds.game_id): the duel's
    for a duel seat's game, which plays its duel's deal; None for a stream that has no deal
    sealed (none recorded, or a deal recorded in clear, committed to nothing)."""
    deal = next((r for r in records if r.type in DEALS), None)
    if deal is None or deal.data.get("seed_commitment") is None:
        return None
    duel = records[0].data.get("duel_id")
    return str(duel) if duel else id_of(records[0].stream_id)


def seed_findings(records: Sequence[RecordedEvent], secrets: Collection[str]) -> list[Finding]:
    """A sealed deal has its secret kept (``secrets``: the ids game_seeds holds of those asked
    for): without it the game can never reveal the seed it committed to. Whether the secret
    opens to the commitment is the game's and the duel's seed-commitment check, once it is
    revealed (the audit holds no key to open it)."""
    secret = secret_of(records)
    if secret is None or secret in secrets:
        return []
    deal = next(r for r in records if r.type in DEALS)
    return [Finding("seed", _where(deal), f"its sealed secret kept under {secret}", "none")]


# --- corrections ------------------------------------------------------------------------------


def corrected(records: Iterable[RecordedEvent]) -> frozenset[Finding]:
    """The findings an operator's corrections on a player's stream answer (BalanceCorrected,
    recorded with an operator's key: migrations/0041 refuses any other), exactly as named."""
    answered: set[Finding] = set()
    for record in records:
        if record.type != BalanceCorrected.TYPE or record.metadata.get("role") != OPERATOR:
            continue
        event = record.decode()
        assert isinstance(event, BalanceCorrected)
        answered.update(Finding(f.check, f.location, f.expected, f.found) for f in event.findings)
    return frozenset(answered)


def unanswered(findings: Iterable[Finding], records: Iterable[RecordedEvent]) -> list[Finding]:
    """What a withdrawal is still held on: the findings no correction in ``records`` (the
    player's stream) names. What was found stays in the log; a correction answers it."""
    answered = corrected(records)
    return [f for f in findings if f not in answered]
