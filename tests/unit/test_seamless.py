"""The seamless wallet's arithmetic and the meaning of its answers (issue 37)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core import seamless
from service.core.seamless import Status, UnconvertibleCurrency


def test_amounts_are_hub88_s_hundred_thousandths_of_the_currency_unit() -> None:
    assert seamless.to_wire(520, "GBP") == 520_000  # GBP 5.20
    assert seamless.to_wire(520, "JPY") == 52_000_000  # JPY 520: no minor unit
    assert seamless.to_wire(520, "KWD") == 52_000  # KWD 0.520: three decimals
    assert seamless.from_wire(520_000, "gbp") == 520


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(["GBP", "JPY", "KWD", "CLF"]))
def test_every_minor_amount_goes_to_the_wire_and_back_exactly(minor: int, currency: str) -> None:
    assert seamless.from_wire(seamless.to_wire(minor, currency), currency) == minor


def test_a_wire_amount_that_is_not_whole_minor_units_is_refused_not_rounded() -> None:
    with pytest.raises(ValueError, match="not a whole number of GBP minor units"):
        seamless.from_wire(520_001, "GBP")


@pytest.mark.parametrize("currency", ["XTS", "XAU", "ABC", ""])
def test_a_currency_the_wire_cannot_carry_exactly_is_refused(currency: str) -> None:
    """The test code and gold have no minor unit; an unknown code is not ISO 4217's."""
    with pytest.raises(UnconvertibleCurrency):
        seamless.exponent(currency)


def test_an_ok_is_confirmed_and_an_unknown_is_unknown_for_every_method() -> None:
    for method in ("bet", "win", "rollback"):
        assert seamless.outcome(method, "RS_OK") == "confirmed"
        assert seamless.outcome(method, "RS_ERROR_UNKNOWN") == "unknown"
        assert seamless.outcome(method, "RS_SOMETHING_NEW") == "unknown"
        assert seamless.outcome(method, "RS_ERROR_DUPLICATE_TRANSACTION") == "review"


def test_a_bet_s_other_errors_are_definite_refusals() -> None:
    others = set(Status) - {Status.OK, Status.UNKNOWN, Status.DUPLICATE_TRANSACTION}
    assert others >= seamless.BET_REFUSALS
    assert {seamless.outcome("bet", s) for s in others} == {"refused"}


def test_a_win_the_wallet_refuses_is_for_review_and_never_rolled_back() -> None:
    for status in ("RS_ERROR_TRANSACTION_DOES_NOT_EXIST", "RS_ERROR_TRANSACTION_ROLLED_BACK"):
        assert seamless.outcome("win", status) == "review"
    assert seamless.outcome("win", "RS_ERROR_INVALID_SIGNATURE") == "unknown"  # re-sent


def test_a_rollback_of_a_bet_never_applied_settles_unless_the_bet_was_confirmed() -> None:
    missing = "RS_ERROR_TRANSACTION_DOES_NOT_EXIST"
    assert seamless.outcome("rollback", missing) == "confirmed"
    assert seamless.outcome("rollback", missing, bet_confirmed=True) == "review"
    assert seamless.outcome("rollback", "RS_ERROR_TRANSACTION_ROLLED_BACK") == "confirmed"
