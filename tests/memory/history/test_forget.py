"""Forgetting a person removes their DMs, their words in groups, identities and files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.access.codes import issue_link_code
from memory.access.identities import ensure_person, get_person, link_identity, person_for
from memory.history.forget import CannotForget, forget_person, survey
from memory.schedule.jobs import NewJob, Target, claim_due, create_job, list_jobs
from memory.schedule.timing import parse_when
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from memory.store.scalar import scalar_now


async def say(store: Store, conversation: Conversation, speaker: str | None, text: str) -> None:
    session = await store.open_session(conversation)
    role = "user" if speaker else "assistant"
    await store.append(session.id, NewMessage(role=role, content=text, speaker=speaker))


async def alice_with_history(store: Store, home: Path) -> Conversation:
    await ensure_person(store, "alice")
    await link_identity(store, "telegram:7", "alice")
    await link_identity(store, "discord:8", "alice")
    await say(store, Conversation("telegram", "7", "dm", "alice"), "alice", "my pelican secret")
    group = Conversation("telegram", "g", "group")
    await say(store, group, "alice", "pelican in the group")
    await say(store, group, "owner", "owner talks about pelican")
    await say(store, group, None, "kioku answers pelican")
    folder = home / "people" / "alice" / "skills" / "s"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n", encoding="utf-8")
    (home / "people" / "alice" / "USER.md").write_text("likes pelicans", encoding="utf-8")
    await issue_link_code(store, "alice", 0.0)
    return group


async def count(store: Store, sql: str) -> int:
    return await store.read(lambda db: scalar_now(db, sql))


async def test_forget_removes_dm_sessions_identities_links_and_folder(
    store: Store, home: Path
) -> None:
    await alice_with_history(store, home)
    report = await forget_person(store, home, "alice")
    assert report.identities == ["discord:8", "telegram:7"]
    assert (report.dm_sessions, report.turns, report.group_turns) == (1, 1, 1)
    assert report.folder == home / "people" / "alice"
    assert not report.folder.exists()
    assert await get_person(store, "alice") is None
    assert await person_for(store, "telegram:7") is None
    assert await count(store, "SELECT count(*) FROM sessions WHERE kind = 'dm'") == 0
    assert await count(store, "SELECT count(*) FROM link_codes") == 0
    assert await count(store, "SELECT count(*) FROM participants WHERE person_id='alice'") == 0


async def test_forget_keeps_group_sessions_without_the_persons_words(
    store: Store, home: Path
) -> None:
    group = await alice_with_history(store, home)
    await forget_person(store, home, "alice")
    session = await store.open_session(group)
    texts = [m.content for m in await store.messages(session.id)]
    assert texts == ["owner talks about pelican", "kioku answers pelican"]


async def test_forgotten_words_leave_the_search_index(store: Store, home: Path) -> None:
    await alice_with_history(store, home)
    in_group = Scope.of_group("telegram", "g")
    assert "pelican in the group" in str(await search(store, "pelican", in_group))
    await forget_person(store, home, "alice")
    report = await store.check_integrity()
    assert report.ok, report.problems
    after = str(await search(store, "pelican", in_group))
    assert "kioku answers pelican" in after and "pelican in the group" not in after


async def test_survey_counts_without_removing(store: Store, home: Path) -> None:
    await alice_with_history(store, home)
    report = await survey(store, home, "alice")
    assert (report.dm_sessions, report.group_turns, len(report.identities)) == (1, 1, 2)
    assert await get_person(store, "alice") is not None


async def test_the_owner_cannot_be_forgotten(store: Store, home: Path) -> None:
    with pytest.raises(CannotForget, match="owner cannot be forgotten"):
        await forget_person(store, home, "owner")


async def test_unknown_person_is_refused(store: Store, home: Path) -> None:
    with pytest.raises(CannotForget, match="knows no person 'nobody'"):
        await forget_person(store, home, "nobody")


async def test_a_left_over_folder_is_still_removed(store: Store, home: Path) -> None:
    (home / "people" / "ghost").mkdir(parents=True)
    report = await forget_person(store, home, "ghost")
    assert report.folder is not None and not report.folder.exists()


async def test_forget_counts_and_removes_the_persons_jobs_and_their_runs(
    store: Store, home: Path
) -> None:
    await ensure_person(store, "alice")
    await ensure_person(store, "bob")
    now = datetime(2026, 12, 3, tzinfo=UTC)
    when = parse_when(at=None, in_="1m", cron=None, every=None, zone=UTC, now=now, min_interval=60)
    for person, kind in (("alice", "dm"), ("alice", "group"), ("bob", "dm")):
        target = Target("telegram", "7", "", kind, None)
        await create_job(store, NewJob(person, when, target, text="tea"), now=now, max_jobs=5)
    await claim_due(store, now + timedelta(minutes=1), 3600)
    assert (await survey(store, home, "alice")).jobs == 2
    assert "reminders and scheduled tasks: 2" in (await survey(store, home, "alice")).describe()
    assert (await forget_person(store, home, "alice")).jobs == 2
    assert [job.person for job in await list_jobs(store, None)] == ["bob"]
    assert await count(store, "SELECT count(*) FROM job_runs") == 1
