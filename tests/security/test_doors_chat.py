"""The chat door: whatever a person types — as a message or as a slash command's argument —
gets an answer, never a failure, and leaves what was stored before as it was.

Text reaches the gateway through the adapters, which cap its size (Telegram 4,096, Discord
4,000, Slack 40,000 characters, the CLI socket 256 KB a frame), so the corpus is sent up to
the largest of those caps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from adapters.cli.protocol import MAX_FRAME
from memory.search.ranking import Scope, search
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.hostile import small_items

AIKO = "telegram:1"
TEXTS = [(name, raw.decode("utf-8", errors="replace")) for name, raw in small_items(MAX_FRAME)]
COMMANDS = ("", "/remember ", "/forget ", "/search ", "/link ", "/skills ", "/memory ", "/nosuch ")
CRASHED = {"turn_failed", "command_failed", "job_failed", "after_turn_failed", "tool_failed"}
"""What the gateway and agent log when something raised where it should have refused."""
FAILED = ("failed; the details are in kioku's log", "Something went wrong")


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.ask(rig.dm(AIKO, "/remember I keep bees on the roof", "seed-1"))
        await rig.ask(rig.dm(AIKO, "the hives face south", "seed-2"))
        yield rig


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.strip() or "message")
async def test_any_text_gets_an_answer_and_changes_nothing_stored(
    rig: GatewayRig, command: str
) -> None:
    for name, text in TEXTS:
        await rig.ask(rig.dm(AIKO, "/new", f"new-{command}{name}"))  # one session per item
        with capture_logs() as logs:
            reply = await rig.ask(rig.dm(AIKO, command + text, f"{command}{name}"))
        assert reply and not any(marker in reply for marker in FAILED), name
        assert "Traceback" not in reply, name
        assert [e for e in logs if e.get("exc_info") or e["event"] in CRASHED] == [], name
    notes = await rig.agent.services.notes("aiko").read("user")
    assert any("bees on the roof" in entry for entry in notes.entries)
    assert await search(rig.store, "hives", Scope.of_person("aiko")), "history stored before"
