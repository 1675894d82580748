"""local_vectors against a fake embeddings server: recall fused with the lexical search,
isolation between scopes, erasure, backfill, and errors that say what to fix without
ever showing the key."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from pydantic import SecretStr

from agent.memory_providers.base import Before, Host, Passage, ProviderError, Scope, TurnRecord
from agent.memory_providers.builtin.backfill import backfill
from agent.memory_providers.builtin.local_vectors import LocalVectors
from agent.providers import Usage
from config.provider_settings import LocalVectorsSettings
from tests.fakes.embeddings_api import FakeEmbeddings

ALICE = Scope("person", "alice")
BOB = Scope("person", "bob")
KEY = "sk-local-test-0123456789"
DAY = datetime(2026, 3, 4, tzinfo=UTC)


@dataclass
class Lexical:
    """kioku's lexical search as the provider sees it: per scope, the passages to return."""

    passages: dict[Scope, list[Passage]] = field(default_factory=dict)
    asked: list[tuple[Scope, str, int]] = field(default_factory=list)

    async def __call__(self, scope: Scope, query: str, limit: int) -> Sequence[Passage]:
        self.asked.append((scope, query, limit))
        return self.passages.get(scope, [])[:limit]


@pytest.fixture
async def api() -> AsyncIterator[FakeEmbeddings]:
    async with FakeEmbeddings(dims=256) as server:
        yield server


@pytest.fixture
def lexical() -> Lexical:
    return Lexical()


async def started(
    api: FakeEmbeddings, data_dir: Path, lexical: Lexical, **given: object
) -> LocalVectors:
    values = {"enabled": True, "base_url": api.base_url, "model": "fake-embed", "timeout": 2}
    settings = LocalVectorsSettings(**{**values, **given})
    provider = LocalVectors()
    provider.host = Host(data_dir, lexical)
    await provider.start(settings.model_dump())
    return provider


