"""The Me page's time zone form and reminders list: set, clear, refuse with a clear
error; list a person's own jobs in their local time; cancel only their own."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memory.schedule.jobs import NewJob, Target, create_job, get_job, list_jobs
from memory.schedule.timezones import timezone_of
from memory.schedule.timing import parse_when
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser

AIKO_DM = Target("telegram", "1", "", "dm", "telegram:1")


async def job_of(rig: WebRig, person: str, text: str, *, cron: str | None = None) -> int:
    now = datetime.fromtimestamp(rig.now[0], UTC)
    when = parse_when(
        at=None,
        in_=None if cron else "2h",
        cron=cron,
        every=None,
        zone=ZoneInfo("Asia/Tokyo"),
        now=now,
        min_interval=900,
    )
    new = NewJob(person=person, when=when, target=AIKO_DM, text=text, name=f"{person}'s")
    return (await create_job(rig.store, new, now=now, max_jobs=50)).id


async def test_setting_the_zone_shows_it_and_clearing_goes_back_to_the_default(
    rig: WebRig, browser: Browser
) -> None:
    await browser.sign_in("aiko")
    assert "(the default, from the server" in await browser.get("/")
    page = await browser.post("/timezone", zone="Asia/Tokyo")
    assert "Your time zone is Asia/Tokyo." in page
    assert "<strong>Asia/Tokyo</strong> (your choice)" in page and "JST for you now" in page
    assert await timezone_of(rig.store, "aiko") == "Asia/Tokyo"
    page = await browser.post("/timezone", clear="1")
    assert "Your times follow the default zone now." in page
    assert await timezone_of(rig.store, "aiko") is None


async def test_an_unknown_zone_is_refused_and_kept_in_the_field(
    rig: WebRig, browser: Browser
) -> None:
    await browser.sign_in("aiko")
    await browser.post("/timezone", zone="Europe/Berlin")
    page = html.unescape(await browser.post("/timezone", status=400, zone="Mars/Olympus"))
    assert "'Mars/Olympus' is not a time zone" in page and "Nothing was changed." in page
    assert 'value="Mars/Olympus"' in page
    assert await timezone_of(rig.store, "aiko") == "Europe/Berlin"
    page = html.unescape(await browser.post("/timezone", status=400, zone=" "))
    assert "Type a time zone" in page


async def test_a_zone_without_the_csrf_token_changes_nothing(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("aiko")
    await browser.post("/timezone", status=403, csrf="forged", zone="Asia/Tokyo")
    assert await timezone_of(rig.store, "aiko") is None


async def test_reminders_list_the_persons_own_jobs_in_their_local_time(
    rig: WebRig, browser: Browser
) -> None:
    await job_of(rig, "aiko", "water the plants", cron="0 9 * * 1")
    await job_of(rig, "ben", "bens secret errand")
    await browser.sign_in("aiko")
    await browser.post("/timezone", zone="Asia/Tokyo")
    page = html.unescape(await browser.get("/"))
    assert "Reminder: water the plants" in page and "aiko's" in page
    assert "cron 0 9 * * 1 (Asia/Tokyo time)" in page
    runs = page[page.index("Next runs (Asia/Tokyo)") :]
    assert runs.count("09:00 JST") == 3
    assert "telegram direct messages (telegram:1)" in page
    assert "bens secret errand" not in page


async def test_cancel_removes_ones_own_job_and_refuses_anothers(
    rig: WebRig, browser: Browser
) -> None:
    mine = await job_of(rig, "aiko", "call the dentist")
    bens = await job_of(rig, "ben", "bens errand")
    await browser.sign_in("aiko")
    assert f'action="/reminders/{mine}/cancel"' in await browser.get("/")
    page = html.unescape(await browser.post(f"/reminders/{mine}/cancel"))
    assert "Cancelled reminder “aiko's”." in page
    assert "No reminders or scheduled tasks." in page
    page = html.unescape(await browser.post(f"/reminders/{bens}/cancel", status=400))
    assert f"You have no reminder {bens}" in page and "bens errand" not in page
    assert (await get_job(rig.store, bens, "ben")).text == "bens errand"
    assert [job.person for job in await list_jobs(rig.store, None)] == ["ben"]
