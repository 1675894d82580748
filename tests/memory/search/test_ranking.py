"""Session search: multilingual matching, ranking and result shape, scope isolation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search.ranking import Scope, english_stem, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        for person in ("alice", "bob"):
            await ensure_person(opened, person)
        yield opened


async def remember(
    store: Store, person: str, chat: str, *turns: str, start: datetime = T0, title: str = ""
) -> int:
    """A closed DM session of `person` holding `turns` (user, assistant, user...)."""
    session = await store.open_session(Conversation("telegram", chat, "dm", person))
    for n, text in enumerate(turns):
        role = "user" if n % 2 == 0 else "assistant"
        speaker = person if role == "user" else None
        ts = start + timedelta(minutes=n)
        await store.append(session.id, NewMessage(role, text, speaker=speaker, ts=ts))
    await store.close_session(session.id, "idle", title=title or None, summary=f"about {chat}")
    return session.id


async def found(store: Store, query: str, person: str = "owner") -> list[int]:
    return [r.session_id for r in await search(store, query, Scope.of_person(person))]


@pytest.mark.parametrize("query", ["plans", "planned", "planning", "PLAN"])
async def test_english_matches_across_inflections(store: Store, query: str) -> None:
    session = await remember(store, "owner", "a", "We planned the rollout for Monday.")
    assert await found(store, query) == [session]


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("昨日は京都に行きました", "京都"),
        ("お土産に抹茶を買った", "抹茶"),
        ("来週までにDB設計を終わらせる", "設計"),
        ("来週までにDB設計を終わらせる", "DB設計"),
        ("来週までにＤＢ設計を終わらせる", "db設計"),
        ("Pythonの環境構築で困っている", "Pythonの環境"),
        ("ｶﾀｶﾅで書いたメモ", "カタカナ"),
        ("宇治の抹茶", "茶"),
        ("データベースの移行計画", "データベース"),
    ],
)
async def test_japanese_words_are_found_inside_unspaced_text(
    store: Store, text: str, query: str
) -> None:
    session = await remember(store, "owner", "a", text)
    await remember(store, "owner", "b", "全然関係ない話です。天気がいい。")
    assert await found(store, query) == [session]


async def test_a_two_character_word_does_not_match_its_characters_apart(store: Store) -> None:
    await remember(store, "owner", "a", "京の都")
    assert await found(store, "京都") == []


async def test_english_question_ranks_the_session_that_answers_it_first(store: Store) -> None:
    await remember(store, "owner", "noise1", "What should we cook for dinner tonight?", "Pasta.")
    answer = await remember(
        store,
        "owner",
        "db",
        "Let's settle the database schema.",
        "We decided to split addresses out of the orders table.",
    )
    await remember(store, "owner", "noise2", "Did you decide on the holiday?", "Not yet.")
    assert (await found(store, "What did we decide about the database schema?"))[0] == answer


async def test_japanese_question_ranks_the_session_that_answers_it_first(store: Store) -> None:
    await remember(store, "owner", "noise", "今日の夕食は何にしよう", "カレーはどうですか")
    answer = await remember(
        store, "owner", "kyoto", "京都で抹茶のお店に行った", "宇治の中村藤吉ですね"
    )
    await remember(store, "owner", "noise2", "お店の予約をしたい", "何名様ですか")
    assert (await found(store, "京都で食べた抹茶のお店はどこだっけ\uff1f"))[0] == answer


async def test_ties_go_to_the_more_recent_session(store: Store) -> None:
    older = await remember(store, "owner", "a", "backup rotation", start=T0)
    newer = await remember(store, "owner", "b", "backup rotation", start=T0 + timedelta(days=3))
    assert await found(store, "backup") == [newer, older]


async def test_a_result_carries_title_summary_highlighted_hits_and_context(store: Store) -> None:
    await remember(
        store,
        "owner",
        "trip",
        "Planning the trip.",
        "Sure, where to?",
        "京都で抹茶を飲みたい",
        "Uji is the place for matcha.",
        title="Kyoto trip",
    )
    (result,) = await search(store, "抹茶", Scope.of_person("owner"), context=1)
    assert (result.title, result.summary) == ("Kyoto trip", "about trip")
    assert [hit.snippet for hit in result.hits] == ["京都で**抹茶**を飲みたい"]
    assert [turn.content for turn in result.context] == [
        "Sure, where to?",
        "Uji is the place for matcha.",
    ]
    assert result.to_json()["hits"][0]["content"] == "京都で抹茶を飲みたい"


async def test_long_turns_are_cut_around_the_match(store: Store) -> None:
    text = "filler " * 100 + "the deployment checklist" + " trailing" * 100
    await remember(store, "owner", "a", text)
    (result,) = await search(store, "checklist", Scope.of_person("owner"))
    snippet = result.hits[0].snippet
    assert "**checklist**" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) < 260


async def test_two_persons_with_the_same_words_each_find_only_their_own(store: Store) -> None:
    alice = await remember(store, "alice", "a", "my secret recipe uses 抹茶 and yuzu")
    bob = await remember(store, "bob", "b", "my secret recipe uses 抹茶 and yuzu")
    for query in ("secret recipe", "抹茶", "yuzu"):
        assert await found(store, query, "alice") == [alice]
        assert await found(store, query, "bob") == [bob]
    assert await found(store, "secret", "owner") == []


async def test_group_history_is_searchable_by_its_members_and_inside_the_group(
    store: Store,
) -> None:
    group = await store.open_session(Conversation("discord", "chan", "group"))
    await store.append(group.id, NewMessage("user", "release train on friday", speaker="alice"))
    other = await store.open_session(Conversation("discord", "elsewhere", "group"))
    await store.append(other.id, NewMessage("user", "release party on friday", speaker="bob"))
    bob_dm = await remember(store, "bob", "dm", "release notes draft")

    assert await found(store, "release", "alice") == [group.id]
    assert set(await found(store, "release", "bob")) == {other.id, bob_dm}
    in_group = await search(store, "release", Scope.of_group("discord", "chan"))
    assert [r.session_id for r in in_group] == [group.id]


async def test_a_person_does_not_see_group_sessions_they_were_not_in(store: Store) -> None:
    first = await store.open_session(Conversation("discord", "chan", "group"))
    await store.append(first.id, NewMessage("user", "quarterly numbers", speaker="alice"))
    await store.close_session(first.id, "idle")
    second = await store.open_session(Conversation("discord", "chan", "group"))
    await store.append(second.id, NewMessage("user", "quarterly numbers again", speaker="bob"))
    assert await found(store, "quarterly", "alice") == [first.id]


async def test_an_unknown_person_or_group_finds_nothing(store: Store) -> None:
    await remember(store, "owner", "a", "anything at all")
    assert await found(store, "anything", "nobody") == []
    assert await search(store, "anything", Scope.of_group("slack", "none")) == []


async def test_stopwords_alone_still_search(store: Store) -> None:
    session = await remember(store, "owner", "a", "to be or not to be")
    assert await found(store, "to be") == [session]


@pytest.mark.parametrize(
    ("word", "expected"), [("planned", "plan"), ("planning", "plan"), ("decided", "decid")]
)
def test_highlighting_stems_like_words_together(word: str, expected: str) -> None:
    assert english_stem(word) == expected
