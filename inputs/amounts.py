"""Amounts of money people type (`kioku people budget P --daily 0.50`, the admin page,
`budgets.daily_usd`): US dollars, written as a plain number.

A typo must never become "no limit" or a limit nobody meant, so anything but a finite
number of dollars is refused with the shape to use; "$0.50" is read as 0.50.
"""

from __future__ import annotations

import math
import re

_SHAPE = re.compile(r"^\s*\$?\s*(\d+(?:\.\d*)?|\.\d+)\s*$")


def parse_usd(text: str, *, zero: bool = True) -> float:
    """The dollars in `text` ("0.50", "$10", "3"); a ValueError saying what to write else.
    `zero`: whether 0 (nothing may be spent) is an amount here."""
    match = _SHAPE.match(text)
    if not match:
        if text.strip().startswith("-"):
            least = "0 or more" if zero else "more than 0"
            raise ValueError(f"{text.strip()!r} is below zero; give an amount of {least}")
        raise ValueError(
            f"{text.strip()!r} is not an amount; give US dollars as a number, such as 0.50 or 10"
        )
    amount = float(match.group(1))
    if not math.isfinite(amount):
        raise ValueError(f"{text.strip()!r} is too large an amount; give US dollars, such as 10")
    if amount == 0 and not zero:
        raise ValueError("0 is no amount here; give more than 0 US dollars, such as 0.50")
    return amount
