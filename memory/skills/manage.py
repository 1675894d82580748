"""The six ways a person's skills change: create, patch, edit, delete, write_file, remove_file.

Each request is planned first — every check made against the files as they are now,
under the place's lock — and only then applied. Planning alone is how a proposal is
checked before it waits for the owner's approval, and planning again at approval
time is what keeps an approval from applying to files that changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, get_args

from config.settings import SkillsSettings
from memory.skills import usage as skills_usage
from memory.skills.files import (
    create_folder,
    read_text,
    remove_folder,
    remove_support,
    root_lock,
    supporting_file,
    write_support,
)
from memory.skills.format import (
    SKILL_FILE,
    SkillError,
    check_file_path,
    check_name,
    check_supporting_text,
    parse_skill,
)

Action = Literal["create", "patch", "edit", "delete", "write_file", "remove_file"]
ACTIONS: tuple[str, ...] = get_args(Action)
_NEEDS: dict[str, tuple[str, ...]] = {
    "create": ("content",),
    "patch": ("old_string", "new_string"),
    "edit": ("content",),
    "delete": (),
    "write_file": ("file_path", "file_content"),
    "remove_file": ("file_path",),
}
_WHAT = {
    "content": "content (the whole SKILL.md: front matter with name and description, then body)",
    "old_string": "old_string (the exact text to replace, copied from skill_view)",
    "new_string": "new_string (its replacement; may be empty)",
    "file_path": "file_path (e.g. 'references/api.md')",
    "file_content": "file_content (the file's text)",
}


@dataclass(frozen=True)
class SkillRequest:
    """One `skill_manage` call, checked for shape (not yet against the files)."""

    action: Action
    name: str
    content: str | None = None
    old_string: str | None = None
    new_string: str | None = None
    file_path: str | None = None
    file_content: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SkillRequest:
        action = data.get("action")
        if action not in ACTIONS:
            raise SkillError(f"action must be one of: {', '.join(ACTIONS)}.")
        name = check_name(data.get("name"))
        values = {key: data.get(key) for key in _WHAT}
        for key, value in values.items():
            if value is not None and not isinstance(value, str):
                raise SkillError(f"{key} must be a string.")
        missing = [_WHAT[key] for key in _NEEDS[action] if values[key] is None]
        if missing:
            raise SkillError(f"{action} needs {' and '.join(missing)}.")
        return cls(action=action, name=name, **values)

    def as_mapping(self) -> dict[str, str]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @property
    def target(self) -> str:
        """What the request touches, e.g. `deploy/SKILL.md` or `deploy/references/x.md`."""
        if self.action in ("create", "delete"):
            return self.name
        return f"{self.name}/{self.file_path or SKILL_FILE}"


@dataclass(frozen=True)
class Planned:
    """A request that passed every check: `apply` performs it, `done` tells the model."""

    request: SkillRequest
    apply: Callable[[], None]
    done: str


def execute(
    root: Path,
    shared_root: Path,
    request: SkillRequest,
    settings: SkillsSettings,
    by: str,
) -> Planned:
    """Plan `request` against `root` and apply it, both under the place's lock."""
    with root_lock(root):
        planned = plan(root, shared_root, request, settings)
        planned.apply()
        if request.action == "delete":
            skills_usage.forget(root, request.name)
        else:
            skills_usage.record_write(root, request.name, by, request.action == "create")
    return planned


