"""Time phrases in a query, in English and Japanese, and the days each one names.

Only calendar arithmetic: a phrase names the days [first, end) counted from `today`;
memory.search.when turns them into instants in the searcher's zone and says what they
do to a search. A phrase is *counted* back from today ("last week", "3 days ago",
先週, 一昨年) or *named* by the calendar ("in March", "2024", 3月, 去年の夏: seasons
count as named, since where one starts is a matter of opinion).

The patterns are strict on purpose: a month name alone ("may", "march") or a short
weekday ("sat") is an ordinary word, and so is any phrase not listed here. Weeks start
on Monday; a month or a day named without a year is the latest one not after today,
and is *yearly*: the same days of earlier years may be meant ("in June" of a history
that ended two years ago), which memory.search.when offers as well, latest first;
seasons are the northern meteorological ones (summer is June to August; a winter runs
from December to February and is named by its December's year).

Every phrase holds a digit or one of `memory.search.when`'s keys, which skips this
module (and compiling its patterns, on first use) for a query that holds none.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import NamedTuple

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


class Phrase(NamedTuple):
    """A time phrase: where it stands in the text, the days it names, how it was said.

    `counted`: counted back from today (else named by the calendar). `kept`: still
    searched as a word too (an ISO date, which people also write as an identifier).
    `yearly`: named without a year ("in June", "3月3日"), so other years' may be meant.
    """

    start: int
    stop: int
    first: date
    end: date
    counted: bool
    kept: bool = False
    yearly: bool = False


Days = tuple[date, date]


class _Rule(NamedTuple):
    """A phrase's pattern, the days a match names, and how it was said (see `Phrase`)."""

    pattern: str
    days: Callable[[re.Match[str], date], Days]
    counted: bool
    flags: int = 0
    kept: bool = False
    yearly: bool | Callable[[re.Match[str]], bool] = False


def phrases(text: str, today: date) -> list[Phrase]:
    """The time phrases of `text` (its first-listed reading where two overlap), in order."""
    found: list[Phrase] = []
    for pattern, rule in _compiled():
        for match in pattern.finditer(text):
            start, stop = match.span()
            if any(start < p.stop and p.start < stop for p in found):
                continue
            try:
                first, end = rule.days(match, today)
            except (ValueError, OverflowError):
                continue
            yearly = rule.yearly(match) if callable(rule.yearly) else rule.yearly
            found.append(Phrase(start, stop, first, end, rule.counted, rule.kept, yearly))
    return sorted(found, key=lambda p: p.start)


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


@functools.cache
def _compiled() -> list[tuple[re.Pattern[str], _Rule]]:
    return [(re.compile(rule.pattern, rule.flags), rule) for rule in _ENGLISH + _JAPANESE]


# -- calendar arithmetic ---------------------------------------------------------------


def _day(day: date) -> Days:
    return day, day + timedelta(days=1)


def _week(monday: date) -> Days:
    return monday, monday + timedelta(days=7)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month(year: int, month: int) -> Days:
    after = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return date(year, month, 1), after


