"""Stakes and the paytable: win rate = stake x 5 / 52, limits, ladder and quotes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.errors import RuleViolation
from service.paytable import (
    DEFAULT_LADDER,
    Paytable,
    Quote,
    default_paytables,
    format_minor,
    paytable_for,
    paytables_from_config,
)

GBP = default_paytables()["GBP"]


def test_gbp_limits_from_seed_000() -> None:
    assert (GBP.min_stake, GBP.default_stake, GBP.max_stake) == (104, 520, 1_040_000)


def test_win_rate_is_stake_times_5_over_52() -> None:
    assert GBP.win_rate(520) == 50
    assert GBP.win_rate(104) == 10
    assert GBP.win_rate(1_040_000) == 100_000


@given(st.integers(min_value=2, max_value=20_000))
def test_all_52_cards_pay_exactly_five_times_the_stake(units: int) -> None:
    stake = units * 52
    assert GBP.win_rate(stake) * 52 == 5 * stake


def test_seed_001_break_even_is_between_10_and_11_cards() -> None:
    rate = GBP.win_rate(5200)
    assert 10 * rate < 5200 < 11 * rate


def test_quote_gives_stake_rate_max_payout_net_and_ladder_neighbours() -> None:
    assert GBP.quote(520) == Quote(
        stake=520,
        currency="GBP",
        win_rate=50,
        max_payout=2600,
        max_net_win=2080,
        previous_stake=260,
        next_stake=1040,
    )


def test_quote_at_the_ends_of_the_ladder_has_no_neighbour_beyond() -> None:
    assert GBP.quote(104).previous_stake is None
    assert GBP.quote(104).next_stake == 156
    assert GBP.quote(1_040_000).next_stake is None
    assert GBP.quote(1_040_000).previous_stake == 520_000


def test_quote_off_the_ladder_steps_to_the_nearest_ladder_stakes() -> None:
    quote = GBP.quote(52 * 7)  # 364, between 260 and 520
    assert (quote.previous_stake, quote.next_stake) == (260, 520)


@pytest.mark.parametrize("stake", [0, 52, 103, 1_040_052, 2_000_000, -520])
def test_stake_outside_the_range_is_refused_with_the_range(stake: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        GBP.quote(stake)
    assert exc.value.code == "stake-out-of-range"
    assert "104 to 1040000" in exc.value.detail
    assert "GBP 1.04 to GBP 10,400.00" in exc.value.detail


@pytest.mark.parametrize("stake", [105, 500, 521, 1_039_999])
def test_stake_not_a_multiple_of_52_is_refused(stake: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        GBP.win_rate(stake)
    assert exc.value.code == "stake-not-multiple"
    assert "multiples of 52" in exc.value.detail


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
    assert table.quote(208).next_stake == 520


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
        assert GBP.win_rate(stake) * 52 == 5 * stake


def test_format_minor() -> None:
    assert format_minor(104, "GBP") == "GBP 1.04"
    assert format_minor(1_040_000, "GBP") == "GBP 10,400.00"
    assert format_minor(-5, "EUR") == "-EUR 0.05"
