"""`[budgets]`: what each person but the owner may spend on the model."""

from __future__ import annotations

import math

from pydantic import Field, field_validator

from config.section import Section
from inputs.amounts import parse_usd

NOT_AN_AMOUNT = "give an amount in US dollars, such as 0.50; leave it out for no limit"


class BudgetSettings(Section):
    """What each person but the owner may spend on the model, in US dollars; a person's own
    amounts (`kioku people budget`, the admin page) replace these. Unset: no limit."""

    daily_usd: float | None = Field(
        None, description="per person and day (their time zone's midnight to midnight)"
    )
    monthly_usd: float | None = Field(
        None, description="per person and calendar month (in their time zone)"
    )

    @field_validator("daily_usd", "monthly_usd", mode="before")
    @classmethod
    def _an_amount(cls, value: object) -> float | None:
        """More than 0 dollars: a typo (`"ten"`, `-5`, `0`, `true`) is refused, never read
        as no limit or as a limit nobody meant."""
        if value is None:
            return None
        if isinstance(value, str):
            return parse_usd(value, zero=False)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(NOT_AN_AMOUNT)
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{value!r} is no amount here; give more than 0 US dollars")
        return float(value)
