"""Time in a search: bounds given outright (`--since/--until`) and time said in the query.

The query's time phrases (memory.search.time_phrases) are read in the searcher's zone,
relative to their `now`, and do one of two things:

- A period counted back from today *narrows*: only turns inside it are searched.
  today, yesterday, the day before yesterday, 3 days ago, on/last Friday, this/last
  week (or weekend), 2 weeks ago, this/last month, this/last year, two years ago;
  今日, 昨日, 一昨日, 3日前, 金曜日に, 今週, 先週, 先週の金曜, 今月, 先月, 今年, 去年,
  一昨年, 2年前.
- A period named by the calendar *boosts*: turns inside it rank higher, and the others
  are still found. in March, March 2025, March 3(, 2025), 3 March 2025, in 2024,
  last summer, 2026-03-03; 3月, 2024年, 2024年3月, 3月3日, 去年の夏. A date someone
  names is often a date they wrote down ("the visit on 2026-03-03"), so hiding every
  other turn would lose the one that says it. A month, day or season named without a
  year ("in June", "3月3日") is the latest one that holds what is found: this June, or
  when nothing found was said in it, the June before, and so on (`Boost`).

The words of a phrase leave the query (they would match turns that say "week"), except
an ISO date, which is also searched as written. When the period holds none of what is
found (nothing matches in the week narrowed to, no hit lies in the month boosted), the
query is searched again as typed, over all time: a person's "last week" is often ten
days ago, and "4 years ago" or "last summer" may be words they said. Bounds given
outright never widen. A query of nothing but time phrases ("last week", "先週",
"March 2025") lists that period's sessions, newest first.
"""

from __future__ import annotations

import math
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from memory.search.time_phrases import Phrase

# Years before this one that a month, day or season named without a year may mean.
YEARS_BACK = 30
DATE_FORMS = "YYYY-MM-DD, or a full ISO time such as 2026-03-03T14:30 or 2026-03-03T14:30+09:00"


class BadDate(ValueError):
    """A since/until that is not a date; `str()` says which forms are read."""


class Period(NamedTuple):
    """The instants [start, end), in epoch seconds (either side may be infinite)."""

    start: float
    end: float

    def holds(self, ts: float) -> bool:
        return self.start <= ts < self.end

    def within(self, other: Period | None) -> Period:
        """The part of this period inside `other` (empty when they do not meet)."""
        if other is None:
            return self
        return Period(max(self.start, other.start), min(self.end, other.end))


class Boost(NamedTuple):
    """A period the query names by the calendar (`period`); when named without a year,
    the same days of the `YEARS_BACK` years before as well (`earlier`, latest first)."""

    period: Period
    earlier: tuple[Period, ...] = ()

    def holding(self, found: Sequence[float]) -> Period | None:
        """The latest of its periods holding any of the instants `found`: "in June" means
        the June the words were said in. (Sorted once: thousands of instants, 31 years.)"""
        instants = sorted(found)
        for period in (self.period, *self.earlier):
            first = bisect_left(instants, period.start)
            if first < len(instants) and instants[first] < period.end:
                return period
        return None


class When(NamedTuple):
    """What a search knows of time: the searcher's `now` (aware, in their zone: the query's
    time phrases are read by it) and the bounds given outright, [since, until)."""

    now: datetime
    since: float | None = None
    until: float | None = None

    def bounds(self) -> Period | None:
        if self.since is None and self.until is None:
            return None
        return Period(
            -math.inf if self.since is None else self.since,
            math.inf if self.until is None else self.until,
        )


class Reading(NamedTuple):
    """A query as a search takes it: `text` less its time phrases, the `bounds` given
    outright, the period the query narrows to (`said`, inside the bounds) and the
    periods it boosts. `timed`: the query said a time or bounds were given."""

    text: str
    bounds: Period | None = None
    said: Period | None = None
    boosts: tuple[Boost, ...] = ()
    timed: bool = False

    def narrowed(self) -> Period | None:
        """The period searched first: what the query said, else the bounds."""
        return self.said or self.bounds

    def holds(self, found: list[float]) -> bool:
        """Whether the time the query said holds what was found (turns at `found`): any of
        it inside a period it narrows to, else one inside a period it boosts. When not,
        the query is searched again as typed: its time words count as words."""
        if self.said is not None:
            return bool(found)
        return any(boost.holding(found) is not None for boost in self.boosts)

    def listed(self) -> Period | None:
        """The period a query of nothing but time phrases lists."""
        if self.said is not None:
            return self.said
        if self.boosts:
            periods = [boost.period for boost in self.boosts]
            span = Period(min(p.start for p in periods), max(p.end for p in periods))
            return span.within(self.bounds)
        return self.bounds


