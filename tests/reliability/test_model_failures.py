"""The model provider failing — overloaded, breaking off mid-stream, silent, answering
garbage — costs the person one short apology: no traceback, nothing of what the API said,
their message is stored, and their next message is answered as usual."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

SENDER = "telegram:1"
# What the fake API puts in its error: none of it may reach the person.
API_DETAIL = "internal shard db-7 at 10.0.0.12 request req_9f8e7d"


def overloaded(api: FakeAnthropic) -> None:
    api.fail(529, message=f"Overloaded ({API_DETAIL})")


def server_error(api: FakeAnthropic) -> None:
    api.fail(500, message=f"Internal error ({API_DETAIL})")


def breaks_off_mid_stream(api: FakeAnthropic) -> None:
    api.fail_in_stream("Half an ans", message=f"Overloaded ({API_DETAIL})")


def malformed_json(api: FakeAnthropic) -> None:
    api.malformed(f'{{"type": "message", "content": [{{"text": "{API_DETAIL}'.encode())


def silent(api: FakeAnthropic) -> None:
    api.hang()  # the rig's provider gives up after 5 s without data


FAILURES = [overloaded, server_error, breaks_off_mid_stream, malformed_json, silent]


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", SENDER)
        yield rig


async def stored(rig: GatewayRig) -> list[tuple[str, str]]:
    rows = await rig.store.read(
        lambda db: db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    )
    return [(row["role"], row["content"]) for row in rows]


@pytest.mark.parametrize("failure", FAILURES, ids=lambda failure: failure.__name__)
async def test_a_failing_model_costs_one_short_apology_and_nothing_else(
    rig: GatewayRig, failure: Callable[[FakeAnthropic], None]
) -> None:
    assert rig.api is not None
    failure(rig.api)
    await rig.gateway.handle(rig.dm(SENDER, "what is on my list today?", "1"))
    apology = await rig.telegram.next_text(within=20)
    assert len(apology) < 200, apology
    assert "try again" in apology or "model" in apology, apology
    for leak in ("Traceback", "req_9f8e7d", "10.0.0.12", "sk-test", "Error("):
        assert leak not in apology, apology
    assert ("user", "what is on my list today?") in await stored(rig)
    answer = await rig.ask(rig.dm(SENDER, "and tomorrow?", "2"))
    # The failed turn left the question unanswered in the history: the model sees it again
    # with the next message (the echo repeats both, newest last).
    assert answer.startswith("echo: what is on my list today?"), answer
    assert answer.splitlines()[-1] == "and tomorrow?", answer
    assert ("assistant", answer) in await stored(rig)
