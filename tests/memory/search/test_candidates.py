"""Finding what to rank: bounded per word, complete for rare words, never beyond the scope.

Both ways of keeping to the scope (a join for a person holding much of the history,
the scope tokens in FTS5 for a small share) are run on the same cases.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search import candidates
from memory.search.ranking import Scope, search
from memory.search.scope import resolve
from memory.search.when import When
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from memory.store.schema import SCOPE_MARK

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        for person in ("alice", "bob"):
            await ensure_person(opened, person)
        yield opened


async def dm(store: Store, person: str, chat: str, texts: list[str], start: datetime = T0) -> int:
    session = await store.open_session(Conversation("telegram", chat, "dm", person))
    for n, text in enumerate(texts):
        ts = start + timedelta(seconds=n)
        await store.append(session.id, NewMessage("user", text, speaker=person, ts=ts))
    await store.close_session(session.id, "idle")
    return session.id


async def found(store: Store, query: str, person: str) -> list[int]:
    return [r.session_id for r in await search(store, query, Scope.of_person(person), limit=50)]


async def test_a_rare_word_is_found_behind_many_turns_of_a_common_one(
    store: Store, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(candidates, "PER_WORD", 5)
    old = await dm(store, "alice", "old", ["dinner with the zebra keeper"])
    recent = await dm(
        store, "alice", "new", [f"dinner plan {n}" for n in range(30)], T0 + timedelta(days=1)
    )
    assert (await found(store, "zebra", "alice")) == [old]
    assert (await found(store, "dinner zebra", "alice"))[0] == old
    assert recent in await found(store, "dinner", "alice")


async def test_turns_holding_every_common_word_are_found_further_back(
    store: Store, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(candidates, "PER_WORD", 5)
    both = await dm(store, "alice", "both", ["garden and dinner together"])
    later = T0 + timedelta(days=1)
    await dm(store, "alice", "gardens", [f"garden bed {n}" for n in range(20)], later)
    await dm(store, "alice", "dinners", [f"dinner menu {n}" for n in range(20)], later)
    assert both in await found(store, "garden dinner", "alice")


async def test_only_the_searchers_own_turns_come_back(store: Store, way: str) -> None:
    mine = await dm(store, "alice", "a", ["the lighthouse keeper's log"])
    await dm(store, "bob", "b", [f"lighthouse tour {n}" for n in range(40)])
    assert await found(store, "lighthouse", "alice") == [mine]
    assert len(await found(store, "lighthouse", "bob")) == 1
    assert await found(store, "lighthouse", "owner") == []


async def test_text_spelling_another_scope_token_reveals_nothing(store: Store, way: str) -> None:
    mine = await dm(store, "alice", "a", ["walrus facts"])
    alice_scopes = (await store.read(lambda db: resolve(db, Scope.of_person("alice")))).scopes
    await dm(store, "bob", "b", [f"walrus {SCOPE_MARK}{alice_scopes[0]} spelled out"])
    assert await found(store, "walrus", "alice") == [mine]


async def test_group_sessions_count_only_where_the_person_took_part(store: Store, way: str) -> None:
    first = await store.open_session(Conversation("discord", "chan", "group"))
    await store.append(first.id, NewMessage("user", "quarterly numbers", speaker="alice"))
    await store.close_session(first.id, "idle")
    second = await store.open_session(Conversation("discord", "chan", "group"))
    for n in range(10):
        await store.append(second.id, NewMessage("user", f"quarterly {n}", speaker="bob"))
    assert await found(store, "quarterly", "alice") == [first.id]
    assert await found(store, "quarterly", "bob") == [second.id]
    in_group = await search(store, "quarterly", Scope.of_group("discord", "chan"))
    assert {r.session_id for r in in_group} == {first.id, second.id}


async def test_a_small_share_of_the_history_searches_through_the_scope_tokens(
    store: Store,
) -> None:
    await dm(store, "bob", "b", [f"bob talks about weather {n}" for n in range(300)])
    await dm(store, "alice", "a", ["alice on weather"])
    alice = await store.read(lambda db: resolve(db, Scope.of_person("alice")))
    bob = await store.read(lambda db: resolve(db, Scope.of_person("bob")))
    assert alice.share < candidates.JOIN_SHARE <= bob.share
    assert len(await found(store, "weather", "alice")) == 1


@pytest.mark.parametrize(
    ("per_word", "ranked"),
    [(5, candidates.CANDIDATES), (candidates.PER_WORD, 3)],
    ids=["older than every word's newest turns", "among more turns than are ranked"],
)
async def test_the_turn_saying_a_phrase_of_common_words_is_found(
    store: Store, way: str, monkeypatch: pytest.MonkeyPatch, per_word: int, ranked: int
) -> None:
    monkeypatch.setattr(candidates, "PER_WORD", per_word)
    monkeypatch.setattr(candidates, "CANDIDATES", ranked)
    said = await dm(store, "alice", "c03", [f"msg-03-{i:02d}" for i in range(8)])
    for n in (0, 1, 2, 4, 5, 6, 7, 8, 9):
        texts = [f"msg-{n:02d}-{i:02d}" for i in range(8)]
        await dm(store, "alice", f"c{n:02d}", texts, T0 + timedelta(days=n + 1))
    (first, *_) = await search(store, "msg-03-03", Scope.of_person("alice"))
    assert (first.session_id, first.hits[0].content) == (said, "msg-03-03")


@pytest.mark.parametrize("period_turns", [candidates.PERIOD_TURNS, 3], ids=["quiet", "busy"])
async def test_a_phrase_looked_for_behind_common_words_keeps_to_the_period_and_the_scope(
    store: Store, way: str, monkeypatch: pytest.MonkeyPatch, period_turns: int
) -> None:
    monkeypatch.setattr(candidates, "PER_WORD", 5)
    monkeypatch.setattr(candidates, "PERIOD_TURNS", period_turns)
    before = await dm(store, "alice", "old", ["msg-03-03"])
    bobs = await dm(store, "bob", "bob", ["msg-03-03"], T0 + timedelta(days=3))
    during = await dm(store, "alice", "mid", ["msg-03-03"], T0 + timedelta(days=3))
    for n in (0, 1, 2, 4):
        texts = [f"msg-{n:02d}-{i:02d}" for i in range(8)]
        await dm(store, "alice", f"c{n:02d}", texts, T0 + timedelta(days=3, hours=n + 1))
    when = When(T0 + timedelta(days=10), since=(T0 + timedelta(days=2)).timestamp())
    results = await search(store, '"msg-03-03"', Scope.of_person("alice"), when=when)
    assert [r.session_id for r in results] == [during]
    assert before not in [r.session_id for r in results]
    assert bobs not in [r.session_id for r in results]