def read(query: str, when: When | None) -> Reading:
    """`query` with its time phrases read at `when.now` (None: no time, all words)."""
    if when is None:
        return Reading(query)
    bounds = when.bounds()
    text = query if query.isascii() else unicodedata.normalize("NFKC", query)
    zone = when.now.tzinfo
    assert zone is not None, "`When.now` must carry the searcher's zone"
    found = _phrases(text, when.now.date())
    said: Period | None = None
    boosts: list[Boost] = []
    for phrase in reversed(found):
        period = _period(phrase.first, phrase.end, zone)
        if phrase.counted:
            said = period.within(said)
        else:
            boosts.append(Boost(period, _earlier(phrase, zone)))
        if not phrase.kept:
            text = text[: phrase.start] + " " + text[phrase.stop :]
    if not found:
        return Reading(query, bounds, timed=bounds is not None)
    said = None if said is None else said.within(bounds)
    return Reading(text, bounds, said, tuple(reversed(boosts)), timed=True)


def _earlier(phrase: Phrase, zone: tzinfo) -> tuple[Period, ...]:
    """The same days as a yearly phrase names, in the years before (none for the others)."""
    if not phrase.yearly:
        return ()
    from memory.search.calendar_days import years_before

    years = years_before(phrase.first, phrase.end, YEARS_BACK)
    return tuple(_period(first, end, zone) for first, end in years)


def _period(first: date, end: date, zone: tzinfo) -> Period:
    return Period(_midnight(first, zone), _midnight(end, zone))


def says_time(query: str) -> bool:
    """Whether `query` holds a time phrase: a caller looks up the person's zone only then."""
    text = query if query.isascii() else unicodedata.normalize("NFKC", query)
    return bool(_phrases(text, date.today()))


# Every time phrase holds a digit or one of these: most queries hold none, and skip
# loading and compiling the phrases' patterns (more than the rest of a `kioku search`).
_KEYS = (
    *("day", "ago", "week", "month", "year", "night", "morning", "afternoon", "evening"),
    *("spring", "summer", "autumn", "fall", "winter"),
    *("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
    *("日", "週", "月", "年", "今", "昨", "先", "去", "春", "夏", "秋", "冬", "曜", "おと"),
)


def _phrases(text: str, today: date) -> list[Phrase]:
    lowered = text.lower()
    if not any(c.isdigit() for c in text) and not any(key in lowered for key in _KEYS):
        return []
    from memory.search.time_phrases import phrases

    return phrases(text, today)


def when_for(
    zone: tzinfo, since: str | None = None, until: str | None = None, now: datetime | None = None
) -> When:
    """A `When` in `zone` from since/until as a person types them (`BadDate` if they are not
    dates, or since is not before until): a day's date starts a since at its first
    instant and ends an until with its last (until is inclusive of its day); a full time
    is that instant (without an offset: in `zone`)."""
    start = None if since is None else _instant(since, zone, "since", day_end=False)
    end = None if until is None else _instant(until, zone, "until", day_end=True)
    if start is not None and end is not None and start >= end:
        raise BadDate(f"since ({since}) must come before until ({until})")
    return When(now or datetime.now(zone), start, end)


def _instant(text: str, zone: tzinfo, name: str, *, day_end: bool) -> float:
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return _midnight(day + timedelta(days=1) if day_end else day, zone)
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        return moment.timestamp()
    except (ValueError, OverflowError):
        raise BadDate(f"{name} {text!r} is not a date: use {DATE_FORMS}") from None


def _midnight(day: date, zone: tzinfo) -> float:
    """The first instant of `day` in `zone` (DST-aware: days may last 23 or 25 hours)."""
    return datetime.combine(day, time(), tzinfo=zone).timestamp()
