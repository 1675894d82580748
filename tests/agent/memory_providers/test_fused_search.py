"""Session search fused with local_vectors: what meaning adds, what it may never show,
and the words alone when the embeddings server fails. A real state.db and vectors.db,
the fake embeddings server (a hashed bag of words: texts sharing words are near)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from agent.build import build_agent
from agent.memory_providers.base import Host, Scope, TurnRecord
from agent.memory_providers.builtin.fused_search import meaning_of, search_sessions
from agent.memory_providers.builtin.local_vectors import LocalVectors
from agent.memory_providers.builtin.search_meaning import Meaning
from agent.memory_providers.lexical import lexical_search
from agent.tools import search_tool
from agent.tools.context import Services, ToolContext
from config.settings import Settings
from memory.access.identities import ensure_person
from memory.search.ranking import Scope as SearchScope
from memory.search.ranking import search
from memory.search.when import When
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.agent.memory_providers.conftest import Start
from tests.fakes.embeddings_api import FakeEmbeddings

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = SearchScope.of_person("alice")


@pytest.fixture
async def api() -> AsyncIterator[FakeEmbeddings]:
    async with FakeEmbeddings(dims=256) as server:
        yield server


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        for person in ("alice", "bob"):
            await ensure_person(opened, person)
        yield opened


@pytest.fixture
async def vectors(api: FakeEmbeddings, store: Store, tmp_path: Path) -> AsyncIterator[LocalVectors]:
    provider = LocalVectors()
    provider.host = Host(tmp_path / "local_vectors", lexical_search(store))
    await provider.start({"base_url": api.base_url, "model": "fake-embed", "timeout": 5})
    yield provider
    await provider.stop()


def meaning(provider: LocalVectors, wait: float = 5.0) -> Meaning:
    return Meaning(provider, lambda scope: True, wait)


async def said(
    store: Store, conversation: Conversation, user: str, speaker: str, at: datetime = T0
) -> list[int]:
    """A closed session of one exchange (`user`, then "noted"), said `at`: its turn ids."""
    session = await store.open_session(conversation)
    ids = [
        await store.append(session.id, NewMessage("user", user, speaker=speaker, ts=at)),
        await store.append(
            session.id, NewMessage("assistant", "noted", ts=at + timedelta(seconds=1))
        ),
    ]
    await store.close_session(session.id, "idle", title=user[:20], summary=None)
    return ids


async def embedded(provider: LocalVectors, key: str, ids: list[int], text: str) -> None:
    """`text` stored as the vector row of the exchange `ids` in index scope `key`. With
    the fake embedder, the row's words stand for what a real model reads as meaning."""
    kind, _, ident = key.partition(":")
    scope = Scope("person" if kind == "person" else "group", ident)
    await provider.add(scope, [TurnRecord(text, "", tuple(ids), {"ts": str(T0.timestamp())})])


def dm(person: str, chat: str) -> Conversation:
    return Conversation("telegram", chat, "dm", person)


async def test_vectors_that_find_nothing_leave_the_lexical_answer(
    store: Store, vectors: LocalVectors
) -> None:
    await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    await said(store, dm("alice", "b"), "the plumber fixed the sink", "alice")
    lexical = await search(store, "plumber", ALICE, limit=5)
    fused = await search_sessions(store, "plumber", ALICE, limit=5, meaning=meaning(vectors))
    assert fused == lexical
    assert len(fused) == 2


async def test_a_session_only_meaning_finds_comes_back_with_reason_semantic(
    store: Store, vectors: LocalVectors
) -> None:
    words = await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    puppy = await said(store, dm("alice", "b"), "we adopted Rex last week", "alice")
    await embedded(vectors, "person:alice", words, "the plumber comes on Friday")
    await embedded(vectors, "person:alice", puppy, "a new dog joined the family")
    results = await search_sessions(store, "dog", ALICE, limit=5, meaning=meaning(vectors))
    assert [r.session_id for r in results] == [(await session_of(store, puppy[0]))]
    (hit,) = results[0].hits
    assert hit.message_id == puppy[0]
    assert hit.to_json()["reason"] == "semantic"
    assert await search(store, "dog", ALICE) == []


