"""The console script's command tree, built command by command, is typer's own tree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from gateway.cli.app import app
from gateway.cli.lazy import LazyCommands, lazy_command


def paths(command: object, path: list[str]) -> Iterator[list[str]]:
    """Every command and group under `command`, as the words that reach it."""
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from paths(sub, [*path, name])


def help_pages() -> dict[str, str]:
    """Each help page of the tree `CliRunner` builds, by its command line."""
    pages = {}
    for path in paths(typer.main.get_command(app), []):
        result = CliRunner().invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        pages[" ".join(path)] = result.output
    return pages


def test_every_help_page_is_the_one_typer_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    eager = help_pages()
    monkeypatch.setattr("typer.testing._get_command", lazy_command)
    assert help_pages() == eager
    assert len(eager) > 50


def test_a_command_line_builds_only_the_commands_it_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = lazy_command(app)
    monkeypatch.setattr("typer.testing._get_command", lambda _: root)
    result = CliRunner().invoke(app, ["schedule", "list", "--help"])
    assert result.exit_code == 0 and "--json" in result.output
    assert isinstance(root.commands, LazyCommands)
    assert root.commands.built() == ["schedule"]
    schedule = root.commands["schedule"]
    assert isinstance(schedule.commands, LazyCommands)  # type: ignore[attr-defined]
    assert schedule.commands.built() == ["list"]  # type: ignore[attr-defined]


def test_a_mistyped_command_is_still_a_usage_error_with_a_suggestion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("typer.testing._get_command", lazy_command)
    result = CliRunner().invoke(app, ["memroy"])
    assert result.exit_code == 2
    assert "Did you mean 'memory'?" in result.output
