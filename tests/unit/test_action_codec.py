"""An action's two spellings (service/rules/actions.py): ``describe`` writes what the view's
legal_moves list, ``parse`` reads what a route was sent; for every legal action of every game,
parsing its description as the API's schemas read it gives the action back."""

from __future__ import annotations

from typing import Any

import pytest

from service.games import STANDALONE
from service.rules.actions import describe, parse
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
