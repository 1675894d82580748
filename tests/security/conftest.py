"""Two persons on two platforms, each with notes, history and a skill full of secret words.

aiko is `telegram:1`, ben is `discord:2`. Every secret word of aiko's is listed in
`AIKO_SECRETS`; a test proves isolation by showing none of them reaches ben.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest

from memory.people import person_dir
from memory.records import Conversation, NewMessage
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.recording_adapter import RecordingAdapter

AIKO = "telegram:1"
BEN = "discord:2"
AIKO_NOTE = "Aiko's bank PIN is PERSIMMON4242"
AIKO_HISTORY = "my locker combination is QUINCE7781"
AIKO_SKILL = "aiko-secret-recipe"
AIKO_SKILL_BODY = "Mix MANGOSTEEN9913 with tea."
AIKO_SKILL_DESCRIPTION = "Aiko's private recipe"
# Words ben never says: finding one in what he or his model sees is a leak.
AIKO_SECRETS = ("PERSIMMON4242", "QUINCE7781", "MANGOSTEEN9913", AIKO_SKILL_DESCRIPTION)
BEN_NOTE = "Ben likes hiking"
BEN_SKILL = "ben-walks"


def write_skill(root: Path, name: str, description: str, body: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


def leaks(texts: Iterable[str], secrets: Iterable[str] = AIKO_SECRETS) -> list[str]:
    """The secret words found in any of `texts` (an empty list proves isolation)."""
    joined = "\n".join(texts)
    return [secret for secret in secrets if secret.lower() in joined.lower()]


@pytest.fixture
async def two(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    """The gateway rig with a Discord outlet, aiko's secrets stored and ben's own notes."""
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        rig.adapters["discord"] = RecordingAdapter(rig.gateway.handle, "discord")
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        await rig.agent.services.notes("aiko").add("user", AIKO_NOTE)
        await rig.agent.services.notes("ben").add("user", BEN_NOTE)
        session = await rig.store.open_session(Conversation("telegram", "1", "dm", "aiko"))
        await rig.store.append(session.id, NewMessage("user", AIKO_HISTORY, speaker="aiko"))
        skills = person_dir(home, "aiko") / "skills"
        write_skill(skills, AIKO_SKILL, AIKO_SKILL_DESCRIPTION, AIKO_SKILL_BODY)
        write_skill(person_dir(home, "ben") / "skills", BEN_SKILL, "Ben's walks", "Walk.")
        yield rig
