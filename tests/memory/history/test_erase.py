"""What a deletion takes, for whom: the one function every path goes through."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.access.identities import ensure_person
from memory.history.erase import UnknownHistory, erase, survey
from memory.history.selection import Asker, EmptySelection, NotAllowed, Selection
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

ALICE_DM = Conversation("telegram", "7", "dm", "alice")
BOB_DM = Conversation("telegram", "8", "dm", "bob")
GROUP = Conversation("telegram", "g", "group")
OLD = datetime(2025, 6, 1, tzinfo=UTC)


async def say(
    store: Store, conversation: Conversation, speaker: str | None, text: str, ts=None
) -> tuple[int, int]:
    session = await store.open_session(conversation)
    role = "user" if speaker else "assistant"
    turn = await store.append(
        session.id, NewMessage(role=role, content=text, speaker=speaker, ts=ts)
    )
    return session.id, turn


@pytest.fixture
async def people(store: Store) -> Store:
    for person in ("alice", "bob"):
        await ensure_person(store, person)
    return store


async def texts(store: Store) -> list[str]:
    rows = await store.read(
        lambda db: db.execute("SELECT content FROM turns ORDER BY id").fetchall()
    )
    return [row["content"] for row in rows]


async def found(store: Store, person: str, query: str) -> int:
    return len(await search(store, query, Scope(person=person)))


async def test_a_person_deletes_a_whole_dm_session(people: Store) -> None:
    session, _ = await say(people, ALICE_DM, "alice", "my salary is 9000 pelicans")
    await say(people, ALICE_DM, None, "noted, 9000 pelicans")
    await say(people, BOB_DM, "bob", "bob's pelicans")
    plan = await survey(people, Asker.of_person("alice"), Selection(sessions=(session,)))
    assert [s.id for s in plan.sessions] == [session] and plan.turn_count == 2
    done = await erase(people, plan)
    assert (done.sessions, done.turns) == (1, 2)
    assert await people.get_session(session) is None
    assert await texts(people) == ["bob's pelicans"]
    assert await found(people, "alice", "pelicans") == 0
    assert await found(people, "bob", "pelicans") == 1


async def test_a_person_may_not_delete_another_persons_or_a_groups_history(
    people: Store,
) -> None:
    bob, bob_turn = await say(people, BOB_DM, "bob", "bob's secret")
    group, group_turn = await say(people, GROUP, "alice", "alice in the group")
    alice = Asker.of_person("alice")
    for selection in (
        Selection(sessions=(bob,)),
        Selection(messages=(bob_turn,)),
        Selection(sessions=(group,)),
        Selection(messages=(group_turn,)),
    ):
        with pytest.raises(NotAllowed):
            await survey(people, alice, selection)
    everything = await survey(people, alice, Selection(matching="secret"))
    assert everything.is_empty
    assert len(await texts(people)) == 2


async def test_unknown_ids_and_empty_selections_are_clear_errors(people: Store) -> None:
    with pytest.raises(UnknownHistory, match="no session 99"):
        await survey(people, Asker.owner(), Selection(sessions=(99,)))
    with pytest.raises(UnknownHistory, match="no message 99"):
        await survey(people, Asker.owner(), Selection(messages=(99,)))
    with pytest.raises(EmptySelection):
        Selection()
    with pytest.raises(EmptySelection):
        Selection(matching="  ")
    with pytest.raises(ValueError, match="aware"):
        Selection(before=datetime(2026, 1, 1))


async def test_one_message_goes_and_its_session_loses_title_and_summary(people: Store) -> None:
    session, first = await say(people, ALICE_DM, "alice", "my password is hunter2")
    await say(people, ALICE_DM, "alice", "and the weather is nice")
    await people.close_session(session, "idle", title="hunter2 talk", summary="hunter2 said")
    plan = await survey(people, Asker.of_person("alice"), Selection(messages=(first,)))
    assert [t.id for t in plan.turns] == [first] and not plan.sessions
    assert "hunter2" in plan.describe()[0]
    await erase(people, plan)
    kept = await people.get_session(session)
    assert kept is not None and kept.title is None and kept.summary is None
    assert await texts(people) == ["and the weather is nice"]


async def test_an_open_session_that_loses_turns_is_ended_unless_kept_open(people: Store) -> None:
    session, first = await say(people, ALICE_DM, "alice", "oops, wrong chat")
    await say(people, ALICE_DM, "alice", "hello again")
    plan = await survey(people, Asker.of_person("alice"), Selection(messages=(first,)))
    done = await erase(people, plan, keep_open=True)
    assert done.ended == ()
    assert (await people.get_session(session)).ended_at is None
    _, second = await say(people, ALICE_DM, "alice", "oops again")
    done = await erase(people, await survey(people, Asker.owner(), Selection(messages=(second,))))
    assert done.ended == (session,)
    ended = await people.get_session(session)
    assert ended.ended_at is not None and ended.end_reason == "history_deleted"


async def test_before_takes_older_turns_and_empties_whole_sessions(people: Store) -> None:
    old, _ = await say(people, ALICE_DM, "alice", "old news", ts=OLD)
    await people.close_session(old, "idle")
    mixed = Conversation("discord", "7", "dm", "alice")
    straddling, _ = await say(people, mixed, "alice", "older part", ts=OLD)
    await say(people, mixed, "alice", "newer part")
    plan = await survey(
        people, Asker.of_person("alice"), Selection(before=datetime(2026, 1, 1, tzinfo=UTC))
    )
    assert [s.id for s in plan.sessions] == [old]
    assert [t.session_id for t in plan.turns] == [straddling]
    await erase(people, plan)
    assert await texts(people) == ["newer part"]


async def test_matching_is_case_blind_for_ascii_and_reaches_tool_steps(people: Store) -> None:
    session = await people.open_session(ALICE_DM)
    await people.append(session.id, NewMessage("user", "My SALARY is high", speaker="alice"))
    await people.append(
        session.id,
        NewMessage(
            "tool",
            "",
            speaker="alice",
            tool_name="memory",
            tool_arguments='{"add": "salary: lots"}',
            tool_result="ok",
        ),
    )
    await people.append(session.id, NewMessage("user", "給料は秘密です", speaker="alice"))
    await people.append(session.id, NewMessage("user", "100% sure", speaker="alice"))
    await people.append(session.id, NewMessage("user", "unrelated", speaker="alice"))
    alice = Asker.of_person("alice")
    plan = await survey(people, alice, Selection(matching="salary"))
    assert len(plan.turns) == 2
    assert len((await survey(people, alice, Selection(matching="給料"))).turns) == 1
    assert len((await survey(people, alice, Selection(matching="0%"))).turns) == 1
    assert (await survey(people, alice, Selection(matching="_"))).is_empty
    await erase(people, plan)
    assert await texts(people) == ["給料は秘密です", "100% sure", "unrelated"]


async def test_the_owner_narrowed_to_a_person_takes_their_dms_and_group_words(
    people: Store,
) -> None:
    await say(people, ALICE_DM, "alice", "alice tulip")
    await say(people, BOB_DM, "bob", "bob tulip")
    group, _ = await say(people, GROUP, "alice", "alice tulip in group")
    await say(people, GROUP, "bob", "bob tulip in group")
    await say(people, GROUP, None, "kioku tulip in group")
    plan = await survey(people, Asker.owner(), Selection(matching="tulip", person="alice"))
    await erase(people, plan)
    assert await texts(people) == ["bob tulip", "bob tulip in group", "kioku tulip in group"]
    whole_group = await survey(people, Asker.owner(), Selection(sessions=(group,), person="bob"))
    assert [t.preview for t in whole_group.turns] == ["bob tulip in group"]
    with pytest.raises(NotAllowed, match="not of bob"):
        await survey(
            people,
            Asker.owner(),
            Selection(sessions=((await people.open_session(ALICE_DM)).id,), person="bob"),
        )


async def test_the_owner_deletes_a_group_session(people: Store) -> None:
    group, _ = await say(people, GROUP, "alice", "group talk")
    await say(people, GROUP, None, "kioku replies")
    plan = await survey(people, Asker.owner(), Selection(sessions=(group,)))
    assert plan.sessions[0].kind == "group" and plan.sessions[0].is_open
    done = await erase(people, plan)
    assert (done.sessions, done.turns) == (1, 2)
    assert await found(people, "alice", "group") == 0


async def test_erase_takes_only_what_was_surveyed(people: Store) -> None:
    await say(people, ALICE_DM, "alice", "first pelican")
    plan = await survey(people, Asker.of_person("alice"), Selection(matching="pelican"))
    await say(people, ALICE_DM, "alice", "second pelican, said after the survey")
    await erase(people, plan, keep_open=True)
    assert await texts(people) == ["second pelican, said after the survey"]


async def test_a_reused_id_is_not_taken(people: Store) -> None:
    _, turn = await say(people, ALICE_DM, "alice", "doomed")
    plan = await survey(people, Asker.of_person("alice"), Selection(messages=(turn,)))
    await erase(people, await survey(people, Asker.owner(), Selection(messages=(turn,))))
    _, reused = await say(people, ALICE_DM, "alice", "new words under the same id")
    assert reused == turn
    assert (await erase(people, plan)).turns == 0
    assert await texts(people) == ["new words under the same id"]
