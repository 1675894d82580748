"""The web page in a real browser: the system Chromium driven by Playwright.

The page runs in-process (aiohttp on port 0, a real Store in this test's KIOKU_HOME);
screenshots of the main pages are saved under tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from memory.access.identities import person_for
from memory.store.records import Conversation, NewMessage
from tests.helpers.web_rig import WebRig, web_rig

playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="the system Chromium is missing: apt-get install -y --no-install-recommends chromium",
)
Kioku = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[WebRig]:
    async with web_rig(home) as rig:
        await rig.person("aiko", "telegram:1")
        await rig.person("ben", "telegram:2")
        yield rig


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    async with playwright_api.async_playwright() as p:
        launched = await p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-background-networking"],
        )
        try:
            yield launched
        finally:
            await launched.close()


async def signed_in(browser: object, rig: WebRig, person: str) -> object:
    """A fresh browser context, signed in as `person` through a one-time link."""
    context = await browser.new_context(viewport={"width": 420, "height": 900})  # type: ignore[attr-defined]
    page = await context.new_page()
    await page.goto(await rig.link(person))
    await page.click("#sign-in")
    await page.wait_for_url(f"{rig.url}/")
    return page


async def shot(page: object, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"web-{name}.png"), full_page=True)  # type: ignore[attr-defined]


async def test_a_one_time_link_signs_in_and_shows_the_main_pages(
    browser: object, rig: WebRig
) -> None:
    session = await rig.store.open_session(Conversation("telegram", "1", person="aiko"))
    await rig.store.append(session.id, NewMessage("user", "How do I brew matcha?", speaker="aiko"))
    await rig.store.append(session.id, NewMessage("assistant", "Whisk it at 80°C."))
    await rig.store.close_session(session.id, "idle", title="Matcha", summary="Brewing matcha.")
    page = await signed_in(browser, rig, "aiko")
    assert "telegram:1" in await page.inner_text("#identities")
    await shot(page, "home")
    for path, name in [
        ("/notes", "notes"),
        ("/sessions", "sessions"),
        (f"/sessions/{session.id}", "session"),
        ("/search?q=matcha", "search"),
        ("/skills", "skills"),
    ]:
        response = await page.goto(rig.url + path)
        assert response.status == 200
        await shot(page, name)
    assert await page.goto(rig.url + "/search?q=matcha")
    assert "matcha" in (await page.inner_text("mark")).lower()


async def test_a_note_edited_on_the_page_is_what_kioku_memory_shows(
    browser: object, rig: WebRig, kioku: Kioku
) -> None:
    page = await signed_in(browser, rig, "aiko")
    await page.goto(rig.url + "/notes")
    await page.fill("#user form.add textarea", "Prefers green tea")
    await page.click("#user form.add button")
    assert "Added to USER.md" in await page.inner_text(".notice")
    await page.fill("#user form.entry textarea", "Prefers genmaicha")
    await page.click("#user form.entry button[name=save]")
    assert "Replaced the entry in USER.md" in await page.inner_text(".notice")
    shown = await asyncio.to_thread(kioku, "memory", "show", "--person", "aiko", "--json")
    assert json.loads(shown.stdout)["user"]["entries"] == ["Prefers genmaicha"]


async def test_an_over_limit_edit_is_refused_with_the_tools_message(
    browser: object, rig: WebRig
) -> None:
    page = await signed_in(browser, rig, "aiko")
    await page.goto(rig.url + "/notes")
    await page.fill("#user form.add textarea", "short note")
    await page.click("#user form.add button")
    limit = rig.ctx.settings.memory.notes.user_limit
    await page.fill("#user form.entry textarea", "y" * (limit + 10))
    await page.click("#user form.entry button[name=save]")
    error = await page.inner_text(".error")
    assert error.startswith("Refused:") and "Nothing was changed." in error
    assert "limit" in error
    await shot(page, "notes-refused")
    assert (await rig.ctx.notes("aiko").read("user")).entries == ("short note",)


async def test_the_owner_approves_a_pairing_from_the_page(browser: object, rig: WebRig) -> None:
    code = await rig.pairing("discord:42", "Chika")
    page = await signed_in(browser, rig, "owner")
    await page.goto(rig.url + "/admin")
    await shot(page, "admin")
    await page.select_option(f"select[aria-label='approve {code} as']", "aiko")
    await page.click("#pairing form[action='/admin/pairing/approve'] button")
    assert "discord:42 is now aiko" in await page.inner_text(".notice")
    assert await person_for(rig.store, "discord:42") == "aiko"


async def test_a_person_cannot_reach_another_persons_pages_or_the_admin_pages(
    browser: object, rig: WebRig
) -> None:
    theirs = await rig.store.open_session(Conversation("telegram", "2", person="ben"))
    await rig.store.append(theirs.id, NewMessage("user", "ben's plan", speaker="ben"))
    code = await rig.pairing("discord:66")
    page = await signed_in(browser, rig, "aiko")
    assert (await page.goto(f"{rig.url}/sessions/{theirs.id}")).status == 404
    assert (await page.goto(f"{rig.url}/admin")).status == 403
    csrf = await page.get_attribute("input[name=csrf]", "value")
    forged = await page.context.request.post(
        f"{rig.url}/admin/pairing/approve", form={"csrf": csrf, "code": code, "as_person": "aiko"}
    )
    assert forged.status == 403
    assert await person_for(rig.store, "discord:66") is None


async def test_a_reused_or_expired_link_is_refused(browser: object, rig: WebRig) -> None:
    link = await rig.link("aiko")
    first = await browser.new_context()  # type: ignore[attr-defined]
    page = await first.new_page()
    await page.goto(link)
    await page.click("#sign-in")
    await page.wait_for_url(f"{rig.url}/")
    again = await (await browser.new_context()).new_page()  # type: ignore[attr-defined]
    response = await again.goto(link)
    assert response.status == 403 and "already used" in await again.inner_text("main")
    expiring = await rig.link("aiko")
    rig.later(601)
    response = await again.goto(expiring)
    assert response.status == 403 and "expired" in await again.inner_text("main")
    assert (await again.goto(rig.url + "/notes")).status == 401


async def test_a_form_with_a_wrong_csrf_token_is_refused(browser: object, rig: WebRig) -> None:
    page = await signed_in(browser, rig, "aiko")
    await page.goto(rig.url + "/notes")
    await page.locator("#memory form.add input[name=csrf]").evaluate("e => e.value = 'forged'")
    await page.fill("#memory form.add textarea", "should not be saved")
    await page.click("#memory form.add button")
    assert "security token" in await page.inner_text("main")
    assert (await rig.ctx.notes("aiko").read("memory")).entries == ()
    forged = await page.context.request.post(
        f"{rig.url}/notes/memory/add", form={"content": "no token at all"}
    )
    assert forged.status == 403
    assert (await rig.ctx.notes("aiko").read("memory")).entries == ()


async def test_deleting_a_session_in_the_browser_asks_then_erases(
    browser: object, rig: WebRig
) -> None:
    session = await rig.store.open_session(Conversation("telegram", "1", person="aiko"))
    await rig.store.append(session.id, NewMessage("user", "my pin is 4921", speaker="aiko"))
    await rig.store.append(session.id, NewMessage("assistant", "Noted."))
    page = await signed_in(browser, rig, "aiko")
    await page.goto(f"{rig.url}/sessions/{session.id}")
    await page.click("#delete-session button")
    assert "1 whole session and 2 turns" in await page.inner_text("#totals")
    await shot(page, "delete-confirm")
    assert await rig.store.get_session(session.id) is not None
    await page.click("#confirm")
    await page.wait_for_url(f"{rig.url}/sessions?*")
    assert "Deleted 1 whole session and 2 turns" in await page.inner_text(".notice")
    assert await rig.store.get_session(session.id) is None
    await page.goto(rig.url + "/")
    await page.fill("#days", "30")
    await page.click("#keep button")
    assert "kept 30 days" in await page.inner_text(".notice")
    await shot(page, "keep-days")


async def test_the_time_zone_and_a_reminder_in_the_browser(browser: object, rig: WebRig) -> None:
    from datetime import UTC, datetime

    from memory.schedule.jobs import NewJob, Target, create_job, list_jobs
    from memory.schedule.timing import parse_when

    now = datetime.now(UTC)
    when = parse_when(
        at=None, in_=None, cron="0 9 * * 1", every=None, zone=UTC, now=now, min_interval=900
    )
    target = Target("telegram", "1", "", "dm", "telegram:1")
    await create_job(
        rig.store,
        NewJob("aiko", when, target, text="water the plants", name="plants"),
        now=now,
        max_jobs=50,
    )
    page = await signed_in(browser, rig, "aiko")
    await page.fill("#zone-name", "Asia/Tokyo")
    await page.click("#timezone button")
    assert "Your time zone is Asia/Tokyo." in await page.inner_text(".notice")
    assert "09:00 UTC" not in await page.inner_text("#reminders")
    assert "18:00 JST" in await page.inner_text("#reminders")
    await shot(page, "reminders")
    await page.click("#reminders button.danger")
    assert "Cancelled reminder “plants”." in await page.inner_text(".notice")
    assert await list_jobs(rig.store, "aiko") == []
