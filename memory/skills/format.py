"""The Agent Skills format: a folder `<name>/` with a SKILL.md of YAML front matter and markdown.

The same format is used by Hermes Agent, OpenClaw and Claude, so a skill written
elsewhere can be dropped in unchanged. Everything here is pure: it checks text and
names and says, in a sentence a model or a person can act on, what is wrong.

The front matter is a few lines of metadata, so its YAML is bounded before it is built:
at most `MAX_FRONT_MATTER` characters nesting `MAX_FRONT_MATTER_DEPTH` levels, and no
aliases (`*name`, which can multiply a small text into a huge value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

import yaml

from inputs.text import lone_surrogate
from memory.safety import scan_text

SKILL_FILE = "SKILL.md"
NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_PATH = 255
MAX_FRONT_MATTER = 16_384
"""Characters between the two '---' lines (name, description, tags: a few hundred)."""
MAX_FRONT_MATTER_DEPTH = 16
"""Mappings and lists inside each other (Hermes' metadata.hermes.tags is 3 deep)."""
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
Scope = Literal["personal", "shared"]

EXAMPLE = (
    "---\nname: weekly-report\ndescription: How Aiko likes her weekly report written and sent\n"
    "---\n\n# Weekly report\n\n1. ...\n"
)


# libyaml's safe loader when PyYAML was built with it: the same YAML, ~10x faster.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SkillError(Exception):
    """A refusal: what was wrong and what to do next (nothing was written)."""


@dataclass(frozen=True)
class SkillDoc:
    """A parsed SKILL.md; `text` is the file exactly as written, so it round-trips."""

    name: str
    description: str
    body: str
    text: str
    version: str | None = None
    tags: tuple[str, ...] = ()
    category: str | None = None


def check_name(name: object) -> str:
    """`name` if it is a valid skill name (a folder name that cannot leave its parent)."""
    if not isinstance(name, str) or not name:
        raise SkillError("The skill name is missing; give a name such as 'weekly-report'.")
    if len(name) > MAX_NAME:
        raise SkillError(
            f"The skill name is {len(name)} characters; at most {MAX_NAME} are allowed. "
            "Choose a shorter name."
        )
    if not NAME.fullmatch(name):
        raise SkillError(
            f"Invalid skill name {name!r}: use lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (for example 'deploy-blog')."
        )
    return name


def parse_skill(text: str, folder_name: str, max_chars: int) -> SkillDoc:
    """Parse and validate a SKILL.md whose folder is `folder_name`; raise `SkillError` if bad."""
    if len(text) > max_chars:
        raise SkillError(
            f"SKILL.md is {len(text):,} characters; the limit is {max_chars:,}. Move long "
            "reference material into references/ files and keep SKILL.md to the procedure."
        )
    _check_text(text)
    front, body = _split_front_matter(text)
    meta = _load_yaml(front)
    name = meta.get("name")
    try:
        check_name(name)
    except SkillError as exc:
        raise SkillError(f"In the front matter: {exc}") from None
    if name != folder_name:
        raise SkillError(
            f"The front matter says name: {name}, but the skill is {folder_name!r}; "
            "they must be equal. Use the same name in both places."
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError(
            "The front matter needs a description: one line saying what the skill does and "
            "when to use it."
        )
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(
            f"The description is {len(description):,} characters; at most {MAX_DESCRIPTION:,} "
            "are allowed. Shorten it; details belong in the body."
        )
    if not body.strip():
        raise SkillError("SKILL.md has no body: write the procedure below the front matter.")
    finding = scan_text(text.removeprefix("\ufeff"))
    if finding is not None:
        raise SkillError(f"SKILL.md was refused by the safety check ({finding}).")
    return SkillDoc(
        name=name,
        description=description.strip(),
        body=body,
        text=text,
        version=_optional_text(meta.get("version"), "version"),
        tags=_tags(meta),
        category=_optional_text(meta.get("category"), "category"),
    )


def check_supporting_text(path: str, data: bytes, max_bytes: int) -> None:
    """Refuse a supporting file over the size cap, or a text file the safety scan flags."""
    if len(data) > max_bytes:
        raise SkillError(
            f"{path} is {len(data):,} bytes; the limit for a supporting file is {max_bytes:,}. "
            "Split it or keep only what the procedure needs."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    finding = scan_text(text)
    if finding is not None:
        raise SkillError(f"{path} was refused by the safety check ({finding}).")


def check_file_path(path: object, for_write: bool) -> PurePosixPath:
    """A supporting file's path relative to its skill folder, refused if it could leave it.

    Writes go under references/, templates/, scripts/ or assets/; SKILL.md itself is
    changed with edit or patch.
    """
    if not isinstance(path, str) or not path.strip():
        raise SkillError("file_path is missing; give a path such as 'references/api.md'.")
    where = f"Invalid file_path {path!r}"
    if len(path) > MAX_PATH or "\\" in path or "\x00" in path:
        raise SkillError(f"{where}: use a short path with '/' separators.")
    if path.startswith("/"):
        raise SkillError(f"{where}: it must be relative to the skill folder, not absolute.")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise SkillError(f"{where}: '..', '.' and empty parts are not allowed.")
    if any(part.startswith(".") for part in parts):
        raise SkillError(f"{where}: hidden names (starting with '.') are not allowed.")
    relative = PurePosixPath(*parts)
    if relative == PurePosixPath(SKILL_FILE):
        if for_write:
            raise SkillError("SKILL.md is not a supporting file: change it with edit or patch.")
        return relative
    if for_write and (len(parts) < 2 or parts[0] not in SUPPORT_DIRS):
        raise SkillError(
            f"{where}: supporting files go in one of {', '.join(d + '/' for d in SUPPORT_DIRS)} "
            "(for example 'references/api.md')."
        )
    return relative


def one_line(text: str, limit: int) -> str:
    """`text` on one line, cut at `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def with_category(text: str, category: str) -> str:
    """SKILL.md text with `category: <category>` added as the last front matter line."""
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            newline = "\r\n" if lines[index].endswith("\r\n") else "\n"
            return "".join([*lines[:index], f"category: {category}{newline}", *lines[index:]])
    return text


def _split_front_matter(text: str) -> tuple[str, str]:
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise SkillError(
            "SKILL.md must start with YAML front matter between two '---' lines holding name "
            f"and description, then the markdown body. For example:\n{EXAMPLE}"
        )
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise SkillError("The front matter is not closed: add a line '---' after it.")


def _check_text(text: str) -> None:
    """Refuse a NUL or a lone surrogate: neither is text, and a file holding one is not a
    skill (the model's tool arguments can carry both as JSON escapes)."""
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise SkillError(f"SKILL.md holds a NUL character on line {line}: remove it.")
    surrogate = lone_surrogate(text)
    if surrogate is not None:
        raise SkillError(f"SKILL.md holds a lone surrogate ({surrogate}), which is not text.")


def _load_yaml(front: str) -> dict[str, Any]:
    if len(front) > MAX_FRONT_MATTER:
        raise SkillError(
            f"The front matter is {len(front):,} characters; at most {MAX_FRONT_MATTER:,} are "
            "allowed. Keep it to name, description and a few short fields; the rest belongs "
            "in the body."
        )
    try:
        _check_shape(front)
        meta = yaml.load(front, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SkillError(
            f"The front matter is not valid YAML{where} ({problem}). Quote values that contain "
            "':' or start with a special character."
        ) from None
    except ValueError as exc:  # a date like 2026-13-45, an int of 5,000 digits
        raise SkillError(
            f"The front matter holds a value that cannot be read ({exc}). Quote it to keep it "
            "as text."
        ) from None
    if not isinstance(meta, dict):
        raise SkillError("The front matter must be YAML key: value lines (name, description).")
    return meta


def _check_shape(front: str) -> None:
    """Walk the YAML events (the parser is not recursive; building the values is) and
    refuse nesting past `MAX_FRONT_MATTER_DEPTH` or any alias, naming the line."""
    depth = 0
    for event in yaml.parse(front, Loader=_SAFE_LOADER):
        line = event.start_mark.line + 2
        if isinstance(event, yaml.AliasEvent):
            raise SkillError(
                f"The front matter uses a YAML alias (*{event.anchor}) at line {line}; kioku "
                "does not read aliases. Write the value out."
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                raise SkillError(
                    f"The front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels at "
                    f"line {line}. Flatten it: it holds name, description and short fields."
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _optional_text(value: object, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SkillError(f"The front matter field {key} must be a short text.")
    return str(value).strip() or None


def _tags(meta: dict[str, Any]) -> tuple[str, ...]:
    """`tags:` at the top, or where Hermes Agent keeps them (`metadata.hermes.tags`)."""
    tags = meta.get("tags")
    if tags is None:
        metadata = meta.get("metadata")
        hermes = metadata.get("hermes") if isinstance(metadata, dict) else None
        tags = hermes.get("tags") if isinstance(hermes, dict) else None
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, list) or not all(
        isinstance(tag, str | int | float) and not isinstance(tag, bool) for tag in tags
    ):
        raise SkillError("The front matter field tags must be a list of words, e.g. [git, ops].")
    return tuple(str(tag).strip() for tag in tags if str(tag).strip())
