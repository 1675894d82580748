"""A platform's edit or deletion of a stored message: history shows what the person meant,
and nothing of what was taken back stays in state.db, its index or its bytes."""

from __future__ import annotations

from pathlib import Path

from memory.access.identities import ensure_person
from memory.history.erasures import pending
from memory.history.platform_edits import amend_said, erase_said
from memory.media import NewMedia, keep_media, media_for_message
from memory.search.ranking import Scope, search
from memory.store import deliveries
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "7", "dm", "alice")
GROUP = Conversation("discord", "555", "group")
# Upper case in the text, so the lower-case form is the full-text index's own copy.
OLD = "ZQXJVORPAL"
NEW = "KWYJIBOMEANT"
JAPANESE = "ポムポムプリンセス"
# Past a page: long texts live on overflow pages, which FAST does not zero when freed.
LONG = " and then some more words about it" * 3000
FILLER = "the weather report for {n}: clouds over harbour {n} and wind from quarter {m}"
PHOTO = NewMedia("image", "receipt.jpg", "image/jpeg", b"\xff\xd8 jpeg bytes")


def on_disk(home: Path, needle: str) -> list[str]:
    """The files of state.db (database, WAL, shared memory) whose bytes hold `needle`."""
    raw = needle.encode()
    return [path.name for path in sorted(home.glob("state.db*")) if raw in path.read_bytes()]


async def said(
    store: Store, conversation: Conversation, text: str, message_id: str, speaker: str = "alice"
) -> int:
    await ensure_person(store, speaker)
    if conversation.person:
        await ensure_person(store, conversation.person)
    session = await store.open_session(conversation)
    return await store.append(
        session.id, NewMessage("user", text, speaker=speaker, platform_message_id=message_id)
    )


async def answered(store: Store, conversation: Conversation, text: str) -> int:
    session = await store.open_session(conversation)
    return await store.append(session.id, NewMessage("assistant", text))


async def contents(store: Store) -> list[str]:
    rows = await store.read(
        lambda db: db.execute("SELECT content FROM turns ORDER BY id").fetchall()
    )
    return [row["content"] for row in rows]


async def indexed(store: Store, term: str) -> list[int]:
    """The rows the full-text index itself holds for `term` (not only what search shows)."""
    rows = await store.read(
        lambda db: db.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (f'"{term}"',)
        ).fetchall()
    )
    return [row[0] for row in rows]


async def found(store: Store, query: str, person: str = "alice") -> int:
    return len(await search(store, query, Scope(person=person)))


# -- amend --------------------------------------------------------------------------------


async def test_an_amended_message_is_found_by_its_new_words_not_its_old(store: Store) -> None:
    turn = await said(store, DM, f"meet me at {OLD}", "41")
    amended = await amend_said(store, "telegram", "7", "41", f"meet me at {NEW}")
    assert amended is not None and amended.turn_id == turn
    assert await contents(store) == [f"meet me at {NEW}"]
    assert await found(store, NEW) == 1
    assert await found(store, OLD) == 0
    assert await indexed(store, OLD.lower()) == []
    assert await indexed(store, NEW.lower()) == [turn]


async def test_an_amended_japanese_message_is_indexed_by_its_new_segments(store: Store) -> None:
    turn = await said(store, DM, f"{JAPANESE}に会った", "41")
    await amend_said(store, "telegram", "7", "41", "抹茶店に行った")
    assert await found(store, "抹茶店") == 1
    assert await found(store, JAPANESE) == 0
    assert await indexed(store, "プリ") == []
    assert await indexed(store, "抹茶") == [turn]


async def test_the_index_passes_its_integrity_check_after_amends(store: Store) -> None:
    for n in range(20):
        await said(store, DM, f"note {n} about {OLD} {JAPANESE}", str(n))
    for n in range(0, 20, 2):
        await amend_said(store, "telegram", "7", str(n), f"note {n} about {NEW} 抹茶")
    report = await store.check_integrity()
    assert report.ok, report.problems
    assert await found(store, NEW) == 1  # one session holds all of them
    assert len(await indexed(store, NEW.lower())) == 10
    assert len(await indexed(store, OLD.lower())) == 10


async def test_an_amend_leaves_no_bytes_of_the_old_text(store: Store, home: Path) -> None:
    await said(store, DM, f"{LONG}: my code is {OLD} and {JAPANESE}の秘密", "41")
    other = Conversation("telegram", "9", "dm", "alice")
    for n in range(1500):
        await said(store, other, FILLER.format(n=n, m=n % 7), f"f{n}")
    assert on_disk(home, OLD.lower()), "the index copy is on disk before"
    await amend_said(store, "telegram", "7", "41", f"my code is {NEW}")
    for needle in (OLD, OLD.lower(), JAPANESE, "プリンセス"):
        assert on_disk(home, needle) == [], needle
    assert on_disk(home, NEW)
    assert await found(store, "harbour") == 1


async def test_an_amend_leaves_no_bytes_of_the_ledgers_copy_of_the_message(
    store: Store, home: Path
) -> None:
    # The ledger held the message (past a page) until its turn was stored: freed, not zeroed.
    await deliveries.hold(store, "telegram", "7", "41", f'{{"text": "{LONG} {OLD}"}}')
    await said(store, DM, f"my code is {OLD}", "41")
    await deliveries.record(store, "telegram", "7", "41")
    await amend_said(store, "telegram", "7", "41", f"my code is {NEW}")
    assert on_disk(home, OLD) == []
    assert on_disk(home, OLD.lower()) == []


