"""Every stored exchange for a provider's backfill: the message, the answer that follows
it in the same session, and the scope key of that session."""

from __future__ import annotations

from memory.access.identities import ensure_person
from memory.history.exchanges import PriorTurn, count_exchanges, stored_exchanges, turn_before
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage


async def test_exchanges_pair_each_message_with_its_answer_in_id_order(store: Store) -> None:
    await ensure_person(store, "alice")
    dm = await store.open_session(Conversation("telegram", "7", "dm", "alice"))
    group = await store.open_session(Conversation("discord", "c1", "group"))
    ask = await store.append(dm.id, NewMessage("user", "which tea?", "alice"))
    in_group = await store.append(group.id, NewMessage("user", "hello all", "alice"))
    tool = await store.append(
        dm.id, NewMessage("tool", "", "alice", tool_name="x", tool_arguments="{}")
    )
    answer = await store.append(dm.id, NewMessage("assistant", "sencha", None))
    again = await store.append(dm.id, NewMessage("user", "and cake?", "alice"))

    found = [exchange async for exchange in stored_exchanges(store, batch=2)]

    assert [(e.scope, e.turn_ids, e.user_text, e.assistant_text) for e in found] == [
        ("person:alice", (ask, answer), "which tea?", "sencha"),
        ("group:discord:c1", (in_group,), "hello all", ""),
        ("person:alice", (again,), "and cake?", ""),
    ]
    assert tool not in found[0].turn_ids
    assert await count_exchanges(store) == 3


async def test_an_empty_store_has_no_exchanges(store: Store) -> None:
    assert [exchange async for exchange in stored_exchanges(store)] == []


async def test_the_turn_before_an_exchange_passes_over_tool_turns(store: Store) -> None:
    await ensure_person(store, "alice")
    dm = await store.open_session(Conversation("telegram", "7", "dm", "alice"))
    ask = await store.append(dm.id, NewMessage("user", "which tea?", "alice"))
    answer = await store.append(dm.id, NewMessage("assistant", "sencha", None))
    await store.append(dm.id, NewMessage("tool", "", "alice", tool_name="x", tool_arguments="{}"))
    again = await store.append(dm.id, NewMessage("user", "and cake?", "alice"))

    assert await turn_before(store, ask) is None
    assert await turn_before(store, again) == PriorTurn(answer, "assistant", "sencha")
    found = [exchange async for exchange in stored_exchanges(store)]
    assert [e.before for e in found] == [None, PriorTurn(answer, "assistant", "sencha")]
