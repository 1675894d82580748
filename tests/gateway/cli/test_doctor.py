"""`kioku doctor` prints each finding, a problem with its fix, and exits 1 on problems."""

from __future__ import annotations

from pathlib import Path

from config.paths import ensure_home


def test_doctor_prints_each_problem_with_its_fix_and_exits_1(kioku, home: Path) -> None:
    ensure_home(home)
    home.chmod(0o750)
    result = kioku("doctor")
    assert result.returncode == 1
    assert f"PROBLEM permissions: {home} is mode 0750" in result.stdout
    assert f"fix: chmod 700 {home}" in result.stdout


def test_doctor_exits_0_when_nothing_is_wrong(kioku, home: Path) -> None:
    ensure_home(home)
    result = kioku("doctor")
    assert result.returncode == 0, result.stdout
    assert "No problems found." in result.stdout
