"""The `schedule` and `timezone` tools through the agent with the fake model: jobs go to
the chat the request came from or to another account of the same person, never to
anyone else's; a person lists and cancels only their own; groups need permission."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memory.access.identities import ensure_person, link_identity
from memory.schedule.jobs import NewJob, Target, create_job, list_jobs
from memory.schedule.timezones import set_timezone, timezone_of
from memory.schedule.timing import parse_when, zone_named
from memory.store.records import Conversation
from tests.helpers.agent_rig import Rig

AIKO = "telegram:100"


def tool_result(rig: Rig) -> dict:
    """The last tool_result block kioku sent the model."""
    for message in reversed(rig.api.last.json["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                return {"text": text, "is_error": bool(block.get("is_error"))}
    raise AssertionError("no tool result was sent")


async def ask(rig: Rig, session, arguments: dict, speaker: str = "aiko", identity=AIKO) -> dict:
    rig.call_tool("schedule", arguments)
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "please", speaker=speaker, identity=identity))
    return tool_result(rig)


async def bens_job(rig: Rig) -> int:
    await ensure_person(rig.store, "ben")
    now = datetime.now(UTC)
    when = parse_when(
        at=None, in_="1h", cron=None, every=None, zone=zone_named("UTC"), now=now, min_interval=900
    )
    target = Target("telegram", "200", "", "dm", "telegram:200")
    job = await create_job(
        rig.store, NewJob("ben", when, target, text="ben's secret errand"), now=now, max_jobs=50
    )
    return job.id


async def test_create_goes_to_this_chat_and_answers_in_local_time(rig: Rig) -> None:
    await ensure_person(rig.store, "aiko")
    await set_timezone(rig.store, "aiko", "Asia/Tokyo")
    session = await rig.dm()
    result = await ask(rig, session, {"action": "create", "in": "2h", "text": "take the bread out"})
    assert not result["is_error"], result
    [job] = await list_jobs(rig.store, "aiko")
    assert job.target == Target("telegram", "100", "", "dm", AIKO)
    assert job.text == "take the bread out" and job.prompt is None
    assert f"Scheduled job {job.id} (once, to this chat)" in result["text"]
    assert "JST" in result["text"]


async def test_a_repeating_job_lists_its_next_runs(rig: Rig) -> None:
    session = await rig.dm()
    result = await ask(
        rig, session, {"action": "create", "cron": "0 8 * * 1", "prompt": "my week", "count": 4}
    )
    assert not result["is_error"], result
    assert "Next runs: " in result["text"] and result["text"].count(";") >= 2


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"in": "2h", "text": "a", "prompt": "b"}, "Not scheduled: "),
        ({"in": "2h"}, "Not scheduled: "),
        ({"at": "2001-01-01T09:00", "text": "late"}, "Not scheduled: "),
        ({"every": "1m", "text": "spam"}, "Not scheduled: "),
        ({"cron": "61 * * * *", "text": "never"}, "Not scheduled: "),
        ({"in": "2h", "text": "a", "until": "soon"}, "ISO 8601"),
    ],
)
async def test_bad_schedules_are_tool_errors_and_store_nothing(
    rig: Rig, arguments: dict, says: str
) -> None:
    session = await rig.dm()
    result = await ask(rig, session, {"action": "create", **arguments})
    assert result["is_error"] and says in result["text"], result
    assert await list_jobs(rig.store, "aiko") == []


async def test_list_shows_only_the_speakers_jobs(rig: Rig) -> None:
    bens = await bens_job(rig)
    session = await rig.dm()
    await ask(rig, session, {"action": "create", "in": "1d", "text": "call the dentist"})
    listing = (await ask(rig, session, {"action": "list"}))["text"]
    assert "call the dentist" in listing
    assert "ben's secret errand" not in listing and f"- {bens}:" not in listing


async def test_cancelling_someone_elses_job_is_refused_like_a_missing_one(rig: Rig) -> None:
    bens = await bens_job(rig)
    session = await rig.dm()
    theirs = await ask(rig, session, {"action": "cancel", "id": bens})
    absent = await ask(rig, session, {"action": "cancel", "id": bens + 1000})
    assert theirs["is_error"] and absent["is_error"]
    assert theirs["text"].replace(str(bens), "N") == absent["text"].replace(str(bens + 1000), "N")
    assert [job.id for job in await list_jobs(rig.store, "ben")] == [bens]


async def test_cancel_ends_the_speakers_own_job(rig: Rig) -> None:
    session = await rig.dm()
    await ask(rig, session, {"action": "create", "in": "1d", "text": "water the plants"})
    [job] = await list_jobs(rig.store, "aiko")
    result = await ask(rig, session, {"action": "cancel", "id": job.id})
    assert result == {
        "text": f"Cancelled job {job.id} (water the plants); it will not run again.",
        "is_error": False,
    }
    assert await list_jobs(rig.store, "aiko") == []


async def test_to_never_reaches_another_persons_account(rig: Rig) -> None:
    await ensure_person(rig.store, "ben")
    await link_identity(rig.store, "discord:900", "ben")
    session = await rig.dm()
    result = await ask(rig, session, {"action": "create", "in": "1h", "text": "x", "to": "discord"})
    assert result["is_error"] and "no discord account" in result["text"]
    assert "900" not in result["text"] and "ben" not in result["text"]
    assert await list_jobs(rig.store, "aiko") == []


async def test_to_goes_to_the_speakers_own_account_on_that_platform(rig: Rig) -> None:
    await ensure_person(rig.store, "aiko")
    await link_identity(rig.store, "discord:700", "aiko")
    session = await rig.dm()
    result = await ask(rig, session, {"action": "create", "in": "1h", "text": "x", "to": "discord"})
    assert not result["is_error"], result
    [job] = await list_jobs(rig.store, "aiko")
    assert job.target == Target("discord", "700", "", "dm", "discord:700")
    assert "to their discord direct chat" in result["text"]


async def test_the_terminal_cannot_be_a_target(rig: Rig) -> None:
    await ensure_person(rig.store, "aiko")
    await link_identity(rig.store, "cli:1000", "aiko")
    cli = await rig.store.open_session(Conversation("cli", "1000", "dm", "aiko"))
    here = await ask(rig, cli, {"action": "create", "in": "1h", "text": "x"}, identity="cli:1000")
    session = await rig.dm()
    there = await ask(rig, session, {"action": "create", "in": "1h", "text": "x", "to": "cli"})
    for result in (here, there):
        assert result["is_error"] and "cannot be written to unasked" in result["text"]
    assert await list_jobs(rig.store, "aiko") == []


async def test_in_a_group_a_person_may_not_schedule_to_the_group(rig: Rig) -> None:
    group = await rig.group()
    result = await ask(rig, group, {"action": "create", "in": "1h", "text": "standup"})
    assert result["is_error"] and "Only kioku's owner" in result["text"]
    assert await list_jobs(rig.store, "aiko") == []


async def test_the_owner_may_schedule_to_a_group(rig: Rig) -> None:
    group = await rig.group(members=("owner",))
    result = await ask(rig, group, {"action": "create", "in": "1h", "text": "standup"}, "owner")
    assert not result["is_error"], result
    [job] = await list_jobs(rig.store, "owner")
    assert (job.target.platform, job.target.chat, job.target.chat_kind) == (
        "discord",
        "-500",
        "group",
    )


@pytest.mark.parametrize("agent_env", [{"KIOKU_SCHEDULE__GROUPS": "true"}])
async def test_with_schedule_groups_anyone_may(rig: Rig) -> None:
    group = await rig.group()
    result = await ask(rig, group, {"action": "create", "in": "1h", "text": "standup"})
    assert not result["is_error"], result


async def test_a_group_list_shows_only_the_jobs_made_in_that_group(rig: Rig) -> None:
    dm = await rig.dm()
    await ask(rig, dm, {"action": "create", "in": "1d", "text": "private errand"})
    [private] = await list_jobs(rig.store, "aiko")
    group = await rig.group()
    listing = await ask(rig, group, {"action": "list"})
    assert "private errand" not in listing["text"]
    assert "no scheduled jobs made in this group" in listing["text"]
    refused = await ask(rig, group, {"action": "cancel", "id": private.id})
    assert refused["is_error"] and "private errand" not in refused["text"]
    assert [job.id for job in await list_jobs(rig.store, "aiko")] == [private.id]


@pytest.mark.parametrize("agent_env", [{"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "UTC"}])
async def test_the_timezone_tool_sets_the_speakers_zone_and_the_header_follows(rig: Rig) -> None:
    session = await rig.dm()
    rig.say("hi")
    await rig.agent.respond(rig.turn(session, "first"))
    before_system = rig.api.last.json["system"]
    assert "[Wed 2026-12-02 09:30 +00:00 (UTC) · telegram]\nfirst" in rig.texts_of(rig.api.last)
    rig.call_tool("timezone", {"zone": "Asia/Tokyo"})
    rig.say("Set.")
    await rig.agent.respond(rig.turn(session, "I'm in Tokyo"))
    assert tool_result(rig)["text"].startswith("Set the person's time zone to Asia/Tokyo")
    assert await timezone_of(rig.store, "aiko") == "Asia/Tokyo"
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "what time is it?"))
    assert "[Wed 2026-12-02 18:30 +09:00 (Asia/Tokyo) · telegram]\nwhat time is it?" in (
        rig.texts_of(rig.api.last)
    )
    assert json.dumps(rig.api.last.json["system"]) == json.dumps(before_system)


async def test_the_timezone_tool_refuses_an_unknown_zone(rig: Rig) -> None:
    session = await rig.dm()
    rig.call_tool("timezone", {"zone": "Mars/Olympus"})
    rig.say("no")
    await rig.agent.respond(rig.turn(session, "I'm on Mars"))
    result = tool_result(rig)
    assert result["is_error"] and result["text"].startswith("Not set: ")
    assert await timezone_of(rig.store, "aiko") is None


@pytest.mark.parametrize("agent_env", [{"KIOKU_SCHEDULE__MAX_JOBS_PER_PERSON": "1"}])
async def test_past_the_limit_the_model_is_told_and_nothing_is_stored(rig: Rig) -> None:
    session = await rig.dm()
    first = await ask(rig, session, {"action": "create", "in": "1d", "text": "one"})
    second = await ask(rig, session, {"action": "create", "in": "1d", "text": "two"})
    assert not first["is_error"] and second["is_error"], second
    assert second["text"].startswith("Not scheduled: ")
    assert [job.text for job in await list_jobs(rig.store, "aiko")] == ["one"]
