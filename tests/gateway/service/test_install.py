"""Starting the installed service, as the setup wizard does after `Start it now?`: a
`systemctl` on PATH records what it was asked (or refuses, as a real one does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gateway.service.install import start_service


def systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refuse: str = "") -> Path:
    """A `systemctl` first on PATH writing its arguments to a log; with `refuse`, the
    command holding that word fails saying so on stderr."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "systemctl.log"
    program = bin_dir / "systemctl"
    program.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        f'case "$*" in *"{refuse or "never-refused"}"*) '
        'echo "Failed to enable unit: Unit file kioku.service does not exist." >&2; exit 1;; '
        "esac\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def test_starting_reloads_then_enables_and_starts_kioku_on_the_users_manager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = systemctl(tmp_path, monkeypatch)
    assert start_service(system=False) is None
    assert log.read_text().splitlines() == ["--user daemon-reload", "--user enable --now kioku"]


def test_a_system_service_is_started_on_the_systems_manager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = systemctl(tmp_path, monkeypatch)
    assert start_service(system=True) is None
    assert log.read_text().splitlines() == ["daemon-reload", "enable --now kioku"]


def test_a_refused_command_is_named_with_what_systemctl_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    systemctl(tmp_path, monkeypatch, refuse="enable")
    failed = start_service(system=False)
    assert failed == (
        "systemctl --user enable --now kioku: "
        "Failed to enable unit: Unit file kioku.service does not exist."
    )
