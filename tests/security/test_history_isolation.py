"""Isolation of deletion, as for search: whatever ben asks to delete, in any form, takes
nothing of aiko's and nothing of a group's; only the owner deletes group history, and an
owner's deletion narrowed to ben takes only ben's words."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.history.erase import erase, survey
from memory.history.selection import Asker, NotAllowed, Selection
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

FUTURE = datetime(2999, 1, 1, tzinfo=UTC)
WORDS = "the shared word"


@pytest.fixture
async def world(home: Path) -> AsyncIterator[tuple[Store, dict[str, int]]]:
    async with await Store.open(home / "state.db") as store:
        ids: dict[str, int] = {}
        for person in ("aiko", "ben"):
            await ensure_person(store, person)
        for key, conversation, speaker in (
            ("aiko_dm", Conversation("telegram", "1", "dm", "aiko"), "aiko"),
            ("ben_dm", Conversation("discord", "2", "dm", "ben"), "ben"),
            ("group_aiko", Conversation("slack", "c", "group"), "aiko"),
            ("group_ben", Conversation("slack", "c", "group"), "ben"),
        ):
            session = await store.open_session(conversation)
            ids[key.split("_")[0] + "_session" if key.endswith("dm") else "group"] = session.id
            ids[key] = await store.append(
                session.id, NewMessage("user", f"{key}: {WORDS}", speaker=speaker)
            )
        yield store, ids


async def texts(store: Store) -> set[str]:
    rows = await store.read(lambda db: db.execute("SELECT content FROM turns").fetchall())
    return {row["content"].split(":")[0] for row in rows}


@pytest.mark.parametrize(
    "selection",
    [
        lambda ids: Selection(sessions=(ids["aiko_session"],)),
        lambda ids: Selection(sessions=(ids["group"],)),
        lambda ids: Selection(messages=(ids["aiko_dm"],)),
        lambda ids: Selection(messages=(ids["group_aiko"],)),
        lambda ids: Selection(messages=(ids["group_ben"],)),
        lambda ids: Selection(messages=(ids["ben_dm"], ids["aiko_dm"])),
        lambda ids: Selection(sessions=(ids["ben_session"], ids["aiko_session"])),
    ],
)
async def test_ben_naming_what_is_not_his_is_refused_and_nothing_goes(world, selection) -> None:
    store, ids = world
    with pytest.raises(NotAllowed):
        await survey(store, Asker.of_person("ben"), selection(ids))
    assert await texts(store) == {"aiko_dm", "ben_dm", "group_aiko", "group_ben"}


@pytest.mark.parametrize(
    "selection",
    [
        Selection(before=FUTURE),
        Selection(matching=WORDS),
        Selection(matching="aiko"),
        Selection(matching=":"),
        Selection(before=FUTURE, matching="%"),
        Selection(matching="_"),
        Selection(before=FUTURE, person="aiko"),
    ],
)
async def test_ben_sweeping_deletions_take_only_his_dms(world, selection: Selection) -> None:
    store, _ = world
    plan = await survey(store, Asker.of_person("ben"), selection)
    await erase(store, plan)
    left = await texts(store)
    assert {"aiko_dm", "group_aiko", "group_ben"} <= left


async def test_an_owner_deletion_narrowed_to_ben_takes_only_bens_words(world) -> None:
    store, _ = world
    plan = await survey(store, Asker.owner(), Selection(matching=WORDS, person="ben"))
    await erase(store, plan)
    assert await texts(store) == {"aiko_dm", "group_aiko"}


async def test_only_the_owner_deletes_a_group_session(world) -> None:
    store, ids = world
    plan = await survey(store, Asker.owner(), Selection(sessions=(ids["group"],)))
    await erase(store, plan)
    assert await texts(store) == {"aiko_dm", "ben_dm"}
