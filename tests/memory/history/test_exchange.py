"""The last exchange of a session: the person's latest message and the turns after it."""

from __future__ import annotations

from memory.access.identities import ensure_person
from memory.history.exchange import last_exchange
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "7", "dm", "alice")


async def test_the_last_user_message_and_every_turn_after_it(store: Store) -> None:
    await ensure_person(store, "alice")
    session = await store.open_session(DM)
    ids = [
        await store.append(session.id, NewMessage(role, text, speaker))
        for role, text, speaker in [
            ("user", "one", "alice"),
            ("assistant", "reply one", None),
            ("user", "two", "alice"),
            ("assistant", "reply two", None),
        ]
    ]
    ids.append(
        await store.append(
            session.id, NewMessage("tool", "", "alice", tool_name="x", tool_arguments="{}")
        )
    )
    assert await last_exchange(store, session.id) == (ids[2], ids[3], ids[4])


async def test_a_session_without_a_user_message_has_none(store: Store) -> None:
    await ensure_person(store, "alice")
    session = await store.open_session(DM)
    await store.append(session.id, NewMessage("assistant", "hello"))
    assert await last_exchange(store, session.id) == ()
