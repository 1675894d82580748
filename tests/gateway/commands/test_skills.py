"""/skills: the sender's own and the shared skills in a direct message, the shared ones
in a group, whoever asks."""

from __future__ import annotations

from pathlib import Path

from memory.access.people import person_dir
from tests.gateway.commands.conftest import AIKO, STRANGER
from tests.helpers.gateway_rig import Chat, GatewayRig


def write_skill(root: Path, name: str, description: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\nSteps.\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


async def test_skills_lists_mine_and_the_shared_ones(rig: GatewayRig) -> None:
    write_skill(person_dir(rig.home, "aiko") / "skills", "brew-tea", "How Aiko brews tea")
    write_skill(person_dir(rig.home, "ben") / "skills", "ben-only", "Ben's own skill")
    write_skill(rig.home / "skills", "house-rules", "Rules for everyone")
    reply = await Chat(rig, AIKO)("/skills")
    assert "- brew-tea: How Aiko brews tea" in reply
    assert "- house-rules (shared): Rules for everyone" in reply
    assert "ben-only" not in reply


async def test_skills_in_a_group_lists_only_shared_ones(rig: GatewayRig) -> None:
    write_skill(person_dir(rig.home, "aiko") / "skills", "brew-tea", "How Aiko brews tea")
    write_skill(rig.home / "skills", "house-rules", "Rules for everyone")
    reply = await Chat(rig, AIKO, group=True)("/skills")
    assert reply == "Shared skills:\n- house-rules: Rules for everyone"


async def test_skills_when_there_are_none(rig: GatewayRig) -> None:
    assert (await Chat(rig, AIKO)("/skills")).startswith("No skills yet")


async def test_an_unknown_group_member_sees_the_shared_skills(rig: GatewayRig) -> None:
    write_skill(rig.home / "skills", "house-rules", "Rules for everyone")
    reply = await Chat(rig, STRANGER, group=True)("/skills")
    assert reply == "Shared skills:\n- house-rules: Rules for everyone"
