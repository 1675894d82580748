"""`kioku skills` through the real entry point: output, JSON, exit codes, approval, import."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from config.settings import SkillsSettings
from memory.access.people import OWNER
from memory.skills.library import SkillsLibrary
from memory.skills.manage import SkillRequest
from tests.helpers.history_files import make_hermes_home
from tests.helpers.skill_files import hermes_tree, put, skill_md

Kioku = Callable[..., subprocess.CompletedProcess[str]]


def own_skill(home: Path, person: str, name: str = "deploy-blog", **kw: str) -> Path:
    folder = home / "people" / person / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(name, **kw))
    return folder


def shared_skill(home: Path, name: str, text: str | None = None) -> Path:
    folder = home / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text or skill_md(name, description=f"shared {name}"))
    return folder


def listed(kioku: Kioku, *args: str) -> dict[str, object]:
    done = kioku("skills", "list", "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_skills_help_lists_every_command(kioku: Kioku) -> None:
    done = kioku("skills", "--help")
    assert done.returncode == 0
    for command in ("list", "show", "promote", "delete", "import", "pending", "approve", "reject"):
        assert re.search(rf"(?m)^  {command}\s+\S", done.stdout), done.stdout


def test_list_shows_own_and_shared_with_shadowing_usage_and_skipped_folders(
    kioku: Kioku, home: Path
) -> None:
    own_skill(home, "aiko", description="Aiko's way")
    shared_skill(home, "deploy-blog")
    shared_skill(home, "backup")
    shared_skill(home, "broken", "no front matter\n")
    asyncio.run(SkillsLibrary(home, SkillsSettings()).view("aiko", "deploy-blog"))
    data = listed(kioku, "--person", "aiko")
    skills = {s["name"]: s for s in data["skills"]}  # type: ignore[attr-defined]
    assert list(skills) == ["backup", "deploy-blog"]
    assert (skills["deploy-blog"]["scope"], skills["deploy-blog"]["shadows_shared"]) == (
        "personal",
        True,
    )
    assert skills["deploy-blog"]["usage"]["views"] == 1
    assert skills["deploy-blog"]["usage"]["last_used"]
    assert skills["backup"]["scope"] == "shared"
    (problem,) = data["problems"]  # type: ignore[misc]
    assert problem["folder"].endswith("skills/broken")
    text = kioku("skills", "list", "--person", "aiko")
    assert text.returncode == 0
    assert re.search(r"deploy-blog\s+own, shadows shared\s+1 view\(s\), last \d{4}-", text.stdout)
    assert "warning: skipped" in text.stderr and "broken" in text.stderr


def test_list_defaults_to_the_owners_own_and_the_shared_skills_each_marked(
    kioku: Kioku, home: Path
) -> None:
    own_skill(home, OWNER, "morning-report")
    own_skill(home, "aiko")
    shared_skill(home, "backup")
    data = listed(kioku)
    assert data["person"] == OWNER
    scopes = [(s["name"], s["scope"]) for s in data["skills"]]  # type: ignore[attr-defined]
    assert scopes == [("backup", "shared"), ("morning-report", "personal")]
    text = kioku("skills", "list")
    assert text.returncode == 0, text.stderr
    assert re.search(r"backup\s+shared\s+0 view", text.stdout)
    assert re.search(r"morning-report\s+own\s+0 view", text.stdout)
    assert "deploy-blog" not in text.stdout


def test_list_person_shows_that_persons_skills_instead_of_the_owners(
    kioku: Kioku, home: Path
) -> None:
    own_skill(home, OWNER, "morning-report")
    own_skill(home, "aiko")
    shared_skill(home, "backup")
    names = [s["name"] for s in listed(kioku, "--person", "aiko")["skills"]]  # type: ignore[index]
    assert names == ["backup", "deploy-blog"]


def test_list_shared_shows_only_the_shared_skills(kioku: Kioku, home: Path) -> None:
    own_skill(home, OWNER, "morning-report")
    shared_skill(home, "backup")
    data = listed(kioku, "--shared")
    assert data["person"] is None
    assert [s["name"] for s in data["skills"]] == ["backup"]  # type: ignore[index]
    assert kioku("skills", "list", "--shared").stdout.startswith("Shared skills in ")


def test_person_and_shared_together_are_a_usage_error(kioku: Kioku) -> None:
    for command in (["list"], ["show", "backup"], ["delete", "backup"]):
        done = kioku("skills", *command, "--person", "aiko", "--shared")
        assert done.returncode == 2, command
        assert "either --person or --shared" in done.stderr


def test_show_prints_the_skill_its_files_and_usage(kioku: Kioku, home: Path) -> None:
    folder = own_skill(home, "aiko", extra="category: ops\ntags: [blog]\n")
    (folder / "references").mkdir()
    (folder / "references" / "hosts.md").write_text("nuc\n")
    done = kioku("skills", "show", "deploy-blog", "--person", "aiko")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "deploy-blog — own",
        str(folder),
        "description: How to deploy the blog to the NUC",
    ]
    assert "files: SKILL.md, references/hosts.md" in lines
    assert "views: 0, last used: never" in lines
    assert done.stdout.endswith("2. ssh nuc 'make deploy'\n")
    data = json.loads(kioku("skills", "show", "deploy-blog", "-p", "aiko", "--json").stdout)
    assert (data["scope"], data["category"], data["tags"]) == ("personal", "ops", ["blog"])
    assert data["files"] == ["SKILL.md", "references/hosts.md"]
    assert data["usage"]["views"] == 0
    assert data["content"] == (folder / "SKILL.md").read_text()
    missing = kioku("skills", "show", "deploy-blog")
    assert missing.returncode == 1
    assert "There is no skill for this person 'deploy-blog'" in missing.stderr
    not_shared = kioku("skills", "show", "deploy-blog", "--shared")
    assert not_shared.returncode == 1
    assert "There is no shared skill 'deploy-blog'" in not_shared.stderr


def test_show_defaults_to_the_owners_skill_then_the_shared_one(kioku: Kioku, home: Path) -> None:
    own_skill(home, OWNER, "backup", description="The owner's way")
    shared_skill(home, "backup")
    shared_skill(home, "compose-up")
    own = kioku("skills", "show", "backup")
    assert own.returncode == 0, own.stderr
    assert own.stdout.splitlines()[:3] == [
        "backup — own, shadows shared",
        str(home / "people" / OWNER / "skills" / "backup"),
        "description: The owner's way",
    ]
    shared = kioku("skills", "show", "backup", "--shared")
    assert shared.stdout.splitlines()[0] == "backup — shared"
    assert "description: shared backup" in shared.stdout
    assert kioku("skills", "show", "compose-up").stdout.startswith("compose-up — shared\n")


def test_promote_copies_a_persons_skill_to_the_shared_ones(kioku: Kioku, home: Path) -> None:
    own_skill(home, "aiko")
    done = kioku("skills", "promote", "deploy-blog", "--person", "aiko")
    assert done.returncode == 0, done.stderr
    assert "Promoted deploy-blog" in done.stdout
    assert (home / "skills" / "deploy-blog" / "SKILL.md").read_text() == skill_md()
    assert [s["scope"] for s in listed(kioku, "--person", "ben")["skills"]] == ["shared"]  # type: ignore[index]
    again = kioku("skills", "promote", "deploy-blog", "--person", "aiko")
    assert again.returncode == 1
    assert "--replace" in again.stderr
    owners = kioku("skills", "promote", "deploy-blog")
    assert owners.returncode == 1
    assert "There is no skill for this person 'deploy-blog'" in owners.stderr


def test_promote_defaults_to_the_owners_own_skill(kioku: Kioku, home: Path) -> None:
    own_skill(home, OWNER)
    done = kioku("skills", "promote", "deploy-blog")
    assert done.returncode == 0, done.stderr
    assert (home / "skills" / "deploy-blog" / "SKILL.md").read_text() == skill_md()


def test_delete_removes_the_owners_a_persons_or_a_shared_skill(kioku: Kioku, home: Path) -> None:
    own_skill(home, OWNER)
    own_skill(home, "aiko")
    shared_skill(home, "deploy-blog")
    done = kioku("skills", "delete", "deploy-blog", "--person", "aiko")
    assert (done.returncode, done.stdout) == (0, "Deleted deploy-blog from aiko's skills.\n")
    assert (home / "skills" / "deploy-blog").exists()
    owners = kioku("skills", "delete", "deploy-blog")
    assert (owners.returncode, owners.stdout) == (
        0,
        f"Deleted deploy-blog from {OWNER}'s skills.\n",
    )
    assert (home / "skills" / "deploy-blog").exists()
    shared = kioku("skills", "delete", "deploy-blog", "--shared")
    assert (shared.returncode, shared.stdout) == (
        0,
        "Deleted deploy-blog from the shared skills.\n",
    )
    missing = kioku("skills", "delete", "deploy-blog", "--shared")
    assert missing.returncode == 1
    assert "There is no skill 'deploy-blog'" in missing.stderr
    assert kioku("skills", "delete", "../etc").returncode == 1


def test_import_of_a_hermes_skills_folder_reports_what_it_did(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    source = hermes_tree(tmp_path / "skills")
    put(source, "bad", skill_md("other"))
    done = kioku("skills", "import", str(source), "--person", "aiko")
    assert done.returncode == 1
    assert done.stdout.startswith("Imported 4 skill(s) into ")
    assert "Skipped " in done.stderr and "must be equal" in done.stderr
    names = [s["name"] for s in listed(kioku, "--person", "aiko")["skills"]]  # type: ignore[index]
    assert names == ["compose-up", "github-auth", "github-issues", "note-taking"]
    (source / "bad" / "SKILL.md").write_text(skill_md("bad"))
    again = kioku("skills", "import", str(source), "--person", "aiko")
    assert again.returncode == 0, again.stderr
    assert "Already there, unchanged: compose-up, github-auth, github-issues, note-taking" in (
        again.stdout
    )
    assert kioku("skills", "import", str(tmp_path / "nope")).returncode == 2


def test_import_defaults_to_the_owners_skills_and_shared_goes_to_the_shared_ones(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    source = hermes_tree(tmp_path / "skills")
    done = kioku("skills", "import", str(source))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Imported 4 skill(s) into {home / 'people' / OWNER / 'skills'}:")
    assert listed(kioku, "--shared")["skills"] == []
    shared = kioku("skills", "import", str(source), "--shared")
    assert shared.returncode == 0, shared.stderr
    assert shared.stdout.startswith(f"Imported 4 skill(s) into {home / 'skills'}:")


def test_pending_approve_and_reject_drive_the_review_gate(kioku: Kioku, home: Path) -> None:
    lib = SkillsLibrary(home, SkillsSettings(write_approval=True))

    def propose(name: str) -> str:
        content = skill_md(name)
        request = SkillRequest.from_mapping({"action": "create", "name": name, "content": content})
        result = asyncio.run(lib.manage("aiko", request, "agent", approval=True))
        assert result.proposal is not None
        return result.proposal.id

    first, second = propose("deploy-blog"), propose("backup")
    pending = kioku("skills", "pending")
    assert pending.returncode == 0
    assert {line.split()[0] for line in pending.stdout.splitlines()} == {first, second}
    assert "aiko  create deploy-blog" in pending.stdout
    approved = kioku("skills", "approve", first)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith(f"Approved {first} (aiko: create deploy-blog). Done:")
    assert (home / "people" / "aiko" / "skills" / "deploy-blog" / "SKILL.md").exists()
    rejected = kioku("skills", "reject", second)
    assert rejected.stdout == f"Rejected {second} (aiko: create backup).\n"
    assert not (home / "people" / "aiko" / "skills" / "backup").exists()
    assert json.loads(kioku("skills", "pending", "--json").stdout) == []
    unknown = kioku("skills", "approve", second)
    assert unknown.returncode == 1
    assert "no waiting proposal" in unknown.stderr


def test_an_approved_skill_of_the_owner_is_listed_next(kioku: Kioku, home: Path) -> None:
    lib = SkillsLibrary(home, SkillsSettings(write_approval=True))
    request = SkillRequest.from_mapping(
        {"action": "create", "name": "morning-report", "content": skill_md("morning-report")}
    )
    proposal = asyncio.run(lib.manage(OWNER, request, "agent", approval=True)).proposal
    assert proposal is not None
    assert listed(kioku)["skills"] == []
    approved = kioku("skills", "approve", proposal.id)
    assert approved.returncode == 0, approved.stderr
    (skill,) = listed(kioku)["skills"]  # type: ignore[misc]
    assert (skill["name"], skill["scope"]) == ("morning-report", "personal")
    assert skill["usage"]["created_by"] == "agent, approved by the owner"


def test_kioku_import_format_hermes_also_brings_the_skills(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    hermes_tree(hermes / "skills")
    done = kioku("import", str(hermes), "--format", "hermes", "--person", "ben")
    assert done.returncode == 0, done.stderr
    assert "Imported 4 skill(s) into " in done.stdout
    assert (home / "people" / "ben" / "skills" / "github-issues" / "SKILL.md").exists()
    again = kioku("import", str(hermes), "--format", "hermes", "--person", "ben")
    assert "Already there, unchanged:" in again.stdout
