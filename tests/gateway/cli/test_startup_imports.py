"""`kioku` starts at once: a command imports what it uses and nothing else.

Each case runs a fresh interpreter, the way the console script starts, and lists the
heavy packages it loaded. How long that takes is `tests/bench/bench_cli_startup.py`;
this only guards which imports happen, so it cannot flake on a busy machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from config.paths import ensure_home
from tests.helpers.history_files import LINES, write_jsonl

HEAVY = (
    "anthropic",
    "openai",
    "mcp",
    "discord",
    "telegram",
    "slack_bolt",
    "slack_sdk",
    "jsonschema",
    "aiohttp",
)
"""Packages no command in these cases uses: SDKs, servers, and the schema validator."""

LOADED = """
import json, sys
from typer.testing import CliRunner
from gateway.cli.app import app
result = CliRunner().invoke(app, {args!r})
heavy = {heavy!r}
print(json.dumps({{"exit": result.exit_code, "output": result.output,
    "loaded": sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy)),
    "modules": sorted(sys.modules)}}))
"""


def run(args: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """What a fresh interpreter loaded while running `kioku ARGS`."""
    code = LOADED.format(args=args, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_importing_the_cli_and_its_help_loads_no_sdk_and_no_settings() -> None:
    seen = run(["--help"])
    assert seen["exit"] == 0 and "memory" in str(seen["output"])
    assert seen["loaded"] == []
    modules = set(seen["modules"])  # type: ignore[arg-type]
    assert not modules & {"pydantic", "rich", "structlog", "asyncio", "aiosqlite"}


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "show", "--json"],
        ["search", "anything", "--json"],
        ["status", "--json"],
        ["chat", "-m", "hi"],
        ["config", "check"],
        ["people", "list", "--json"],
        ["skills", "list", "--json"],
        ["setup", "--help"],
    ],
)
def test_a_command_loads_no_sdk(args: list[str]) -> None:
    seen = run(args)
    assert seen["loaded"] == [], seen["output"]


EVERY_HELP = """
import json, sys
import typer
from typer.testing import CliRunner
from gateway.cli.app import app

def paths(command, path):
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from paths(sub, [*path, name])

failed = [p for p in paths(typer.main.get_command(app), [])
          if CliRunner().invoke(app, [*p, "--help"]).exit_code != 0]
print(json.dumps({"failed": failed, "help_pages": len(list(paths(typer.main.get_command(app), []))),
    "modules": sorted(sys.modules)}))
"""


def test_no_help_page_reads_the_settings() -> None:
    """`kioku --help`, every group's and every command's: none pays pydantic-settings'
    import (a tenth of a second), which only the commands that read settings need."""
    done = subprocess.run(
        [sys.executable, "-c", EVERY_HELP], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["failed"] == [] and seen["help_pages"] > 20
    assert "pydantic_settings" not in seen["modules"]


@pytest.mark.parametrize("args", [["status", "--json"], ["chat", "-m", "hi"]])
def test_a_command_that_reads_no_settings_does_not_import_their_sources(args: list[str]) -> None:
    assert "pydantic_settings" not in set(run(args)["modules"])  # type: ignore[arg-type]


def test_a_message_from_a_script_needs_neither_pydantic_nor_rich() -> None:
    modules = set(run(["chat", "-m", "hi"])["modules"])  # type: ignore[arg-type]
    assert not modules & {"pydantic", "rich", "structlog"}


@pytest.mark.parametrize("args", [["memory", "show", "--json"], ["search", "x", "--json"]])
def test_with_the_configuration_unchanged_a_quick_command_needs_no_pydantic(
    args: list[str], home: Path
) -> None:
    ensure_home(home)
    assert run(["config", "check"])["exit"] == 0  # validates, and notes it
    seen = run(args)
    assert "pydantic" not in set(seen["modules"])  # type: ignore[arg-type]


def test_attaching_a_file_needs_neither_pydantic_nor_rich(tmp_path: Path) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8\xff")
    seen = run(["chat", "-m", "hi", "--attach", str(photo)])
    assert seen["exit"] == 1  # no daemon: the file was checked, then nothing answered
    assert not set(seen["modules"]) & {"pydantic", "rich", "structlog"}  # type: ignore[arg-type]
    assert seen["loaded"] == []


def test_importing_a_jsonl_file_needs_no_settings_library_and_no_hermes_importer(
    home: Path, tmp_path: Path
) -> None:
    """A jsonl file needs the data folder only: pydantic, and the Hermes importer with the
    skills and logging it brings (structlog, rich), cost more than the rest of the import."""
    ensure_home(home)
    assert run(["config", "check"])["exit"] == 0
    history = write_jsonl(tmp_path / "history.jsonl", LINES)
    seen = run(["import", str(history)])
    assert seen["exit"] == 0, seen["output"]
    modules = set(seen["modules"])  # type: ignore[arg-type]
    assert not modules & {"pydantic", "structlog", "rich", "memory.importers.hermes_home"}
