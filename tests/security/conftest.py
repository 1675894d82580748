"""Two persons on two platforms, each with notes, history and a skill full of secret words.

aiko is `telegram:1`, ben is `discord:2`. Every secret word of aiko's is listed in
`AIKO_SECRETS`; a test proves isolation by showing none of them reaches ben.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.access.people import person_dir
from memory.notes.origin import NoteOrigin
from memory.store.records import Conversation, NewMessage
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.recording_adapter import RecordingAdapter
from tests.helpers.two_people import (
    AIKO,
    AIKO_HISTORY,
    AIKO_NOTE,
    AIKO_SKILL,
    AIKO_SKILL_BODY,
    AIKO_SKILL_DESCRIPTION,
    BEN,
    BEN_NOTE,
    BEN_SKILL,
    write_skill,
)


@pytest.fixture
async def two(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    """The gateway rig with a Discord outlet, aiko's secrets stored and ben's own notes."""
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        rig.adapters["discord"] = RecordingAdapter(rig.gateway.handle, "discord")
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        await rig.agent.services.notes("aiko").add("user", AIKO_NOTE, origin=NoteOrigin("cli"))
        await rig.agent.services.notes("ben").add("user", BEN_NOTE, origin=NoteOrigin("cli"))
        session = await rig.store.open_session(Conversation("telegram", "1", "dm", "aiko"))
        await rig.store.append(session.id, NewMessage("user", AIKO_HISTORY, speaker="aiko"))
        skills = person_dir(home, "aiko") / "skills"
        write_skill(skills, AIKO_SKILL, AIKO_SKILL_DESCRIPTION, AIKO_SKILL_BODY)
        write_skill(person_dir(home, "ben") / "skills", BEN_SKILL, "Ben's walks", "Walk.")
        yield rig
