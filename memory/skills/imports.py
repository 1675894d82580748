"""Bring in a folder of Agent Skills written elsewhere (Hermes Agent, OpenClaw, Claude).

Both layouts are found: flat (`<dir>/<name>/SKILL.md`) and nested in category folders
(`<dir>/<category>/<name>/SKILL.md`, as in Hermes Agent's `~/.hermes/skills`), or a
single skill folder given directly. kioku keeps skills one level deep, so a nested
skill's category folder becomes a `category:` line in its front matter when it has
none. Each skill is checked like any write and copied whole or not at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from config.settings import SkillsSettings
from memory.skills import usage as skills_usage
from memory.skills.files import as_text, create_folder, read_folder, replace_folder, root_lock
from memory.skills.format import (
    NAME,
    SKILL_FILE,
    SkillError,
    check_name,
    check_supporting_text,
    parse_skill,
    with_category,
)

MAX_DEPTH = 4


@dataclass
class ImportReport:
    """What an import did to the skills folder `root`, skill by skill."""

    root: Path
    imported: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(the source folder, why it was not imported)"""


def find_skill_folders(source: Path) -> list[tuple[Path, str | None]]:
    """Each skill folder under `source` with its category folder (None when flat), sorted."""
    if (source / SKILL_FILE).is_file():
        return [(source, None)]
    found: list[tuple[Path, str | None]] = []
    for directory, dirs, _files in os.walk(source):
        depth = len(Path(directory).relative_to(source).parts)
        keep = []
        for name in sorted(dirs):
            path = Path(directory, name)
            if name.startswith(".") or path.is_symlink():
                continue
            if (path / SKILL_FILE).is_file():
                category = Path(directory).relative_to(source).parts
                found.append((path, category[-1] if category else None))
            elif depth + 1 < MAX_DEPTH:
                keep.append(name)
        dirs[:] = keep
    return sorted(found)


def import_skills(
    source: Path, root: Path, settings: SkillsSettings, by: str, replace: bool = False
) -> ImportReport:
    """Copy every valid skill under `source` into the skills folder `root` (blocking)."""
    if not source.is_dir():
        raise SkillError(f"{source} is not a folder of skills.")
    report = ImportReport(root)
    seen: dict[str, Path] = {}
    with root_lock(root):
        for folder, category in find_skill_folders(source):
            name = folder.name
            if name in seen:
                report.skipped.append(
                    (str(folder), f"another skill named {name!r} comes from {seen[name]}")
                )
                continue
            seen[name] = folder
            try:
                files = _checked_files(folder, category, settings)
                target = root / name
                exists = target.exists() or target.is_symlink()
                if exists and _same_files(target, files, settings):
                    report.unchanged.append(name)
                    continue
                if exists and not replace:
                    raise SkillError(
                        "a different skill of that name is already there (import with "
                        "--replace to overwrite it)"
                    )
                if exists:
                    replace_folder(root, name, files)
                else:
                    create_folder(root, name, files)
            except SkillError as exc:
                report.skipped.append((str(folder), str(exc)))
                continue
            (report.replaced if exists else report.imported).append(name)
            skills_usage.record_write(root, name, by, created=True)
    return report


def _same_files(folder: Path, files: dict[PurePosixPath, bytes], settings: SkillsSettings) -> bool:
    """True when the skill already in place holds exactly `files` (re-running an import)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        return read_folder(folder, _max_bytes(settings)) == files
    except SkillError:
        return False


def _max_bytes(settings: SkillsSettings) -> int:
    return max(settings.max_file_bytes, settings.max_skill_chars * 4)


def _checked_files(
    folder: Path, category: str | None, settings: SkillsSettings
) -> dict[PurePosixPath, bytes]:
    name = check_name(folder.name)
    files = read_folder(folder, _max_bytes(settings))
    skill_md = PurePosixPath(SKILL_FILE)
    text = as_text(files[skill_md], SKILL_FILE)
    doc = parse_skill(text, name, settings.max_skill_chars)
    if category and doc.category is None and NAME.fullmatch(category):
        text = with_category(text, category)
        parse_skill(text, name, settings.max_skill_chars)
    files[skill_md] = text.encode()
    for relative, data in files.items():
        if relative != skill_md:
            check_supporting_text(str(relative), data, settings.max_file_bytes)
    return files
