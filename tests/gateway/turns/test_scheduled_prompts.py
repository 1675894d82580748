"""Prompt jobs as turns of their person, through a real gateway's turn pipeline, store
and agent (the model echoes): the answer comes back to the scheduler, the turn is stored
in the job's chat's session (a group's in a group), and a stopped turn is a failed try."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.base import Inbound
from agent.prompt import TurnContext
from gateway.sessions import conversation_for
from gateway.turns.pipeline import TurnStopped
from tests.helpers.gateway_rig import gateway_rig

NOW = TurnContext(when=datetime.now(UTC), platform="telegram")


def job_inbound(text: str, *, chat: str = "100", direct: bool = True) -> Inbound:
    return Inbound("telegram", chat, "telegram:100", text, direct, addressed=True)


async def test_the_answer_returns_and_the_turn_is_stored_in_the_dm_session(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", "telegram:100")
        answer = await rig.gateway.turns.answer_job(job_inbound("my week"), "aiko", NOW)
        assert answer == "echo: my week"
        assert rig.telegram.replies == []  # sending is the scheduler's, after its record
        (session,) = await rig.store.recent_sessions("aiko")
        assert (session.kind, session.chat) == ("dm", "100")


async def test_in_a_group_the_turn_is_the_groups(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", "telegram:100")
        inbound = job_inbound("the group's week", chat="-500", direct=False)
        assert await rig.gateway.turns.answer_job(inbound, "aiko", NOW)
        open_session = rig.gateway.open_session(conversation_for(inbound, "aiko", "chat").key)
        assert open_session is not None and open_session.session.kind == "group"


async def test_a_turn_stopped_with_stop_is_a_failed_try(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", "telegram:100")
        assert rig.api is not None
        rig.api.gate("slowly")
        inbound = job_inbound("think slowly")
        asked = asyncio.create_task(rig.gateway.turns.answer_job(inbound, "aiko", NOW))
        await asyncio.wait_for(rig.api.arrived["slowly"].wait(), 5)
        rig.gateway.stop(conversation_for(inbound, "aiko", "chat").key)
        with pytest.raises(TurnStopped):
            await asyncio.wait_for(asked, 5)
