"""`kioku providers backfill local_vectors` on a home with history, against the fake
embeddings server: it embeds only the exchanges of the persons the provider sees, adds
nothing the second time, embeds again with `--rebuild`, and fails with a message that
says what to fix and never shows the key.

The fake runs in the test's event loop and the command in a subprocess, so the command
runs through `asyncio.to_thread` and the loop stays free to answer it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.fakes.embeddings_api import FakeEmbeddings
from tests.helpers.door_daemon import free_port
from tests.helpers.history_files import write_jsonl

Kioku = Callable[..., subprocess.CompletedProcess[str]]
KEY = "sk-embeddings-secret-0123456789"
ALICE_SAID = ("my sister lives in Kyoto", "the bike is a blue gazelle", "tea without sugar")
BOB_SAID = ("I grow tomatoes", "my dog is called Pixel")


def exchanges(person: str, said: tuple[str, ...], day: int) -> list[dict[str, object]]:
    """One session of `person`: each message answered."""
    rows: list[dict[str, object]] = []
    for number, text in enumerate(said):
        common = {"person": person, "platform": "cli", "chat": person, "session": f"{person}-1"}
        ts = f"2026-01-{day:02d}T10:{number:02d}:00+00:00"
        rows.append({**common, "role": "user", "content": text, "ts": ts})
        rows.append({**common, "role": "assistant", "content": f"noted: {text}", "ts": ts})
    return rows


@pytest.fixture
async def api() -> AsyncIterator[FakeEmbeddings]:
    async with FakeEmbeddings(dims=64) as server:
        yield server


@pytest.fixture
def history(kioku: Kioku, tmp_path: Path) -> None:
    """Three exchanges of alice and two of bob, imported as a person would import them."""
    rows = exchanges("alice", ALICE_SAID, 1) + exchanges("bob", BOB_SAID, 2)
    done = kioku("import", str(write_jsonl(tmp_path / "history.jsonl", rows)))
    assert done.returncode == 0, done.stderr


def settings(base_url: str, **more: str) -> dict[str, str]:
    prefix = "KIOKU_PROVIDERS__LOCAL_VECTORS__"
    given = {
        "ENABLED": "true",
        "BASE_URL": base_url,
        "MODEL": "fake-embed",
        "PERSONS": '["alice"]',
        "TIMEOUT": "3",
        **more,
    }
    return {prefix + name: value for name, value in given.items()}


async def backfill(
    kioku: Kioku, env: dict[str, str], *more: str
) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(kioku, "providers", "backfill", "local_vectors", *more, env=env)


def scopes(home: Path) -> dict[str, int]:
    """Rows of vectors.db per scope, read as an operator would with sqlite3."""
    db = sqlite3.connect(home / "providers" / "local_vectors" / "vectors.db")
    try:
        return dict(db.execute("SELECT scope, count(*) FROM vectors GROUP BY scope").fetchall())
    finally:
        db.close()


def said(count: int, of: int, skipped: int) -> str:
    return (
        f"local_vectors: embedded {count} exchange(s) of {of}; "
        f"{skipped} already there, empty, or outside its persons and groups"
    )


async def test_backfill_embeds_only_the_persons_it_sees(
    kioku: Kioku, api: FakeEmbeddings, history: None, home: Path
) -> None:
    done = await backfill(kioku, settings(api.base_url))
    assert done.returncode == 0, done.stderr
    assert said(3, 5, 2) in done.stdout
    assert scopes(home) == {"person:alice": 3}
    assert len(api.texts) == len(ALICE_SAID)
    assert sorted(api.texts) == sorted(f"{text}\nnoted: {text}" for text in ALICE_SAID)


async def test_a_second_backfill_embeds_nothing(
    kioku: Kioku, api: FakeEmbeddings, history: None, home: Path
) -> None:
    assert (await backfill(kioku, settings(api.base_url))).returncode == 0
    embedded = len(api.texts)
    again = await backfill(kioku, settings(api.base_url))
    assert again.returncode == 0, again.stderr
    assert said(0, 5, 5) in again.stdout
    assert len(api.texts) == embedded
    assert scopes(home) == {"person:alice": 3}


async def test_rebuild_embeds_everything_again(
    kioku: Kioku, api: FakeEmbeddings, history: None, home: Path
) -> None:
    assert (await backfill(kioku, settings(api.base_url))).returncode == 0
    rebuilt = await backfill(kioku, settings(api.base_url), "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert said(3, 5, 2) in rebuilt.stdout
    assert len(api.texts) == 6
    assert scopes(home) == {"person:alice": 3}


async def test_an_unreachable_server_fails_saying_so_without_the_key(
    kioku: Kioku, history: None
) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    done = await backfill(kioku, settings(nowhere, API_KEY=KEY))
    assert done.returncode == 1
    assert f"local_vectors: the embeddings server at {nowhere}/embeddings is unreachable" in (
        done.stderr
    )
    assert KEY not in done.stdout + done.stderr


async def test_a_failing_server_fails_with_its_message_without_the_key(
    kioku: Kioku, api: FakeEmbeddings, history: None, home: Path
) -> None:
    api.key = KEY
    api.fail(500, f"out of memory while serving key {KEY}")
    done = await backfill(kioku, settings(api.base_url, API_KEY=KEY))
    assert done.returncode == 1
    assert "failed: HTTP 500: out of memory while serving key" in done.stderr
    assert KEY not in done.stdout + done.stderr
    assert scopes(home) == {}


async def test_a_refused_key_says_which_setting_to_fix_without_the_key(
    kioku: Kioku, api: FakeEmbeddings, history: None
) -> None:
    api.key = "sk-the-right-one"
    done = await backfill(kioku, settings(api.base_url, API_KEY=KEY))
    assert done.returncode == 1
    assert "answered HTTP 401: its key was refused" in done.stderr
    assert "KIOKU_PROVIDERS__LOCAL_VECTORS__API_KEY" in done.stderr
    assert KEY not in done.stdout + done.stderr


def test_supermemory_has_no_backfill(kioku: Kioku) -> None:
    done = kioku("providers", "backfill", "supermemory")
    assert done.returncode == 2
    assert "'supermemory' has no backfill: only local_vectors" in done.stderr


async def search(kioku: Kioku, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(kioku, "search", *args, "--person", "alice", "--json", env=env)


async def test_search_with_local_vectors_finds_by_meaning_what_the_words_miss(
    kioku: Kioku, api: FakeEmbeddings, history: None
) -> None:
    env = settings(api.base_url)
    assert (await backfill(kioku, env)).returncode == 0
    # Each exchange is embedded led by its roles: to the fake (a bag of words) the word
    # "assistant" is near every one of alice's rows, and none of her turns says it.
    done = await search(kioku, env, "assistant")
    assert done.returncode == 0, done.stderr
    [found] = json.loads(done.stdout)
    assert found["session"] == "alice-1"
    assert {hit["reason"] for hit in found["hits"]} == {"semantic"}
    assert api.texts[-1] == "assistant"


async def test_search_answers_by_its_words_when_the_embeddings_server_is_down(
    kioku: Kioku, api: FakeEmbeddings, history: None
) -> None:
    assert (await backfill(kioku, settings(api.base_url))).returncode == 0
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    done = await search(kioku, settings(nowhere), "gazelle")
    assert done.returncode == 0, done.stderr
    assert [found["session"] for found in json.loads(done.stdout)] == ["alice-1"]
    assert "search_meaning_unavailable" in done.stderr
    assert "unreachable" in done.stderr
