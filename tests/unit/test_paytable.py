"""Stakes and the paytable: winnings = floor(units x stake x M / max_units) (Vegas: M 5 over
52 cards, so a card pays stake x 5 / 52 exactly), limits, ladder and quotes."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core.paytable import (
    DEFAULT_LADDER,
    STAKE_GRID,
    Paytable,
    Quote,
    default_paytables,
    format_minor,
    hundredths,
    paytable_for,
    paytables_from_config,
    winnings,
)
from service.errors import RuleViolation
from service.games.klondike import VEGAS_DRAW1, VEGAS_DRAW3

GBP = default_paytables()["GBP"]
VEGAS_M = VEGAS_DRAW1.multiplier
VEGAS_UNITS = VEGAS_DRAW1.max_units


def _win_rate(stake: int) -> int:
    """What one Vegas card pays at ``stake``, as the paytable quotes it (checks the stake)."""
    return GBP.quote(stake, VEGAS_M, VEGAS_UNITS).win_rate


def _exact(units: int, stake: int, multiplier: str, max_units: int) -> Fraction:
    """units x stake x M / max_units with no rounding at all."""
    return Fraction(units * stake) * Fraction(Decimal(multiplier)) / max_units


def test_gbp_limits_from_seed_000() -> None:
    assert (GBP.min_stake, GBP.default_stake, GBP.max_stake) == (104, 520, 1_040_000)


def test_vegas_pays_five_stakes_over_52_cards_on_a_52_grid() -> None:
    assert (VEGAS_DRAW1.multiplier, VEGAS_DRAW1.max_units) == ("5", 52)
    assert (VEGAS_DRAW3.multiplier, VEGAS_DRAW3.max_units) == ("5", 52)
    assert STAKE_GRID == 52


def test_win_rate_is_stake_times_5_over_52() -> None:
    assert _win_rate(520) == 50
    assert _win_rate(104) == 10
    assert _win_rate(1_040_000) == 100_000
    assert winnings(1, 520, VEGAS_M, VEGAS_UNITS) == 50
    assert winnings(3, 520, VEGAS_M, VEGAS_UNITS) == 150
    assert winnings(0, 520, VEGAS_M, VEGAS_UNITS) == 0


@given(st.integers(min_value=2, max_value=20_000))
def test_all_52_cards_pay_exactly_five_times_the_stake(units: int) -> None:
    stake = units * 52
    assert _win_rate(stake) * 52 == 5 * stake
    assert winnings(52, stake, VEGAS_M, VEGAS_UNITS) == 5 * stake


@given(st.integers(min_value=2, max_value=20_000), st.integers(min_value=0, max_value=52))
def test_every_vegas_card_count_pays_exactly_its_share(grid: int, cards: int) -> None:
    """On the 52 grid Vegas never rounds: n cards pay n x stake x 5 / 52 exactly."""
    stake = grid * 52
    assert winnings(cards, stake, VEGAS_M, VEGAS_UNITS) == _exact(cards, stake, "5", 52)
    assert winnings(cards, stake, VEGAS_M, VEGAS_UNITS) == cards * _win_rate(stake)


def test_seed_001_break_even_is_between_10_and_11_cards() -> None:
    rate = _win_rate(5200)
    assert 10 * rate < 5200 < 11 * rate


def test_quote_gives_stake_rate_max_payout_net_and_ladder_neighbours() -> None:
    assert GBP.quote(520, "5", 52) == Quote(
        stake=520,
        currency="GBP",
        win_rate=50,
        multiplier="5",
        max_units=52,
        max_payout=2600,
        max_net_win=2080,
        previous_stake=260,
        next_stake=1040,
    )


def test_quote_carries_a_fractional_multiplier_and_its_max_units() -> None:
    # 1.3 x 520 = 676 for a full win of 35 units; one unit is 19.31..., so it quotes 19.
    assert GBP.quote(520, "1.3", 35) == Quote(
        stake=520,
        currency="GBP",
        win_rate=19,
        multiplier="1.3",
        max_units=35,
        max_payout=676,
        max_net_win=156,
        previous_stake=260,
        next_stake=1040,
    )


def test_quote_rounds_a_fractional_max_payout_down() -> None:
    quote = GBP.quote(104, "1.33", 35)  # 1.33 x 104 = 138.32
    assert (quote.max_payout, quote.max_net_win, quote.win_rate) == (138, 34, 3)
    assert (quote.multiplier, quote.max_units) == ("1.33", 35)


def test_quote_at_the_ends_of_the_ladder_has_no_neighbour_beyond() -> None:
    assert GBP.quote(104, VEGAS_M, VEGAS_UNITS).previous_stake is None
    assert GBP.quote(104, VEGAS_M, VEGAS_UNITS).next_stake == 156
    assert GBP.quote(1_040_000, VEGAS_M, VEGAS_UNITS).next_stake is None
    assert GBP.quote(1_040_000, VEGAS_M, VEGAS_UNITS).previous_stake == 520_000


def test_quote_off_the_ladder_steps_to_the_nearest_ladder_stakes() -> None:
    quote = GBP.quote(52 * 7, VEGAS_M, VEGAS_UNITS)  # 364, between 260 and 520
    assert (quote.previous_stake, quote.next_stake) == (260, 520)


# --- M as a decimal string --------------------------------------------------------------------


def test_a_fractional_multiplier_pays_the_floor_and_the_house_keeps_the_fraction() -> None:
    # M 1.3 over 35 units at 520: one unit is 520 x 1.3 / 35 = 19.314...
    assert winnings(1, 520, "1.3", 35) == 19
    assert winnings(10, 520, "1.3", 35) == 193  # 193.14...
    assert winnings(17, 520, "1.3", 35) == 328  # 328.34...
    assert winnings(34, 520, "1.3", 35) == 656  # 656.68..., never rounded up
    assert winnings(35, 520, "1.3", 35) == 676  # a full win is exactly M x stake
    assert winnings(0, 520, "1.3", 35) == 0


@given(
    st.integers(min_value=0, max_value=35),
    st.integers(min_value=2, max_value=20_000),
    st.integers(min_value=100, max_value=999_999),
    st.integers(min_value=1, max_value=104),
)
def test_winnings_are_the_floor_of_the_exact_amount(
    units: int, grid: int, m_hundredths: int, max_units: int
) -> None:
    stake = grid * 52
    whole, part = divmod(m_hundredths, 100)
    multiplier = f"{whole}.{part:02d}"
    paid = winnings(units, stake, multiplier, max_units)
    exact = _exact(units, stake, multiplier, max_units)
    assert paid <= exact < paid + 1  # rounded down, by less than one minor unit


@pytest.mark.parametrize(
    ("multiplier", "expected"),
    [("5", 500), ("1.3", 130), ("1.25", 125), ("1.05", 105), ("2.50", 250), ("9999.99", 999999)],
)
def test_hundredths_reads_m_exactly(multiplier: str, expected: int) -> None:
    assert hundredths(multiplier) == expected


@pytest.mark.parametrize(
    "multiplier",
    ["", "0", "05", "1.", ".5", "1.234", "-1", "+1", "1e2", " 5", "5 ", "1,3", "five", "1.3.0"],
)
def test_hundredths_refuses_a_badly_written_m(multiplier: str) -> None:
    with pytest.raises(ValueError, match="at most two places"):
        hundredths(multiplier)
    with pytest.raises(ValueError, match="at most two places"):
        winnings(1, 520, multiplier, 52)


@pytest.mark.parametrize("stake", [0, 52, 103, 1_040_052, 2_000_000, -520])
def test_stake_outside_the_range_is_refused_with_the_range(stake: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        GBP.quote(stake, VEGAS_M, VEGAS_UNITS)
    assert exc.value.code == "stake-out-of-range"
    assert "104 to 1040000" in exc.value.detail
    assert "GBP 1.04 to GBP 10,400.00" in exc.value.detail


@pytest.mark.parametrize("stake", [105, 500, 521, 1_039_999])
def test_stake_not_a_multiple_of_52_is_refused(stake: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        GBP.quote(stake, VEGAS_M, VEGAS_UNITS)
    assert exc.value.code == "stake-not-multiple"
    assert "multiples of 52" in exc.value.detail
    with pytest.raises(RuleViolation) as exc:
        GBP.check_stake(stake)
    assert exc.value.code == "stake-not-multiple"


def test_unknown_currency_is_refused_naming_the_offered_ones() -> None:
    with pytest.raises(RuleViolation) as exc:
        paytable_for(default_paytables(), "JPY")
    assert exc.value.code == "unknown-currency"
    assert "EUR, GBP, USD" in exc.value.detail


def test_ladder_is_configurable() -> None:
    tables = paytables_from_config(
        [
            {
                "id": "vegas-gbp-small",
                "version": 3,
                "currency": "GBP",
                "min_stake": 104,
                "default_stake": 208,
                "max_stake": 520,
                "ladder": [104, 208, 520],
            }
        ]
    )
    table = tables["GBP"]
    assert (table.id, table.version) == ("vegas-gbp-small", 3)
    assert table.quote(208, VEGAS_M, VEGAS_UNITS).next_stake == 520


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"min_stake": 100}, "multiple of 52"),
        ({"ladder": (104, 520, 208)}, "strictly increasing"),
        ({"ladder": (52, 520)}, "inside the stake range"),
        ({"default_stake": 364}, "default stake must be on the ladder"),
        ({"min_stake": 1040, "default_stake": 520}, "min <= default"),
    ],
)
def test_a_bad_paytable_is_refused_at_load(changes: dict[str, object], problem: str) -> None:
    fields = {
        "id": "t",
        "version": 1,
        "currency": "GBP",
        "min_stake": 104,
        "default_stake": 520,
        "max_stake": 1_040_000,
        "ladder": DEFAULT_LADDER,
    }
    with pytest.raises(ValueError, match=problem):
        Paytable(**{**fields, **changes})  # type: ignore[arg-type]


def test_every_ladder_stake_is_playable() -> None:
    for stake in DEFAULT_LADDER:
        GBP.check_stake(stake)
        assert _win_rate(stake) * 52 == 5 * stake


def test_format_minor() -> None:
    assert format_minor(104, "GBP") == "GBP 1.04"
    assert format_minor(1_040_000, "GBP") == "GBP 10,400.00"
    assert format_minor(-5, "EUR") == "-EUR 0.05"
