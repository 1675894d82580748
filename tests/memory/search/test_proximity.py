"""Query words said close together earn a turn a small bonus (sequential dependence)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search.proximity import ORDERED, UNIGRAM, UNORDERED, Proximity
from memory.search.ranking import Scope, search
from memory.search.words import query_words
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from memory.store.segment import normalize

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Nine words: more than a window's width between the words on either side, in few characters.
FAR = "1 2 3 4 5 6 7 8 9"


def bonus(query: str, text: str, weights: list[float] | None = None) -> float:
    words = query_words(query)
    return Proximity(words).bonus(
        normalize(text), weights or [1.0] * len(words), [1.0] * len(words)
    )


def test_words_side_by_side_earn_the_ordered_and_window_bonus() -> None:
    assert bonus("support group", "I joined a support group") == pytest.approx(
        (ORDERED + UNORDERED) / UNIGRAM
    )


def test_words_reversed_nearby_earn_only_the_window_bonus() -> None:
    assert bonus("support group", "the group gave me support") == pytest.approx(UNORDERED / UNIGRAM)


def test_words_far_apart_earn_nothing() -> None:
    assert bonus("support group", f"support {FAR} group") == 0.0


def test_stopwords_between_do_not_part_the_words() -> None:
    assert bonus("trip beach", "a trip to the beach") == pytest.approx(
        (ORDERED + UNORDERED) / UNIGRAM
    )


def test_japanese_words_are_near_by_characters() -> None:
    together = bonus("京都 抹茶", "京都の抹茶が好き")
    apart = bonus("京都 抹茶", "京都に行った。" + "とても楽しい一日だった。" * 2 + "抹茶")
    assert together == pytest.approx((ORDERED + UNORDERED) / UNIGRAM)
    assert apart == 0.0


def test_a_pair_weighs_as_its_more_common_word() -> None:
    assert bonus("support group", "support group", [4.0, 1.0]) == pytest.approx(
        (ORDERED + UNORDERED) / UNIGRAM
    )


def test_a_word_that_weighs_nothing_parts_no_pair_as_a_stopword_would() -> None:
    assert bonus("support mika group", "support group", [1.0, 0.0, 1.0]) == pytest.approx(
        (ORDERED + UNORDERED) / UNIGRAM
    )


def test_a_word_that_weighs_nothing_adds_no_pair() -> None:
    assert bonus("support group", "support group", [0.0, 3.0]) == 0.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        await ensure_person(opened, "owner")
        yield opened


async def remember(store: Store, chat: str, text: str, minutes: int) -> int:
    session = await store.open_session(Conversation("telegram", chat, "dm", "owner"))
    ts = T0 + timedelta(minutes=minutes)
    await store.append(session.id, NewMessage("user", text, speaker="owner", ts=ts))
    await store.close_session(session.id, "idle")
    return session.id


async def found(store: Store, query: str) -> list[int]:
    return [r.session_id for r in await search(store, query, Scope.of_person("owner"))]


async def test_a_turn_with_the_words_together_outranks_a_shorter_newer_one_with_them_apart(
    store: Store,
) -> None:
    # Without the bonus the shorter, newer turn would come first.
    together = await remember(store, "a", "The meeting of my support group ran long", 0)
    apart = await remember(store, "b", f"support meeting {FAR} group", 1)
    assert await found(store, "support group meeting") == [together, apart]


async def test_the_bonus_never_beats_holding_one_more_word(store: Store) -> None:
    more = await remember(store, "a", f"support {FAR} group {FAR} meeting", 0)
    together = await remember(store, "b", "my support group", 1)
    assert await found(store, "support group meeting") == [more, together]
