"""Exact matches first (phrases, quotations, identifiers, repeated words), and best hits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, SessionResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A history with unrelated sessions too, so that no query word is in most turns."""
    async with await Store.open(tmp_path / "state.db") as opened:
        for n in range(6):
            await remember(opened, f"filler-{n}", "walked the dog", f"weather note {n}", days=-30)
        yield opened


async def remember(store: Store, chat: str, *turns: str, days: int = 0) -> int:
    """A closed DM session of the owner holding `turns` (user, assistant, user...), a
    minute apart, `days` after T0."""
    session = await store.open_session(Conversation("telegram", chat, "dm", "owner"))
    for n, text in enumerate(turns):
        ts = T0 + timedelta(days=days, minutes=n)
        role = "user" if n % 2 == 0 else "assistant"
        await store.append(session.id, NewMessage(role, text, ts=ts))
    await store.close_session(session.id, "idle")
    return session.id


async def results(store: Store, query: str) -> list[SessionResult]:
    return await search(store, query, Scope.of_person("owner"))


async def ranked(store: Store, query: str) -> list[int]:
    return [r.session_id for r in await results(store, query)]


async def test_msg_nn_ii_finds_its_conversation_first_with_that_message_as_first_hit(
    store: Store,
) -> None:
    sessions = [
        await remember(store, f"conv-{nn:02d}", *(f"msg-{nn:02d}-{ii:02d}" for ii in range(20)))
        for nn in range(10)
    ]
    first = (await results(store, "msg-03-03"))[0]
    assert first.session_id == sessions[3]
    assert (first.hits[0].content, first.hits[0].reason) == ("msg-03-03", "phrase")


@pytest.mark.parametrize(
    ("exact", "other", "query"),
    [
        (
            "The plumber's visit is on 2026-03-03, between 9 and 11.",
            "Plumber moved the visit: 2026-04-03 instead.",
            "2026-03-03",
        ),
        (
            "The plumber's visit is on 2026-03-03, between 9 and 11.",
            "Plumber moved the visit: 2026-04-03 instead.",
            "plumber visit 2026-03-03",
        ),
        (
            "Clinic: +81 90-1234-5678, ask for Dr Sato",
            "Clinic annex: +81 90-5678-1234",
            "+81 90-1234-5678",
        ),
        ("Upgraded the server to v2.17.1 today", "Pinned the server client at v2.1.17", "v2.17.1"),
        ("Parcel tracking JP3312-3312", "JP3312: refund 3312 yen", "JP3312-3312"),
    ],
)
async def test_an_identifier_is_found_whole_before_its_pieces_elsewhere(
    store: Store, exact: str, other: str, query: str
) -> None:
    said = await remember(store, "exact", exact)
    await remember(store, "other", other, days=1)
    found = await results(store, query)
    assert found[0].session_id == said
    assert [hit.reason for r in found for hit in r.hits if hit.reason == "phrase"] == ["phrase"]


async def test_words_said_in_order_rank_above_the_same_words_apart(store: Store) -> None:
    together = await remember(store, "together", "We settled the database schema.")
    await remember(
        store,
        "apart",
        "The schema of the old database was a mess.",
        "Which database? And whose schema?",
        days=1,
    )
    found = await results(store, "database schema")
    assert found[0].session_id == together
    assert [r.hits[0].reason for r in found] == ["phrase", "all words"]


async def test_japanese_said_contiguously_ranks_above_its_words_apart(store: Store) -> None:
    together = await remember(store, "together", "運動会の持ち物を確認した")
    await remember(store, "apart", "持ち物リストを作った。運動会は来週", days=1)
    found = await results(store, "運動会の持ち物")
    assert found[0].session_id == together
    assert [r.hits[0].reason for r in found] == ["phrase", "all words"]


async def test_a_quoted_phrase_matches_only_as_a_phrase(store: Store) -> None:
    said = await remember(store, "said", "The sourdough starter needs feeding")
    await remember(store, "apart", "Starter: soup. Then sourdough bread.", days=1)
    assert await ranked(store, '"sourdough starter" feeding') == [said]
    assert await ranked(store, "\u201csourdough starter\u201d") == [said]


async def test_an_unbalanced_quote_is_ordinary_text(store: Store) -> None:
    said = await remember(store, "said", "The sourdough starter needs feeding")
    apart = await remember(store, "apart", "Starter: soup. Then sourdough bread.", days=1)
    assert set(await ranked(store, 'sourdough starter"')) == {said, apart}


async def test_a_quotation_no_turn_says_is_searched_as_its_words(store: Store) -> None:
    soup = await remember(store, "soup", "Starter: soup. Then sourdough bread.")
    found = await results(store, 'the book "sourdough soup secrets"')
    assert [r.session_id for r in found] == [soup]
    assert found[0].hits[0].reason == "some words"


async def test_a_repeated_word_is_matched_in_full_only_by_a_turn_saying_it_as_often(
    store: Store,
) -> None:
    twice = await remember(store, "twice", "Seat: room 12, row 12.")
    await remember(store, "once", "Seat: room 12, row 7.", days=1)
    found = await results(store, "12 12")
    assert found[0].session_id == twice
    assert [r.hits[0].reason for r in found] == ["all words", "some words"]


async def test_a_sessions_first_hit_is_its_best_turn_not_its_newest(store: Store) -> None:
    await remember(
        store, "trip", "Kyoto ryokan booked for the trip", "Lovely.", "Trip budget is fine", "Ok."
    )
    (found,) = await results(store, "kyoto trip")
    assert [hit.content for hit in found.hits] == [
        "Kyoto ryokan booked for the trip",
        "Trip budget is fine",
    ]
    assert [hit.reason for hit in found.hits] == ["all words", "some words"]


async def test_hits_that_match_equally_go_to_the_newer_first(store: Store) -> None:
    await remember(store, "backups", "backup rotation done", "noted", "backup rotation done")
    (found,) = await results(store, "backup rotation")
    first, second = found.hits
    assert first.ts > second.ts


@pytest.mark.parametrize(
    "query",
    ["1-" * 50_000, "7" * 60_000 + "-1", '"' + "bee " * 400 + '"', "v" + ".1" * 30_000],
    ids=["100k-identifier", "huge-token-identifier", "long-quotation", "long-version"],
)
async def test_a_phrase_too_long_to_look_for_is_searched_as_its_words(
    store: Store, query: str
) -> None:
    """Its LIKE pattern would pass SQLite's limit: the search answers instead of failing."""
    said = await remember(store, "bees", "bee " * 3, "1-1 noted", "v.1 shipped")
    found = await ranked(store, query)
    assert said in found
