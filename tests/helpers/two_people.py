"""Two persons on two platforms, each with notes, history and a skill full of secret words.

aiko is `telegram:1`, ben is `discord:2`. Every secret word of aiko's is listed in
`AIKO_SECRETS`; a test proves isolation by showing none of them reaches ben."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.helpers.gateway_rig import GatewayRig

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


def sent_to_model(rig: GatewayRig) -> list[str]:
    """Every request body the model received (system prompt, messages, tool results)."""
    assert rig.api is not None
    return [request.body.decode() for request in rig.api.requests]


def obey(rig: GatewayRig, calls: list[tuple[str, dict[str, Any]]], per_reply: int = 4) -> None:
    """Script the model to make `calls`, a few tool_use blocks per reply."""
    assert rig.api is not None
    for start in range(0, len(calls), per_reply):
        blocks: list[tuple[str, Any]] = [
            ("tool_use", {"id": f"toolu_{start + i}", "name": name, "input": arguments})
            for i, (name, arguments) in enumerate(calls[start : start + per_reply])
        ]
        rig.api.reply(blocks, stop_reason="tool_use")


async def ben_says(rig: GatewayRig, text: str, number: int = 1) -> str:
    return await rig.ask(rig.dm(BEN, text, f"ben-{number}", platform="discord"), "discord")