def _months_back(today: date, count: int) -> Days:
    index = today.year * 12 + today.month - 1 - count
    return _month(index // 12, index % 12 + 1)


def _year(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _season(year: int, first_month: int) -> Days:
    """The three months from `first_month` of `year` (a winter ends in the next year)."""
    index = year * 12 + first_month - 1 + 3
    return date(year, first_month, 1), date(index // 12, index % 12 + 1, 1)


def _latest_month(today: date, month: int, before: bool = False) -> Days:
    """`month` in the latest year where it is not after today (before it: `before`)."""
    late = month > today.month or (before and month == today.month)
    return _month(today.year - late, month)


def _latest_day(today: date, month: int, day: int) -> Days:
    """The latest `month`/`day` not after today (29 February: the latest leap year's)."""
    for year in range(today.year, today.year - 8, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found <= today:
            return _day(found)
    raise ValueError(f"no day {month}/{day}")


def _latest_season(today: date, first_month: int, ended: bool) -> Days:
    """The latest season from `first_month` that has begun, or (`ended`) is over."""
    for year in range(today.year, today.year - 3, -1):
        first, end = _season(year, first_month)
        if (end if ended else first) <= today:
            return first, end
    raise ValueError("no such season")


def _weekday_before(today: date, weekday: int) -> Days:
    """The latest `weekday` before today (a week ago on that day itself)."""
    back = (today.weekday() - weekday) % 7 or 7
    return _day(today - timedelta(days=back))


def _count(text: str) -> int:
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


def _back(unit: str, count: int, today: date) -> Days:
    """The day, week (Monday first), calendar month or year `count` of `unit` ago."""
    if unit in ("day", "日"):
        return _day(today - timedelta(days=count))
    if unit in ("week", "週"):
        return _week(_monday(today) - timedelta(weeks=count))
    if unit in ("month", "月"):
        return _months_back(today, count)
    return _year(today.year - count)


# -- English ----------------------------------------------------------------------------

_LEAD = r"(?<![\w-])(?:(?:in|on|during|from|since|of|at|for|by|around|over)\s+)?(?:the\s+)?"
_END = r"(?![\w-])"
_NUM = r"(\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_FULL_MONTH = "(" + "|".join(m for m, n in MONTHS.items() if len(m) > 3 or m == "may") + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_SEASON = "(" + "|".join(SEASONS) + ")"
_MONTH_NAME = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_NUMBER = r"\d{1,2}(?:st|nd|rd|th)?"
# "between August 11 and August 15 2023", "from 3 March to 10 March", "between 11 and 15
# August", "between May 3 and 9".
_RANGE = (
    r"(?:between|from)\s+(?:"
    rf"(?P<m1>{_MONTH_NAME})\s+(?P<d1>{_DAY_NUMBER})"
    rf"|(?P<d1b>{_DAY_NUMBER})(?:\s+(?:of\s+)?(?P<m1b>{_MONTH_NAME}))?"
    r")(?:,?\s*(?P<y1>(?:19|20)\d\d))?"
    r"\s+(?:and|to|until|till|through)\s+"
    rf"(?:(?P<m2>{_MONTH_NAME})\s+)?(?P<d2>{_DAY_NUMBER})(?:\s+(?:of\s+)?(?P<m2b>{_MONTH_NAME}))?"
    r"(?:,?\s*(?P<y2>(?:19|20)\d\d))?"
)
# The longest span of days a range may name (a longer one is not read as time).
RANGE_DAYS = 366


def _en(
    pattern: str,
    days: Callable[[re.Match[str], date], Days],
    counted: bool,
    yearly: bool = False,
) -> _Rule:
    return _Rule(_LEAD + pattern + _END, days, counted, re.IGNORECASE, yearly=yearly)


def _range(match: re.Match[str], today: date) -> Days:
    """The days from the first date to the second, inclusive. A month or year said on
    one side only holds for both; a year said on neither: the latest such range that
    has begun."""
    part = match.groupdict()
    first_name = part["m1"] or part["m1b"]
    last_name = part["m2"] or part["m2b"] or first_name
    if last_name is None:
        raise ValueError("a range of days with no month")
    first_month = _month_number(first_name or last_name)
    last_month = _month_number(last_name)
    first_day = int(re.sub(r"\D", "", part["d1"] or part["d1b"]))
    last_day = int(re.sub(r"\D", "", part["d2"]))
    wraps = (first_month, first_day) > (last_month, last_day)
    if part["y1"]:
        first = date(int(part["y1"]), first_month, first_day)
    elif part["y2"]:
        first = date(int(part["y2"]) - wraps, first_month, first_day)
    else:
        first = _latest_day(today, first_month, first_day)[0]
    last = date(first.year + wraps, last_month, last_day)
    if part["y2"] and last.year != int(part["y2"]):
        raise ValueError("the years said do not make a range")
    if not first <= last < first + timedelta(days=RANGE_DAYS):
        raise ValueError("not a range of days")
    return first, last + timedelta(days=1)


def _month_number(name: str) -> int:
    return MONTHS[name.lower().rstrip(".")]


def _no_year(match: re.Match[str]) -> bool:
    return not (match["y1"] or match["y2"])


def _relative_unit(match: re.Match[str], today: date) -> Days:
    which, unit = match.group(1).lower(), match.group(2).lower()
    back = 1 if which == "last" else 0
    if unit == "weekend":
        saturday = _monday(today) - timedelta(weeks=back) + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    return _back(unit, back, today)


def _month_word(match: re.Match[str], today: date) -> Days:
    which, month = match.group(1).lower(), MONTHS[match.group(2).lower()]
    if which == "this":
        return _month(today.year, month)
    return _latest_month(today, month, before=which == "last")


def _season_word(match: re.Match[str], today: date) -> Days:
    which, first = match.group(1).lower(), SEASONS[match.group(2).lower()]
    if which == "this":
        in_winter = first == 12 and today.month < 3
        return _season(today.year - in_winter, first)
    return _latest_season(today, first, ended=which in ("last", "past"))


_ENGLISH = [
    _Rule(_LEAD + _RANGE + _END, _range, False, re.IGNORECASE, yearly=_no_year),
    _Rule(
        r"(?<![\w./-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\w/-])",
        lambda m, t: _day(date(int(m[1]), int(m[2]), int(m[3]))),
        counted=False,
        kept=True,
    ),
    _en(
        _MONTH + r"\s+" + _DAY + r",?\s*" + _YEAR,
        lambda m, t: _day(date(int(m[3]), MONTHS[m[1].lower()], int(m[2]))),
        False,
    ),
    _en(
        _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s*" + _YEAR,
        lambda m, t: _day(date(int(m[3]), MONTHS[m[2].lower()], int(m[1]))),
        False,
    ),
    _en(
        _MONTH + r",?\s+(?:of\s+)?" + _YEAR,
        lambda m, t: _month(int(m[2]), MONTHS[m[1].lower()]),
        False,
    ),
    _en(
        _SEASON + r",?\s+(?:of\s+)?" + _YEAR,
        lambda m, t: _season(int(m[2]), SEASONS[m[1].lower()]),
        False,
    ),
    _en(r"day\s+before\s+yesterday", lambda m, t: _day(t - timedelta(days=2)), True),
    _en(
        r"(?:today|tonight|this\s+(?:morning|afternoon|evening))",
        lambda m, t: _day(t),
        True,
    ),
    _en(r"(?:yesterday|last\s+night)", lambda m, t: _day(t - timedelta(days=1)), True),
    _en(
        _NUM + r"\s+(day|week|month|year)s?\s+ago",
        lambda m, t: _back(m[2].lower(), _count(m[1]), t),
        True,
    ),
    _en(r"(this|last)\s+(week|weekend|month|year)", _relative_unit, True),
    _en(
        r"(?:on|last)\s+(" + "|".join(WEEKDAYS) + ")",
        lambda m, t: _weekday_before(t, WEEKDAYS.index(m[1].lower())),
        True,
    ),
    _en(r"(last|past|this)\s+(?:the\s+)?" + _SEASON, _season_word, False),
    _en(r"(in|during)\s+(?:the\s+)?" + _SEASON, _season_word, False, yearly=True),
    _en(
        _FULL_MONTH + r"\s+" + _DAY,
        lambda m, t: _latest_day(t, MONTHS[m[1].lower()], int(m[2])),
        False,
        yearly=True,
    ),
    _en(
        _DAY + r"\s+(?:of\s+)?" + _FULL_MONTH,
        lambda m, t: _latest_day(t, MONTHS[m[2].lower()], int(m[1])),
        False,
        yearly=True,
    ),
    _en(r"(last|this)[\s-]+" + _FULL_MONTH, _month_word, False),
    _en(r"(in|during|early|mid|late)[\s-]+" + _FULL_MONTH, _month_word, False, yearly=True),
    _en(r"(?:in|during)\s+(?:the\s+year\s+)?" + _YEAR, lambda m, t: _year(int(m[1])), False),
]

# -- Japanese -----------------------------------------------------------------------------

_JA_NUM = r"(\d{1,4}|[一二三四五六七八九]?十[一二三四五六七八九]?|[一二三四五六七八九])"
_JA_YEAR = r"((?:19|20)\d\d)年"
_JA_MONTH = r"(?<![\d\u3007一二三四五六七八九十])(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月"
_JA_DATE = r"(3[01]|[12]?\d|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])日"
# A particle after a phrase goes with it: 先週の会議 leaves 会議, 3月に leaves nothing.
_JA_TAIL = r"(?:ごろ|頃|くらい|ぐらい)?(?:から|まで|には|に|の|は|も|で)?"
_YEARS_BACK = {"今年": 0, "去年": 1, "昨年": 1, "一昨年": 2, "おととし": 2}
_WEEKS_BACK = {"今週": 0, "先週": 1, "先々週": 2}
_MONTHS_BACK = {"今月": 0, "先月": 1, "先々月": 2}


def _ja(
    pattern: str,
    days: Callable[[re.Match[str], date], Days],
    counted: bool,
    yearly: bool = False,
) -> _Rule:
    return _Rule(pattern + _JA_TAIL, days, counted, yearly=yearly)


def _ja_weekday(match: re.Match[str], today: date) -> Days:
    monday = _monday(today) - timedelta(weeks=_WEEKS_BACK[match[1]])
    return _day(monday + timedelta(days=JA_WEEKDAYS.index(match[2])))


def _ja_back(words: dict[str, int], unit: str) -> Callable[[re.Match[str], date], Days]:
    return lambda m, t: _back(unit, words[m[1]], t)


def _alternatives(words: dict[str, int]) -> str:
    return "(" + "|".join(sorted(words, key=len, reverse=True)) + ")"


_JAPANESE = [
    _ja(
        _JA_YEAR + _JA_MONTH + _JA_DATE,
        lambda m, t: _day(date(int(m[1]), _count(m[2]), _count(m[3]))),
        False,
    ),
    _ja(_JA_YEAR + _JA_MONTH, lambda m, t: _month(int(m[1]), _count(m[2])), False),
    _ja(
        _alternatives(_YEARS_BACK) + "の([春夏秋冬])",
        lambda m, t: _season(t.year - _YEARS_BACK[m[1]], JA_SEASONS[m[2]]),
        False,
    ),
    _ja(
        _JA_YEAR + "の?([春夏秋冬])",
        lambda m, t: _season(int(m[1]), JA_SEASONS[m[2]]),
        False,
    ),
    _ja("(?:一昨日|おととい)", lambda m, t: _day(t - timedelta(days=2)), True),
    _ja("(?:今日|本日|今朝|今夜|今晩)", lambda m, t: _day(t), True),
    _ja("(?:昨日|昨夜|昨晩)", lambda m, t: _day(t - timedelta(days=1)), True),
    _ja(
        _JA_NUM + r"(日|週|[かヶヵカケ箇]月|年)間?前",
        lambda m, t: _back(m[2][-1], _count(m[1]), t),
        True,
    ),
    _ja(_alternatives(_WEEKS_BACK) + "の?([月火水木金土日])曜日?", _ja_weekday, True),
    _ja(
        "(?<!毎)(?<!毎週)([月火水木金土日])曜日?(?=に)",
        lambda m, t: _weekday_before(t, JA_WEEKDAYS.index(m[1])),
        True,
    ),
    _ja(_alternatives(_WEEKS_BACK), _ja_back(_WEEKS_BACK, "週"), True),
    _ja(_alternatives(_MONTHS_BACK), _ja_back(_MONTHS_BACK, "月"), True),
    _ja(_alternatives(_YEARS_BACK), _ja_back(_YEARS_BACK, "年"), True),
    _ja(
        _JA_MONTH + _JA_DATE,
        lambda m, t: _latest_day(t, _count(m[1]), _count(m[2])),
        False,
        yearly=True,
    ),
    _ja(_JA_YEAR, lambda m, t: _year(int(m[1])), False),
    _ja(_JA_MONTH + "(?!前)", lambda m, t: _latest_month(t, _count(m[1])), False, yearly=True),
]