def plan(root: Path, shared_root: Path, request: SkillRequest, settings: SkillsSettings) -> Planned:
    """Check `request` against the files now; raise `SkillError` with the next step if refused."""
    name = request.name
    folder = root / name
    shared = (shared_root / name / SKILL_FILE).is_file()
    if request.action == "create":
        if folder.exists() or folder.is_symlink():
            raise SkillError(
                f"This person already has a skill '{name}'. Change it with patch (a small fix) "
                "or edit (a full rewrite); call skill_view first to see its current text."
            )
        text = _valid_skill(request.content, name, settings, "Not created")
        shadow = " For this person it takes the place of the shared skill of that name." * shared
        return Planned(
            request,
            lambda: create_folder(root, name, {PurePosixPath(SKILL_FILE): text.encode()}),
            f"Done: created the skill '{name}'. It is in the skills index from the next session "
            f"on, and skill_view can read it now.{shadow}",
        )
    if not (folder.is_dir() or folder.is_symlink()):
        raise SkillError(_not_found(name, shared))
    if request.action == "delete":
        back = f" The shared skill '{name}' applies again." if shared else ""
        return Planned(
            request, lambda: remove_folder(root, name), f"Done: deleted the skill '{name}'.{back}"
        )
    if request.action == "edit":
        text = _valid_skill(request.content, name, settings, "Not saved")
        return Planned(
            request,
            lambda: write_support(folder, PurePosixPath(SKILL_FILE), text.encode()),
            f"Done: rewrote {name}/SKILL.md.",
        )
    if request.action == "patch":
        return _plan_patch(folder, request, settings)
    relative = check_file_path(request.file_path, for_write=request.action == "write_file")
    if request.action == "remove_file":
        if relative == PurePosixPath(SKILL_FILE):
            raise SkillError("SKILL.md cannot be removed alone; delete the whole skill instead.")
        supporting_file(folder, relative)
        return Planned(
            request,
            lambda: remove_support(folder, relative),
            f"Done: removed {name}/{relative}.",
        )
    data = (request.file_content or "").encode()
    check_supporting_text(str(relative), data, settings.max_file_bytes)
    return Planned(
        request,
        lambda: write_support(folder, relative, data),
        f"Done: wrote {name}/{relative} ({len(data):,} bytes).",
    )


def _plan_patch(folder: Path, request: SkillRequest, settings: SkillsSettings) -> Planned:
    old, new = request.old_string or "", request.new_string or ""
    relative = PurePosixPath(SKILL_FILE)
    if request.file_path is not None:
        relative = check_file_path(request.file_path, for_write=False)
    where = f"{request.name}/{relative}"
    if not old:
        raise SkillError("old_string is empty; copy the exact text to replace from skill_view.")
    if old == new:
        raise SkillError("old_string and new_string are the same; there is nothing to change.")
    is_skill_md = relative == PurePosixPath(SKILL_FILE)
    path = folder / SKILL_FILE if is_skill_md else supporting_file(folder, relative)
    limit = settings.max_skill_chars * 4 if is_skill_md else settings.max_file_bytes
    text = read_text(path, limit)
    count = text.count(old)
    if count == 0:
        raise SkillError(
            f"old_string was not found in {where}. Call skill_view to see the exact current "
            "text, then retry with a piece copied from it (spaces and line breaks included)."
        )
    if count > 1:
        raise SkillError(
            f"old_string occurs {count} times in {where}; include more of the surrounding text "
            "so that it matches exactly once."
        )
    patched = text.replace(old, new, 1)
    if is_skill_md:
        try:
            parse_skill(patched, request.name, settings.max_skill_chars)
        except SkillError as exc:
            raise SkillError(f"Not patched: the result would be invalid. {exc}") from None
    else:
        check_supporting_text(str(relative), patched.encode(), settings.max_file_bytes)
    return Planned(
        request,
        lambda: write_support(folder, relative, patched.encode()),
        f"Done: patched {where} (1 replacement).",
    )


def _valid_skill(content: str | None, name: str, settings: SkillsSettings, verb: str) -> str:
    text = content or ""
    try:
        parse_skill(text, name, settings.max_skill_chars)
    except SkillError as exc:
        raise SkillError(f"{verb}: {exc}") from None
    return text


def _not_found(name: str, shared: bool) -> str:
    if shared:
        return (
            f"'{name}' is a shared skill: the owner manages it and it is read-only to you. To "
            "adapt it for this person, create a personal skill with the same name (start from "
            "its text, from skill_view); it then takes the shared one's place for them."
        )
    return (
        f"This person has no skill '{name}'. Call skills_list to see the names, or create it "
        "with action create."
    )