@pytest.fixture
async def provider(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> AsyncIterator[LocalVectors]:
    started_provider = await started(api, tmp_path / "local_vectors", lexical)
    yield started_provider
    await started_provider.stop()


def turn(first: int, user: str, assistant: str = "noted") -> TurnRecord:
    return TurnRecord(user, assistant, (first, first + 1), {"ts": str(DAY.timestamp() + first)})


async def test_recall_finds_a_recorded_exchange_by_meaning_with_its_date(
    provider: LocalVectors, api: FakeEmbeddings
) -> None:
    await provider.record_turn(ALICE, turn(1, "my sister Hana lives in Kyoto", "lovely city"))
    await provider.record_turn(ALICE, turn(3, "I bought new running shoes"))
    recalled = await provider.recall(ALICE, "where does Hana live", 1)
    assert recalled == ["[2026-03-04] my sister Hana lives in Kyoto lovely city"]
    assert api.texts[0] == "my sister Hana lives in Kyoto\nlovely city"


async def test_bob_never_recalls_alice_even_with_her_exact_words(
    provider: LocalVectors, lexical: Lexical
) -> None:
    await provider.record_turn(ALICE, turn(1, "my bank PIN is 4921"))
    await provider.record_turn(BOB, turn(3, "I like gardening"))
    recalled = await provider.recall(BOB, "my bank PIN is 4921", 5)
    assert recalled == ["[2026-03-04] I like gardening noted"]
    assert {scope for scope, _, _ in lexical.asked} == {BOB}


async def test_an_exchange_found_both_ways_counts_once_and_ranks_first(
    provider: LocalVectors, lexical: Lexical
) -> None:
    await provider.record_turn(ALICE, turn(1, "the cat is called Miso", "cute"))
    await provider.record_turn(ALICE, turn(3, "the cat vet is on Friday"))
    await provider.record_turn(ALICE, turn(5, "dinner is ramen"))
    # Lexical finds the answer turn (2) of exchange 1 and a turn the vectors never saw.
    lexical.passages[ALICE] = [
        Passage(9, "an old note about Miso", DAY),
        Passage(2, "cute", DAY),
    ]
    recalled = await provider.recall(ALICE, "what is the cat called Miso", 3)
    assert recalled[0] == "[2026-03-04] the cat is called Miso cute"
    assert len(recalled) == 3
    assert sum("Miso cute" in text for text in recalled) == 1
    assert "[2026-03-04] an old note about Miso" in recalled


async def test_forget_erases_the_scope_and_nothing_else(provider: LocalVectors) -> None:
    await provider.record_turn(ALICE, turn(1, "alice likes tea"))
    await provider.record_turn(BOB, turn(3, "bob likes tea"))
    await provider.forget(ALICE)
    assert await provider.recall(ALICE, "tea", 5) == []
    assert await provider.recall(BOB, "tea", 5) == ["[2026-03-04] bob likes tea noted"]


async def test_delete_erases_the_exchange_of_any_of_its_turns(provider: LocalVectors) -> None:
    await provider.record_turn(ALICE, turn(1, "alice likes tea"))
    await provider.record_turn(ALICE, turn(3, "alice likes coffee"))
    await provider.delete(ALICE, [2])
    assert await provider.recall(ALICE, "alice likes", 5) == [
        "[2026-03-04] alice likes coffee noted"
    ]


async def test_recording_the_same_turn_twice_stores_it_once(provider: LocalVectors) -> None:
    await provider.record_turn(ALICE, turn(1, "alice likes tea"))
    await provider.record_turn(ALICE, turn(1, "alice likes tea"))
    assert await provider.store.count(ALICE.key) == 1


async def exchanges(*items: tuple[Scope, TurnRecord]) -> AsyncIterator[tuple[Scope, TurnRecord]]:
    for item in items:
        yield item


async def test_backfill_embeds_only_what_is_missing_and_reports_progress(
    provider: LocalVectors, api: FakeEmbeddings
) -> None:
    await provider.record_turn(ALICE, turn(1, "already embedded"))
    history = [
        (ALICE, turn(1, "already embedded")),
        (ALICE, turn(3, "about tea")),
        (BOB, turn(5, "about cake")),
        (Scope("group", "discord:c1"), turn(7, "group chatter")),
        (ALICE, turn(9, "about books")),
    ]
    seen: list[int] = []
    before = len(api.texts)
    counts = await backfill(
        provider,
        exchanges(*history),
        lambda done: seen.append(done.seen),
        allowed=lambda scope: scope.kind == "person",
        batch=2,
    )
    assert (counts.seen, counts.embedded, counts.skipped) == (5, 3, 2)
    assert api.texts[before:] == [f"about {what}\nnoted" for what in ("tea", "cake", "books")]
    assert seen == sorted(seen) and seen[-1] == 5
    again = await backfill(provider, exchanges(*history), allowed=lambda scope: True)
    assert (again.embedded, again.skipped) == (1, 4)


async def test_a_new_model_of_another_length_says_to_rebuild(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    first = await started(api, tmp_path, lexical)
    await first.record_turn(ALICE, turn(1, "alice likes tea"))
    await first.stop()
    api.dims = 64
    second = await started(api, tmp_path, lexical)
    try:
        with pytest.raises(ProviderError, match=r"256-dimension.*--rebuild"):
            await second.recall(ALICE, "tea", 3)
        assert not (await second.health()).ok
        counts = await backfill(
            second, exchanges((ALICE, turn(1, "alice likes tea"))), allowed=bool, rebuild=True
        )
        assert counts.embedded == 1
        assert (await second.health()).ok
    finally:
        await second.stop()


async def test_health_names_the_model_and_its_length(provider: LocalVectors) -> None:
    health = await provider.health()
    assert health.ok and "fake-embed" in health.detail and "256 dimensions" in health.detail


async def test_an_unknown_model_is_named_in_the_error(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    provider = await started(api, tmp_path, lexical, model="nomic-embed-text")
    try:
        with pytest.raises(ProviderError, match="does not serve the model 'nomic-embed-text'"):
            await provider.record_turn(ALICE, turn(1, "tea"))
    finally:
        await provider.stop()


async def test_a_server_error_is_reported_with_its_status(
    provider: LocalVectors, api: FakeEmbeddings
) -> None:
    api.fail(500, "out of memory")
    with pytest.raises(ProviderError, match="HTTP 500: out of memory"):
        await provider.recall(ALICE, "tea", 3)


async def test_a_hanging_server_times_out_with_the_setting_named(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    provider = await started(api, tmp_path, lexical, timeout=0.2)
    try:
        api.hang()
        with pytest.raises(ProviderError, match=r"within 0.2 s \(providers.local_vectors.timeout"):
            await provider.record_turn(ALICE, turn(1, "tea"))
    finally:
        await provider.stop()


async def test_an_unreachable_server_is_said_to_be(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    provider = await started(api, tmp_path, lexical)
    await api.close()
    try:
        health = await provider.health()
        assert not health.ok and "unreachable" in health.detail
    finally:
        await provider.stop()


async def test_the_key_is_sent_as_bearer_and_never_shown(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    api.key = KEY
    provider = await started(api, tmp_path, lexical, api_key=SecretStr(KEY))
    try:
        with structlog.testing.capture_logs() as logs:
            await provider.record_turn(ALICE, turn(1, "tea"))
            api.key = "another key"
            with pytest.raises(ProviderError, match=r"HTTP 401.*api_key") as refused:
                await provider.record_turn(ALICE, turn(3, "cake"))
            api.key = None
            api.fail(400, f"bad input near {KEY}")
            with pytest.raises(ProviderError) as quoted:
                await provider.recall(ALICE, "tea", 3)
        assert api.requests[0].headers["Authorization"] == f"Bearer {KEY}"
        for text in (str(refused.value), str(quoted.value), repr(logs)):
            assert KEY not in text
        assert "***" in str(quoted.value)
    finally:
        await provider.stop()


async def test_no_key_set_sends_no_authorization(
    provider: LocalVectors, api: FakeEmbeddings
) -> None:
    await provider.record_turn(ALICE, turn(1, "tea"))
    assert "Authorization" not in api.last.headers


async def test_an_exchange_is_embedded_alone_and_the_turn_before_it_is_not_its_own(
    provider: LocalVectors, api: FakeEmbeddings
) -> None:
    before = Before(4, "assistant", "the vet said the cat is fine")
    record = TurnRecord("and the dog?", "also fine", (5, 6), {"ts": "0"}, before)
    await provider.record_turn(ALICE, record)
    assert api.texts[-1] == "and the dog?\nalso fine"
    assert await provider.recall(ALICE, "dog", 1) == ["[1970-01-01] and the dog? also fine"]
    await provider.delete(ALICE, [4])
    assert await provider.store.count(ALICE.key) == 1
    await provider.delete(ALICE, [6])
    assert await provider.store.count(ALICE.key) == 0


async def reopened_as_left(
    api: FakeEmbeddings, folder: Path, lexical: Lexical, older_unit: str
) -> LocalVectors:
    """The provider started again on a vectors.db holding one exchange, whose note of
    what it holds `older_unit` (SQL) has made what an older kioku left."""
    older = await started(api, folder, lexical)
    await older.record_turn(ALICE, turn(1, "my sister Hana lives in Kyoto"))
    await older.stop()
    with sqlite3.connect(folder / "vectors.db") as db:
        db.execute(older_unit)
    return await started(api, folder, lexical)


async def test_rows_an_older_kioku_embedded_in_context_ask_for_a_rebuild_until_it_runs(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    unit = "UPDATE meta SET value = 'exchange-in-context' WHERE key = 'note:unit'"
    again = await reopened_as_left(api, tmp_path / "local_vectors", lexical, unit)
    try:
        assert "each exchange alone" in (await again.health()).detail
        assert await again.recall(ALICE, "Hana", 1) != []
        await backfill(
            again,
            exchanges((ALICE, turn(1, "my sister Hana lives in Kyoto"))),
            allowed=lambda scope: True,
            rebuild=True,
        )
        assert "--rebuild" not in (await again.health()).detail
    finally:
        await again.stop()


async def test_rows_of_a_kioku_before_the_unit_was_noted_are_lone_exchanges_and_current(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    unit = "DELETE FROM meta WHERE key = 'note:unit'"
    again = await reopened_as_left(api, tmp_path / "local_vectors", lexical, unit)
    try:
        assert "--rebuild" not in (await again.health()).detail
        assert await again.store.note("unit") == "exchange"
    finally:
        await again.stop()


async def test_a_lexical_hit_on_an_answer_counts_for_its_own_exchange_not_the_next(
    provider: LocalVectors, lexical: Lexical
) -> None:
    await provider.record_turn(ALICE, turn(1, "the cat is called Miso", "cute"))
    after = Before(2, "assistant", "cute")
    await provider.record_turn(ALICE, TurnRecord("dinner is ramen", "yum", (3, 4), {}, after))
    assert await provider.store.exchanges(ALICE.key, [2, 3]) == {2: 1, 3: 3}


@dataclass
class Charged:
    """The provider's `Host.charge`: what it was told, in order."""

    calls: list[tuple[Scope, str, int, str | None]] = field(default_factory=list)

    async def __call__(self, scope: Scope, model: str, usage: Usage, base_url: str | None) -> None:
        self.calls.append((scope, model, usage.input_tokens, base_url))


async def test_each_embedding_is_charged_to_the_scope_it_was_made_for(
    api: FakeEmbeddings, tmp_path: Path, lexical: Lexical
) -> None:
    provider = LocalVectors()
    charged = Charged()
    provider.host = Host(tmp_path / "local_vectors", lexical, charged)
    settings = LocalVectorsSettings(enabled=True, base_url=api.base_url, model="fake-embed")
    await provider.start(settings.model_dump())
    try:
        await provider.record_turn(ALICE, turn(1, "my sister Hana lives in Kyoto"))
        await provider.recall(BOB, "where does my sister live", 3)
        await provider.health()
    finally:
        await provider.stop()

    assert [(scope, model, url) for scope, model, _, url in charged.calls] == [
        (ALICE, "fake-embed", api.base_url),
        (BOB, "fake-embed", api.base_url),
    ]
    # the fake counts a word of the embedded text a token
    embedded = [len(text.split()) for text in api.texts]
    assert [tokens for *_, tokens, _ in charged.calls] == embedded[:2] and embedded[1] == 5
