"""An action's codec (service/rules/actions.py) and a play event's spec (rules/fold.py).

An action's two spellings: ``describe`` writes what the view's legal_moves list, ``parse``
reads what a route was sent; for every legal action of every game, parsing its description as
the API's schemas read it gives the action back. A play event's spec names the command an
auditor re-decides: it decides that very event again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from events.catalog import (
    GAME_EVENT_TYPES,
    ClockStarted,
    Collected,
    Dealt,
    StakePlaced,
    Undone,
    Voided,
)
from service.api.schemas.games import ActionSchema
from service.core import game_decider as g
from service.games import STANDALONE
from service.rules.actions import ACTIONS, describe, parse
from service.rules.fold import SPECS, spec
from tests.unit.rtp_support import deal, playable

#: The API's schemas read ``from`` and ``to`` as ``source`` and ``target``.
READ_AS = {"from": "source", "to": "target"}


def _as_read(described: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    fields = {READ_AS.get(k, k): v for k, v in described.items() if k != "action"}
    return described["action"], fields


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_parsing_an_action_s_description_gives_the_action_back(game_id: str) -> None:
    state, _sealed, _redeal = deal(game_id, 0)
    legal = playable(state)
    assert legal
    for action in legal:
        name, fields = _as_read(describe(action))
        if name == "collect":
            continue  # not a play action: its own route
        assert parse(name, fields) == action, (game_id, action)


def test_every_action_s_codec_is_complete() -> None:
    """Each action names the fields it takes (what the API's schema checks), and why it cannot
    be undone (what the decider says when it refuses)."""
    for name, action in ACTIONS.items():
        assert name == action.NAME
        assert action.REQUIRED <= action.ALLOWED
        assert set(ActionSchema().fields) >= action.ALLOWED, name
        assert action.CANNOT_UNDO, name


def test_every_event_play_makes_has_its_spec_and_nothing_else_does() -> None:
    """The decider, the fold and the verifier read one spec per play event: an event that
    play writes and the spec table lacks would fold nowhere."""
    not_play = {StakePlaced, Dealt, ClockStarted, Undone, Collected, Voided}
    assert set(SPECS) == set(GAME_EVENT_TYPES) - not_play
    assert {play.action for play in SPECS.values()} - {"auto-complete"} <= set(ACTIONS)


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_the_spec_s_command_of_every_play_event_decides_it_again(game_id: str) -> None:
    """What an auditor re-decides for a recorded event (its spec's command) decides that very
    event again: every legal action of two seeded random walks through a game."""
    seen: set[str] = set()
    for index in (0, 1):
        state, sealed, redeal = deal(game_id, index)
        chooser = random.Random(index)
        for _ in range(300):
            legal = playable(state)
            if not legal:
                break
            for action in legal:
                decided = g.decide(state, action, sealed, redeal)
                play = spec(decided[0])
                assert play is not None, (game_id, action)
                assert play.command is not None, (game_id, action)
                assert g.decide(state, play.command(decided[0]), sealed, redeal) == decided
                seen.add(play.action)
            state = g.fold(g.decide(state, chooser.choice(legal), sealed, redeal), state)
    assert seen
