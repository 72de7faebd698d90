"""The regulatory replay of one game: every recorded event with who and when, the state after
it, the outcome, and a verification block (seed, deck, rules, hash chain, payout, ledger).

Players see their own finished games with the masking of play: face-down cards, the stock
order and the dealt deck stay hidden in each step. Auditors see everything, in-progress games
included (whose seed is still secret, so the seed checks are pending)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from events.codec import decode_game
from events.records import RecordedEvent
from service import game as g
from service.paytable import Paytable
from service.verification import GameVerification, PostingRow, verify_game
from service.views import full_view, player_view

MASKED = "hidden until the game ends"


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
    view = player_view if masked else full_view
    state = g.INITIAL
    steps = []
    for record in shown:
        event = decode_game(record.type, record.schema_version, record.data)
        state = g.evolve(state, event)
        data = dict(record.data)
        if masked and record.type == "Dealt":
            data["deck"] = MASKED
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
                "state": view(state) if state.layout is not None else None,
            }
        )
    outcome = {
        "player_id": state.player_id,
        "status": state.status,
        "stake": state.stake,
        "currency": state.currency,
        "win_rate": state.win_rate,
        "foundation_count": state.foundation_count,
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
        final=view(state) if state.layout is not None else None,
        outcome=outcome,
        verification=verification,
    )
