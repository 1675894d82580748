"""The English time phrases: "yesterday", "3 days ago", "last week", "on Friday" (counted
back from today); "March 3, 2025", "in June", "last summer", "between August 11 and 15"
(named by the calendar). Strict on purpose: a month name alone ("may", "march") or a
short weekday ("sat") is an ordinary word.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from memory.search.calendar_days import (
    MONTHS,
    SEASONS,
    WEEKDAYS,
    Days,
    a_day,
    a_month,
    a_season,
    a_year,
    counted_back,
    latest_day,
    latest_month,
    latest_season,
    monday_of,
    number_of,
    weekday_before,
)
from memory.search.time_rule import Rule

_LEAD = r"(?<![\w-])(?:(?:in|on|during|from|since|of|at|for|by|around|over)\s+)?(?:the\s+)?"
_END = r"(?![\w-])"
_NUM = r"(\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR_DIGITS = r"(?:19|20)\d\d"
_MONTH = f"({_MONTH_NAMES})" + r"\.?"
_FULL_MONTH = "(" + "|".join(m for m, n in MONTHS.items() if len(m) > 3 or m == "may") + ")"
_DAY = r"(\d{1,2})" + _ORDINAL
_YEAR = f"({_YEAR_DIGITS})"
_SEASON = "(" + "|".join(SEASONS) + ")"


def _month_as(name: str) -> str:
    return rf"(?P<{name}>{_MONTH_NAMES})\.?"


def _day_as(name: str) -> str:
    return rf"(?P<{name}>\d{{1,2}})" + _ORDINAL


def _year_as(name: str) -> str:
    return rf"(?P<{name}>{_YEAR_DIGITS})"


# "between August 11 and August 15 2023", "from 3 March to 10 March", "between 11 and 15
# August", "between May 3 and 9".
_RANGE = (
    rf"(?:between|from)\s+(?:{_month_as('m1')}\s+{_day_as('d1')}"
    rf"|{_day_as('d1b')}(?:\s+(?:of\s+)?{_month_as('m1b')})?)"
    rf"(?:,?\s*{_year_as('y1')})?"
    r"\s+(?:and|to|until|till|through)\s+"
    rf"(?:{_month_as('m2')}\s+)?{_day_as('d2')}(?:\s+(?:of\s+)?{_month_as('m2b')})?"
    rf"(?:,?\s*{_year_as('y2')})?"
)
# The longest span of days a range may name (a longer one is not read as time).
RANGE_DAYS = 366


def _en(
    pattern: str,
    days: Callable[[re.Match[str], date], Days],
    counted: bool,
    yearly: bool = False,
) -> Rule:
    return Rule(_LEAD + pattern + _END, days, counted, re.IGNORECASE, yearly=yearly)


def _range(match: re.Match[str], today: date) -> Days:
    """The days from the first date to the second, inclusive. A month or year said on
    one side only holds for both; a year said on neither: the latest such range that
    has begun."""
    part = match.groupdict()
    first_name = part["m1"] or part["m1b"]
    last_name = part["m2"] or part["m2b"] or first_name
    if last_name is None:
        raise ValueError("a range of days with no month")
    first_month = MONTHS[(first_name or last_name).lower()]
    last_month = MONTHS[last_name.lower()]
    first_day = int(part["d1"] or part["d1b"])
    last_day = int(part["d2"])
    wraps = (first_month, first_day) > (last_month, last_day)
    if part["y1"]:
        first = date(int(part["y1"]), first_month, first_day)
    elif part["y2"]:
        first = date(int(part["y2"]) - wraps, first_month, first_day)
    else:
        first = latest_day(today, first_month, first_day)[0]
    last = date(first.year + wraps, last_month, last_day)
    if part["y2"] and last.year != int(part["y2"]):
        raise ValueError("the years said do not make a range")
    if not first <= last < first + timedelta(days=RANGE_DAYS):
        raise ValueError("not a range of days")
    return first, last + timedelta(days=1)


def _no_year(match: re.Match[str]) -> bool:
    return not (match["y1"] or match["y2"])


def _relative_unit(match: re.Match[str], today: date) -> Days:
    which, unit = match.group(1).lower(), match.group(2).lower()
    back = 1 if which == "last" else 0
    if unit == "weekend":
        saturday = monday_of(today) - timedelta(weeks=back) + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    return counted_back(unit, back, today)


def _month_word(match: re.Match[str], today: date) -> Days:
    which, month = match.group(1).lower(), MONTHS[match.group(2).lower()]
    if which == "this":
        return a_month(today.year, month)
    return latest_month(today, month, before=which == "last")


def _season_word(match: re.Match[str], today: date) -> Days:
    which, first = match.group(1).lower(), SEASONS[match.group(2).lower()]
    if which == "this":
        in_winter = first == 12 and today.month < 3
        return a_season(today.year - in_winter, first)
    return latest_season(today, first, ended=which in ("last", "past"))


ENGLISH = [
    Rule(_LEAD + _RANGE + _END, _range, False, re.IGNORECASE, yearly=_no_year),
    Rule(
        r"(?<![\w./-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\w/-])",
        lambda m, t: a_day(date(int(m[1]), int(m[2]), int(m[3]))),
        counted=False,
        kept=True,
    ),
    _en(
        _MONTH + r"\s+" + _DAY + r",?\s*" + _YEAR,
        lambda m, t: a_day(date(int(m[3]), MONTHS[m[1].lower()], int(m[2]))),
        False,
    ),
    _en(
        _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s*" + _YEAR,
        lambda m, t: a_day(date(int(m[3]), MONTHS[m[2].lower()], int(m[1]))),
        False,
    ),
    _en(
        _MONTH + r",?\s+(?:of\s+)?" + _YEAR,
        lambda m, t: a_month(int(m[2]), MONTHS[m[1].lower()]),
        False,
    ),
    _en(
        _SEASON + r",?\s+(?:of\s+)?" + _YEAR,
        lambda m, t: a_season(int(m[2]), SEASONS[m[1].lower()]),
        False,
    ),
    _en(r"day\s+before\s+yesterday", lambda m, t: a_day(t - timedelta(days=2)), True),
    _en(
        r"(?:today|tonight|this\s+(?:morning|afternoon|evening))",
        lambda m, t: a_day(t),
        True,
    ),
    _en(r"(?:yesterday|last\s+night)", lambda m, t: a_day(t - timedelta(days=1)), True),
    _en(
        _NUM + r"\s+(day|week|month|year)s?\s+ago",
        lambda m, t: counted_back(m[2].lower(), number_of(m[1]), t),
        True,
    ),
    _en(r"(this|last)\s+(week|weekend|month|year)", _relative_unit, True),
    _en(
        r"(?:on|last)\s+(" + "|".join(WEEKDAYS) + ")",
        lambda m, t: weekday_before(t, WEEKDAYS.index(m[1].lower())),
        True,
    ),
    _en(r"(last|past|this)\s+(?:the\s+)?" + _SEASON, _season_word, False),
    _en(r"(in|during)\s+(?:the\s+)?" + _SEASON, _season_word, False, yearly=True),
    _en(
        _FULL_MONTH + r"\s+" + _DAY,
        lambda m, t: latest_day(t, MONTHS[m[1].lower()], int(m[2])),
        False,
        yearly=True,
    ),
    _en(
        _DAY + r"\s+(?:of\s+)?" + _FULL_MONTH,
        lambda m, t: latest_day(t, MONTHS[m[2].lower()], int(m[1])),
        False,
        yearly=True,
    ),
    _en(r"(last|this)[\s-]+" + _FULL_MONTH, _month_word, False),
    _en(r"(in|during|early|mid|late)[\s-]+" + _FULL_MONTH, _month_word, False, yearly=True),
    _en(r"(?:in|during)\s+(?:the\s+year\s+)?" + _YEAR, lambda m, t: a_year(int(m[1])), False),
]
