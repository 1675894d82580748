"""A word in nearly every one of the searcher's sessions (a name, "thanks") weighs nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search.everywhere import discounted, everywhere
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_word_in_four_of_five_sessions_is_everywhere_and_in_three_is_not() -> None:
    sessions = [1, 2, 3, 4, 5]
    held = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    assert everywhere(sessions, sessions, held) == [True, False]


def test_too_few_sessions_tell_nothing() -> None:
    sessions = [1, 2, 3, 4]
    assert everywhere(sessions, sessions, [[1.0]] * 4) == [False]


def test_sessions_older_than_the_newest_do_not_count() -> None:
    assert everywhere([1, 2, 3, 4, 5], [1, 2, 3, 99, 98], [[1.0]] * 5) == [False]


def test_a_query_of_only_common_words_keeps_their_weights() -> None:
    assert discounted([2.0, 3.0], [True, True]) == [2.0, 3.0]
    assert discounted([2.0, 3.0], [True, False]) == [0.0, 3.0]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        await ensure_person(opened, "ben")
        yield opened


async def remember(store: Store, chat: str, *turns: str, days: int, who: str = "owner") -> int:
    session = await store.open_session(Conversation("telegram", chat, "dm", who))
    for n, text in enumerate(turns):
        ts = T0 + timedelta(days=days, minutes=n)
        await store.append(session.id, NewMessage("user", text, ts=ts))
    await store.close_session(session.id, "idle")
    return session.id


async def test_a_name_said_in_every_session_does_not_decide_which_one_answers(
    store: Store,
) -> None:
    # Someone else's history makes every word rarer among all turns, names included.
    await remember(store, "other", *(f"weather note {n}" for n in range(80)), days=0, who="ben")
    for day in range(4):
        await remember(store, f"chat-{day}", f"hi Mika, day {day}", days=day)
    answer = await remember(
        store,
        "tour",
        "the lighthouse tour was great",
        "the lighthouse keeper waved",
        "bye Mika",
        days=5,
    )
    await remember(
        store,
        "chatter",
        "hello Mika",
        "thanks Mika",
        "see you Mika",
        "Mika the lighthouse",
        days=6,
    )
    found = await search(store, "Mika lighthouse", Scope.of_person("owner"))
    assert found[0].session_id == answer