async def test_meaning_keeps_to_the_period_the_query_narrows_to(
    store: Store, vectors: LocalVectors
) -> None:
    now = T0 + timedelta(days=60)
    old = await said(store, dm("alice", "a"), "we adopted Rex", "alice")
    recent = await said(store, dm("alice", "b"), "we adopted Bella", "alice", now - timedelta(7))
    await embedded(vectors, "person:alice", old, "a new dog joined the family")
    await embedded(vectors, "person:alice", recent, "a new dog joined the family")
    results = await search_sessions(
        store, "dog last week", ALICE, limit=5, meaning=meaning(vectors), when=When(now)
    )
    assert [hit.message_id for r in results for hit in r.hits] == [recent[0]]


async def test_fusion_never_returns_another_persons_turns(
    store: Store, vectors: LocalVectors
) -> None:
    await said(store, dm("alice", "a"), "my tea order is sencha", "alice")
    bobs = await said(store, dm("bob", "b"), "my bank PIN is 4921", "bob")
    await embedded(vectors, "person:bob", bobs, "my bank PIN is 4921")
    # A row of bob's turns filed under alice's index scope (a stale or broken index).
    await embedded(vectors, "person:alice", bobs, "my bank PIN is 4921")
    results = await search_sessions(
        store, "my bank PIN is 4921", ALICE, limit=5, meaning=meaning(vectors)
    )
    assert all("4921" not in hit.content for r in results for hit in r.hits)
    assert await session_of(store, bobs[0]) not in {r.session_id for r in results}


async def test_a_group_search_never_returns_another_groups_turns(
    store: Store, vectors: LocalVectors
) -> None:
    ours = Conversation("discord", "ours", "group")
    theirs = Conversation("discord", "theirs", "group")
    await said(store, ours, "lunch at noon", "alice")
    secret = await said(store, theirs, "the launch code is 7788", "bob")
    await embedded(vectors, "group:discord:theirs", secret, "the launch code is 7788")
    await embedded(vectors, "group:discord:ours", secret, "the launch code is 7788")
    results = await search_sessions(
        store,
        "launch code",
        SearchScope.of_group("discord", "ours"),
        limit=5,
        meaning=meaning(vectors),
    )
    assert await session_of(store, secret[0]) not in {r.session_id for r in results}


async def test_a_down_embeddings_server_gives_the_lexical_answer_logged_once(
    store: Store, vectors: LocalVectors, api: FakeEmbeddings
) -> None:
    ids = await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    await embedded(vectors, "person:alice", ids, "the plumber comes on Friday")
    lexical = await search(store, "plumber", ALICE, limit=5)
    api.fail(500)
    searching = meaning(vectors)
    with capture_logs() as logs:
        first = await search_sessions(store, "plumber", ALICE, limit=5, meaning=searching)
        asked = len(api.requests)
        second = await search_sessions(store, "plumber", ALICE, limit=5, meaning=searching)
    assert first == second == lexical
    assert len(api.requests) == asked  # left alone for RETRY_AFTER, not asked per search
    warnings = [e for e in logs if e["event"] == "search_meaning_unavailable"]
    assert len(warnings) == 1
    assert "HTTP 500" in warnings[0]["error"]


async def test_meaning_is_asked_again_after_a_failure_once_retry_after_has_passed(
    store: Store, vectors: LocalVectors, api: FakeEmbeddings
) -> None:
    words = await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    puppy = await said(store, dm("alice", "b"), "we adopted Rex last week", "alice")
    await embedded(vectors, "person:alice", words, "the plumber comes on Friday")
    await embedded(vectors, "person:alice", puppy, "a new dog joined the family")
    searching = meaning(vectors)
    api.fail(500)
    assert await search_sessions(store, "dog", ALICE, meaning=searching) == []
    searching.retry_at = 0.0  # as if RETRY_AFTER had passed
    with capture_logs() as logs:
        again = await search_sessions(store, "dog", ALICE, meaning=searching)
    assert [hit.message_id for r in again for hit in r.hits] == [puppy[0]]
    assert [e["event"] for e in logs if e["event"].startswith("search_meaning")] == [
        "search_meaning_back"
    ]


