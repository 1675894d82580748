"""The review gate: with write approval on, the agent's skill writes wait for the owner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config.settings import SkillsSettings
from memory.skills.format import SkillError
from memory.skills.library import SkillsLibrary
from memory.skills.manage import SkillRequest
from tests.helpers.skill_files import skill_md


@pytest.fixture
def lib(home: Path) -> SkillsLibrary:
    return SkillsLibrary(home, SkillsSettings(write_approval=True))


def create_request(name: str = "deploy-blog") -> SkillRequest:
    return SkillRequest.from_mapping({"action": "create", "name": name, "content": skill_md(name)})


async def test_a_proposed_write_changes_nothing_and_tells_the_model_it_waits(
    lib: SkillsLibrary,
) -> None:
    result = await lib.manage("aiko", create_request(), "agent", approval=True)
    assert result.proposal is not None
    assert result.message.startswith("Proposed, not applied yet: the owner must approve it")
    assert f"proposal {result.proposal.id}: create deploy-blog" in result.message
    assert "Do not repeat the call" in result.message
    assert (await lib.listing("aiko")).skills == []


async def test_proposals_are_kept_in_the_persons_hidden_proposals_folder(
    lib: SkillsLibrary,
) -> None:
    proposal = (await lib.manage("aiko", create_request(), "agent", approval=True)).proposal
    assert proposal is not None
    path = lib.personal_root("aiko") / ".proposals" / f"{proposal.id}.json"
    stored = json.loads(path.read_text())
    assert (stored["action"], stored["name"], stored["person"]) == ("create", "deploy-blog", "aiko")
    assert stored["content"] == skill_md()


async def test_an_invalid_write_is_refused_at_once_not_proposed(lib: SkillsLibrary) -> None:
    bad = SkillRequest.from_mapping({"action": "create", "name": "x", "content": "no front"})
    with pytest.raises(SkillError, match="Not created"):
        await lib.manage("aiko", bad, "agent", approval=True)
    assert (await lib.pending()) == ([], [])


async def test_pending_lists_every_persons_proposals_and_approve_applies_one(
    lib: SkillsLibrary,
) -> None:
    first = (await lib.manage("aiko", create_request(), "agent", approval=True)).proposal
    second = (await lib.manage("ben", create_request("backup"), "agent", approval=True)).proposal
    assert first is not None and second is not None
    proposals, problems = await lib.pending()
    assert {(p.id, p.person, p.summary) for p in proposals} == {
        (first.id, "aiko", "create deploy-blog"),
        (second.id, "ben", "create backup"),
    }
    assert problems == []
    proposal, message = await lib.approve(first.id, "owner")
    assert proposal.person == "aiko"
    assert message.startswith("Done: created the skill 'deploy-blog'")
    assert [s.skill.name for s in (await lib.listing("aiko")).skills] == ["deploy-blog"]
    assert (await lib.usage("aiko"))["deploy-blog"].created_by == "owner"
    assert [p.id for p in (await lib.pending())[0]] == [second.id]


async def test_reject_drops_a_proposal_without_applying_it(lib: SkillsLibrary) -> None:
    proposal = (await lib.manage("aiko", create_request(), "agent", approval=True)).proposal
    assert proposal is not None
    await lib.reject(proposal.id)
    assert (await lib.pending())[0] == []
    assert (await lib.listing("aiko")).skills == []


async def test_approval_checks_again_and_keeps_a_proposal_that_no_longer_applies(
    lib: SkillsLibrary,
) -> None:
    await lib.manage("aiko", create_request(), "owner")
    patch = SkillRequest.from_mapping(
        {"action": "patch", "name": "deploy-blog", "old_string": "git push", "new_string": "jj"}
    )
    proposal = (await lib.manage("aiko", patch, "agent", approval=True)).proposal
    assert proposal is not None
    edit = SkillRequest.from_mapping(
        {"action": "edit", "name": "deploy-blog", "content": skill_md(body="rewritten\n")}
    )
    await lib.manage("aiko", edit, "owner")
    with pytest.raises(SkillError, match="old_string was not found"):
        await lib.approve(proposal.id, "owner")
    assert [p.id for p in (await lib.pending())[0]] == [proposal.id]


async def test_an_unknown_or_malformed_proposal_id_is_refused(lib: SkillsLibrary) -> None:
    with pytest.raises(SkillError, match="no waiting proposal 0badc0de"):
        await lib.approve("0badc0de", "owner")
    with pytest.raises(SkillError, match="not a proposal id"):
        await lib.reject("../../etc")


async def test_a_proposal_file_cannot_claim_another_person(lib: SkillsLibrary, home: Path) -> None:
    proposal = (await lib.manage("aiko", create_request(), "agent", approval=True)).proposal
    assert proposal is not None
    path = lib.personal_root("aiko") / ".proposals" / f"{proposal.id}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "person": "ben"}))
    approved, _ = await lib.approve(proposal.id, "owner")
    assert approved.person == "aiko"
    assert (await lib.listing("ben")).skills == []
