"""A time phrase's rule: its pattern, the days a match names, and how it was said."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import NamedTuple

from memory.search.calendar_days import Days


class Rule(NamedTuple):
    """A phrase's pattern, the days a match names, and how it was said (see
    `memory.search.time_phrases.Phrase`); `yearly` may depend on the match (a range of
    days said with a year or without)."""

    pattern: str
    days: Callable[[re.Match[str], date], Days]
    counted: bool
    flags: int = 0
    kept: bool = False
    yearly: bool | Callable[[re.Match[str]], bool] = False
