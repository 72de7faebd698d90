"""The certification dealing policy (service/core/dealing.py), one rule for games and duels: the
HTTP tests (tests/api/test_certification.py, test_duels.py, test_access.py) show it through
the routes; these name each case."""

from __future__ import annotations

from typing import Literal

import pytest

from service.core.dealing import CertificationDeal, Dealing, dealing
from service.errors import CertificationDisabled, InvalidArgument

ME, OTHER = "p-1", "p-2"
SEED = "ab" * 32


@pytest.mark.parametrize("what", ["game", "duel"])
def test_a_player_deals_their_own_from_the_service_s_seed(what: Literal["game", "duel"]) -> None:
    assert dealing(what, {}, ME, False) == Dealing(ME)
    assert dealing(what, {"player_id": ME}, ME, True) == Dealing(ME)
    refused: list[dict[str, object]] = [{"seed": SEED}, {"deck": []}, {"player_id": OTHER}]
    for asked in refused:
        with pytest.raises(CertificationDisabled):
            dealing(what, asked, ME, True)


def test_a_player_cannot_ask_for_a_certification_duel() -> None:
    with pytest.raises(CertificationDisabled):
        dealing("duel", {"certification": True}, ME, True)
    assert dealing("game", {"certification": True}, ME, True) == Dealing(ME)


@pytest.mark.parametrize("what", ["game", "duel"])
def test_an_operator_deals_only_in_certification_mode(what: Literal["game", "duel"]) -> None:
    with pytest.raises(CertificationDisabled):
        dealing(what, {"player_id": ME, "seed": SEED}, None, False)


def test_an_operator_s_game_names_its_player_and_exactly_one_of_seed_or_deck() -> None:
    seeded = dealing("game", {"player_id": ME, "seed": SEED}, None, True)
    assert seeded == Dealing(ME, True, CertificationDeal(SEED, None))
    given = dealing("game", {"player_id": ME, "deck": ["AS", "2S"]}, None, True)
    assert given == Dealing(ME, True, CertificationDeal(None, ("AS", "2S")))
    for asked in ({"player_id": ME}, {"seed": SEED}, {"player_id": ME, "seed": SEED, "deck": []}):
        with pytest.raises(InvalidArgument, match="exactly one"):
            dealing("game", asked, None, True)


def test_an_operator_s_duel_join_names_its_player_and_at_most_one_of_seed_or_deck() -> None:
    assert dealing("duel", {"player_id": ME}, None, True) == Dealing(ME, True, None)
    seeded = dealing("duel", {"player_id": ME, "seed": SEED}, None, True)
    assert seeded == Dealing(ME, True, CertificationDeal(SEED, None))
    for asked in ({"seed": SEED}, {"player_id": ME, "seed": SEED, "deck": []}):
        with pytest.raises(InvalidArgument, match="at most one"):
            dealing("duel", asked, None, True)
