"""What configured MCP servers need from the unit: program folders on PATH, data folders."""

from __future__ import annotations

from pathlib import Path

from config.settings import McpServerSettings, McpSettings
from gateway.service.mcp_needs import DEFAULT_PATH, McpNeeds, mcp_needs, unit_path_value


def program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def servers(**named: McpServerSettings) -> McpSettings:
    return McpSettings(servers=named)


def test_a_command_is_resolved_on_the_path_its_folder_kept_unresolved(tmp_path: Path) -> None:
    real = program(tmp_path / "lib", "npx-cli.js")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npx").symlink_to(real)
    needs = mcp_needs(servers(files=McpServerSettings(command="npx")), str(bin_dir))
    assert needs == McpNeeds(stdio=True, command_dirs=(str(bin_dir),))


def test_absolute_path_arguments_that_are_folders_are_the_servers_folders(tmp_path: Path) -> None:
    program(tmp_path / "bin", "srv")
    notes = tmp_path / "notes"
    notes.mkdir()
    args = ["-y", str(notes), str(tmp_path / "missing"), str(tmp_path / "bin" / "srv"), "rel"]
    needs = mcp_needs(servers(a=McpServerSettings(command="srv", args=args)), str(tmp_path / "bin"))
    assert needs.folders == (str(notes),)


def test_a_command_not_found_is_listed_unresolved() -> None:
    needs = mcp_needs(servers(x=McpServerSettings(command="no-such-program")), "/nonexistent")
    assert needs == McpNeeds(stdio=True, unresolved=("no-such-program",))


def test_http_and_disabled_servers_need_nothing() -> None:
    needs = mcp_needs(
        servers(
            web=McpServerSettings(url="http://127.0.0.1:1/mcp"),
            off=McpServerSettings(command="sh", enabled=False),
        )
    )
    assert needs == McpNeeds()


def test_unit_path_is_left_alone_when_the_default_has_every_folder() -> None:
    assert unit_path_value(("/usr/bin",)) is None
    assert unit_path_value(("/opt/node/bin", "/usr/bin")) == ":".join(
        ("/opt/node/bin", *DEFAULT_PATH)
    )