async def test_an_amend_keeps_the_files_stand_ins_and_the_files(store: Store, home: Path) -> None:
    turn = await said(store, DM, f"[photo 1280x960: receipt.jpg]\nlunch at {OLD}", "41")
    session = await store.open_session(DM)
    [kept] = await keep_media(store, home, session, turn, [PHOTO])
    await amend_said(store, "telegram", "7", "41", f"lunch at {NEW}")
    assert await contents(store) == [f"[photo 1280x960: receipt.jpg]\nlunch at {NEW}"]
    assert await found(store, "receipt") == 1
    assert (await media_for_message(store, [turn]))[turn] == [kept]
    assert (home / kept.path).exists()


async def test_an_amend_clears_the_sessions_title_and_summary(store: Store) -> None:
    await said(store, DM, f"pin {OLD}", "41")
    session = await store.open_session(DM)
    await store.close_session(session.id, "idle", title=f"about {OLD}", summary=f"{OLD} said")
    await amend_said(store, "telegram", "7", "41", f"pin {NEW}")
    closed = await store.get_session(session.id)
    assert closed is not None and closed.title is None and closed.summary is None


async def test_an_amended_turn_is_logged_so_copies_of_it_go(store: Store) -> None:
    turn = await said(store, DM, f"pin {OLD}", "41")
    await amend_said(store, "telegram", "7", "41", f"pin {NEW}")
    assert [(e.scope, e.turn_id) for e in await pending(store)] == [("person:alice", turn)]


async def test_an_edit_that_leaves_the_text_as_it_was_changes_nothing(store: Store) -> None:
    await said(store, DM, "see https://example.org", "41")
    session = await store.open_session(DM)
    await store.close_session(session.id, "idle", title="a link")
    amended = await amend_said(store, "telegram", "7", "41", "see https://example.org")
    assert amended is not None
    assert (await store.get_session(session.id)).title == "a link"
    assert await pending(store) == []


async def test_kiokus_answer_is_not_amended(store: Store) -> None:
    await said(store, DM, f"pin {OLD}", "41")
    await answered(store, DM, f"noted: {OLD}")
    await amend_said(store, "telegram", "7", "41", f"pin {NEW}")
    assert await contents(store) == [f"pin {NEW}", f"noted: {OLD}"]


async def test_an_amend_of_an_unknown_or_other_chats_message_changes_nothing(
    store: Store,
) -> None:
    await said(store, DM, f"pin {OLD}", "41")
    for platform, chat, message_id in (
        ("telegram", "7", "42"),
        ("telegram", "8", "41"),
        ("discord", "7", "41"),
    ):
        assert await amend_said(store, platform, chat, message_id, NEW) is None
    assert await contents(store) == [f"pin {OLD}"]
    assert await pending(store) == []


async def test_every_stored_copy_of_a_message_is_amended(store: Store) -> None:
    await said(store, DM, f"pin {OLD}", "41")
    session = await store.open_session(DM)
    await store.close_session(session.id, "idle")
    await said(store, DM, f"pin {OLD}", "41")
    await amend_said(store, "telegram", "7", "41", f"pin {NEW}")
    assert await contents(store) == [f"pin {NEW}", f"pin {NEW}"]


# -- erase --------------------------------------------------------------------------------


async def test_an_erased_message_goes_with_its_bytes_and_the_answer_stays(
    store: Store, home: Path
) -> None:
    await said(store, DM, "hello", "40")
    turn = await said(store, DM, f"my code is {OLD}", "41")
    await answered(store, DM, "noted")
    unsaid = await erase_said(store, "telegram", "7", "41")
    assert unsaid is not None and unsaid.said.turn_id == turn
    assert (unsaid.erased.turns, unsaid.session_removed) == (1, False)
    assert await contents(store) == ["hello", "noted"]
    assert (await store.open_session(DM)).id == unsaid.said.session_id  # kept open
    assert on_disk(home, OLD.lower()) == []
    assert await indexed(store, OLD.lower()) == []
    assert (await store.check_integrity()).ok


async def test_an_erased_message_takes_its_kept_file(store: Store, home: Path) -> None:
    await said(store, DM, "hello", "40")
    turn = await said(store, DM, "[photo: receipt.jpg]", "41")
    [kept] = await keep_media(store, home, await store.open_session(DM), turn, [PHOTO])
    unsaid = await erase_said(store, "telegram", "7", "41")
    assert unsaid is not None and unsaid.erased.files == 1
    assert not (home / kept.path).exists()
    assert await media_for_message(store, [turn]) == {}


async def test_erasing_a_sessions_only_message_removes_the_session(store: Store) -> None:
    await said(store, DM, f"oops {OLD}", "41")
    unsaid = await erase_said(store, "telegram", "7", "41")
    assert unsaid is not None and unsaid.session_removed
    assert await store.get_session(unsaid.said.session_id) is None


async def test_a_group_message_is_erased_for_its_author_alone(store: Store) -> None:
    await said(store, GROUP, "bob was here", "900", speaker="bob")
    turn = await said(store, GROUP, f"alice says {OLD}", "901")
    unsaid = await erase_said(store, "discord", "555", "901")
    assert unsaid is not None and unsaid.said.turn_id == turn
    assert await contents(store) == ["bob was here"]


async def test_an_erase_of_an_unknown_or_other_chats_message_changes_nothing(
    store: Store,
) -> None:
    await said(store, DM, f"pin {OLD}", "41")
    for platform, chat, message_id in (
        ("telegram", "7", "42"),
        ("telegram", "8", "41"),
        ("discord", "7", "41"),
    ):
        assert await erase_said(store, platform, chat, message_id) is None
    assert await contents(store) == [f"pin {OLD}"]
