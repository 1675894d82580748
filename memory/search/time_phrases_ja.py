"""The Japanese time phrases: 昨日, 3日前, 先週, 金曜日に (counted back from today);
2024年3月3日, 3月, 去年の夏 (named by the calendar), each with the particle after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from memory.search.calendar_days import (
    JA_SEASONS,
    JA_WEEKDAYS,
    Days,
    a_day,
    a_month,
    a_season,
    a_year,
    counted_back,
    latest_day,
    latest_month,
    monday_of,
    number_of,
    weekday_before,
)
from memory.search.time_rule import Rule

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
) -> Rule:
    return Rule(pattern + _JA_TAIL, days, counted, yearly=yearly)


def _ja_weekday(match: re.Match[str], today: date) -> Days:
    monday = monday_of(today) - timedelta(weeks=_WEEKS_BACK[match[1]])
    return a_day(monday + timedelta(days=JA_WEEKDAYS.index(match[2])))


def _ja_back(words: dict[str, int], unit: str) -> Callable[[re.Match[str], date], Days]:
    return lambda m, t: counted_back(unit, words[m[1]], t)


def _alternatives(words: dict[str, int]) -> str:
    return "(" + "|".join(sorted(words, key=len, reverse=True)) + ")"


JAPANESE = [
    _ja(
        _JA_YEAR + _JA_MONTH + _JA_DATE,
        lambda m, t: a_day(date(int(m[1]), number_of(m[2]), number_of(m[3]))),
        False,
    ),
    _ja(_JA_YEAR + _JA_MONTH, lambda m, t: a_month(int(m[1]), number_of(m[2])), False),
    _ja(
        _alternatives(_YEARS_BACK) + "の([春夏秋冬])",
        lambda m, t: a_season(t.year - _YEARS_BACK[m[1]], JA_SEASONS[m[2]]),
        False,
    ),
    _ja(
        _JA_YEAR + "の?([春夏秋冬])",
        lambda m, t: a_season(int(m[1]), JA_SEASONS[m[2]]),
        False,
    ),
    _ja("(?:一昨日|おととい)", lambda m, t: a_day(t - timedelta(days=2)), True),
    _ja("(?:今日|本日|今朝|今夜|今晩)", lambda m, t: a_day(t), True),
    _ja("(?:昨日|昨夜|昨晩)", lambda m, t: a_day(t - timedelta(days=1)), True),
    _ja(
        _JA_NUM + r"(日|週|[かヶヵカケ箇]月|年)間?前",
        lambda m, t: counted_back(m[2][-1], number_of(m[1]), t),
        True,
    ),
    _ja(_alternatives(_WEEKS_BACK) + "の?([月火水木金土日])曜日?", _ja_weekday, True),
    _ja(
        "(?<!毎)(?<!毎週)([月火水木金土日])曜日?(?=に)",
        lambda m, t: weekday_before(t, JA_WEEKDAYS.index(m[1])),
        True,
    ),
    _ja(_alternatives(_WEEKS_BACK), _ja_back(_WEEKS_BACK, "週"), True),
    _ja(_alternatives(_MONTHS_BACK), _ja_back(_MONTHS_BACK, "月"), True),
    _ja(_alternatives(_YEARS_BACK), _ja_back(_YEARS_BACK, "年"), True),
    _ja(
        _JA_MONTH + _JA_DATE,
        lambda m, t: latest_day(t, number_of(m[1]), number_of(m[2])),
        False,
        yearly=True,
    ),
    _ja(_JA_YEAR, lambda m, t: a_year(int(m[1])), False),
    _ja(_JA_MONTH + "(?!前)", lambda m, t: latest_month(t, number_of(m[1])), False, yearly=True),
]
