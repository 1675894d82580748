"""The manual against the program: every `kioku` command has one row in the command
reference, every setting one row in the configuration reference, every `kioku …` the
README and docs/ show exists with the options they give it, and every relative link
lands on a file and a heading."""

from __future__ import annotations

import re
import shlex
import typing
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import BaseModel

from config.platform_settings import PlatformSettings
from config.provider_settings import ProviderSettings
from config.settings import Settings
from gateway.cli.app import app
from tests.helpers.paths import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
CLI_PAGE = DOCS / "cli.md"
CONFIG_PAGE = DOCS / "configuration.md"

# Quoted messages that start with the word kioku, not commands.
NOT_COMMANDS = ("kioku is ", "kioku: ")


# --- the program -----------------------------------------------------------------------


def commands() -> dict[tuple[str, ...], Any]:
    """Every runnable command by its path: the leaves, and a group that runs by itself
    (`kioku backup`)."""
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if not subs:
            found[path] = command
            return
        if path and getattr(command, "invoke_without_command", False):
            found[path] = command
        for name, sub in subs.items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


ROOT_COMMAND = typer.main.get_command(app)
COMMANDS = commands()


def options(command: Any) -> set[str]:
    return {
        opt
        for p in command.params
        if p.param_type_name == "option"
        for opt in (*p.opts, *p.secondary_opts)  # `--online/--offline`: both are options
    } | {"--help"}


def model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def settings(model: type[BaseModel] = Settings, prefix: str = "") -> dict[str, str]:
    """Every setting's dotted name → the name the manual documents it by: itself, or the
    pattern of a family (`<platform>.dm_policy`, `providers.<name>.enabled`,
    `mcp.servers.<name>.command`)."""
    found: dict[str, str] = {}
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation = field.annotation
        sub = model_of(annotation)
        value = model_of(typing.get_args(annotation)[-1]) if typing.get_args(annotation) else None
        if typing.get_origin(annotation) is dict and value is not None:
            found.update(settings(value, f"{path}.<name>."))
            continue
        if sub is not None:
            found.update(settings(sub, f"{path}."))
            continue
        if issubclass(model, PlatformSettings) and name in PlatformSettings.model_fields:
            found[path] = f"<platform>.{name}"
        elif issubclass(model, ProviderSettings) and name in ProviderSettings.model_fields:
            found[path] = f"providers.<name>.{name}"
        else:
            found[path] = path
    if model is Settings:
        for name in ProviderSettings.model_fields:  # a third-party provider's table
            found[f"providers.<plugin>.{name}"] = f"providers.<name>.{name}"
    return found


# --- the manual ------------------------------------------------------------------------


def without_fences(text: str) -> str:
    return re.sub(r"^ *```.*?^ *```", "", text, flags=re.S | re.M)


def table_first_cells(path: Path) -> list[str]:
    cells = []
    for line in without_fences(path.read_text()).splitlines():
        if line.startswith("|") and not re.match(r"^\|\s*-", line):
            cells.append(re.split(r"(?<!\\)\|", line)[1].strip())
    return cells


def shown_commands(path: Path) -> list[str]:
    """Every `kioku …` in the page: inline code spans, and the lines of code blocks
    (fenced or indented), continuation lines joined."""
    text = path.read_text()
    found = []
    blocks = re.findall(r"^ *```[^\n]*\n(.*?)^ *```", text, flags=re.S | re.M)
    blocks += ["\n".join(m.group(0).splitlines()) for m in re.finditer(r"(?m)(^    \S.*\n)+", text)]
    for block in blocks:
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            line = re.sub(r"\s#\s.*$", "", line.strip())
            line = re.sub(r"^(\$ |\.venv/bin/)", "", line)
            if line.startswith("kioku "):
                found.append(line)
    prose = without_fences(text)
    for span in re.findall(r"`([^`\n]+)`", prose):
        span = re.sub(r"^\.venv/bin/", "", span)
        if span.startswith("kioku ") and not span.startswith(NOT_COMMANDS):
            found.append(span)
    return found


def words(command: str) -> list[str]:
    command = command.replace("\\|", "|")
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def resolve(command: str) -> tuple[tuple[str, ...], list[str]]:
    """The command path a shown `kioku …` names, and the words after it; AssertionError
    when it names a command that does not exist."""
    rest = words(command)[1:]
    node, path = ROOT_COMMAND, ()
    while rest and getattr(node, "commands", None):
        word = rest[0].strip("[]()")
        names = [n for n in re.split(r"[|/]", word) if n]
        if word and all(n in node.commands for n in names):
            if len(names) > 1:  # `kioku pairing approve|deny`: each must exist, leaves alike
                return (*path, names[0]), []
            node, path = node.commands[word], (*path, word)
            rest = rest[1:]
            continue
        break
    if path and path not in COMMANDS:
        word = rest[0] if rest else ""
        placeholder = not re.fullmatch(r"[a-z][a-z0-9_-]*", word.strip("[]()"))
        assert placeholder or word.startswith("-"), f"{command!r}: no command `{word}`"
    if not path and rest and not rest[0].startswith("-"):
        word = rest[0]
        assert not re.fullmatch(r"[a-z][a-z0-9_-]*", word), f"{command!r}: no command `{word}`"
    return path, rest


