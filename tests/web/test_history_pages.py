"""Deleting history and choosing how long it is kept, on the web page: every deletion
shows what goes and erases only when confirmed; a person deletes only their own DMs,
the owner any session (group ones too, from Admin · History)."""

from __future__ import annotations

import html

from memory.history.retention import keep_days_of
from memory.store.records import Conversation, NewMessage
from tests.helpers.web_rig import WebRig
from tests.web.browser import PLAN, Browser

AIKO_DM = Conversation("telegram", "1", person="aiko")
BEN_DM = Conversation("telegram", "2", person="ben")
GROUP = Conversation("telegram", "g", "group")


async def said(rig: WebRig, where: Conversation, *turns: tuple[str, str | None]) -> tuple[int, ...]:
    """The session of `where` with `turns` (role+speaker: text) appended; its id, then turn ids."""
    session = await rig.store.open_session(where)
    ids = []
    for text, speaker in turns:
        role = "user" if speaker else "assistant"
        ids.append(await rig.store.append(session.id, NewMessage(role, text, speaker=speaker)))
    return (session.id, *ids)


async def texts(rig: WebRig, session_id: int) -> list[str]:
    return [m.content for m in await rig.store.messages(session_id)]


def stored_bytes(rig: WebRig) -> bytes:
    """state.db and its WAL, as on disk."""
    database = rig.ctx.settings.home / "state.db"
    wal = database.with_name("state.db-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def plan_of(page: str) -> str:
    found = PLAN.search(page)
    assert found, page
    return html.unescape(found.group(1))


async def test_deleting_a_session_shows_what_goes_then_erases_on_yes(
    rig: WebRig, browser: Browser
) -> None:
    session, *_ = await said(rig, AIKO_DM, ("my password is hunter2", "aiko"), ("noted", None))
    assert b"hunter2" in stored_bytes(rig)
    await browser.sign_in("aiko")
    assert f'action="/sessions/{session}/delete"' in await browser.get(f"/sessions/{session}")
    page = await browser.post(f"/sessions/{session}/delete")
    assert "Yes, delete" in page and "1 whole session and 2 turns" in page
    assert f"(id {session}, telegram dm of aiko" in page
    assert len(await texts(rig, session)) == 2
    where = await browser.redirected(
        f"/sessions/{session}/delete", confirm="yes", plan=plan_of(page)
    )
    assert where.startswith("/sessions?")
    assert await rig.store.get_session(session) is None
    assert b"hunter2" not in stored_bytes(rig)
    notice = await browser.get(where)
    assert "Deleted 1 whole session and 2 turns" in notice
    assert f"/sessions/{session}" not in notice


async def test_without_the_confirm_field_nothing_is_deleted(rig: WebRig, browser: Browser) -> None:
    session, *_ = await said(rig, AIKO_DM, ("keep me", "aiko"))
    await browser.sign_in("aiko")
    page = await browser.post(f"/sessions/{session}/delete")
    again = await browser.post(f"/sessions/{session}/delete", plan=plan_of(page))
    assert "Yes, delete" in again
    await browser.post(f"/sessions/{session}/delete", confirm="no", plan=plan_of(page))
    assert await texts(rig, session) == ["keep me"]


async def test_a_turn_added_after_the_confirmation_page_asks_again(
    rig: WebRig, browser: Browser
) -> None:
    session, *_ = await said(rig, AIKO_DM, ("first", "aiko"))
    await browser.sign_in("aiko")
    shown = plan_of(await browser.post(f"/sessions/{session}/delete"))
    await said(rig, AIKO_DM, ("said meanwhile", "aiko"))
    page = await browser.post(f"/sessions/{session}/delete", confirm="yes", plan=shown)
    assert "changed since" in page and "1 whole session and 2 turns" in page
    assert await texts(rig, session) == ["first", "said meanwhile"]
    await browser.redirected(f"/sessions/{session}/delete", confirm="yes", plan=plan_of(page))
    assert await rig.store.get_session(session) is None


async def test_deleting_one_message_keeps_the_rest_of_the_session(
    rig: WebRig, browser: Browser
) -> None:
    session, secret, reply, _ = await said(
        rig, AIKO_DM, ("my pin is 4921", "aiko"), ("got it", None), ("and the weather?", "aiko")
    )
    await browser.sign_in("aiko")
    path = f"/sessions/{session}/messages/{secret}/delete"
    assert f'action="{path}"' in await browser.get(f"/sessions/{session}")
    page = await browser.post(path)
    assert f"message {secret} in" in page and "my pin is 4921" in page
    assert "0 whole sessions and 1 turn" in page
    where = await browser.redirected(path, confirm="yes", plan=plan_of(page))
    notice = await browser.get(where)
    assert "Deleted 0 whole sessions and 1 turn" in notice
    assert "conversation that lost messages was ended" in notice  # it was open
    assert await texts(rig, session) == ["got it", "and the weather?"]
    assert reply in {m.id for m in await rig.store.messages(session)}


async def test_the_notice_says_when_the_wal_keeps_copies_until_a_checkpoint(
    browser: Browser,
) -> None:
    await browser.sign_in("aiko")
    page = await browser.get("/sessions?deleted_sessions=1&deleted_turns=2&wal=1")
    assert "Deleted 1 whole session and 2 turns; state.db was busy" in page
    assert "next checkpoint" in page and "gone from kioku" not in page
    assert "Deleted" not in await browser.get("/sessions?deleted_sessions=-1&deleted_turns=9")


async def test_a_message_of_another_session_is_not_found_on_this_one(
    rig: WebRig, browser: Browser
) -> None:
    session, _ = await said(rig, AIKO_DM, ("mine", "aiko"))
    _, ben_turn = await said(rig, BEN_DM, ("ben's", "ben"))
    await browser.sign_in("aiko")
    path = f"/sessions/{session}/messages/{ben_turn}/delete"
    await browser.post(path, status=404, confirm="yes", plan=f"t{ben_turn}")
    assert await texts(rig, session) == ["mine"]


async def test_a_person_cannot_delete_another_persons_session(
    rig: WebRig, browser: Browser
) -> None:
    session, turn = await said(rig, BEN_DM, ("ben's secret", "ben"))
    await browser.sign_in("aiko")
    whole = f"/sessions/{session}/delete"
    await browser.post(whole, status=404, confirm="yes", plan=f"s{session}-{turn}")
    await browser.post(f"/sessions/{session}/messages/{turn}/delete", status=404, confirm="yes")
    assert await texts(rig, session) == ["ben's secret"]


async def test_a_group_session_has_no_delete_button_and_refuses_a_person(
    rig: WebRig, browser: Browser
) -> None:
    session, aiko_turn, _ = await said(rig, GROUP, ("aiko in the group", "aiko"), ("hi", None))
    await browser.sign_in("aiko")
    page = await browser.get(f"/sessions/{session}")
    assert "aiko in the group" in page and "only the owner deletes it" in page
    assert "/delete" not in page
    refused = await browser.post(f"/sessions/{session}/delete", status=403)
    assert "group&#39;s history; only the owner deletes it" in refused
    path = f"/sessions/{session}/messages/{aiko_turn}/delete"
    await browser.post(path, status=403, confirm="yes", plan=f"t{aiko_turn}")
    assert await texts(rig, session) == ["aiko in the group", "hi"]


async def test_a_delete_without_the_csrf_token_changes_nothing(
    rig: WebRig, browser: Browser, other: Browser
) -> None:
    session, turn = await said(rig, AIKO_DM, ("stay", "aiko"))
    await browser.sign_in("aiko")
    await other.sign_in("ben")
    plan = f"s{session}-{turn}"
    path = f"/sessions/{session}/delete"
    await browser.post(path, status=403, csrf="", confirm="yes", plan=plan)
    await browser.post(path, status=403, csrf=other.csrf, confirm="yes", plan=plan)
    await browser.post(f"/admin/history/{session}/delete", status=403, confirm="yes", plan=plan)
    assert await texts(rig, session) == ["stay"]


async def test_the_owner_deletes_a_group_session_from_admin_history(
    rig: WebRig, browser: Browser
) -> None:
    group, *_ = await said(rig, GROUP, ("aiko in the group", "aiko"), ("ben too", "ben"))
    dm, _ = await said(rig, AIKO_DM, ("aiko alone", "aiko"))
    await browser.sign_in("owner")
    assert 'href="/admin/history"' in await browser.get("/admin")
    listing = await browser.get("/admin/history")
    for session in (group, dm):
        assert f'action="/admin/history/{session}/delete"' in listing
    page = await browser.post(f"/admin/history/{group}/delete")
    assert "telegram group" in page and "2 turns" in page and "and 2 turns" in page
    where = await browser.redirected(
        f"/admin/history/{group}/delete", confirm="yes", plan=plan_of(page)
    )
    assert where.startswith("/admin/history?")
    after = await browser.get(where)
    assert "Deleted 1 whole session and 2 turns" in after
    assert f"/admin/history/{group}/delete" not in after
    assert await rig.store.get_session(group) is None
    assert await texts(rig, dm) == ["aiko alone"]
    await browser.post(f"/admin/history/{group}/delete", status=404)


async def test_the_keep_days_form_sets_forever_and_clears(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("aiko")
    assert "kept <strong>forever</strong> (the default)" in await browser.get("/")
    page = await browser.post("/history/keep", days="90")
    assert "now kept 90 days" in page and "kept <strong>90 days</strong> (your choice" in page
    assert await keep_days_of(rig.store, "aiko") == 90
    assert await keep_days_of(rig.store, "ben") is None
    await browser.post("/history/keep", days="0")
    assert await keep_days_of(rig.store, "aiko") == 0
    assert "follows the default" in await browser.post("/history/keep", days="")
    assert await keep_days_of(rig.store, "aiko") is None


async def test_the_keep_days_form_shows_the_configured_default(
    rig: WebRig, browser: Browser
) -> None:
    rig.ctx.settings.history.keep_days = 30
    await browser.sign_in("aiko")
    assert "kept <strong>30 days</strong> (the default)" in await browser.get("/")
    page = await browser.post("/history/keep", days="0")
    assert "kept <strong>forever</strong> (your choice; the default is 30 days)" in page


async def test_bad_keep_days_are_refused_and_nothing_changes(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("aiko")
    await browser.post("/history/keep", days="45")
    for bad in ("-1", "100001", "ten", "1.5", "٣", "9" * 30):
        page = await browser.post("/history/keep", status=400, days=bad)
        assert "whole number of days from 0 (forever) to 100,000" in page
        assert "Nothing was changed" in page
        assert await keep_days_of(rig.store, "aiko") == 45
    await browser.post("/history/keep", status=403, csrf="", days="7")
    assert await keep_days_of(rig.store, "aiko") == 45


async def test_a_person_cannot_use_admin_history(rig: WebRig, browser: Browser) -> None:
    group, *_ = await said(rig, GROUP, ("aiko in the group", "aiko"))
    dm, _ = await said(rig, BEN_DM, ("ben alone", "ben"))
    await browser.sign_in("aiko")
    await browser.get("/admin/history", status=403)
    for session in (group, dm):
        page = await browser.post(f"/admin/history/{session}/delete", status=403, confirm="yes")
        assert "This page is the owner&#39;s." in page
    assert await texts(rig, group) == ["aiko in the group"]
    assert await texts(rig, dm) == ["ben alone"]
