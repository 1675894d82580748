"""Deleted text is gone from the bytes of state.db, its WAL and its index, not only unlinked."""

from __future__ import annotations

from pathlib import Path

from memory.access.identities import ensure_person
from memory.history.erase import erase, survey
from memory.history.selection import Asker, Selection
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "7", "dm", "alice")
# Upper case in the text, so the lower-case form is the full-text index's own copy.
SECRET = "ZQXJVORPAL"
JAPANESE = "ポムポムプリンセス"
# Past a page: long texts live on overflow pages, which FAST does not zero when freed.
LONG = " and then some more words about it" * 3000
FILLER = "the weather report for {n}: clouds over harbour {n} and wind from quarter {m}"


def on_disk(home: Path, needle: str) -> list[str]:
    """The files of state.db (database, WAL, shared memory) whose bytes hold `needle`."""
    raw = needle.encode()
    return [path.name for path in sorted(home.glob("state.db*")) if raw in path.read_bytes()]


async def history_with_secrets(store: Store) -> tuple[int, int]:
    """A long DM turn holding secrets, buried under enough later turns for FTS5 to merge
    segments (pages freed with the secret's old index entries), and a long session
    summary rewritten as compaction does (old copies left on freed pages)."""
    await ensure_person(store, "alice")
    secret_session = await store.open_session(DM)
    await store.append(
        secret_session.id,
        NewMessage("user", f"{LONG}: my code is {SECRET} and {JAPANESE}の秘密", speaker="alice"),
    )
    other = await store.open_session(Conversation("telegram", "9", "dm", "alice"))
    for n in range(1500):
        await store.append(
            other.id, NewMessage("user", FILLER.format(n=n, m=n % 7), speaker="alice")
        )
    for n in range(3):
        await store.set_open_summary(
            secret_session, f"summary {n}: {LONG}, the code {SECRET} {JAPANESE}"
        )
    await store.close_session(secret_session.id, "idle", title=f"about {SECRET}")
    return secret_session.id, other.id


async def test_a_deleted_session_leaves_no_bytes_behind(home: Path) -> None:
    async with await Store.open(home / "state.db") as store:
        session, _ = await history_with_secrets(store)
        assert on_disk(home, SECRET.lower()), "the index copy is on disk before"
        plan = await survey(store, Asker.of_person("alice"), Selection(sessions=(session,)))
        done = await erase(store, plan)
        assert done.wal_truncated
        for needle in (SECRET, SECRET.lower(), JAPANESE, "プリンセス"):
            assert on_disk(home, needle) == [], needle
    for needle in (SECRET, SECRET.lower(), JAPANESE):
        assert on_disk(home, needle) == [], needle


async def test_a_deleted_message_leaves_no_bytes_and_the_rest_stays_searchable(
    home: Path,
) -> None:
    async with await Store.open(home / "state.db") as store:
        await ensure_person(store, "alice")
        session = await store.open_session(DM)
        doomed = await store.append(
            session.id, NewMessage("user", f"pin {SECRET}", speaker="alice")
        )
        await store.append(session.id, NewMessage("user", "harbour clouds", speaker="alice"))
        plan = await survey(store, Asker.of_person("alice"), Selection(messages=(doomed,)))
        await erase(store, plan)
        assert on_disk(home, SECRET.lower()) == []
        report = await store.check_integrity()
        assert report.ok, report
        assert len(await search(store, "harbour", Scope(person="alice"))) == 1
