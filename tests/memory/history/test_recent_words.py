"""What a tidy reads of a person's history: their own words and DM summaries, newest first,
within its size, and nobody else's."""

from __future__ import annotations

from memory.access.identities import ensure_person
from memory.history.recent_words import recent_words
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

ALICE = Conversation("telegram", "7", "dm", "alice")
BOB = Conversation("telegram", "8", "dm", "bob")
GROUP = Conversation("discord", "555", "group")


async def say(store: Store, conversation: Conversation, speaker: str, *texts: str) -> int:
    session = await store.open_session(conversation)
    for text in texts:
        await store.append(session.id, NewMessage("user", text, speaker=speaker))
        await store.append(session.id, NewMessage("assistant", f"(answer to {text})"))
    return session.id


async def test_the_persons_own_words_and_dm_summaries_come_newest_first(store: Store) -> None:
    for person in ("alice", "bob"):
        await ensure_person(store, person)
    first = await say(store, ALICE, "alice", "I live in Tokyo")
    await store.close_session(first, "idle", summary="Alice talked about Tokyo.")
    await say(store, BOB, "bob", "Bob's own secret")
    group = await say(store, GROUP, "bob", "Bob in the group")
    await store.append(group, NewMessage("user", "We moved to Osaka", speaker="alice"))
    await store.close_session(group, "idle", summary="The group planned a party.")

    words = await recent_words(store, "alice", 10_000)
    assert [(w.kind, w.text) for w in words] == [
        ("said", "We moved to Osaka"),
        ("summary", "Alice talked about Tokyo."),
        ("said", "I live in Tokyo"),
    ]


async def test_the_words_stop_at_the_size_asked(store: Store) -> None:
    await ensure_person(store, "alice")
    await say(store, ALICE, "alice", "older words", "newest words")
    words = await recent_words(store, "alice", len("newest words") + 5)
    assert [w.text for w in words] == ["newest words"]
