"""The erasure log: every turn that leaves history, with its scope, for the copies outside."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.access.identities import ensure_person
from memory.history.erase import erase, survey
from memory.history.erasures import Erasure, pending, taken
from memory.history.forget import forget_person
from memory.history.selection import Asker, Selection
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

ALICE_DM = Conversation("telegram", "7", "dm", "alice")
GROUP = Conversation("discord", "g1", "group")


async def say(store: Store, conversation: Conversation, speaker: str | None, text: str) -> int:
    session = await store.open_session(conversation)
    role = "user" if speaker else "assistant"
    return await store.append(session.id, NewMessage(role=role, content=text, speaker=speaker))


async def test_an_erased_session_logs_each_turn_with_its_scope_and_no_text(store: Store) -> None:
    await ensure_person(store, "alice")
    first = await say(store, ALICE_DM, "alice", "my secret plan")
    second = await say(store, ALICE_DM, None, "noted")
    session = (await store.open_session(ALICE_DM)).id
    plan = await survey(store, Asker.of_person("alice"), Selection(sessions=(session,)))
    await erase(store, plan)
    logged = await pending(store)
    assert [(e.scope, e.turn_id) for e in logged] == [
        ("person:alice", first),
        ("person:alice", second),
    ]
    rows = await store.read(lambda db: db.execute("SELECT * FROM erasures").fetchall())
    assert "secret" not in repr([tuple(row) for row in rows])


async def test_forgetting_a_person_logs_their_group_turns_and_their_whole_scope(
    store: Store, home: Path
) -> None:
    await ensure_person(store, "alice")
    await say(store, ALICE_DM, "alice", "hello")
    in_group = await say(store, GROUP, "alice", "hi all")
    await forget_person(store, home, "alice")
    logged = await pending(store)
    assert Erasure(logged[-1].id, "person:alice", None) == logged[-1]
    assert ("group:discord:g1", in_group) in [(e.scope, e.turn_id) for e in logged]


async def test_a_turn_deleted_in_the_sqlite3_shell_is_logged_too(store: Store, home: Path) -> None:
    await ensure_person(store, "alice")
    turn = await say(store, ALICE_DM, "alice", "typo")
    await store.close()
    with sqlite3.connect(home / "state.db") as db:
        db.execute("DELETE FROM turns WHERE id = ?", (turn,))
    reopened = await Store.open(home / "state.db")
    try:
        assert [(e.scope, e.turn_id) for e in await pending(reopened)] == [("person:alice", turn)]
    finally:
        await reopened.close()


async def test_taken_erasures_leave_the_log_and_later_ones_stay(store: Store) -> None:
    await ensure_person(store, "alice")
    ids = [await say(store, ALICE_DM, "alice", f"m{n}") for n in range(3)]
    session = (await store.open_session(ALICE_DM)).id
    plan = await survey(store, Asker.of_person("alice"), Selection(sessions=(session,)))
    await erase(store, plan)
    logged = await pending(store)
    await taken(store, logged[1].id)
    assert [e.turn_id for e in await pending(store)] == ids[2:]
