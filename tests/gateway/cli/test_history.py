"""`kioku history list|delete|keep` through the real entry point: what is listed, what is
asked, what goes, and what bad input gets."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from memory.access.identities import ensure_person
from memory.media import NewMedia, keep_media, media_path
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.helpers.terminal import on_terminal

T = TypeVar("T")
Kioku = Callable[..., subprocess.CompletedProcess[str]]
ALICE = Conversation("telegram", "7", "dm", "alice")
BOB = Conversation("telegram", "8", "dm", "bob")
GROUP = Conversation("slack", "c1", "group")


def with_store(home: Path, work: Callable[[Store], Awaitable[T]]) -> T:
    async def run() -> T:
        async with await Store.open(home / "state.db") as store:
            return await work(store)

    return asyncio.run(run())


def said(home: Path, conversation: Conversation, *lines: tuple[str | None, str], ts=None) -> dict:
    """One session holding `lines` (speaker, text); its id, name and turn ids."""

    async def work(store: Store) -> dict:
        for person in ("alice", "bob"):
            await ensure_person(store, person)
        session = await store.open_session(conversation)
        turns = []
        for speaker, text in lines:
            role = "user" if speaker else "assistant"
            message = NewMessage(role=role, content=text, speaker=speaker, ts=ts)
            turns.append(await store.append(session.id, message))
        return {"id": session.id, "name": session.external_id, "turns": turns}

    return with_store(home, work)


def texts(home: Path) -> list[str]:
    async def work(store: Store) -> list[str]:
        rows = await store.read(
            lambda db: db.execute("SELECT content FROM turns ORDER BY id").fetchall()
        )
        return [row["content"] for row in rows]

    return with_store(home, work)


@pytest.fixture
def three(home: Path) -> dict[str, dict]:
    return {
        "alice": said(home, ALICE, ("alice", "my password is hunter2"), (None, "noted")),
        "bob": said(home, BOB, ("bob", "bob likes tea")),
        "group": said(home, GROUP, ("alice", "alice in the group"), ("bob", "bob in the group")),
    }


def test_list_shows_every_session_with_its_name_id_and_turns(kioku: Kioku, three) -> None:
    done = kioku("history", "list", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [s["id"] for s in listed] == [three[k]["id"] for k in ("group", "bob", "alice")]
    assert listed[2]["name"] == three["alice"]["name"] and listed[2]["turns"] == 2
    assert set(listed[0]) == {
        "id", "name", "platform", "kind", "person", "title", "started_at", "ended_at", "turns"
    }  # fmt: skip
    text = kioku("history", "list", "--person", "bob").stdout
    assert three["bob"]["name"] in text and three["group"]["name"] in text
    assert three["alice"]["name"] not in text and "1 turns" in text


def test_list_of_an_unknown_person_is_refused(kioku: Kioku, three) -> None:
    done = kioku("history", "list", "--person", "carol")
    assert done.returncode == 1 and "no person 'carol'" in done.stderr


def test_delete_without_a_terminal_or_yes_refuses_and_keeps_everything(
    kioku: Kioku, home: Path, three
) -> None:
    done = kioku("history", "delete", str(three["alice"]["id"]))
    assert done.returncode == 1 and "--yes" in done.stderr
    assert "my password is hunter2" in texts(home)


def test_delete_a_session_by_name_with_yes(kioku: Kioku, home: Path, three) -> None:
    done = kioku("history", "delete", three["alice"]["name"], "--yes")
    assert done.returncode == 0, done.stderr
    assert "Deleted 1 whole session and 2 turns" in done.stdout
    assert f"session {three['alice']['name']} (id" in done.stdout  # what goes, listed first
    assert texts(home) == ["bob likes tea", "alice in the group", "bob in the group"]
    assert "hunter2" not in kioku("history", "list").stdout


def test_delete_says_how_many_kept_files_went_and_removes_them(
    kioku: Kioku, home: Path, three
) -> None:
    async def keep(store: Store) -> list[Path]:
        session = await store.get_session(three["alice"]["id"])
        assert session is not None
        photo = NewMedia("image", "receipt.jpg", "image/jpeg", b"\xff\xd8 receipt")
        kept = await keep_media(store, home, session, three["alice"]["turns"][0], [photo, photo])
        return [media_path(home, item) for item in kept]

    paths = with_store(home, keep)
    done = kioku("history", "delete", three["alice"]["name"], "--yes")
    assert done.returncode == 0, done.stderr
    assert "Deleted 1 whole session and 2 turns, with 2 kept files." in done.stdout
    assert not any(path.exists() for path in paths)


def test_on_a_terminal_it_asks_and_no_keeps_everything(home: Path, three) -> None:
    session = str(three["alice"]["id"])
    code, output = on_terminal("history", "delete", session, answer="n", prompt="Delete it?")
    assert code == 1 and "Nothing was deleted" in output and "2 turns, open" in output
    assert "my password is hunter2" in texts(home)
    code, output = on_terminal("history", "delete", session, answer="y", prompt="Delete it?")
    assert code == 0 and "Deleted 1 whole session and 2 turns" in output, output
    assert "my password is hunter2" not in texts(home)


def test_delete_one_message(kioku: Kioku, home: Path, three) -> None:
    turn = three["alice"]["turns"][0]
    done = kioku("history", "delete", "--message", str(turn), "--yes")
    assert done.returncode == 0, done.stderr
    assert "Deleted 0 whole sessions and 1 turn" in done.stdout
    assert "my password is hunter2" not in texts(home) and "noted" in texts(home)


def test_delete_matching_a_phrase_in_any_case(kioku: Kioku, home: Path, three) -> None:
    done = kioku("history", "delete", "--matching", "IN THE GROUP", "--yes")
    assert done.returncode == 0, done.stderr
    assert texts(home) == ["my password is hunter2", "noted", "bob likes tea"]


def test_delete_matching_narrowed_to_one_person(kioku: Kioku, home: Path, three) -> None:
    done = kioku("history", "delete", "--matching", "group", "--person", "bob", "--yes")
    assert done.returncode == 0, done.stderr
    assert "alice in the group" in texts(home) and "bob in the group" not in texts(home)


def test_delete_before_a_date(kioku: Kioku, home: Path, three) -> None:
    said(home, BOB, ("bob", "an old thing"), ts=datetime(2025, 3, 1, tzinfo=UTC))
    done = kioku("history", "delete", "--before", "2026-01-01", "--yes")
    assert done.returncode == 0, done.stderr
    assert "an old thing" not in texts(home) and "bob likes tea" in texts(home)


def test_nothing_matching_deletes_nothing_and_says_so(kioku: Kioku, home: Path, three) -> None:
    done = kioku("history", "delete", "--matching", "zebra", "--yes")
    assert done.returncode == 0 and "Nothing matches" in done.stdout
    assert len(texts(home)) == 5


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        ((), 2, "nothing selected"),
        (("--before", "last tuesday"), 2, "is not a date"),
        (("--matching", "   "), 2, "phrase to match is empty"),
        (("no-such-session",), 1, "no session 'no-such-session'"),
        (("--message", "99999"), 1, "no message 99999"),
        (("--message", "x"), 2, "is not a valid int"),
        (("--message", "9" * 25), 2, "--message"),
        (("--matching", "tea", "--person", "carol"), 1, "no person 'carol'"),
        (("--matching", "tea", "--person", "Not A Person!"), 2, "--person"),
    ],
)
def test_bad_input_is_refused_with_a_reason_and_nothing_goes(
    kioku: Kioku, home: Path, three, args: tuple[str, ...], code: int, says: str
) -> None:
    done = kioku("history", "delete", *args, "--yes")
    assert done.returncode == code, (done.stdout, done.stderr)
    assert says in done.stderr
    assert len(texts(home)) == 5


def test_keep_sets_shows_and_clears_a_persons_choice(kioku: Kioku, three) -> None:
    done = kioku("history", "keep", "--person", "alice")
    assert done.returncode == 0 and "kept forever (history.keep_days)" in done.stdout
    done = kioku("history", "keep", "--person", "alice", "--days", "90")
    assert "kept 90 days after they end (their own choice)" in done.stdout
    done = kioku(
        "history",
        "keep",
        "--person",
        "alice",
        "--days",
        "0",
        env={"KIOKU_HISTORY__KEEP_DAYS": "30"},
    )
    assert "kept forever (their own choice)" in done.stdout
    done = kioku(
        "history", "keep", "--person", "alice", "--default", env={"KIOKU_HISTORY__KEEP_DAYS": "30"}
    )
    assert "kept 30 days after they end (history.keep_days)" in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("--person", "carol", "--days", "3"), 1, "no person 'carol'"),
        (("--person", "alice", "--days", "-1"), 2, "--days"),
        (("--person", "alice", "--days", "3", "--default"), 2, "not both"),
        (("--days", "3"), 2, "--person"),
    ],
)
def test_keep_refuses_bad_input(
    kioku: Kioku, three, args: tuple[str, ...], code: int, says: str
) -> None:
    done = kioku("history", "keep", *args)
    assert done.returncode == code and says in done.stderr, done.stderr
    assert "forever (history.keep_days)" in kioku("history", "keep", "--person", "alice").stdout
