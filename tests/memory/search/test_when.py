"""Time phrases in a query, read in the searcher's zone: the period each names, and
whether it narrows (counted back from today) or boosts (named by the calendar)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.search.when import YEARS_BACK, BadDate, Period, When, read, when_for

NEW_YORK = ZoneInfo("America/New_York")
TOKYO = ZoneInfo("Asia/Tokyo")
# The Monday after New York moved its clocks forward (Sunday 8 March 2026, 02:00).
AFTER_DST = datetime(2026, 3, 9, 10, 0, tzinfo=NEW_YORK)
# New Year's morning in Tokyo, still 31 December in UTC.
NEW_YEAR = datetime(2026, 1, 1, 8, 0, tzinfo=TOKYO)


def days(zone: ZoneInfo, first: tuple[int, int, int], end: tuple[int, int, int]) -> Period:
    """[first, end) as instants: local midnights in `zone`."""
    return Period(
        datetime(*first, tzinfo=zone).timestamp(), datetime(*end, tzinfo=zone).timestamp()
    )


@pytest.mark.parametrize(
    ("query", "first", "end"),
    [
        ("yesterday", (2026, 3, 8), (2026, 3, 9)),
        ("today", (2026, 3, 9), (2026, 3, 10)),
        ("the day before yesterday", (2026, 3, 7), (2026, 3, 8)),
        ("3 days ago", (2026, 3, 6), (2026, 3, 7)),
        ("last Friday", (2026, 3, 6), (2026, 3, 7)),
        ("on Monday", (2026, 3, 2), (2026, 3, 3)),
        ("this week", (2026, 3, 9), (2026, 3, 16)),
        ("last week", (2026, 3, 2), (2026, 3, 9)),
        ("last weekend", (2026, 3, 7), (2026, 3, 9)),
        ("two weeks ago", (2026, 2, 23), (2026, 3, 2)),
        ("last month", (2026, 2, 1), (2026, 3, 1)),
        ("this year", (2026, 1, 1), (2027, 1, 1)),
        ("two years ago", (2024, 1, 1), (2025, 1, 1)),
        ("2 years ago", (2024, 1, 1), (2025, 1, 1)),
    ],
)
def test_english_periods_counted_back_narrow_in_the_persons_zone_across_dst(
    query: str, first: tuple[int, int, int], end: tuple[int, int, int]
) -> None:
    reading = read(query, When(AFTER_DST))
    assert reading.said == days(NEW_YORK, first, end)
    assert reading.boosts == ()


def test_yesterday_across_the_dst_change_lasts_23_hours() -> None:
    said = read("yesterday", When(AFTER_DST)).said
    assert said is not None and said.end - said.start == 23 * 3600


@pytest.mark.parametrize(
    ("query", "first", "end"),
    [
        ("今日", (2026, 1, 1), (2026, 1, 2)),
        ("昨日", (2025, 12, 31), (2026, 1, 1)),
        ("一昨日", (2025, 12, 30), (2025, 12, 31)),
        ("3日前", (2025, 12, 29), (2025, 12, 30)),
        ("今週", (2025, 12, 29), (2026, 1, 5)),
        ("先週", (2025, 12, 22), (2025, 12, 29)),
        ("先週の金曜", (2025, 12, 26), (2025, 12, 27)),
        ("今月", (2026, 1, 1), (2026, 2, 1)),
        ("先月", (2025, 12, 1), (2026, 1, 1)),
        ("今年", (2026, 1, 1), (2027, 1, 1)),
        ("去年", (2025, 1, 1), (2026, 1, 1)),
        ("一昨年", (2024, 1, 1), (2025, 1, 1)),
        ("2年前", (2024, 1, 1), (2025, 1, 1)),
    ],
)
def test_japanese_periods_counted_back_narrow_across_the_new_year(
    query: str, first: tuple[int, int, int], end: tuple[int, int, int]
) -> None:
    reading = read(query, When(NEW_YEAR))
    assert reading.said == days(TOKYO, first, end)
    assert reading.boosts == ()


@pytest.mark.parametrize(
    ("query", "first", "end", "yearly"),
    [
        ("in March", (2025, 3, 1), (2025, 4, 1), True),
        ("in December", (2025, 12, 1), (2026, 1, 1), True),
        ("March 2025", (2025, 3, 1), (2025, 4, 1), False),
        ("in 2024", (2024, 1, 1), (2025, 1, 1), False),
        ("on 25 May, 2022", (2022, 5, 25), (2022, 5, 26), False),
        ("February 7, 2022", (2022, 2, 7), (2022, 2, 8), False),
        ("March 3", (2025, 3, 3), (2025, 3, 4), True),
        ("last summer", (2025, 6, 1), (2025, 9, 1), False),
        ("during the summer", (2025, 6, 1), (2025, 9, 1), True),
        ("last winter", (2024, 12, 1), (2025, 3, 1), False),
        ("this December", (2026, 12, 1), (2027, 1, 1), False),
        ("3月に", (2025, 3, 1), (2025, 4, 1), True),
        ("3月", (2025, 3, 1), (2025, 4, 1), True),
        ("2024年", (2024, 1, 1), (2025, 1, 1), False),
        ("2024年3月", (2024, 3, 1), (2024, 4, 1), False),
        ("２０２４年３月", (2024, 3, 1), (2024, 4, 1), False),
        ("3月3日", (2025, 3, 3), (2025, 3, 4), True),
        ("去年の夏", (2025, 6, 1), (2025, 9, 1), False),
        ("2026-03-03", (2026, 3, 3), (2026, 3, 4), False),
        ("between August 11 and August 15 2023", (2023, 8, 11), (2023, 8, 16), False),
        ("between 11 and 15 August 2023", (2023, 8, 11), (2023, 8, 16), False),
        ("from Dec 28, 2024 to Jan 3", (2024, 12, 28), (2025, 1, 4), False),
        ("between May 3 and 9", (2025, 5, 3), (2025, 5, 10), True),
        ("between December 28 and January 3", (2025, 12, 28), (2026, 1, 4), True),
    ],
)
def test_periods_named_by_the_calendar_boost_the_latest_one_not_in_the_future(
    query: str, first: tuple[int, int, int], end: tuple[int, int, int], yearly: bool
) -> None:
    reading = read(query, When(NEW_YEAR))
    (boost,) = reading.boosts
    assert boost.period == days(TOKYO, first, end)
    assert reading.said is None
    back = (first[0] - 1, *first[1:]), (end[0] - 1, *end[1:])
    assert (boost.earlier[:1] == (days(TOKYO, *back),)) is yearly
    assert len(boost.earlier) == (YEARS_BACK if yearly else 0)


@pytest.mark.parametrize(
    "query",
    ["between 3 and 5", "from 2 to 4 people", "between March 10, 2025 and March 3, 2024"],
)
def test_what_is_not_a_range_of_days_is_not_read_as_one(query: str) -> None:
    reading = read(query, When(NEW_YEAR))
    assert all(b.period.end - b.period.start <= 25 * 3600 for b in reading.boosts)


def test_a_day_named_without_a_year_is_29_february_only_in_leap_years() -> None:
    (boost,) = read("February 29", When(NEW_YEAR)).boosts
    assert boost.period == days(TOKYO, (2024, 2, 29), (2024, 3, 1))
    assert boost.earlier[:2] == (
        days(TOKYO, (2020, 2, 29), (2020, 3, 1)),
        days(TOKYO, (2016, 2, 29), (2016, 3, 1)),
    )


def test_a_yearly_boost_holds_the_latest_of_its_years_that_holds_what_was_found() -> None:
    (boost,) = read("in June", When(NEW_YEAR)).boosts
    june_2023 = datetime(2023, 6, 20, 12, 0, tzinfo=TOKYO).timestamp()
    june_2021 = datetime(2021, 6, 2, 12, 0, tzinfo=TOKYO).timestamp()
    july_2025 = datetime(2025, 7, 1, 12, 0, tzinfo=TOKYO).timestamp()
    assert boost.holding([june_2021, july_2025, june_2023]) == days(
        TOKYO, (2023, 6, 1), (2023, 7, 1)
    )
    assert boost.holding([july_2025]) is None
    (fixed,) = read("June 2021", When(NEW_YEAR)).boosts
    assert fixed.holding([june_2023]) is None


@pytest.mark.parametrize(
    ("query", "left"),
    [
        ("the plumber last week", "plumber"),
        ("what did Anna say yesterday about rent", "what did Anna say about rent"),
        ("先週の会議", "会議"),
        ("去年の夏の旅行", "旅行"),
        ("3月に京都", "京都"),
    ],
)
def test_the_words_of_a_time_phrase_leave_the_query(query: str, left: str) -> None:
    text = read(query, When(NEW_YEAR)).text
    assert " ".join(text.split()).removeprefix("the ") == left


def test_an_iso_date_stays_a_word_as_well_as_a_boost() -> None:
    reading = read("the plumber's visit 2026-03-03", When(NEW_YEAR))
    assert "2026-03-03" in reading.text
    assert reading.said is None and len(reading.boosts) == 1


@pytest.mark.parametrize(
    "query",
    [
        "may I ask about the trip",
        "sat with Tom at lunch",
        "I can march on",
        "the weekly report",
        "a second opinion",
        "毎週月曜日に",
        "月曜日は休み",
        "spring rolls",
        "Version 2024.1",
    ],
)
def test_words_that_only_look_like_time_stay_words(query: str) -> None:
    reading = read(query, When(NEW_YEAR))
    assert (reading.text, reading.said, reading.boosts) == (query, None, ())


def test_without_a_clock_time_words_are_words() -> None:
    assert read("last week", None).text == "last week"


def test_two_narrowing_phrases_keep_to_where_both_hold() -> None:
    assert (
        read("yesterday last week", When(AFTER_DST)).said == read("yesterday", When(AFTER_DST)).said
    )
    said = read("yesterday last month", When(AFTER_DST)).said
    assert said is not None and said.start >= said.end


def test_since_and_until_are_days_in_the_zone_and_until_includes_its_day() -> None:
    when = when_for(TOKYO, "2026-03-01", "2026-03-31", now=NEW_YEAR)
    assert when.bounds() == days(TOKYO, (2026, 3, 1), (2026, 4, 1))


def test_a_full_time_without_an_offset_is_read_in_the_zone() -> None:
    when = when_for(TOKYO, since="2026-03-01T09:30", now=NEW_YEAR)
    assert when.since == datetime(2026, 3, 1, 9, 30, tzinfo=TOKYO).timestamp()


@pytest.mark.parametrize(
    ("since", "until", "said"),
    [
        ("2026-13-01", None, "since '2026-13-01' is not a date: use YYYY-MM-DD"),
        (None, "last tuesday", "until 'last tuesday' is not a date"),
        ("2026-03-05", "2026-03-01", "since (2026-03-05) must come before until (2026-03-01)"),
        (None, "9999-12-31", "is not a date"),
    ],
)
def test_a_bad_since_or_until_says_what_is_read(
    since: str | None, until: str | None, said: str
) -> None:
    with pytest.raises(BadDate, match=said.replace("(", r"\(").replace(")", r"\)")):
        when_for(TOKYO, since, until)


_TIMEISH = st.sampled_from(
    ["last", "week", "ago", "in", "May", "March", "2024", "3", "年", "月", "日", "先週", "の", " "]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_TIMEISH, st.text(max_size=4)), max_size=12).map("".join))
def test_any_text_is_read_without_error_and_keeps_its_other_words(query: str) -> None:
    reading = read(query, When(NEW_YEAR))
    assert all(b.period.start < b.period.end for b in reading.boosts)
    if not reading.timed:
        assert reading.text == query
