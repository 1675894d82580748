"""The doors of files people edit by hand: MEMORY.md / USER.md, SKILL.md, the skills
sidecars (.usage.json, proposals), and the skills folders `kioku skills import` reads.

Every hostile item is written as such a file and read by `kioku memory show`, `kioku
skills list/show/import/pending/approve` (one process per door, `tests.helpers.cli_batch`)
and by the prompt build at the start of a session (the gateway rig). A bad note is a
clear error naming the file; a bad skill is skipped with a warning naming its folder and
why; nothing a command refused to read is changed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.access.people import person_dir
from memory.skills.format import MAX_FRONT_MATTER_DEPTH, SkillError, parse_skill
from tests.helpers.cli_batch import Door, Job, kioku_batch
from tests.helpers.gateway_rig import gateway_rig
from tests.helpers.hostile import ITEMS

NAMES = sorted(ITEMS)
YAML_ITEMS = {
    "yaml-alias-bomb": b'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a]\n',
    "yaml-bad-date": b"updated: 2026-13-45\n",
    "yaml-long-integer": b"n: " + b"9" * 5000 + b"\n",
    "yaml-deep-block-list": b"a:\n" + b"- " * 5000 + b"x\n",
    "yaml-deep-flow": b"a: " + b"[" * 900 + b"]" * 900 + b"\n",
    "yaml-python-tag": b"a: !!python/object/apply:os.system [echo]\n",
    "yaml-merge-key": b"base: &b {x: 1}\nmore:\n  <<: *b\n",
}
GOOD_SKILL = "---\nname: good\ndescription: A skill that works\n---\n\n1. Do it.\n"


# -- notes ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """A person per item, whose MEMORY.md and USER.md both hold it: shown, then added to."""
    folder = tmp_path_factory.mktemp("notes")
    home = folder / "home"
    for name, data in ITEMS.items():
        directory = person_dir(home, name)
        directory.mkdir(parents=True)
        (directory / "MEMORY.md").write_bytes(data)
        (directory / "USER.md").write_bytes(data)
    jobs = [Job(f"show:{name}", ["memory", "show", "--person", name], home) for name in NAMES]
    add = ["memory", "add", "one more", "-t", "user", "-p"]
    jobs += [Job(f"add:{name}", [*add, name], home) for name in NAMES]
    return Door(home, kioku_batch(jobs, folder))


@pytest.mark.parametrize("name", NAMES)
def test_memory_show_prints_or_refuses_each_hand_edited_notes_file_by_name(
    notes: Door, name: str
) -> None:
    ran = notes.ran[f"show:{name}"]
    ran.assert_clean()
    if ran.code == 0:
        assert "MEMORY.md" in ran.stdout and "USER.md" in ran.stdout
        return
    assert ran.code == 1
    path = person_dir(notes.folder, name) / "MEMORY.md"
    assert re.search(rf"{re.escape(str(path))}( line \d+: not UTF-8 text| is over )", ran.stderr)


@pytest.mark.parametrize("name", NAMES)
def test_adding_to_a_hostile_notes_file_is_refused_or_keeps_a_backup(
    notes: Door, name: str
) -> None:
    ran = notes.ran[f"add:{name}"]
    ran.assert_clean()
    user = person_dir(notes.folder, name) / "USER.md"
    if ran.code == 0:  # read and rewritten canonically: the hand-made bytes are kept aside
        backups = list(user.parent.glob("USER.md.bak.*"))
        assert backups == [] or backups[0].read_bytes() == ITEMS[name]
        return
    assert ran.code == 1
    assert user.read_bytes() == ITEMS[name]


async def test_a_session_starts_for_every_hostile_notes_file_and_skill(home: Path) -> None:
    """The prompt build reads the person's notes and skills index: each item as both notes
    files and as a personal skill, and the person still gets an answer."""
    async with gateway_rig(home) as rig:
        for number, (name, data) in enumerate(sorted(ITEMS.items()), start=1):
            await rig.person(name, f"telegram:{number}")
            directory = person_dir(home, name)
            directory.mkdir(parents=True)
            (directory / "MEMORY.md").write_bytes(data)
            (directory / "USER.md").write_bytes(data)
            write_skill_folders(directory / "skills", {name: data})
            reply = await rig.ask(rig.dm(f"telegram:{number}", "hello", f"m{number}"))
            assert reply == "echo: hello", name
            assert rig.api is not None
            system = "".join(block["text"] for block in rig.api.last.json["system"])
            assert "MEMORY.md" in system and "good" in system, name
            assert len(system) < 50_000, name  # an entry far over the limit is cut


# -- skills --------------------------------------------------------------------------------

SKILL_ITEMS = {**ITEMS, **YAML_ITEMS}


def write_skill_folders(root: Path, items: dict[str, bytes]) -> list[str]:
    """For each item a skill folder whose SKILL.md is the item (`raw-`), and one whose front
    matter holds it (`fm-`), beside one good skill; the folder names, bad ones first."""
    folders = []
    for name, data in sorted(items.items()):
        for kind, text in (
            ("raw", data),
            ("fm", f"---\nname: fm-{name}\ndescription: d\n".encode() + data + b"---\nBody.\n"),
        ):
            folder = root / f"{kind}-{name}"
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_bytes(text)
            folders.append(folder.name)
    (root / "good").mkdir(parents=True, exist_ok=True)
    (root / "good" / "SKILL.md").write_text(GOOD_SKILL)
    return folders


@pytest.fixture(scope="module")
def skills(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """Every hostile skill as a shared skill (listed, each shown) and in a folder imported."""
    folder = tmp_path_factory.mktemp("skills")
    home = folder / "home"
    names = write_skill_folders(home / "skills", SKILL_ITEMS)
    write_skill_folders(folder / "incoming", SKILL_ITEMS)
    jobs = [
        Job("list", ["skills", "list"], home),
        Job("import", ["skills", "import", str(folder / "incoming")], home),
        Job("imported", ["skills", "list", "--person", "owner", "--json"], home),
    ]
    jobs += [Job(name, ["skills", "show", name, "--shared"], home) for name in names]
    return Door(folder, kioku_batch(jobs, folder))


SKILL_FOLDERS = [f"{kind}-{name}" for name in sorted(SKILL_ITEMS) for kind in ("raw", "fm")]
VALID = ("fm-empty", "fm-whitespace-only")
"""Front matter with nothing (or blanks) added is still a skill."""
REFUSED = [folder for folder in SKILL_FOLDERS if folder not in VALID]


def test_skills_list_warns_of_every_hostile_skill_by_folder_and_lists_the_good_one(
    skills: Door,
) -> None:
    ran = skills.ran["list"]
    ran.assert_clean()
    assert ran.code == 0 and re.search(r"^\s+good\s", ran.stdout, re.M), ran.stdout
    for folder in REFUSED:
        assert f"warning: skipped {skills.folder / 'home' / 'skills' / folder}: " in ran.stderr


@pytest.mark.parametrize("folder", SKILL_FOLDERS)
def test_skills_show_refuses_each_hostile_skill_with_its_reason(skills: Door, folder: str) -> None:
    ran = skills.ran[folder]
    ran.assert_clean()
    if folder in VALID:
        assert ran.code == 0 and "Body." in ran.stdout
        return
    assert ran.code == 1 and f"The skill '{folder}' cannot be used: " in ran.stderr
    assert skills.folder.joinpath("home", "skills", folder, "SKILL.md").exists()


def test_skills_import_skips_every_hostile_skill_by_folder_and_brings_the_good_one(
    skills: Door,
) -> None:
    ran = skills.ran["import"]
    ran.assert_clean()
    assert ran.code == 1 and f"Imported {len(VALID) + 1} skill(s)" in ran.stdout
    for folder in REFUSED:
        assert f"Skipped {skills.folder / 'incoming' / folder}: " in ran.stderr
    imported = re.findall(r'"name": "([^"]+)"', skills.ran["imported"].stdout)
    assert sorted(imported) == sorted([*VALID, "good"])


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("deep-arrays", "SKILL.md is 200,050 characters; the limit is 100,000"),
        ("yaml-deep-flow", "nests deeper than 16 levels at line 4"),
        ("yaml-deep-block-list", "nests deeper than 16 levels at line 5"),
        ("yaml-alias-bomb", "uses a YAML alias (*a) at line 5"),
        ("yaml-merge-key", "uses a YAML alias (*b) at line 6"),
        ("yaml-bad-date", "holds a value that cannot be read (month must be in 1..12)"),
        ("yaml-long-integer", "holds a value that cannot be read (Exceeds the limit"),
        ("yaml-python-tag", "not valid YAML at line 4"),
        ("invalid-utf8", "SKILL.md line 4: not UTF-8 text"),
        ("ten-mb-string", "over the 400,000 byte limit"),
    ],
)
def test_a_hostile_front_matter_is_refused_with_the_line_and_the_limit(
    skills: Door, item: str, reason: str
) -> None:
    assert reason in skills.ran[f"fm-{item}"].stderr


# -- the sidecars --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sidecars(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """Each item as the shared skills' .usage.json (a home each, listed) and as a waiting
    proposal (one home: pending lists them, approving each is refused)."""
    folder = tmp_path_factory.mktemp("sidecars")
    proposals = folder / "proposals"
    waiting = person_dir(proposals, "owner") / "skills" / ".proposals"
    waiting.mkdir(parents=True)
    jobs = []
    for number, name in enumerate(NAMES):
        home = folder / name
        (home / "skills" / "good").mkdir(parents=True)
        (home / "skills" / "good" / "SKILL.md").write_text(GOOD_SKILL)
        (home / "skills" / ".usage.json").write_bytes(ITEMS[name])
        (waiting / f"{number:08x}.json").write_bytes(ITEMS[name])
        jobs.append(Job(f"usage:{name}", ["skills", "list"], home))
        jobs.append(Job(f"approve:{name}", ["skills", "approve", f"{number:08x}"], proposals))
    jobs.append(Job("pending", ["skills", "pending"], proposals))
    return Door(waiting, kioku_batch(jobs, folder))


@pytest.mark.parametrize("name", NAMES)
def test_a_hostile_usage_sidecar_counts_as_empty_and_the_skills_still_list(
    sidecars: Door, name: str
) -> None:
    ran = sidecars.ran[f"usage:{name}"]
    ran.assert_clean()
    assert ran.code == 0 and re.search(r"good\s+shared\s+0 view\(s\)", ran.stdout), ran.stdout


@pytest.mark.parametrize("name", NAMES)
def test_approving_a_hostile_proposal_is_refused_naming_its_file(sidecars: Door, name: str) -> None:
    ran = sidecars.ran[f"approve:{name}"]
    ran.assert_clean()
    number = NAMES.index(name)
    assert ran.code == 1 and f"{sidecars.folder / f'{number:08x}.json'}: " in ran.stderr
    assert (sidecars.folder / f"{number:08x}.json").read_bytes() == ITEMS[name]


def test_pending_lists_every_hostile_proposal_as_unreadable(sidecars: Door) -> None:
    ran = sidecars.ran["pending"]
    ran.assert_clean()
    assert ran.stderr.count("warning: unreadable proposal") == len(NAMES)


# -- the parser, at the depths the real ones break at --------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, MAX_FRONT_MATTER_DEPTH + 3) | st.integers(900, 3000),
    st.sampled_from(["flow", "block"]),
)
def test_front_matter_is_read_up_to_the_limit_and_refused_past_it(depth: int, kind: str) -> None:
    flow = " " + "[" * depth + "x" + "]" * depth
    block = "\n  " + "- " * depth + "x"  # a block list in a block list ..., on one line
    value = flow if kind == "flow" else block
    text = f"---\nname: s\ndescription: d\nv:{value}\n---\nBody.\n"
    if depth + 1 <= MAX_FRONT_MATTER_DEPTH:
        assert parse_skill(text, "s", 10**6).name == "s"
    else:
        with pytest.raises(SkillError, match=r"nests deeper than|not valid YAML"):
            parse_skill(text, "s", 10**6)
