"""Amounts of dollars as people type them: a plain number, maybe with "$"; anything else
refused with what to write."""

from __future__ import annotations

import pytest

from inputs.amounts import parse_usd


@pytest.mark.parametrize(
    ("text", "amount"), [("0.50", 0.5), ("$10", 10.0), (" .5 ", 0.5), ("3.", 3.0), ("0", 0.0)]
)
def test_a_plain_number_of_dollars_is_read(text: str, amount: float) -> None:
    assert parse_usd(text) == amount


@pytest.mark.parametrize("text", ["1e3", "ten", "0,50", "", "nan", "inf", "1_000"])
def test_anything_but_a_plain_number_is_refused_with_the_shape_to_use(text: str) -> None:
    with pytest.raises(ValueError, match="is not an amount; give US dollars as a number"):
        parse_usd(text)


def test_below_zero_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'-0\.5' is below zero; give an amount of 0 or more"):
        parse_usd("-0.5")


def test_zero_is_refused_where_an_amount_must_be_more() -> None:
    with pytest.raises(ValueError, match="give more than 0 US dollars"):
        parse_usd("0", zero=False)
