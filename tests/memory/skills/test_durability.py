"""A process killed in the middle of a skill write loses nothing and leaves nothing half-made."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from config.settings import SkillsSettings
from memory.skills.library import SkillsLibrary
from memory.skills.manage import SkillRequest
from tests.helpers.skill_files import skill_md

# Runs one library call in a fresh process that SIGKILLs itself at the chosen step.
CRASH = """
import asyncio, os, shutil, signal, sys
from pathlib import Path
from config.settings import SkillsSettings
from memory.skills.library import SkillsLibrary
from memory.skills.manage import SkillRequest

home, mode, text = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
die = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
renames = [0]
real_rename = os.rename

def rename(src, dst):
    renames[0] += 1
    if renames[0] == {"create": 1, "replace": 2}.get(mode):
        die()
    real_rename(src, dst)

os.rename = rename
if mode == "edit":
    os.replace = die
if mode == "delete":
    shutil.rmtree = die
lib = SkillsLibrary(home, SkillsSettings())
if mode == "replace":
    work = lib.import_folder(Path(sys.argv[4]), "aiko", "crash", replace=True)
else:
    fields = {"content": text} if mode in ("create", "edit") else {}
    request = SkillRequest.from_mapping({"action": mode, "name": "deploy-blog", **fields})
    work = lib.manage("aiko", request, "crash")
asyncio.run(work)
"""


@pytest.fixture
def lib(home: Path) -> SkillsLibrary:
    return SkillsLibrary(home, SkillsSettings())


async def crash(home: Path, mode: str, text: str = "", *extra: str) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CRASH, str(home), mode, text, *extra,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == -9, stderr.decode()


async def create(lib: SkillsLibrary, body: str = "v1\n") -> None:
    content = skill_md(body=body)
    request = SkillRequest.from_mapping(
        {"action": "create", "name": "deploy-blog", "content": content}
    )
    await lib.manage("aiko", request, "t")


def visible(root: Path) -> list[str]:
    return sorted(name for name in os.listdir(root) if not name.startswith("."))


async def test_a_create_killed_before_the_rename_leaves_no_skill_and_can_be_retried(
    lib: SkillsLibrary,
) -> None:
    await crash(lib.home, "create", skill_md())
    root = lib.personal_root("aiko")
    assert visible(root) == []
    assert (await lib.listing("aiko")).problems == []
    await create(lib)
    assert sorted(os.listdir(root)) == [".lock", ".usage.json", "deploy-blog"]


async def test_an_edit_killed_before_the_rename_keeps_the_old_skill_md(
    lib: SkillsLibrary,
) -> None:
    await create(lib)
    await crash(lib.home, "edit", skill_md(body="v2\n"))
    assert (await lib.view("aiko", "deploy-blog")).content == skill_md(body="v1\n")
    assert (await lib.view("aiko", "deploy-blog")).files == ["SKILL.md"]


async def test_a_delete_killed_after_the_skill_moved_away_stays_deleted(
    lib: SkillsLibrary,
) -> None:
    await create(lib)
    await crash(lib.home, "delete")
    assert (await lib.listing("aiko")).skills == []
    await create(lib, "again\n")
    assert sorted(os.listdir(lib.personal_root("aiko"))) == [".lock", ".usage.json", "deploy-blog"]


async def test_a_replacement_killed_between_its_two_renames_puts_the_old_skill_back(
    lib: SkillsLibrary, tmp_path: Path
) -> None:
    await create(lib)
    source = tmp_path / "import" / "deploy-blog"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text(skill_md(body="imported\n"))
    await crash(lib.home, "replace", "", str(source.parent))
    assert [s.skill.name for s in (await lib.listing("aiko")).skills] == ["deploy-blog"]
    assert (await lib.view("aiko", "deploy-blog")).content == skill_md(body="v1\n")
    assert sorted(os.listdir(lib.personal_root("aiko"))) == [".lock", ".usage.json", "deploy-blog"]
