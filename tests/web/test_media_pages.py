"""Kept files on the web page: the history page links a message's files, and GET
/media/<id> gives a file only to whom it belongs (a group's to the owner); everyone
else gets the 404 of an id that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.access.people import OWNER
from memory.media import NewMedia, StoredMedia, keep_media
from memory.store.records import Conversation, NewMessage
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser

ALICE_DM = Conversation("telegram", "5", person="alice")
GROUP = Conversation("telegram", "g", "group")
JPEG = b"\xff\xd8\xff\xe0 alice's receipt"
PHOTO = NewMedia("image", "receipt.jpg", "image/jpeg", JPEG)
PAGE = NewMedia("document", "../evil.html", "text/html", b"<script>alert(1)</script>")


async def sent(
    rig: WebRig, where: Conversation, speaker: str, *files: NewMedia
) -> tuple[int, list[StoredMedia]]:
    session = await rig.store.open_session(where)
    turn = await rig.store.append(session.id, NewMessage("user", "[file]", speaker=speaker))
    kept = await keep_media(rig.store, rig.ctx.settings.home, session, turn, files)
    return session.id, kept


@pytest.fixture
async def people(rig: WebRig) -> WebRig:
    await rig.person("alice", "telegram:5")
    await rig.person("bob", "telegram:6")
    return rig


async def fetch(browser: Browser, item: StoredMedia) -> tuple[int, dict[str, str], bytes]:
    async with browser.http.get(f"{browser.rig.url}/media/{item.id}") as response:
        return response.status, dict(response.headers), await response.read()


async def test_alice_downloads_her_own_file_as_an_attachment(
    people: WebRig, browser: Browser
) -> None:
    _, (photo,) = await sent(people, ALICE_DM, "alice", PHOTO)
    await browser.sign_in("alice")
    status, headers, body = await fetch(browser, photo)
    assert (status, body) == (200, JPEG)
    assert headers["Content-Type"] == "image/jpeg"
    assert headers["Content-Disposition"] == 'attachment; filename="receipt.jpg"'
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Security-Policy"] == "default-src 'none'"


async def test_a_file_that_could_run_in_a_browser_is_only_ever_a_download(
    people: WebRig, browser: Browser
) -> None:
    _, (page,) = await sent(people, ALICE_DM, "alice", PAGE)
    await browser.sign_in("alice")
    status, headers, _ = await fetch(browser, page)
    assert status == 200
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Disposition"] == 'attachment; filename="evil_html"'
    assert headers["Content-Security-Policy"] == "default-src 'none'"


async def test_bob_gets_the_404_of_a_missing_id_for_alices_file(
    people: WebRig, browser: Browser, other: Browser
) -> None:
    _, (photo,) = await sent(people, ALICE_DM, "alice", PHOTO)
    await other.sign_in("bob")
    status, _, body = await fetch(other, photo)
    missing = await other.get(f"/media/{photo.id + 1000}", status=404)
    assert status == 404 and JPEG not in body
    assert body.decode() == missing
    await browser.sign_in(OWNER)  # the owner does not get a person's files either
    assert (await fetch(browser, photo))[0] == 404


async def test_a_groups_file_goes_to_the_owner_only(
    people: WebRig, browser: Browser, other: Browser
) -> None:
    _, (photo,) = await sent(people, GROUP, "alice", PHOTO)
    await other.sign_in("alice")
    assert (await fetch(other, photo))[0] == 404
    await browser.sign_in(OWNER)
    status, _, body = await fetch(browser, photo)
    assert (status, body) == (200, JPEG)


async def test_not_signed_in_gets_no_file(people: WebRig, browser: Browser) -> None:
    _, (photo,) = await sent(people, ALICE_DM, "alice", PHOTO)
    assert (await fetch(browser, photo))[0] == 401


async def test_a_file_gone_from_disk_is_a_404(people: WebRig, browser: Browser) -> None:
    _, (photo,) = await sent(people, ALICE_DM, "alice", PHOTO)
    (Path(people.ctx.settings.home) / photo.path).unlink()
    await browser.sign_in("alice")
    assert (await fetch(browser, photo))[0] == 404


async def test_the_session_page_links_the_files_of_each_message(
    people: WebRig, browser: Browser
) -> None:
    session, (photo, page) = await sent(people, ALICE_DM, "alice", PHOTO, PAGE)
    await browser.sign_in("alice")
    shown = await browser.get(f"/sessions/{session}")
    assert f'<a href="/media/{photo.id}" download>receipt.jpg</a>' in shown
    assert f'<a href="/media/{page.id}" download>evil.html</a>' in shown
    assert "<script>" not in shown


async def test_in_a_group_session_only_the_owner_gets_links(
    people: WebRig, browser: Browser, other: Browser
) -> None:
    session, (photo,) = await sent(people, GROUP, "alice", PHOTO)
    await other.sign_in("alice")
    shown = await other.get(f"/sessions/{session}")
    assert "receipt.jpg" in shown and f"/media/{photo.id}" not in shown
    assert "only the owner downloads a group's files" in shown


async def test_the_admin_page_counts_the_kept_files(people: WebRig, browser: Browser) -> None:
    await sent(people, ALICE_DM, "alice", PHOTO, PHOTO)
    await browser.sign_in(OWNER)
    page = await browser.get("/admin")
    assert '<strong id="media-count">2 files, 0.0 MB</strong>' in page
