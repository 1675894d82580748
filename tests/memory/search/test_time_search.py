"""Searching with time: a period counted back narrows, one named boosts, since/until bound,
all in the searcher's zone; both ways of keeping to the scope narrow alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest

from memory.search.ranking import Scope, search
from memory.search.when import When, when_for
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.memory.search.lived import said

TOKYO = ZoneInfo("Asia/Tokyo")
# Wednesday 9 December 2026, morning in Tokyo: last week is 30 Nov - 6 Dec.
NOW = datetime(2026, 12, 9, 10, 0, tzinfo=TOKYO)
LAST_WEEK = datetime(2026, 12, 3, 15, 0, tzinfo=TOKYO)
EARLIER = datetime(2026, 11, 12, 15, 0, tzinfo=TOKYO)
IN_MARCH = datetime(2026, 3, 12, 15, 0, tzinfo=TOKYO)


@pytest.fixture
def store(alice_store: Store) -> Store:
    return alice_store


async def found(store: Store, query: str, when: When | None = When(NOW)) -> list[int]:
    results = await search(store, query, Scope.of_person("alice"), limit=10, when=when)
    return [r.session_id for r in results]


async def test_last_week_only_returns_turns_from_last_week(store: Store, way: str) -> None:
    await said(store, "a", EARLIER, "the plumber fixed the sink")
    recent = await said(store, "b", LAST_WEEK, "the plumber came about the boiler")
    await said(store, "c", NOW - timedelta(hours=1), "call the plumber again")
    assert await found(store, "what did the plumber say last week") == [recent]


async def test_senshuu_only_returns_turns_from_last_week(store: Store, way: str) -> None:
    await said(store, "a", EARLIER, "水道屋さんが来た")
    recent = await said(store, "b", LAST_WEEK, "水道屋さんに電話した")
    assert await found(store, "先週の水道屋") == [recent]


async def test_a_query_of_only_a_time_phrase_lists_that_periods_sessions_newest_first(
    store: Store,
) -> None:
    await said(store, "a", EARLIER, "old talk")
    monday = await said(store, "b", LAST_WEEK - timedelta(days=3), "monday talk")
    thursday = await said(store, "c", LAST_WEEK, "thursday talk", "more of it")
    assert await found(store, "last week") == [thursday, monday]
    assert await found(store, "what did we do last week?") == [thursday, monday]
    assert await found(store, "先週") == [thursday, monday]


async def test_a_listing_shows_each_sessions_newest_turns_in_the_period(store: Store) -> None:
    await said(store, "a", LAST_WEEK, "first", "second", "third", "fourth")
    (result,) = await search(store, "last week", Scope.of_person("alice"), when=When(NOW))
    assert [hit.content for hit in result.hits] == ["fourth", "third", "second"]
    assert {hit.reason for hit in result.hits} == {"period"}


async def test_a_named_month_ranks_its_turns_first_and_still_finds_the_others(
    store: Store,
) -> None:
    other = await said(store, "a", EARLIER, "kayak trip, fun")
    march = await said(store, "b", IN_MARCH, "the kayak trip is booked")
    assert await found(store, "kayak trip in March") == [march, other]
    assert await found(store, "3月のkayak trip") == [march, other]
    assert await found(store, "kayak trip") == [other, march]


async def test_a_date_named_stays_a_word_and_finds_the_turn_that_says_it(store: Store) -> None:
    visit = await said(store, "a", EARLIER, "plumber visit booked for 2026-03-03")
    await said(store, "b", IN_MARCH, "plumber visit went fine")
    assert (await found(store, "plumber visit 2026-03-03"))[0] == visit


async def test_a_period_holding_nothing_found_searches_the_query_as_typed(store: Store) -> None:
    moved = await said(store, "a", EARLIER, "I moved from Sweden 4 years ago")
    await said(store, "b", EARLIER, "Sweden has long winters")
    assert (await found(store, "moved from Sweden 4 years ago"))[0] == moved
    assert await found(store, "Sweden last summer") != []


async def test_since_and_until_narrow_and_never_widen(store: Store, way: str) -> None:
    await said(store, "a", EARLIER, "garden plans")
    march = await said(store, "b", IN_MARCH, "garden plans")
    march_only = when_for(TOKYO, "2026-03-01", "2026-03-31", now=NOW)
    assert await found(store, "garden", march_only) == [march]
    assert await found(store, "garden", when_for(TOKYO, "2025-01-01", "2025-12-31")) == []


async def test_until_includes_its_whole_day_in_the_persons_zone(store: Store) -> None:
    late = await said(store, "a", datetime(2026, 3, 12, 23, 30, tzinfo=TOKYO), "late garden")
    assert await found(store, "garden", when_for(TOKYO, until="2026-03-12", now=NOW)) == [late]
    assert await found(store, "garden", when_for(TOKYO, since="2026-03-13", now=NOW)) == []


async def test_since_alone_lists_the_sessions_from_then(store: Store) -> None:
    await said(store, "a", EARLIER, "november")
    december = await said(store, "b", LAST_WEEK, "december")
    assert await found(store, "", when_for(TOKYO, since="2026-12-01", now=NOW)) == [december]


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("the weekly report is due", "weekly report"),
        ("you may borrow the ladder", "may borrow"),
        ("we sat by the river", "sat river"),
        ("summer rolls recipe", "summer rolls"),
    ],
)
async def test_unparsed_time_words_are_searched_as_words(
    store: Store, text: str, query: str
) -> None:
    session = await said(store, "a", EARLIER, text)
    assert await found(store, query) == [session]


async def test_without_a_clock_time_words_are_ordinary_words(store: Store) -> None:
    session = await said(store, "a", EARLIER, "we talked about last week's game")
    assert await found(store, "last week", when=None) == [session]


async def test_a_turn_caught_up_after_its_session_started_is_found_in_its_period(
    store: Store,
) -> None:
    # A message sent while kioku was down is stored with the time it was sent, in the
    # session open when kioku caught up with it.
    now = datetime.now(UTC)
    session = await store.open_session(Conversation("telegram", "late", "dm", "alice"))
    sent = NewMessage("user", "missed message", speaker="alice", ts=now - timedelta(days=2))
    await store.append(session.id, sent)
    assert await found(store, "the day before yesterday", When(now)) == [session.id]
    assert await found(store, "missed two days ago", When(now)) == [session.id]


@pytest.mark.parametrize(("zone", "listed"), [(TOKYO, False), (UTC, True)])
async def test_the_searchers_zone_decides_which_day_yesterday_is(
    store: Store, zone: tzinfo, listed: bool
) -> None:
    # 08:00 on 9 March in Tokyo is still 8 March in UTC.
    session = await said(store, "a", datetime(2026, 3, 9, 8, 0, tzinfo=TOKYO), "breakfast")
    now = datetime(2026, 3, 9, 10, 0, tzinfo=TOKYO).astimezone(zone)
    assert await found(store, "yesterday", When(now)) == ([session] if listed else [])


async def test_a_named_day_weighs_as_a_rare_word_for_a_session_said_that_day(
    store: Store,
) -> None:
    for n in range(20):
        word = "dinner" if n % 2 else "harbour"
        await said(store, f"other{n}", EARLIER - timedelta(days=n + 1), f"a {word} note {n}")
    that_day = await said(store, "day", IN_MARCH, "we had dinner out")
    richer = await said(store, "later", EARLIER, "harbour views and a dinner again")
    found_now = await found(store, "dinner at the harbour on 12 March")
    assert found_now[:2] == [that_day, richer]


async def test_a_month_named_without_a_year_is_the_latest_that_holds_what_is_found(
    store: Store,
) -> None:
    newer = await said(store, "a", EARLIER, "kayak trip, fun")
    june = await said(store, "b", datetime(2024, 6, 15, 15, 0, tzinfo=TOKYO), "kayak trip, wet")
    older = await said(store, "c", datetime(2023, 6, 15, 15, 0, tzinfo=TOKYO), "kayak trip, cold")
    assert await found(store, "kayak trip in June") == [june, newer, older]
    assert await found(store, "6月のkayak trip") == [june, newer, older]
    assert await found(store, "kayak trip in June 2023") == [older, newer, june]


async def test_a_day_named_outweighs_more_of_the_words_said_on_another_day(
    store: Store,
) -> None:
    for n in range(6):
        await said(store, f"other{n}", EARLIER - timedelta(days=n + 1), f"garden note {n}")
    that_day = await said(store, "day", IN_MARCH, "the plumber came to see it")
    richer = await said(store, "later", EARLIER, "the plumber fixed the boiler", "boiler runs")
    assert await found(store, "the plumber and the boiler on 12 March") == [that_day, richer]
    assert await found(store, "the plumber and the boiler") == [richer, that_day]
