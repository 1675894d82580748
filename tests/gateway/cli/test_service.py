"""`kioku service install`: the unit for this install, printed or written, and what to run next."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.paths import KIOKU
from tests.helpers.unit_files import keys


def test_dry_run_prints_the_user_unit_for_this_install_and_writes_nothing(
    kioku, tmp_path: Path
) -> None:
    config = tmp_path / "xdg"
    result = kioku("service", "install", "--dry-run", env={"XDG_CONFIG_HOME": str(config)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# {config / 'systemd/user/kioku.service'}\n")
    unit = keys(result.stdout)
    assert unit["ExecStart"] == f"{KIOKU} serve"
    assert unit["Environment"] == f"KIOKU_HOME={os.environ['KIOKU_HOME']}"
    assert not config.exists()


def test_dry_run_system_unit_uses_the_explicit_kioku_home(kioku, home: Path) -> None:
    result = kioku("service", "install", "--system", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# /etc/systemd/system/kioku.service\n")
    unit = keys(result.stdout)
    assert unit["ReadWritePaths"] == str(home)
    assert unit["User"] == "kioku"


def test_user_install_writes_the_unit_and_prints_next_steps(kioku, tmp_path: Path) -> None:
    config = tmp_path / "xdg"
    result = kioku(
        "service", "install", "--user", env={"XDG_CONFIG_HOME": str(config), "USER": "ann"}
    )
    assert result.returncode == 0, result.stderr
    path = config / "systemd" / "user" / "kioku.service"
    assert keys(path.read_text())["ExecStart"] == f"{KIOKU} serve"
    assert path.stat().st_mode & 0o777 == 0o644
    assert "systemctl --user daemon-reload && systemctl --user enable --now kioku" in result.stdout
    assert "loginctl enable-linger ann" in result.stdout


def test_user_and_system_together_is_a_usage_error(kioku) -> None:
    result = kioku("service", "install", "--user", "--system", "--dry-run")
    assert result.returncode == 2
    assert "one of --user and --system" in result.stderr
