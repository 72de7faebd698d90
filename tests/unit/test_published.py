"""What every game publishes about its return (service/rtp/published.py): the three players'
figures at the game's current M, priced into the band against the strong player, and the
README's table made from them."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from service.games import STANDALONE, VEGAS_DRAW1, VEGAS_DRAW3
from service.rtp import published
from service.rtp.players import KINDS
from service.rtp.roster import player_for
from service.rtp.simulate import rtp_of

README = Path(__file__).resolve().parents[2] / "README.md"
#: Seed 001 fixes Vegas Klondike's M; they publish what strong play gets, whatever it is.
SEED_PRICED = {VEGAS_DRAW1.id, VEGAS_DRAW3.id}


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_every_game_publishes_all_three_players_measured_by_today_s_players(
    game_id: str,
) -> None:
    rules = STANDALONE[game_id]
    measured = published.measurements(game_id)
    assert set(measured) == set(KINDS)
    for kind, m in measured.items():
        # A player changed since it was measured must be measured again (a new version).
        assert m.player == player_for(rules, kind).version, (game_id, kind)
        assert all(0 <= units <= rules.max_units for units in m.histogram)
    found = published.publication(game_id)
    assert found is not None
    assert found.multiplier == rules.multiplier
    assert found.strong == published.figure(measured["strong"])
    assert found.strong.rtp == str(rtp_of(game_id, measured["strong"].histogram).rtp)


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_the_strong_player_beats_the_bot_and_the_bound_beats_both(game_id: str) -> None:
    found = published.publication(game_id)
    assert found is not None
    bot, strong, bound = (Decimal(f.rtp) for f in (found.bot, found.strong, found.clairvoyant))
    assert bot < strong <= bound


@pytest.mark.parametrize("game_id", sorted(set(STANDALONE) - SEED_PRICED))
def test_each_game_is_priced_into_the_band_against_the_strong_player(game_id: str) -> None:
    """At least 94% to the strong player, and the whole of its 95% interval below 97%."""
    found = published.publication(game_id)
    assert found is not None
    low, high = published.BAND
    assert Decimal(found.strong.rtp) >= low
    assert Decimal(found.strong.high) < high
    assert not found.beats_the_house


@pytest.mark.parametrize("game_id", sorted(SEED_PRICED))
def test_vegas_keeps_seed_001_s_m_and_says_whether_strong_play_beats_the_house(
    game_id: str,
) -> None:
    found = published.publication(game_id)
    assert found is not None
    assert found.multiplier == "5"
    says = "may return more than the stake" in found.basis
    assert says == found.beats_the_house == (Decimal(found.strong.high) >= 1)


def test_the_basis_names_the_players_the_deals_and_the_figures() -> None:
    found = published.publication("golf")
    assert found is not None
    for words in (found.strong.player, found.bot.player, found.clairvoyant.player):
        assert words in found.basis
    assert f"at M {found.multiplier}," in found.basis
    assert f"{found.strong.games:,} seeded deals" in found.basis


def test_the_readme_s_games_table_is_the_published_one() -> None:
    assert published.games_table() in README.read_text(encoding="utf-8"), (
        "README's games table is stale: paste `flask --app service rtp table` over it"
    )


def test_a_measurement_file_reads_back_as_written() -> None:
    measured = published.measurements("golf")
    assert published.parse("golf", published.render(measured)) == measured
