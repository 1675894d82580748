"""Which home a command uses, and the line that says so beside a system service's home."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import config.paths
from config.paths import home_notice
from gateway.cli.app import app


@pytest.fixture
def beside_a_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No KIOKU_HOME, a fresh account with no ~/.kioku, and a system install's home."""
    monkeypatch.delenv("KIOKU_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "ann"))
    service = tmp_path / "var-lib-kioku"
    service.mkdir()
    monkeypatch.setattr(config.paths, "SYSTEM_HOME", service)
    return service


def test_a_command_beside_a_system_home_names_its_home_and_the_way_to_the_services(
    beside_a_service: Path, tmp_path: Path
) -> None:
    assert home_notice() == (
        f"kioku: using {tmp_path / 'ann' / '.kioku'}, not the service's {beside_a_service};"
        f" to reach the service's: sudo -u kioku KIOKU_HOME={beside_a_service} kioku …"
    )


def test_no_notice_with_kioku_home_set(
    beside_a_service: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_HOME", str(beside_a_service))
    assert home_notice() is None


def test_no_notice_for_an_account_with_its_own_home(beside_a_service: Path, tmp_path: Path) -> None:
    (tmp_path / "ann" / ".kioku").mkdir(parents=True)
    assert home_notice() is None


def test_no_notice_without_a_system_install(beside_a_service: Path, tmp_path: Path) -> None:
    assert home_notice(tmp_path / "absent") is None


def test_every_command_prints_the_notice_on_stderr(beside_a_service: Path) -> None:
    result = CliRunner().invoke(app, ["service", "install", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("kioku: using ")
    assert "sudo -u kioku KIOKU_HOME=" in result.stderr
    assert "kioku: using" not in result.stdout
