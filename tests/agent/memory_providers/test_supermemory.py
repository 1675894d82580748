"""The Supermemory provider, driving the real `supermemory` SDK against a fake v5 API."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import traceback
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from agent.memory_providers.base import Host, Passage, ProviderError, Scope, TurnRecord
from agent.memory_providers.builtin.supermemory import Supermemory, container_tag
from config.provider_settings import SupermemorySettings
from tests.fakes.supermemory_api import NAMESPACE, FakeSupermemory

KEY = "sm-secret-4f9a1c7e"
ALICE = Scope("person", "alice")
BOB = Scope("person", "bob")
GROUP = Scope("group", "telegram:-1001")
ROOT = Path(__file__).resolve().parents[3]


async def no_search(scope: Scope, query: str, limit: int) -> Sequence[Passage]:
    return ()


def settings(api: FakeSupermemory, key: str = KEY, timeout: float = 2.0) -> dict[str, Any]:
    """The section as the manager hands it over: `model_dump()` of the real settings."""
    section = SupermemorySettings(
        enabled=True, api_key=SecretStr(key), base_url=api.base_url, timeout=timeout
    )
    return section.model_dump()


@pytest.fixture
async def api() -> AsyncIterator[FakeSupermemory]:
    async with FakeSupermemory(api_key=KEY) as fake:
        yield fake


async def started(api: FakeSupermemory, data_dir: Path, **options: Any) -> Supermemory:
    provider = Supermemory()
    provider.host = Host(data_dir, no_search)
    await provider.start(settings(api, **options))
    return provider


@pytest.fixture
async def provider(api: FakeSupermemory, tmp_path: Path) -> AsyncIterator[Supermemory]:
    started_provider = await started(api, tmp_path / "supermemory")
    yield started_provider
    await started_provider.stop()


def turn(user: str, assistant: str, *ids: int) -> TurnRecord:
    return TurnRecord(user, assistant, ids, {"platform": "telegram"})


async def test_recorded_turn_is_recalled_in_its_scope(provider: Supermemory) -> None:
    await provider.record_turn(ALICE, turn("My cat is called Mochi", "Lovely name!", 1, 2))

    found = await provider.recall(ALICE, "what is my cat called", 3)

    assert found == ["user: My cat is called Mochi\nassistant: Lovely name!"]


async def test_turn_is_one_document_tagged_with_the_scope_and_its_turn_ids(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.record_turn(ALICE, turn("hello", "hi", 7, 8))

    (document,) = api.documents["person:alice"].values()
    assert document.metadata == {"kind": "turn", "turn_ids": "7,8", "platform": "telegram"}
    assert [r.path for r in api.requests] == ["/ns/person:alice/document"]


async def test_retried_turn_updates_its_document_instead_of_adding_one(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.record_turn(ALICE, turn("hello", "hi", 7, 8))
    await provider.record_turn(ALICE, turn("hello", "hi", 7, 8))

    assert len(api.documents["person:alice"]) == 1


async def test_bob_never_recalls_alice_even_with_her_exact_words(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    secret = "My bank PIN is 4812 and I live at 3 Elm Street"
    await provider.record_turn(ALICE, turn(secret, "I will keep that safe.", 1, 2))
    await provider.record_turn(BOB, turn("I like hiking", "Nice.", 3, 4))
    api.requests.clear()

    found = await provider.recall(BOB, secret, 10)
    tool_answer = await provider.call("search", {"query": secret}, BOB)

    assert all("4812" not in text for text in found)
    assert "4812" not in tool_answer
    assert api.namespaces_sent() == {"person:bob"}
    assert all(KEY not in r.body.decode() and "alice" not in r.body.decode() for r in api.requests)


async def test_profile_is_the_prompt_block_of_its_own_scope_only(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    api.profiles["person:alice"] = (["Lives in Kyoto", "Vegetarian"], ["Planning a trip"])

    alice_block = await provider.prompt_block(ALICE)
    bob_block = await provider.prompt_block(BOB)

    assert alice_block == (
        "What Supermemory has learned about this person:\n"
        "- Lives in Kyoto\n- Vegetarian\n- Planning a trip"
    )
    assert bob_block == ""


async def test_long_profile_is_capped(provider: Supermemory, api: FakeSupermemory) -> None:
    api.profiles["group:telegram:-1001"] = (["x" * 400] * 12, ["y" * 400] * 12)

    block = await provider.prompt_block(GROUP)

    assert block.startswith("What Supermemory has learned about this group:")
    assert len(block) <= 1500


async def test_forget_removes_only_that_scope(provider: Supermemory, api: FakeSupermemory) -> None:
    await provider.record_turn(ALICE, turn("alice likes tea", "ok", 1, 2))
    await provider.record_turn(BOB, turn("bob likes tea", "ok", 3, 4))
    await provider.session_closed(ALICE, "Alice talked about tea.")

    await provider.forget(ALICE)

    assert "person:alice" not in api.documents
    assert await provider.recall(ALICE, "tea", 5) == []
    assert await provider.recall(BOB, "tea", 5) == ["user: bob likes tea\nassistant: ok"]
    assert api.requests[-3].method == "DELETE" and api.requests[-3].path == "/ns/person:alice"


async def test_delete_by_either_turn_id_removes_the_exchange_only(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.record_turn(ALICE, turn("first about tea", "ok", 1, 2))
    await provider.record_turn(ALICE, turn("second about tea", "ok", 3, 4))

    await provider.delete(ALICE, [4])

    assert list(api.documents["person:alice"]) == ["kioku-turns-1-2"]
    assert await provider.recall(ALICE, "tea", 5) == ["user: first about tea\nassistant: ok"]
    assert api.requests[-2].json == {"ids": ["kioku-turns-3-4"]}


async def test_delete_never_reaches_another_scopes_documents(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.record_turn(ALICE, turn("alice about tea", "ok", 1, 2))
    api.requests.clear()

    await provider.delete(BOB, [1, 2])

    assert api.requests == []
    assert list(api.documents["person:alice"]) == ["kioku-turns-1-2"]


async def test_ledger_survives_a_restart_and_is_private(
    api: FakeSupermemory, tmp_path: Path
) -> None:
    folder = tmp_path / "supermemory"
    first = await started(api, folder)
    await first.record_turn(ALICE, turn("about tea", "ok", 1, 2))
    await first.stop()

    second = await started(api, folder)
    await second.delete(ALICE, [1])
    await second.stop()

    assert api.documents["person:alice"] == {}
    assert stat.S_IMODE(os.stat(folder / "documents.db").st_mode) == 0o600


async def test_a_scope_never_written_reads_empty_and_forgets_quietly(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    assert await provider.recall(BOB, "tea", 3) == []
    assert await provider.prompt_block(BOB) == ""
    await provider.forget(BOB)

    paths = [r.path for r in api.requests]
    assert paths == ["/ns/person:bob/search", "/ns/person:bob/profile", "/ns/person:bob"]


async def test_delete_after_the_namespace_is_gone_is_done(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.record_turn(ALICE, turn("about tea", "ok", 1, 2))
    api.documents.pop("person:alice")

    await provider.delete(ALICE, [1, 2])
    api.requests.clear()
    await provider.delete(ALICE, [1, 2])

    assert api.requests == []  # the ledger forgot those turns after the first delete


async def test_session_summary_is_added_to_the_scope(
    provider: Supermemory, api: FakeSupermemory
) -> None:
    await provider.session_closed(GROUP, "The group planned a picnic on Sunday.")

    (document,) = api.documents["group:telegram:-1001"].values()
    assert document.content == "The group planned a picnic on Sunday."
    assert document.metadata == {"kind": "session_summary"}


async def test_note_changes_are_not_mirrored(provider: Supermemory, api: FakeSupermemory) -> None:
    await provider.note_written(ALICE, "memory", "add", "Prefers tea")

    assert api.requests == []


async def test_search_tool_lists_hits_or_says_nothing_was_found(provider: Supermemory) -> None:
    await provider.record_turn(ALICE, turn("my passport expires in May", "noted", 1, 2))

    hits = await provider.call("search", {"query": "passport", "limit": 3}, ALICE)
    nothing = await provider.call("search", {"query": "volcano"}, ALICE)

    assert [tool.name for tool in provider.tools()] == ["search"]
    assert hits == "1. user: my passport expires in May\nassistant: noted"
    assert nothing == "Supermemory has nothing about 'volcano'."
    with pytest.raises(ProviderError, match="limit must be a whole number"):
        await provider.call("search", {"query": "passport", "limit": "many"}, ALICE)
    with pytest.raises(ProviderError, match="needs a query"):
        await provider.call("search", {}, ALICE)
    with pytest.raises(ProviderError, match="no tool 'store'"):
        await provider.call("store", {}, ALICE)


async def test_health_is_an_authenticated_call(provider: Supermemory, api: FakeSupermemory) -> None:
    health = await provider.health()

    assert health.ok
    assert api.keys_sent == [f"Bearer {KEY}"]


async def test_wrong_key_says_which_setting_to_check_without_the_key(
    api: FakeSupermemory, tmp_path: Path
) -> None:
    wrong = "sm-wrong-77aa"
    provider = await started(api, tmp_path, key=wrong)

    with pytest.raises(ProviderError) as caught:
        await provider.recall(ALICE, "tea", 3)
    health = await provider.health()
    await provider.stop()

    message = str(caught.value)
    assert "(401)" in message and "providers.supermemory.api_key" in message
    assert not health.ok and "providers.supermemory.api_key" in health.detail
    printed = "".join(traceback.format_exception(caught.value)) + repr(provider)
    assert wrong not in printed and wrong not in health.detail


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (500, "the service failed (500)"),
        (503, "the service failed (503)"),
        (429, "rate limited (429)"),
        (403, "refused (403)"),
        (400, "the request was refused (400): fake failure"),
    ],
)
async def test_status_errors_become_provider_errors_that_say_why(
    provider: Supermemory, api: FakeSupermemory, status: int, expected: str
) -> None:
    api.fail(status)

    with pytest.raises(ProviderError, match=r"^Supermemory could not search: ") as caught:
        await provider.recall(ALICE, "tea", 3)

    assert expected in str(caught.value)
    assert KEY not in "".join(traceback.format_exception(caught.value))
    assert len(api.requests) == 1  # no retry inside the SDK: the manager owns retries


async def test_a_hanging_api_fails_within_the_timeout(api: FakeSupermemory, tmp_path: Path) -> None:
    provider = await started(api, tmp_path, timeout=0.3)
    api.hang()

    with pytest.raises(ProviderError, match=r"no answer from .* within 0.3 s"):
        await asyncio.wait_for(provider.record_turn(ALICE, turn("a", "b", 1, 2)), 5)
    await provider.stop()


async def test_an_unreachable_api_is_named(api: FakeSupermemory, tmp_path: Path) -> None:
    provider = await started(api, tmp_path)
    await api.close()

    with pytest.raises(ProviderError, match=r"127\.0\.0\.1:\d+ is unreachable"):
        await provider.recall(ALICE, "tea", 3)
    await provider.stop()


async def test_start_without_a_key_names_the_setting(api: FakeSupermemory, tmp_path: Path) -> None:
    provider = Supermemory()
    provider.host = Host(tmp_path, no_search)
    section = SupermemorySettings(enabled=True, base_url=api.base_url).model_dump()

    with pytest.raises(ProviderError, match="KIOKU_PROVIDERS__SUPERMEMORY__API_KEY"):
        await provider.start(section)


def test_module_does_not_import_the_sdk_until_started() -> None:
    code = (
        "import sys\n"
        "import agent.memory_providers.builtin.supermemory\n"
        "print('supermemory' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert done.stdout.strip() == "False"


def test_missing_package_tells_how_to_install(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from pydantic import SecretStr\n"
        "sys.modules['supermemory'] = None  # as if not installed\n"
        "from agent.memory_providers.base import Host\n"
        "from agent.memory_providers.builtin.supermemory import Supermemory\n"
        "p = Supermemory()\n"
        f"p.host = Host(Path({str(tmp_path)!r}), None)\n"
        "try:\n"
        "    asyncio.run(p.start({'api_key': SecretStr('k'), 'base_url': None}))\n"
        "except Exception as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert done.stdout.strip() == (
        "ProviderError the supermemory package is not installed: pip install 'kioku[supermemory]'"
    )


def test_plain_scope_keys_are_their_own_tags() -> None:
    assert container_tag(ALICE) == "person:alice"
    assert container_tag(GROUP) == "group:telegram:-1001"


def test_other_characters_are_escaped_and_long_keys_hashed() -> None:
    assert container_tag(Scope("person", "al_ice")) == "person:al_5fice"
    assert container_tag(Scope("group", "slack:T1:C2:1712.5")) == "group:slack:T1:C2:1712_2e5"
    long = container_tag(Scope("group", "discord:" + "9" * 120))
    assert long.startswith("sha256:") and len(long) == 71


@given(st.text(min_size=1, max_size=150), st.text(min_size=1, max_size=150))
def test_tags_are_valid_and_distinct_for_distinct_scopes(first: str, second: str) -> None:
    one, other = Scope("person", first), Scope("group", second)
    same_kind = Scope("person", second)

    for scope in (one, other, same_kind):
        assert NAMESPACE.fullmatch(container_tag(scope))
    assert container_tag(one) != container_tag(other)
    assert (container_tag(one) == container_tag(same_kind)) == (first == second)