async def test_a_slow_embeddings_server_gives_the_lexical_answer_within_the_wait(
    store: Store, vectors: LocalVectors, api: FakeEmbeddings
) -> None:
    ids = await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    await embedded(vectors, "person:alice", ids, "the plumber comes on Friday")
    api.hang()
    results = await search_sessions(
        store, "plumber", ALICE, limit=5, meaning=meaning(vectors, wait=0.2)
    )
    assert results == await search(store, "plumber", ALICE, limit=5)


async def session_of(store: Store, turn_id: int) -> int:
    return await store.read(
        lambda db: db.execute("SELECT session_id FROM turns WHERE id = ?", (turn_id,)).fetchone()[0]
    )


async def test_a_persons_search_by_meaning_reaches_only_the_group_sessions_they_joined(
    store: Store, vectors: LocalVectors
) -> None:
    group = Conversation("discord", "club", "group")
    joined = await said(store, group, "the club meets at the harbour", "alice")
    without_her = await said(store, group, "the club treasury holds 900", "bob")
    await embedded(vectors, "group:discord:club", joined, "boats and sailing")
    await embedded(vectors, "group:discord:club", without_her, "boats and money")
    results = await search_sessions(store, "boats", ALICE, limit=5, meaning=meaning(vectors))
    assert [r.session_id for r in results] == [await session_of(store, joined[0])]


async def test_the_daemon_searches_by_meaning_while_local_vectors_runs(
    start_providers: Start, api: FakeEmbeddings, store: Store
) -> None:
    section = {"enabled": True, "base_url": api.base_url, "model": "fake-embed"}
    providers = await start_providers(local_vectors=section, recall_timeout=0.7)
    agent = build_agent(Settings(), store, providers=providers)
    try:
        found = agent.services.meaning
        assert found is not None and found.wait == 0.7
    finally:
        await agent.aclose()
    assert meaning_of(await start_providers()) is None


async def test_the_session_search_tool_shows_a_session_only_meaning_found(
    store: Store, vectors: LocalVectors, tmp_path: Path
) -> None:
    await said(store, dm("alice", "a"), "the plumber comes on Friday", "alice")
    puppy = await said(store, dm("alice", "b"), "we adopted Rex last week", "alice")
    await embedded(vectors, "person:alice", puppy, "a new dog joined the family")
    services = Services(store, tmp_path, Settings(), meaning=meaning(vectors))
    context = ToolContext(services, 0, "telegram", "a", False, "alice", True)
    shown = await search_tool.handle({"query": "dog"}, context)
    assert "we adopted Rex last week" in shown
    assert "plumber" not in shown


async def test_a_session_said_on_the_day_the_query_names_is_raised_by_meaning_too(
    store: Store, vectors: LocalVectors
) -> None:
    named_day = T0 + timedelta(days=2)
    words = await said(store, dm("alice", "a"), "dog food prices", "alice", T0 + timedelta(9))
    that_day = await said(store, dm("alice", "b"), "we adopted Rex", "alice", named_day)
    nearer = await said(store, dm("alice", "c"), "we got a bowl", "alice", T0 + timedelta(5))
    far = await said(store, dm("alice", "d"), "the plumber came", "alice", T0 + timedelta(6))
    await embedded(vectors, "person:alice", words, "dog")
    await embedded(vectors, "person:alice", that_day, "a new dog joined the family")
    await embedded(vectors, "person:alice", nearer, "dog bowl")
    await embedded(vectors, "person:alice", far, "the plumber came")

    async def order(query: str) -> list[int]:
        results = await search_sessions(
            store, query, ALICE, limit=3, meaning=meaning(vectors), when=When(T0 + timedelta(30))
        )
        return [r.hits[0].message_id for r in results]

    assert await order("dog") == [words[0], nearer[0], that_day[0]]
    assert await order("dog on 3 January") == [words[0], that_day[0], nearer[0]]
    assert await order("dog in January 2025") == [words[0], nearer[0], that_day[0]]
