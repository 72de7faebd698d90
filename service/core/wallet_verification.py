"""A round's wallet stream verified (seamless mode, issue 37): pure.

What the audit checks of ``wallet-<round id>``, as it checks a game's stream: its hash chain;
that it opens with its round's bet and each answer follows its own call; that every answer the
server acted on (confirmed, refused, review) is the operator's, exactly as kept (its signature
over its exact body verifies with one of the operator's keys, and its body says the status and
``request_uuid`` recorded), and means what was recorded (``seamless.outcome`` again); and that
the ledger holds exactly the mirror postings the confirmed answers call for
(``ledger.wallet_entry_for``), and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from events.catalog import WalletCallAnswered, WalletCallSent, WalletReviewResolved
from events.codec import InvalidEvent, UnknownEvent
from events.records import RecordedEvent
from service.core import ledger, seamless
from service.core.game_verification import (
    Finding,
    PostingRow,
    check_chain,
    compare_ledger,
)
from service.core.streams import id_of

#: Whether a kept answer (its exact body) carries one of the operator's signatures; None: the
#: operator's keys are not configured where this check runs.
AnswerCheck = Callable[[bytes, str | None], bool]


def verify_wallet_stream(
    records: Sequence[RecordedEvent],
    postings: Sequence[PostingRow],
    answer_check: AnswerCheck | None,
) -> list[Finding]:
    findings: list[Finding] = []

    def fail(check: str, location: str, expected: object, found: object) -> None:
        findings.append(Finding(check, location, str(expected), str(found)))

    check_chain(records, fail)
    if not records:
        return findings
    stream = records[0].stream_id
    round_id = id_of(stream)
    events: list[tuple[RecordedEvent, object]] = []
    for record in records:
        try:
            events.append((record, record.decode()))
        except (InvalidEvent, UnknownEvent, ValueError) as exc:
            fail("events", f"{stream} v{record.version}", "a valid event", exc)
    if not events:
        return findings
    first = events[0][1]
    if not (
        isinstance(first, WalletCallSent) and first.method == "bet" and first.round_id == round_id
    ):
        fail("wallet", f"{stream} v1", "the round's bet, sent", type(first).__name__)
        return findings
    player, currency = first.player_id, first.currency
    expected: dict[int, ledger.Entry] = {}
    bet_confirmed = False
    previous: object = None
    for record, event in events:
        where = f"{stream} v{record.version}"
        if isinstance(event, WalletCallAnswered):
            if not (
                isinstance(previous, WalletCallSent)
                and previous.request_uuid == event.request_uuid
                and previous.transaction_uuid == event.transaction_uuid
                and previous.amount == event.amount
            ):
                fail("wallet", where, "an answer to the call just before it", event.request_uuid)
            findings.extend(_answer_findings(where, event, bet_confirmed, answer_check))
        if isinstance(event, WalletReviewResolved) and record.metadata.get("role") != "operator":
            fail(
                "wallet",
                where,
                "a resolution recorded with an operator's key",
                record.metadata.get("role"),
            )
        if isinstance(event, WalletCallAnswered | WalletReviewResolved):
            entry = ledger.wallet_entry_for(
                event, player, currency, bet_confirmed, (stream, record.version)
            )
            if entry is not None:
                expected[record.version] = entry
            if event.method == "bet" and ledger.wallet_applied(event):
                bet_confirmed = True
        previous = event
    compare_ledger(fail, stream, expected, postings, records[-1].version)
    return findings


def _answer_findings(
    where: str,
    event: WalletCallAnswered,
    bet_confirmed: bool,
    answer_check: AnswerCheck | None,
) -> list[Finding]:
    """An answer the server acted on is the operator's, as kept, and means what was recorded."""
    if event.outcome == "unknown":
        return []  # nothing was taken from it: the movement was sent again or rolled back
    if event.answer is None:
        return [Finding("wallet", where, "the operator's answer, kept", "none")]
    body = event.answer.encode()
    if answer_check is None:
        return [
            Finding(
                "wallet",
                where,
                "the operator's keys, to verify its answer",
                "no WALLET_OPERATOR_KEY_FILE where the audit runs",
            )
        ]
    if not answer_check(body, event.answer_signature):
        return [Finding("wallet-signature", where, "the operator's signature", "does not verify")]
    try:
        said = json.loads(body)
    except ValueError:
        return [Finding("wallet", where, "a JSON answer", "not JSON")]
    if not isinstance(said, dict):
        return [Finding("wallet", where, "a JSON object", type(said).__name__)]
    if said.get("status") != event.status or said.get("request_uuid") != event.request_uuid:
        return [
            Finding(
                "wallet",
                where,
                f"{event.status} to {event.request_uuid}",
                f"{said.get('status')} to {said.get('request_uuid')}",
            )
        ]
    method = event.method
    if method not in ("bet", "win", "rollback") or event.status is None:
        return [Finding("wallet", where, "a bet, win or rollback answered", method)]
    meant = seamless.outcome(method, event.status, bet_confirmed=bet_confirmed)  # type: ignore[arg-type]
    if meant != event.outcome:
        return [Finding("wallet", where, f"{event.status} means {meant}", event.outcome)]
    return []
