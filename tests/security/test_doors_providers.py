"""The door of the `local_vectors` memory provider: what an embeddings server answers.

Every hostile item, and the answers that broke it (NaN, 1e999, "1e308", a hundred
megabytes), comes from the fake embeddings server to `kioku providers test
local_vectors` (the real CLI), to the provider recording a turn, and to a running
daemon whose recall asks it. Each gets a provider error that says what is wrong, exit 1,
no traceback or ERROR line; nothing that is not a finite vector is stored, rows stored
by older versions never rank, and the daemon goes on answering.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.memory_providers.base import Host, ProviderError, Scope, TurnRecord
from agent.memory_providers.builtin.embedding_answer import answer_cap
from agent.memory_providers.builtin.local_vectors import LocalVectors
from config.provider_settings import LocalVectorsSettings
from memory.vectors.rows import NotFinite, VectorRow
from memory.vectors.store import VectorStore
from tests.fakes.embeddings_api import FakeEmbeddings
from tests.fakes.scripted_server import Failure, Received, Step
from tests.helpers.cli_batch import Job, Ran, kioku_batch_async
from tests.helpers.daemon import Client, module_daemon
from tests.helpers.hostile import ITEMS, embedding_answers, unhandled

DIMS = 8


ANSWERS = embedding_answers(DIMS)
SAYS = {
    "nan": "holding nan (text 1, number 1)",
    "all-nan": "holding nan",
    "1e999": "holding inf",
    "string-1e308": "holding '1e308', which is not a number",
    "1e308": "holding 1e+308",
    "booleans": "holding True, which is not a number",
    "nulls": "holding None, which is not a number",
    "nested": "holding [0.5], which is not a number",
    "huge-integer": "holding inf",
    "no-numbers": "returned 0-dimension vectors",
    "too-long": "returned 8193-dimension vectors",
    "two-for-one": "returned 2 vectors for 1 texts",
    "index-wrong": "numbered its vectors wrongly",
    "oversized": f"answered more than {answer_cap(1):,} bytes",
}
"""What `kioku providers test` says of each of `embedding_answers`."""
ERROR_BODY = b'{"error": {"message": "' + b"x" * (4 << 20) + b'"}}'


def hostile(request: Received) -> Step:
    """The answer for the model the request names: an item of the corpus or a reported one."""
    model = request.json["model"]
    if model == "error-body":
        return Failure(500, ERROR_BODY)
    if model.startswith("item:"):
        return Failure(200, ITEMS[model[5:]])
    return Failure(200, ANSWERS[model])


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """`kioku providers test local_vectors` once per hostile answer, one model name each
    (the fake answers on a loop of the fixture's own while the batch runs)."""
    folder = tmp_path_factory.mktemp("providers")
    return asyncio.run(_test_each(folder))


async def _test_each(folder: Path) -> dict[str, Ran]:
    async with FakeEmbeddings(dims=DIMS) as api:
        api.fallback = hostile
        api.floods["flood"] = 50 << 20
        models = [f"item:{name}" for name in ITEMS] + [*ANSWERS, "error-body", "flood"]
        env = {"KIOKU_PROVIDERS__LOCAL_VECTORS__BASE_URL": api.base_url}
        jobs = [
            Job(
                model,
                ["providers", "test", "local_vectors"],
                folder / "home",
                {**env, "KIOKU_PROVIDERS__LOCAL_VECTORS__MODEL": model},
            )
            for model in models
        ]
        return await kioku_batch_async(jobs, folder)


@pytest.mark.parametrize("name", sorted(ITEMS))
def test_providers_test_fails_on_each_hostile_answer_saying_why(
    tested: dict[str, Ran], name: str
) -> None:
    ran = tested[f"item:{name}"]
    ran.assert_clean()
    assert ran.code == 1 and "local_vectors: health: " in ran.stderr, ran.stderr[-500:]
    assert "works" not in ran.stdout
    assert len(ran.stderr) < 2000


@pytest.mark.parametrize("name", sorted(SAYS))
def test_providers_test_names_what_is_wrong_with_a_reported_answer(
    tested: dict[str, Ran], name: str
) -> None:
    ran = tested[name]
    ran.assert_clean()
    assert ran.code == 1 and "local_vectors: health: " in ran.stderr, ran.stderr[-500:]
    assert SAYS[name] in ran.stderr, ran.stderr[-500:]
    assert "works" not in ran.stdout


def test_a_huge_error_answer_is_reported_short(tested: dict[str, Ran]) -> None:
    ran = tested["error-body"]
    ran.assert_clean()
    assert ran.code == 1 and "failed: HTTP 500: " in ran.stderr
    assert len(ran.stderr) < 1000


def test_an_endless_answer_is_cut_at_the_cap(tested: dict[str, Ran]) -> None:
    ran = tested["flood"]
    ran.assert_clean()
    assert ran.code == 1 and f"more than {answer_cap(1):,} bytes" in ran.stderr


# -- the provider and its store ------------------------------------------------------------

SCOPE = Scope("person", "aiko")


async def no_lexical(scope: Scope, query: str, limit: int) -> list[Any]:
    return []


@pytest.fixture
async def api() -> AsyncIterator[FakeEmbeddings]:
    async with FakeEmbeddings(dims=DIMS) as server:
        yield server


@pytest.fixture
async def provider(api: FakeEmbeddings, tmp_path: Path) -> AsyncIterator[LocalVectors]:
    settings = LocalVectorsSettings(
        enabled=True, base_url=api.base_url, model="fake-embed", timeout=5
    )
    started = LocalVectors()
    started.host = Host(tmp_path / "local_vectors", no_lexical)
    await started.start(settings.model_dump())
    yield started
    await started.stop()


@pytest.mark.parametrize("name", ["nan", "1e999", "1e308", "string-1e308"])
async def test_recording_a_turn_with_a_non_finite_answer_stores_nothing(
    provider: LocalVectors, api: FakeEmbeddings, name: str
) -> None:
    api.malformed(ANSWERS[name])
    with pytest.raises(ProviderError, match="not a"):
        await provider.record_turn(SCOPE, TurnRecord("hello there", "hi", (1, 2)))
    assert await provider.store.count(SCOPE.key) == 0
    assert await provider.store.dimensions() is None


async def test_the_store_refuses_a_vector_holding_nan(tmp_path: Path) -> None:
    store = await VectorStore.open(tmp_path / "vectors.db")
    try:
        good = np.ones(DIMS, dtype=np.float32)
        bad = np.full(DIMS, np.nan, dtype=np.float32)
        with pytest.raises(NotFinite):
            await store.add(
                "s", [VectorRow((1,), "good", good, 0.0), VectorRow((3,), "x", bad, 0.0)]
            )
        assert await store.count("s") == 0
    finally:
        await store.close()


async def test_rows_stored_non_finite_by_older_versions_never_rank(
    provider: LocalVectors,
) -> None:
    await provider.record_turn(SCOPE, TurnRecord("the blue bicycle", "noted", (1, 2)))
    path = provider.store.path
    with sqlite3.connect(path) as db:
        for turn, value in ((5, np.nan), (7, np.inf)):
            vector = np.full(DIMS, value, dtype=np.float32).tobytes()
            db.execute(
                "INSERT INTO vectors(scope, turn_id, ts, text, vector) VALUES (?, ?, 0, ?, ?)",
                (SCOPE.key, turn, f"broken {turn}", vector),
            )
    hits = await provider.nearest(SCOPE, "bicycle", 5)
    assert [hit.text for hit in hits] == ["the blue bicycle\nnoted"]


# -- a running daemon ----------------------------------------------------------------------


async def test_a_flooding_embeddings_server_leaves_the_daemon_answering(tmp_path: Path) -> None:
    """Every embeddings answer is 100 MB: recall and mirroring fail with a provider error,
    the person still gets answers, and nothing is logged as an error."""
    async with FakeEmbeddings(dims=DIMS) as embeddings:
        embeddings.floods["fake-embed"] = 100 << 20
        env = {
            "KIOKU_PROVIDERS__LOCAL_VECTORS__ENABLED": "true",
            "KIOKU_PROVIDERS__LOCAL_VECTORS__BASE_URL": embeddings.base_url,
            "KIOKU_PROVIDERS__LOCAL_VECTORS__MODEL": "fake-embed",
        }
        async with module_daemon(tmp_path, **env) as daemon:
            client = await Client.connect(daemon.home)
            for number in range(3):
                text = f"message {number} about the blue bicycle"
                assert await client.ask(f"m{number}", text) == f"echo: {text}"
            await client.close()
        log = daemon.log.read_text()
    assert unhandled(log) == []
    assert '"level": "error"' not in log
    with sqlite3.connect(daemon.home / "providers" / "local_vectors" / "vectors.db") as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone() == (0,)
