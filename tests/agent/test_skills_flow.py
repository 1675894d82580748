"""Skills through the agent and a fake model API: write, find in the next index, view, patch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.reflection import REVIEW
from agent.tools.skills_tools import skills_index
from tests.helpers.skill_files import skill_md

BOTH = pytest.mark.parametrize("provider_kind", ["anthropic", "openai"])
NO_REVIEW = {"KIOKU_AGENT__REFLECTION__ENABLED": "false"}
INDEX_HEADING = "## Skills you can use"


@pytest.fixture
def srig(rig):  # type: ignore[no-untyped-def]
    """The rig with the real skills index wired in, as the daemon wires it."""
    rig.agent.skills_index = skills_index(rig.agent.services)
    return rig


def tool_names(rig, request) -> list[str]:  # type: ignore[no-untyped-def]
    tools = request.json.get("tools", [])
    if rig.kind == "anthropic":
        return [tool["name"] for tool in tools]
    return [tool["function"]["name"] for tool in tools]


def shared_skill(home: Path, name: str = "backup", description: str = "Back up the NAS") -> None:
    folder = home / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(name, description=description))


async def close(rig, session) -> None:  # type: ignore[no-untyped-def]
    rig.say('{"title": "t", "summary": "s"}')
    await rig.agent.close_session(session.id, "new")


@BOTH
@pytest.mark.parametrize("agent_env", [NO_REVIEW])
async def test_a_skill_created_in_one_session_is_indexed_viewed_and_patched_in_the_next(
    srig,
) -> None:
    rig = srig
    session = await rig.dm()
    rig.call_tool(
        "skill_manage", {"action": "create", "name": "deploy-blog", "content": skill_md()}
    )
    rig.say("Saved how to deploy your blog.")
    await rig.agent.respond(rig.turn(session, "that worked! remember how we deployed"))
    assert "Done: created the skill 'deploy-blog'" in rig.texts_of(rig.api.last)
    assert "deploy-blog" not in rig.system_of(rig.api.last)  # the prompt stays frozen
    await close(rig, session)

    session = await rig.dm()
    rig.call_tool("skill_view", {"name": "deploy-blog"})
    rig.call_tool(
        "skill_manage",
        {
            "action": "patch",
            "name": "deploy-blog",
            "old_string": "2. ssh nuc 'make deploy'",
            "new_string": "2. ssh nuc 'make deploy'\n3. check https://blog.example",
        },
    )
    rig.say("Deployed, and I added the check step to the skill.")
    await rig.agent.respond(rig.turn(session, "deploy the blog please"))
    system = rig.system_of(rig.api.requests[-3])
    assert f"{INDEX_HEADING}\n- deploy-blog: How to deploy the blog to the NUC" in system
    assert "something in it was wrong or missing, patch it right away" in system
    viewed = rig.texts_of(rig.api.requests[-2])
    assert "deploy-blog/SKILL.md (this person's own; files: SKILL.md)" in viewed
    assert "2. ssh nuc 'make deploy'" in viewed
    assert "Done: patched deploy-blog/SKILL.md" in rig.texts_of(rig.api.last)
    text = (rig.home / "people" / "aiko" / "skills" / "deploy-blog" / "SKILL.md").read_text()
    assert "3. check https://blog.example" in text
    usage = json.loads((rig.home / "people" / "aiko" / "skills" / ".usage.json").read_text())
    assert usage["skills"]["deploy-blog"]["views"] == 1
    assert usage["skills"]["deploy-blog"]["updated_by"] == "agent"


@pytest.mark.parametrize("agent_env", [NO_REVIEW])
async def test_a_refused_write_reaches_the_model_as_an_error_with_the_next_step(srig) -> None:
    rig = srig
    session = await rig.dm()
    rig.call_tool("skill_manage", {"action": "create", "name": "Deploy", "content": "x"})
    rig.say("Let me fix the name.")
    await rig.agent.respond(rig.turn(session, "save that"))
    result = rig.api.last.json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "Invalid skill name 'Deploy'" in str(result["content"])
    assert not (rig.home / "people" / "aiko" / "skills" / "Deploy").exists()


@pytest.mark.parametrize("agent_env", [NO_REVIEW])
async def test_one_persons_skills_are_not_in_anothers_prompt_or_tools(srig) -> None:
    rig = srig
    aiko = await rig.dm("aiko", "100")
    rig.call_tool(
        "skill_manage", {"action": "create", "name": "deploy-blog", "content": skill_md()}
    )
    rig.say("Saved.")
    await rig.agent.respond(rig.turn(aiko, "remember this"))

    ben = await rig.dm("ben", "200")
    rig.call_tool("skill_view", {"name": "deploy-blog"}, call_id="v1")
    rig.call_tool("skills_list", {}, call_id="l1")
    rig.say("You have none.")
    await rig.agent.respond(rig.turn(ben, "how do I deploy aiko's blog?", speaker="ben"))
    assert "deploy-blog" not in rig.system_of(rig.api.last)
    assert INDEX_HEADING not in rig.system_of(rig.api.last)
    sent = rig.texts_of(rig.api.last)
    assert "There is no skill for this person 'deploy-blog'" in sent
    assert "No skills." in sent
    assert "How to deploy the blog" not in sent


@pytest.mark.parametrize("agent_env", [NO_REVIEW])
async def test_a_group_sees_only_shared_skills_and_cannot_write_any(srig) -> None:
    rig = srig
    shared_skill(rig.home)
    folder = rig.home / "people" / "aiko" / "skills" / "deploy-blog"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md())
    session = await rig.group()
    rig.call_tool("skills_list", {})
    rig.call_tool("skill_manage", {"action": "delete", "name": "deploy-blog"}, call_id="m1")
    rig.say("Only the shared ones here.")
    await rig.agent.respond(rig.turn(session, "what skills do you have?"))
    first = rig.api.requests[0]
    assert f"{INDEX_HEADING}\n- backup: Back up the NAS" in rig.system_of(first)
    assert "skills cannot be saved in a group" in rig.system_of(first)
    assert "deploy-blog" not in rig.system_of(first)
    assert "skill_manage" not in tool_names(rig, first)
    assert {"skills_list", "skill_view"} <= set(tool_names(rig, first))
    sent = rig.texts_of(rig.api.requests[-1])
    assert "- backup (shared): Back up the NAS" in sent
    assert "In a group only the shared skills are available." in sent
    assert "There is no tool 'skill_manage' here" in sent
    assert (folder / "SKILL.md").exists()


@pytest.mark.parametrize("agent_env", [NO_REVIEW])
async def test_the_persons_skill_shadows_the_shared_one_in_the_index(srig) -> None:
    rig = srig
    shared_skill(rig.home, "deploy-blog", "The team's way")
    folder = rig.home / "people" / "aiko" / "skills" / "deploy-blog"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(description="Aiko's way"))
    session = await rig.dm()
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "hi"))
    system = rig.system_of(rig.api.last)
    assert "- deploy-blog: Aiko's way" in system
    assert "The team's way" not in system


@pytest.mark.parametrize("agent_env", [{**NO_REVIEW, "KIOKU_SKILLS__WRITE_APPROVAL": "true"}])
async def test_with_write_approval_the_model_is_told_its_write_awaits_the_owner(srig) -> None:
    rig = srig
    session = await rig.dm()
    rig.call_tool(
        "skill_manage", {"action": "create", "name": "deploy-blog", "content": skill_md()}
    )
    rig.say("I proposed it; the owner needs to approve it.")
    await rig.agent.respond(rig.turn(session, "save how we deployed"))
    sent = rig.texts_of(rig.api.last)
    assert "Proposed, not applied yet: the owner must approve it" in sent
    root = rig.home / "people" / "aiko" / "skills"
    assert not (root / "deploy-blog").exists()
    (proposal,) = (root / ".proposals").iterdir()
    assert json.loads(proposal.read_text())["action"] == "create"


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__REFLECTION__EVERY_USER_TURNS": "1"}])
async def test_reflection_reviews_skills_and_may_create_one(srig) -> None:
    rig = srig
    session = await rig.dm()
    rig.say("Done: report sent.")
    await rig.agent.respond(rig.turn(session, "send my weekly report like last time"))
    rig.call_tool(
        "skill_manage",
        {"action": "create", "name": "weekly-report", "content": skill_md("weekly-report")},
    )
    rig.say("nothing else to save")
    await rig.agent.after_turn(session.id, "aiko")
    await rig.agent.idle()
    review_request = rig.api.requests[-2]
    assert REVIEW in rig.texts_of(review_request)
    assert "skill" in REVIEW and "patch it" in REVIEW
    assert (rig.home / "people" / "aiko" / "skills" / "weekly-report" / "SKILL.md").exists()
