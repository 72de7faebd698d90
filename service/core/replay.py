"""The regulatory replay of one game: every recorded event with who and when, the state after
it, the outcome, and a verification block (seed, deck, rules, hash chain, payout, ledger).

Players see their own finished games with the masking of play: face-down cards and the stock
stay counts in each step. Auditors see a finished game's every card at every step (its seed or
deck is revealed), and an unfinished one exactly as its player does (its seed is still secret,
so the seed checks are pending)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from events.codec import InvalidEvent, UnknownEvent, decode_game
from events.records import RecordedEvent
from service.core import game_decider as g
from service.core.game_verification import GameVerification, PostingRow, verify_game
from service.core.game_views import ended, full_view, player_view, revealed_deck, shown_data
from service.core.paytable import Paytable
from service.errors import RuleViolation


@dataclass(frozen=True, slots=True)
class Replay:
    game_id: str
    version: int  # the last version shown
    latest_version: int
    masked: bool
    steps: tuple[dict[str, Any], ...]
    final: dict[str, Any] | None  # None when shown only up to the stake, before the deal
    outcome: dict[str, Any]
    verification: GameVerification


def build_replay(
    records: list[RecordedEvent],
    postings: list[PostingRow],
    paytables: Mapping[str, Paytable],
    *,
    to_version: int | None = None,
    masked: bool,
) -> Replay:
    """Replay ``records`` (a whole game stream) up to ``to_version``."""
    verification = verify_game(records, postings, paytables)
    shown = records if to_version is None else records[:to_version]
    if verification.readable is not None:  # an edited record: shown up to where it stops
        shown = shown[: verification.readable]
    over = ended(r.type for r in records)
    deck = None if masked else revealed_deck(verification.state)

    def view(state: g.Game) -> dict[str, Any]:
        return player_view(state) if masked else full_view(state, deck)

    state = g.INITIAL
    steps = []
    for record in shown:
        try:
            event = decode_game(record.type, record.schema_version, record.data)
            state = g.evolve(state, event)
        except (InvalidEvent, UnknownEvent, RuleViolation, LookupError, AssertionError, TypeError):
            break  # an edited record the game cannot fold: the verification names it
        data = shown_data(record.type, record.data, masked or not over)
        steps.append(
            {
                "version": record.version,
                "type": record.type,
                "recorded_at": record.recorded_at,
                "actor": record.metadata.get("actor"),
                "role": record.metadata.get("role"),
                "request_id": record.metadata.get("request_id"),
                "data": data,
                "hash": record.hash,
                # Before the deal there is no layout to show: the stake is in ``data``.
                "state": view(state) if state.table is not None else None,
            }
        )
    outcome = {
        "player_id": state.player_id,
        "status": state.status,
        "stake": state.stake,
        "currency": state.currency,
        "win_rate": state.win_rate,
        "units": state.units,
        "max_units": state.max_units,
        "foundation_count": state.units,
        "winnings": state.winnings,
        "payout": state.payout,
        "refund": state.refund,
        "net": (state.payout or 0) + (state.refund or 0) - state.stake,
        "end_reason": state.end_reason,
    }
    return Replay(
        game_id=state.game_id,
        version=state.version,
        latest_version=len(records),
        masked=masked,
        steps=tuple(steps),
        final=view(state) if state.table is not None else None,
        outcome=outcome,
        verification=verification,
    )
