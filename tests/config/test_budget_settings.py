"""`[budgets]`: unset by default, amounts in US dollars, and a typo refused with what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.load import ConfigError, load_settings


def test_budgets_are_unset_by_default(home: Path) -> None:
    budgets = load_settings().budgets
    assert (budgets.daily_usd, budgets.monthly_usd) == (None, None)


def test_budgets_are_read_from_the_file_and_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[budgets]\ndaily_usd = 0.5\n")
    monkeypatch.setenv("KIOKU_BUDGETS__MONTHLY_USD", "10")
    budgets = load_settings().budgets
    assert (budgets.daily_usd, budgets.monthly_usd) == (0.5, 10.0)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("0", "no amount here; give more than 0 US dollars"),
        ("-5", "is below zero; give an amount of more than 0"),
        ("ten", "is not an amount; give US dollars as a number, such as 0.50"),
        ("nan", "is not an amount"),
    ],
)
def test_a_budget_that_is_no_positive_amount_is_refused_with_what_to_write(
    home: Path, monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    monkeypatch.setenv("KIOKU_BUDGETS__DAILY_USD", value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "KIOKU_BUDGETS__DAILY_USD" in str(caught.value)
    assert said in str(caught.value)


@pytest.mark.parametrize("value", ["-1", "0", "true", "inf"])
def test_a_budget_in_the_file_that_is_no_positive_amount_names_the_key(
    home: Path, value: str
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f"[budgets]\nmonthly_usd = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "[budgets] monthly_usd" in str(caught.value)
    assert "US dollars" in str(caught.value)
