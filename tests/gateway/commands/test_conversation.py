"""/new, /stop and /status: the conversation's session, line and model."""

from __future__ import annotations

from tests.gateway.commands.conftest import AIKO
from tests.helpers.gateway_rig import Chat, GatewayRig


async def test_status_shows_session_queue_and_model(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    assert (await aiko("/status")).startswith("Session: none open")
    await aiko("hello")
    await rig.gateway.queues.drain(5)
    status = await aiko("/status")
    assert "1 message so far" in status
    assert "Queue: no reply in progress, 0 messages waiting." in status
    assert "Model: none configured." in status


async def test_new_and_reset_close_the_session(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    assert await aiko("/new") == "No session was open; starting fresh."
    await aiko("hello")
    assert await aiko("/reset") == "New session started."


async def test_stop_with_nothing_running(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/stop") == "Nothing to stop: no reply is being written."
