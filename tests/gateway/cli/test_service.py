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


def test_dry_run_system_prints_the_recipe_with_the_unit_for_the_explicit_home(
    kioku, home: Path
) -> None:
    result = kioku("service", "install", "--system", "--dry-run")
    assert result.returncode == 0, result.stderr
    sudo = "" if os.geteuid() == 0 else "sudo "
    lines = result.stdout.splitlines()
    assert lines[0] == "# As root, `kioku service install --system` runs these commands:"
    assert f"{sudo}install -d -m 0700 -o kioku -g kioku {home}" in lines
    unit_start = lines.index(
        f"{sudo}install -m 0644 /dev/stdin /etc/systemd/system/kioku.service <<'EOF'"
    )
    unit = "\n".join(lines[unit_start + 1 : lines.index("EOF")])
    assert keys(unit)["ReadWritePaths"] == str(home)
    assert keys(unit)["User"] == "kioku"
    assert f"{sudo}systemctl enable --now kioku" in lines
    assert f"  sudo -u kioku KIOKU_HOME={home} {KIOKU} doctor   # checks the service's setup" in (
        lines
    )
    assert not home.exists()


def test_install_names_settings_only_this_shell_holds_never_their_values(kioku) -> None:
    env = {"KIOKU_LLM__API_KEY": "sk-secret-123", "ANTHROPIC_API_KEY": "sk-ant-456"}
    result = kioku("service", "install", "--dry-run", env=env)
    assert result.returncode == 0, result.stderr
    warning = "this shell sets ANTHROPIC_API_KEY, KIOKU_LLM__API_KEY, which the service will not"
    assert warning in result.stderr
    assert "/.env (mode 0600" in result.stderr
    assert "sk-secret-123" not in result.stderr + result.stdout
    assert "sk-ant-456" not in result.stderr + result.stdout


def test_settings_already_in_the_homes_env_file_are_not_named(kioku, home: Path) -> None:
    home.mkdir()
    (home / ".env").write_text("KIOKU_LLM__API_KEY=sk-secret-123\n")
    env = {"KIOKU_LLM__API_KEY": "sk-secret-123", "ANTHROPIC_API_KEY": "sk-ant-456"}
    result = kioku("service", "install", "--dry-run", env=env)
    assert result.returncode == 0, result.stderr
    assert "this shell sets" not in result.stderr


def test_an_mcp_command_missing_from_path_is_named(kioku, home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text('[mcp.servers.x]\ncommand = "no-such-mcp-program"\n')
    result = kioku("service", "install", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "MCP command `no-such-mcp-program` is not on this shell's PATH" in result.stderr
    assert "MemoryDenyWriteExecute" not in keys(result.stdout)


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
