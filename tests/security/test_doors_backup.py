"""The backup doors under the hostile archive corpus (`tests/helpers/hostile_backups.py`,
issue 34): `kioku backup verify FILE` and `kioku restore FILE --yes`.

A real `kioku backup` of a small home is rebuilt into each hostile archive, and each is
given to verify and to restore over that home, all in one process
(`tests.helpers.cli_batch`) with a TMPDIR of its own and every file it writes capped at
4 MiB: a member written past its declared size would fail as a full disk instead of
being refused by its size, so the refusals prove the checks run before writing (the
size bombs are 16 MiB). Each must exit 1 with its reason and no traceback or ERROR
line; afterwards TMPDIR is empty, nothing was written beside the home, the home is as it
was, the good archive still verifies and restores, and the home still backs up.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory.backup.cleanup import remove_tree
from tests.helpers.backup_archives import NOTE, make_home
from tests.helpers.cli_batch import Job, Ran, kioku_batch
from tests.helpers.hostile_backups import CORPUS
from tests.helpers.paths import KIOKU

NAMES = sorted(CORPUS)
FILE_SIZE_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class Door:
    """What each job answered, the folder everything ran in, and the home's files before."""

    folder: Path
    home: Path
    before: dict[str, bytes]
    ran: dict[str, Ran]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def backed_up(home: Path, to: Path) -> Path:
    done = subprocess.run(
        [str(KIOKU), "backup", "--to", str(to)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KIOKU_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Door:
    folder = tmp_path_factory.mktemp("backup-doors")
    home = make_home(folder / "home")
    good = backed_up(home, folder / "good")
    (folder / "corpus").mkdir()
    (folder / "tmp").mkdir()
    (folder / "a-file").write_text("not a folder\n")
    jobs = []
    for name, (build, _) in CORPUS.items():
        bad = build(good, folder / "corpus" / f"{name}.tar.gz")
        jobs.append(Job(f"verify:{name}", ["backup", "verify", str(bad)], home))
        jobs.append(Job(f"restore:{name}", ["restore", str(bad), "--yes"], home))
    jobs += [
        Job("home-a-file", ["restore", str(good), "--home", str(folder / "a-file")], home),
        Job("home-under-a-file", ["restore", str(good), "--home", str(folder / "a-file/h")], home),
        Job("verify-good", ["backup", "verify", str(good)], home),
        Job("restore-good", ["restore", str(good), "--home", str(folder / "restored")], home),
        Job("backup-after", ["backup", "--to", str(folder / "after")], home),
    ]
    before = snapshot(home)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder / "tmp"))
        ran = kioku_batch(jobs, folder, file_size_limit=FILE_SIZE_LIMIT)
    return Door(folder, home, before, ran)


def refused(ran: Ran, says: str) -> None:
    ran.assert_clean()
    assert '"level": "error"' not in ran.stderr, ran.stderr
    assert ran.code == 1, ran.stdout
    assert re.search(says, ran.stderr), ran.stderr


@pytest.mark.parametrize("name", NAMES)
def test_verify_refuses_each_hostile_archive_with_its_reason(door: Door, name: str) -> None:
    ran = door.ran[f"verify:{name}"]
    refused(ran, CORPUS[name][1])
    assert ": NOT OK: " in ran.stderr and ran.stdout == ""


@pytest.mark.parametrize("name", NAMES)
def test_restore_refuses_each_hostile_archive_and_changes_nothing(door: Door, name: str) -> None:
    ran = door.ran[f"restore:{name}"]
    refused(ran, CORPUS[name][1])
    assert "restore refused: " in ran.stderr and "Nothing was changed." in ran.stderr


def test_the_corpus_left_nothing_behind_and_the_home_as_it_was(door: Door) -> None:
    assert list((door.folder / "tmp").iterdir()) == []
    beside = {p.name for p in door.folder.iterdir()}
    assert beside == {
        *("home", "good", "corpus", "tmp", "a-file", "restored", "after"),
        *("jobs.json", "results.json"),
    }
    assert snapshot(door.home) == door.before


@pytest.mark.parametrize("key", ["home-a-file", "home-under-a-file"])
def test_restore_into_a_regular_file_is_refused_with_a_clear_error(door: Door, key: str) -> None:
    refused(door.ran[key], f"{door.folder / 'a-file'} is not a folder: restore into a folder")
    assert (door.folder / "a-file").read_text() == "not a folder\n"


def test_after_the_corpus_the_good_archive_verifies_restores_and_the_home_backs_up(
    door: Door,
) -> None:
    for key in ("verify-good", "restore-good", "backup-after"):
        assert door.ran[key].code == 0, door.ran[key].stderr
    assert (door.folder / "restored" / "people" / "alice" / "USER.md").read_text() == NOTE + "\n"
    assert len(list((door.folder / "after").iterdir())) == 1


def test_a_home_deeper_than_a_restore_allows_backs_up_leaving_the_deep_part_out(
    tmp_path: Path,
) -> None:
    """1,200 folders deep: `os.walk` (recursive in CPython 3.11) died of RecursionError.
    The tree is removed here: pytest's own clean-up of old runs uses `shutil.rmtree`."""
    home = make_home(tmp_path / "home")
    deep = home / "people" / "alice"
    try:
        for _ in range(1200):  # Path.mkdir(parents=True) recurses too
            deep = deep / "d"
            deep.mkdir()
        (deep / "note.md").write_text("deep\n")
        done = subprocess.run(
            [str(KIOKU), "backup", "--to", str(tmp_path / "b")],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "KIOKU_HOME": str(home)},
        )
    finally:
        remove_tree(home / "people" / "alice" / "d")
    assert done.returncode == 0, done.stderr
    Ran(done.returncode, done.stdout, done.stderr).assert_clean()
    left = "left out people/alice/" + "d/" * 30 + "d: 32 folders deep (at most 31)"
    assert left in done.stderr
