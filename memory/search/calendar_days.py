"""Calendar arithmetic for time phrases: the days [first, end) a phrase names, counted
from `today`, and the names of months, weekdays, seasons and counts it reads them by.

Weeks start on Monday; a month or a day named without a year is the latest one not
after today; seasons are the northern meteorological ones (summer is June to August; a
winter runs from December to February and is named by its December's year).
"""

from __future__ import annotations

from datetime import date, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        1,
    )
    for name in names.split()
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
JA_WEEKDAYS = "月火水木金土日"
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
JA_SEASONS = {"春": 3, "夏": 6, "秋": 9, "冬": 12}
COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
JA_DIGITS = {c: n for n, c in enumerate("〇一二三四五六七八九")}

Days = tuple[date, date]


def a_day(day: date) -> Days:
    return day, day + timedelta(days=1)


def a_week(monday: date) -> Days:
    return monday, monday + timedelta(days=7)


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def a_month(year: int, month: int) -> Days:
    after = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return date(year, month, 1), after


def months_back(today: date, count: int) -> Days:
    index = today.year * 12 + today.month - 1 - count
    return a_month(index // 12, index % 12 + 1)


def a_year(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def a_season(year: int, first_month: int) -> Days:
    """The three months from `first_month` of `year` (a winter ends in the next year)."""
    index = year * 12 + first_month - 1 + 3
    return date(year, first_month, 1), date(index // 12, index % 12 + 1, 1)


def latest_month(today: date, month: int, before: bool = False) -> Days:
    """`month` in the latest year where it is not after today (before it: `before`)."""
    late = month > today.month or (before and month == today.month)
    return a_month(today.year - late, month)


def latest_day(today: date, month: int, day: int) -> Days:
    """The latest `month`/`day` not after today (29 February: the latest leap year's)."""
    for year in range(today.year, today.year - 8, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found <= today:
            return a_day(found)
    raise ValueError(f"no day {month}/{day}")


def latest_season(today: date, first_month: int, ended: bool) -> Days:
    """The latest season from `first_month` that has begun, or (`ended`) is over."""
    for year in range(today.year, today.year - 3, -1):
        first, end = a_season(year, first_month)
        if (end if ended else first) <= today:
            return first, end
    raise ValueError("no such season")


def weekday_before(today: date, weekday: int) -> Days:
    """The latest `weekday` before today (a week ago on that day itself)."""
    back = (today.weekday() - weekday) % 7 or 7
    return a_day(today - timedelta(days=back))


def number_of(text: str) -> int:
    """A count in digits, English words or kanji (三, 十二, 二十)."""
    text = text.lower()
    if text.isdigit():
        return int(text)
    if text in COUNTS:
        return COUNTS[text]
    tens, _, ones = text.rpartition("十")
    if "十" not in text:
        return JA_DIGITS[text]
    return (JA_DIGITS[tens] if tens else 1) * 10 + (JA_DIGITS[ones] if ones else 0)


def counted_back(unit: str, count: int, today: date) -> Days:
    """The day, week (Monday first), calendar month or year `count` of `unit` ago."""
    if unit in ("day", "日"):
        return a_day(today - timedelta(days=count))
    if unit in ("week", "週"):
        return a_week(monday_of(today) - timedelta(weeks=count))
    if unit in ("month", "月"):
        return months_back(today, count)
    return a_year(today.year - count)


def years_before(first: date, end: date, count: int) -> list[Days]:
    """The days [first, end) in each of the `count` years before, latest first (a
    29 February only in leap years)."""
    found = []
    for back in range(1, count + 1):
        try:
            found.append((first.replace(year=first.year - back), end.replace(year=end.year - back)))
        except ValueError:
            continue
    return found
