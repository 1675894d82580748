"""The notes page shows when and from which conversation each entry was written, lists the
changes, and undoes one: only the person's own, and never over a later change."""

from __future__ import annotations

from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin
from memory.schedule.timezones import effective_zone
from memory.store.records import Conversation
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser


async def test_a_change_on_the_page_is_journaled_as_web(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("aiko")
    page = await browser.post("/notes/user/add", content="Prefers green tea")
    (event,) = await NotesJournal(rig.store).events("aiko")
    assert (event.source, event.session_id) == ("web", None)
    assert [(c.action, c.after) for c in event.changes] == [("add", "Prefers green tea")]
    assert f'action="/notes/revert/{event.id}"' in page and f"Undo #{event.id}" in page
    assert "added to USER.md: Prefers green tea" in page


async def test_each_entry_shows_its_date_and_links_its_conversation(
    rig: WebRig, browser: Browser
) -> None:
    session = await rig.store.open_session(Conversation("telegram", "1", "dm", "aiko"))
    notes = rig.ctx.notes("aiko")
    await notes.add("user", "Works nights", origin=NoteOrigin("memory tool", session.id))
    (event,) = await NotesJournal(rig.store).events("aiko")
    page = await (await browser.sign_in("aiko")).get("/notes")
    zone = effective_zone(None, rig.ctx.settings.schedule.default_timezone)
    assert f"Written {event.at.astimezone(zone):%Y-%m-%d} by memory tool in " in page
    assert f'<a href="/sessions/{session.id}">this conversation</a>' in page
    assert f'formaction="/notes/revert/{event.id}">Undo change #{event.id}' in page


async def test_undo_on_the_page_puts_the_previous_text_back(rig: WebRig, browser: Browser) -> None:
    notes = rig.ctx.notes("aiko")
    await notes.add("memory", "Lives in Tokyo", origin=NoteOrigin("cli"))
    await browser.sign_in("aiko")
    await browser.post("/notes/memory/replace", old_text="Lives in Tokyo", content="Lives in Osaka")
    replaced, _ = await NotesJournal(rig.store).events("aiko")
    page = await browser.post(f"/notes/revert/{replaced.id}")
    assert f"Reverted change {replaced.id}" in page
    assert (await notes.read("memory")).entries == ("Lives in Tokyo",)
    undo, *_ = await NotesJournal(rig.store).events("aiko")
    assert (undo.source, undo.reverts) == ("revert", replaced.id)


async def test_undo_of_a_change_made_over_since_is_refused(rig: WebRig, browser: Browser) -> None:
    notes = rig.ctx.notes("aiko")
    await notes.add("memory", "Lives in Tokyo", origin=NoteOrigin("cli"))
    (added,) = await NotesJournal(rig.store).events("aiko")
    await notes.replace("memory", "Tokyo", "Lives in Osaka", origin=NoteOrigin("cli"))
    await browser.sign_in("aiko")
    page = await browser.post(f"/notes/revert/{added.id}", status=400)
    assert "has changed since" in page.replace("&#39;", "'")
    assert (await notes.read("memory")).entries == ("Lives in Osaka",)


async def test_another_persons_change_cannot_be_undone(rig: WebRig, browser: Browser) -> None:
    ben = rig.ctx.notes("ben")
    await ben.add("user", "Name: Ben", origin=NoteOrigin("cli"))
    (event,) = await NotesJournal(rig.store).events("ben")
    await browser.sign_in("aiko")
    page = await browser.post(f"/notes/revert/{event.id}", status=400)
    assert f"aiko has no journaled change {event.id}" in page
    assert "Name: Ben" not in page
    assert (await ben.read("user")).entries == ("Name: Ben",)
