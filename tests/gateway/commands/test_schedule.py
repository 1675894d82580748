"""/timezone shows, sets and clears the asker's zone; /reminders lists and cancels the
asker's own jobs, in a group only those made in that group."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.schedule.jobs import Job, NewJob, Target, create_job, list_jobs
from memory.schedule.timezones import set_timezone, timezone_of
from memory.schedule.timing import parse_when, zone_named
from tests.helpers.gateway_rig import Chat, GatewayRig, gateway_rig

AIKO = "telegram:1"
BEN = "telegram:2"
GROUP = "-500"


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        yield rig


async def job(rig: GatewayRig, person: str, text: str, target: Target) -> Job:
    now = datetime.now(UTC)
    when = parse_when(
        at=None, in_="1d", cron=None, every=None, zone=zone_named("UTC"), now=now, min_interval=900
    )
    return await create_job(
        rig.store, NewJob(person, when, target, text=text), now=now, max_jobs=50
    )


def dm_of(identity: str) -> Target:
    return Target("telegram", identity.split(":")[1], "", "dm", identity)


def group_of(identity: str) -> Target:
    return Target("telegram", GROUP, "", "group", identity)


async def test_timezone_shows_sets_and_clears_the_askers_zone(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    assert (await aiko("/timezone")).startswith("You have set no time zone: kioku uses")
    reply = await aiko("/timezone Asia/Tokyo")
    assert reply.startswith("Your time zone is now Asia/Tokyo; your time now: ")
    assert "JST" in reply
    assert await timezone_of(rig.store, "aiko") == "Asia/Tokyo"
    assert await timezone_of(rig.store, "ben") is None
    assert (await aiko("/timezone")).startswith("Your time zone is Asia/Tokyo;")
    assert (await aiko("/timezone clear")).startswith("Your time zone is cleared")
    assert await timezone_of(rig.store, "aiko") is None


async def test_an_unknown_zone_is_refused_and_changes_nothing(rig: GatewayRig) -> None:
    await set_timezone(rig.store, "aiko", "Europe/Paris")
    reply = await Chat(rig, AIKO)("/timezone Mars/Olympus")
    assert reply.startswith("Not changed: ") and "Mars/Olympus" in reply
    assert await timezone_of(rig.store, "aiko") == "Europe/Paris"


async def test_timezone_in_a_group_points_to_a_direct_message(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO, group=True)("/timezone Asia/Tokyo")
    assert reply.startswith("Send /timezone to me in a direct message")
    assert await timezone_of(rig.store, "aiko") is None


async def test_reminders_lists_the_askers_jobs_in_local_time_and_never_anothers(
    rig: GatewayRig,
) -> None:
    await set_timezone(rig.store, "aiko", "Asia/Tokyo")
    mine = await job(rig, "aiko", "call the dentist", dm_of(AIKO))
    bens = await job(rig, "ben", "ben's secret errand", dm_of(BEN))
    listing = await Chat(rig, AIKO)("/reminders")
    assert listing.startswith("Your reminders and scheduled tasks:")
    assert f"- {mine.id}: call the dentist — once, next " in listing and "JST" in listing
    assert "secret errand" not in listing and f"- {bens.id}:" not in listing
    bens_listing = await Chat(rig, BEN)("/reminders")
    assert "dentist" not in bens_listing and "secret errand" in bens_listing


async def test_reminders_without_jobs_says_how_to_make_one(rig: GatewayRig) -> None:
    assert (await Chat(rig, AIKO)("/reminders")).startswith(
        "You have no reminders or scheduled tasks. Ask me for one"
    )


async def test_reminders_cancel_ends_only_the_askers_own_job(rig: GatewayRig) -> None:
    mine = await job(rig, "aiko", "water the plants", dm_of(AIKO))
    bens = await job(rig, "ben", "ben's errand", dm_of(BEN))
    aiko = Chat(rig, AIKO)
    refused = await aiko(f"/reminders cancel {bens.id}")
    assert refused == f"You have no job {bens.id}; send /reminders for your jobs' ids."
    assert [j.id for j in await list_jobs(rig.store, "ben")] == [bens.id]
    assert await aiko(f"/reminders cancel {mine.id}") == (
        f"Cancelled job {mine.id}; it will not run again."
    )
    assert await list_jobs(rig.store, "aiko") == []


@pytest.mark.parametrize("argument", ["cancel", "cancel x", "cancel 1 2", "erase"])
async def test_reminders_with_a_bad_argument_shows_the_usage(
    rig: GatewayRig, argument: str
) -> None:
    reply = await Chat(rig, AIKO)(f"/reminders {argument}")
    assert "/reminders" in reply and ("ID" in reply or "cancels one" in reply)


async def test_in_a_group_reminders_shows_only_the_askers_jobs_made_there(
    rig: GatewayRig,
) -> None:
    private = await job(rig, "aiko", "private errand", dm_of(AIKO))
    here = await job(rig, "aiko", "group standup", group_of(AIKO))
    elsewhere = await job(rig, "aiko", "other group", Target("telegram", "-600", "", "group", AIKO))
    bens = await job(rig, "ben", "ben's group note", group_of(BEN))
    group = Chat(rig, AIKO, group=True)
    listing = await group("/reminders")
    assert listing.startswith("Your reminders and scheduled tasks made in this group:")
    assert f"- {here.id}: group standup" in listing
    for hidden in ("private errand", "other group", "ben's group note"):
        assert hidden not in listing
    refused = await group(f"/reminders cancel {private.id}")
    assert refused.startswith(f"You have no job {private.id} made in this group")
    assert "ben" not in await group(f"/reminders cancel {bens.id}")
    assert {j.id for j in await list_jobs(rig.store, "aiko")} == {private.id, here.id, elsewhere.id}
    assert (await group(f"/reminders cancel {here.id}")).startswith("Cancelled job")
