"""What every game publishes about its return (service/rtp/published.py): the three players'
figures at the game's current M, priced into the band against the strong player, and the
README's table made from them."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from service.games import STANDALONE
from service.games.klondike import VEGAS_DRAW1, VEGAS_DRAW3
from service.rtp import published
from service.rtp.players import KINDS
from service.rtp.roster import STRONG, STRONG_FOR_GAME, player_for
from service.rtp.simulate import rtp_of

README = Path(__file__).resolve().parents[2] / "README.md"
#: Seed 001 fixes Vegas Klondike's M; they publish what strong play gets, whatever it is.
SEED_PRICED = {VEGAS_DRAW1.id, VEGAS_DRAW3.id}
PRICED = sorted(set(STANDALONE) - SEED_PRICED)


def _published(game_id: str) -> published.Publication:
    found = published.publication(game_id)
    assert found is not None
    return found


def _strong(game_id: str) -> published.Figure:
    found = _published(game_id).strong
    assert found is not None
    return found


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
    found = _published(game_id)
    assert found.multiplier == rules.multiplier
    assert found.bot == published.figure(measured["bot"])
    assert found.bot.rtp == str(rtp_of(game_id, measured["bot"].histogram).rtp)
    assert found.displayed == found.strong == published.figure(measured["strong"])


def test_a_game_not_yet_measured_by_a_strong_player_shows_the_bot_s_figure_and_says_so() -> None:
    """A new game (or a new player not yet run) is published with the bot's figure, never
    with a blank or a stale strong figure."""
    found = _published("pyramid")
    bot_only = replace(found, strong=None, clairvoyant=None)
    assert bot_only.displayed == found.bot
    assert not bot_only.beats_the_house
    assert "Strong play is not yet measured for this game." in bot_only.basis
    assert "not yet measured" not in found.basis


@pytest.mark.parametrize("game_id", list(STANDALONE))
def test_the_strong_player_beats_the_bot_and_the_bound_beats_both(game_id: str) -> None:
    found = _published(game_id)
    assert found.clairvoyant is not None
    bot, strong, bound = (Decimal(f.rtp) for f in (found.bot, _strong(game_id), found.clairvoyant))
    assert bot < strong <= bound


def test_a_game_s_own_strong_player_plays_it_and_no_other_game() -> None:
    """Vegas draw one and Klondike have the family's player with their own budget; draw three
    has the family's."""
    for game_id, player in STRONG_FOR_GAME.items():
        assert player_for(STANDALONE[game_id], "strong") == player
    assert player_for(VEGAS_DRAW1, "strong").budget != STRONG["klondike"].budget
    assert player_for(VEGAS_DRAW1, "strong").version == STRONG["klondike"].version
    assert player_for(VEGAS_DRAW3, "strong") == STRONG["klondike"]


@pytest.mark.parametrize("game_id", PRICED)
def test_each_game_is_priced_into_the_band_against_the_strong_player(game_id: str) -> None:
    """At least 94% to the strong player, and the whole of its 95% interval below 97%."""
    low, high = published.BAND
    assert Decimal(_strong(game_id).rtp) >= low
    assert Decimal(_strong(game_id).high) < high
    assert not _published(game_id).beats_the_house


@pytest.mark.parametrize("game_id", sorted(SEED_PRICED))
def test_vegas_keeps_seed_001_s_m_and_says_whether_strong_play_beats_the_house(
    game_id: str,
) -> None:
    found = _published(game_id)
    assert found.multiplier == "5"
    says = "may return more than the stake" in found.basis
    assert says == found.beats_the_house == (Decimal(_strong(game_id).high) >= 1)


def test_the_basis_names_the_players_the_deals_and_the_figures() -> None:
    found = _published("golf")
    assert found.clairvoyant is not None
    for words in (_strong("golf").player, found.bot.player, found.clairvoyant.player):
        assert words in found.basis
    assert f"at M {found.multiplier}," in found.basis
    assert f"{_strong('golf').games:,} seeded deals" in found.basis


def test_the_readme_s_games_table_is_the_published_one() -> None:
    assert published.games_table() in README.read_text(encoding="utf-8"), (
        "README's games table is stale: paste `flask --app service rtp table` over it"
    )


def test_a_measurement_file_reads_back_as_written() -> None:
    measured = published.measurements("golf")
    assert published.parse("golf", published.render(measured)) == measured


def test_a_searching_player_s_budget_is_published_beside_its_figure() -> None:
    """A measurement keeps its player's budget per decision (Player.budget) and the figure
    shows it; one measured before budgets were shows none."""
    measured = dict(published.measurements("golf"))
    strong = replace(measured["strong"], budget="16 worlds x 3,000 positions a candidate")
    measured["strong"] = strong
    again = published.parse("golf", published.render(measured))
    assert again == measured
    assert published.figure(again["strong"]).budget == "16 worlds x 3,000 positions a candidate"
    assert published.figure(replace(strong, budget="")).budget is None


def test_the_readme_s_pricing_table_is_the_published_one() -> None:
    assert published.pricing_table() in README.read_text(encoding="utf-8"), (
        "README's pricing table is stale: paste `flask --app service rtp prices` over it"
    )


@pytest.mark.parametrize("game_id", published.KLONDIKE)
def test_the_price_for_97_is_the_largest_m_strong_play_gets_97_at(game_id: str) -> None:
    m = published.multiplier_for(game_id)
    assert m is not None
    strong = published.measurements(game_id)["strong"]
    at = published.figure(strong, m)
    above = published.figure(strong, f"{Decimal(m) + Decimal('0.01')}")
    assert Decimal(at.rtp) <= published.PRICE_TARGET < Decimal(above.rtp)
