"""Time phrases in a query, in English and Japanese, and the days each one names.

Only calendar arithmetic: a phrase names the days [first, end) counted from `today`;
memory.search.when turns them into instants in the searcher's zone and says what they
do to a search. A phrase is *counted* back from today ("last week", "3 days ago",
先週, 一昨年) or *named* by the calendar ("in March", "2024", 3月, 去年の夏: seasons
count as named, since where one starts is a matter of opinion).

The patterns are strict on purpose: a month name alone ("may", "march") or a short
weekday ("sat") is an ordinary word, and so is any phrase not listed here
(memory.search.time_phrases_en, memory.search.time_phrases_ja). A month or a day named
without a year is the latest one not after today (memory.search.calendar_days), and is
*yearly*: the same days of earlier years may be meant ("in June" of a history that
ended two years ago), which memory.search.when offers as well, latest first.

Every phrase holds a digit or one of `memory.search.when`'s keys, which skips this
module (and compiling its patterns, on first use) for a query that holds none.
"""

from __future__ import annotations

import functools
import re
from datetime import date
from typing import NamedTuple

from memory.search.time_phrases_en import ENGLISH
from memory.search.time_phrases_ja import JAPANESE
from memory.search.time_rule import Rule


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


@functools.cache
def _compiled() -> list[tuple[re.Pattern[str], Rule]]:
    return [(re.compile(rule.pattern, rule.flags), rule) for rule in ENGLISH + JAPANESE]
