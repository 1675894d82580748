"""What configured MCP servers need from a systemd unit: their programs' folders, their data.

A stdio MCP server is a child of the daemon, so it runs inside the daemon's unit: its PATH,
its sandbox, its seccomp filters. The unit is written once, by `kioku service install`,
so what the servers need is read from the configuration and the installing shell then.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from config.settings import McpSettings

DEFAULT_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
"""systemd's own PATH for services, kept after the MCP programs' folders."""


@dataclass(frozen=True)
class McpNeeds:
    """The enabled stdio servers' program folders, data folders, and commands not found."""

    stdio: bool = False
    command_dirs: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()


def mcp_needs(mcp: McpSettings, search_path: str | None = None) -> McpNeeds:
    """Resolve each enabled stdio server's command on `search_path` (default: this shell's
    PATH) and collect its absolute-path arguments that are existing folders.

    The command's folder is kept as found, symlinks unresolved: nvm's and Homebrew's `npx`
    is a link beside `node`, which its `#!/usr/bin/env node` line must find on PATH.
    """
    dirs: list[str] = []
    folders: list[str] = []
    unresolved: list[str] = []
    stdio = False
    for server in mcp.servers.values():
        if not server.enabled or server.command is None:
            continue
        stdio = True
        found = shutil.which(server.command, path=search_path)
        if found is None:
            unresolved.append(server.command)
        else:
            _add(dirs, str(Path(found).absolute().parent))
        for arg in server.args:
            if arg.startswith("/") and Path(arg).is_dir():
                _add(folders, str(Path(arg)))
    return McpNeeds(stdio, tuple(dirs), tuple(folders), tuple(unresolved))


def unit_path_value(command_dirs: tuple[str, ...]) -> str | None:
    """The unit's PATH: the programs' folders first, then systemd's default; None when the
    default already holds every folder (the unit then leaves PATH alone)."""
    extra = [folder for folder in command_dirs if folder not in DEFAULT_PATH]
    return ":".join([*extra, *DEFAULT_PATH]) if extra else None


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)
