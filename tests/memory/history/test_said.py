"""Finding the stored turn of a platform message: by its id, in its chat, the person's own."""

from __future__ import annotations

from memory.access.identities import ensure_person
from memory.history.said import answered, find_said
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

ALICE_TELEGRAM = Conversation("telegram", "7", "dm", "alice")
GROUP = Conversation("discord", "555", "group")


async def stored(store: Store, conversation: Conversation, text: str, message_id: str) -> int:
    if conversation.person:
        await ensure_person(store, conversation.person)
    session = await store.open_session(conversation)
    return await store.append(
        session.id, NewMessage("user", text, speaker="alice", platform_message_id=message_id)
    )


async def test_a_dm_message_is_found_with_its_session_and_person(store: Store) -> None:
    turn = await stored(store, ALICE_TELEGRAM, "hello", "41")
    said = await find_said(store, "telegram", "7", "41")
    assert said is not None
    assert (said.turn_id, said.speaker, said.person, said.kind) == (turn, "alice", "alice", "dm")
    assert said.conversation == ALICE_TELEGRAM.key and said.is_open


async def test_a_group_message_has_its_speaker_and_no_person(store: Store) -> None:
    await ensure_person(store, "alice")
    turn = await stored(store, GROUP, "hi all", "9001")
    said = await find_said(store, "discord", "555", "9001")
    assert said is not None and (said.turn_id, said.speaker, said.person) == (turn, "alice", None)


async def test_the_same_id_in_another_chat_or_platform_is_not_found(store: Store) -> None:
    await stored(store, ALICE_TELEGRAM, "hello", "41")
    assert await find_said(store, "telegram", "8", "41") is None
    assert await find_said(store, "discord", "7", "41") is None
    assert await find_said(store, "telegram", "7", "42") is None


async def test_a_message_of_a_closed_session_is_found(store: Store) -> None:
    turn = await stored(store, ALICE_TELEGRAM, "hello", "41")
    said = await find_said(store, "telegram", "7", "41")
    assert said is not None
    await store.close_session(said.session_id, "idle")
    again = await find_said(store, "telegram", "7", "41")
    assert again is not None and again.turn_id == turn and not again.is_open


async def test_kiokus_answer_is_not_the_persons_message(store: Store) -> None:
    await ensure_person(store, "alice")
    session = await store.open_session(ALICE_TELEGRAM)
    await store.append(session.id, NewMessage("assistant", "noted", platform_message_id="41"))
    assert await find_said(store, "telegram", "7", "41") is None


async def test_a_person_wide_dm_session_is_found_by_its_conversation(store: Store) -> None:
    # dm_scope "person": the session started on Discord goes on in the Telegram chat.
    wide = Conversation("discord", "D1", "dm", "alice", key="dm:alice")
    turn = await stored(store, wide, "from telegram", "41")
    assert await find_said(store, "telegram", "7", "41") is None
    said = await find_said(store, "telegram", "7", "41", conversation="dm:alice")
    assert said is not None and said.turn_id == turn


async def test_a_message_counts_as_answered_once_kiokus_reply_follows_it(store: Store) -> None:
    await stored(store, ALICE_TELEGRAM, "hello", "41")
    said = await find_said(store, "telegram", "7", "41")
    assert said is not None and not await answered(store, said)
    await store.append(said.session_id, NewMessage("tool", "", tool_name="search"))
    assert not await answered(store, said)
    await store.append(said.session_id, NewMessage("assistant", "hi Alice"))
    assert await answered(store, said)