def given_options(rest: list[str]) -> set[str]:
    found = set()
    for word in rest:
        for part in word.replace("\\|", "|").split("|"):
            part = part.strip("[](),.…").split("=")[0]
            if re.fullmatch(r"--?[A-Za-z][A-Za-z0-9-]*", part):
                found.add(part)
    return found


def slug(heading: str) -> str:
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in without_fences(path.read_text()).splitlines():
        match = re.match(r"#{1,6} (.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    prose = re.sub(r"`[^`\n]*`", "", without_fences(path.read_text()))
    return re.findall(r"\]\(([^)\s]+)\)", prose)


# --- the tests -------------------------------------------------------------------------


def test_every_command_has_exactly_one_row_in_the_command_reference() -> None:
    rows: dict[tuple[str, ...], int] = {}
    for cell in table_first_cells(CLI_PAGE):
        spans = re.findall(r"`([^`]+)`", cell)
        if not spans or not spans[0].startswith("kioku "):
            continue
        path, _ = resolve(spans[0])
        assert path in COMMANDS, f"{CLI_PAGE.name}: `{spans[0]}` is not a command"
        rows[path] = rows.get(path, 0) + 1
    missing = sorted(" ".join(p) for p in COMMANDS if p not in rows)
    twice = sorted(" ".join(p) for p, n in rows.items() if n > 1)
    assert not missing, f"commands without a row in docs/cli.md: {missing}"
    assert not twice, f"commands with more than one row in docs/cli.md: {twice}"


def test_every_setting_has_exactly_one_row_in_the_configuration_reference() -> None:
    expected = settings()
    documented: dict[str, int] = {}
    for cell in table_first_cells(CONFIG_PAGE):
        for name in re.findall(r"`([^`]+)`", cell):
            documented[name] = documented.get(name, 0) + 1
    needed = set(expected.values())
    missing = sorted(needed - set(documented))
    twice = sorted(n for n in needed if documented.get(n, 0) > 1)
    unknown = sorted(set(documented) - needed - {"setting"})
    assert not missing, f"settings missing from docs/configuration.md: {missing}"
    assert not twice, f"settings with more than one row: {twice}"
    assert not unknown, f"rows naming no setting: {unknown}"


def test_only_the_configuration_reference_has_rows_of_settings() -> None:
    names = set(settings().values())
    for page in PAGES:
        if page == CONFIG_PAGE:
            continue
        for cell in table_first_cells(page):
            first = re.match(r"`([^`]+)`", cell)
            assert not (first and first.group(1) in names), f"{page.name}: a settings row {cell}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_kioku_command_shown_exists_with_its_options(page: Path) -> None:
    problems = []
    for shown in shown_commands(page):
        try:
            path, rest = resolve(shown)
        except AssertionError as error:
            problems.append(str(error))
            continue
        command = COMMANDS.get(path) if path else ROOT_COMMAND
        if command is None:
            continue
        unknown = given_options(rest) - options(command)
        if unknown:
            problems.append(f"{shown!r}: kioku {' '.join(path)} has no {sorted(unknown)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_lands_on_a_file_and_a_heading(page: Path) -> None:
    problems = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        destination = (page.parent / file).resolve() if file else page
        if not destination.exists():
            problems.append(f"{target}: no file {destination}")
        elif anchor and anchor not in anchors(destination):
            problems.append(f"{target}: no heading #{anchor} in {destination.name}")
    assert not problems, "\n".join(problems)


def test_the_readme_links_every_docs_page() -> None:
    linked = {Path(t.partition("#")[0]).name for t in links(ROOT / "README.md")}
    unlinked = [p.name for p in DOCS.glob("*.md") if p.name not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_the_readme_opens_with_the_two_commands() -> None:
    quick = ROOT.joinpath("README.md").read_text().split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", quick, flags=re.S)
    assert block is not None
    assert [line.split()[:2] for line in block.group(1).splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_the_settings_walk_sees_the_families() -> None:
    found = settings()
    assert found["telegram.dm_policy"] == "<platform>.dm_policy"
    assert found["providers.supermemory.enabled"] == "providers.<name>.enabled"
    assert found["providers.local_vectors.cache_mb"] == "providers.local_vectors.cache_mb"
    assert found["mcp.servers.<name>.command"] == "mcp.servers.<name>.command"
