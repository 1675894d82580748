"""The system install's recipe, and the checks for what a service would silently lack."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.service.recipe import (
    SYSTEMD_RUNNING,
    Step,
    blocked_for_others,
    run_steps,
    shell_only_secrets,
    system_recipe,
)
from gateway.service.units import UnitSpec
from tests.helpers.paths import KIOKU

UNIT = "[Service]\nExecStart=/x\n"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder under /tmp that any user may enter (pytest's tmp_path is private: 0700)."""
    path = Path(tempfile.mkdtemp(dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def argvs(steps: list[Step]) -> list[tuple[str, ...]]:
    return [step.argv for step in steps]


def test_recipe_makes_the_home_private_to_kioku_writes_the_unit_and_starts_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "service"
    steps = system_recipe(UnitSpec(KIOKU, str(home), 20.0, True), UNIT, tmp_path / "mine")
    assert ("install", "-d", "-m", "0700", "-o", "kioku", "-g", "kioku", str(home)) in argvs(steps)
    unit = next(step for step in steps if step.stdin is not None)
    assert unit.argv == ("install", "-m", "0644", "/dev/stdin", "/etc/systemd/system/kioku.service")
    assert unit.stdin == UNIT
    assert argvs(steps)[-2:] == [
        ("systemctl", "daemon-reload"),
        ("systemctl", "enable", "--now", "kioku"),
    ]


def test_recipe_copies_config_and_secrets_only_into_a_home_that_lacks_them(
    tmp_path: Path,
) -> None:
    mine, service = tmp_path / "mine", tmp_path / "service"
    mine.mkdir()
    service.mkdir()
    (mine / "config.toml").write_text("")
    (mine / ".env").write_text("")
    (service / ".env").write_text("")
    steps = system_recipe(UnitSpec(KIOKU, str(service), 20.0, True), UNIT, mine)
    copies = [argv for argv in argvs(steps) if argv[:3] == ("install", "-m", "0600")]
    owned = ("-o", "kioku", "-g", "kioku")
    config = (str(mine / "config.toml"), str(service / "config.toml"))
    assert copies == [("install", "-m", "0600", *owned, *config)]


def test_a_printed_step_with_input_is_a_here_document() -> None:
    step = Step(("install", "-m", "0644", "/dev/stdin", "/etc/x b"), stdin=UNIT)
    assert step.shell(sudo=True) == (
        f"sudo install -m 0644 /dev/stdin '/etc/x b' <<'EOF'\n{UNIT}EOF"
    )


def test_run_steps_runs_each_command_with_its_input(tmp_path: Path) -> None:
    target = tmp_path / "unit"
    steps = [
        Step(("install", "-m", "0644", "/dev/stdin", str(target)), stdin=UNIT),
        Step(("true",), needs_systemd=True),
    ]
    echoed: list[str] = []
    skipped = run_steps(steps, echoed.append)
    assert target.read_text() == UNIT
    assert target.stat().st_mode & 0o777 == 0o644
    assert skipped == ([] if SYSTEMD_RUNNING.is_dir() else steps[1:])
    assert echoed[0] == f"+ install -m 0644 /dev/stdin {target}"


def test_a_private_folder_on_the_way_blocks_other_users(open_dir: Path) -> None:
    private = open_dir / "home"
    (private / "notes").mkdir(parents=True)
    private.chmod(0o750)
    assert blocked_for_others(private / "notes") == (private, 0o750)
    private.chmod(0o755)
    assert blocked_for_others(private / "notes") is None


def test_a_file_others_cannot_read_is_blocked(open_dir: Path) -> None:
    code = open_dir / "kioku.py"
    code.write_text("")
    code.chmod(0o600)
    assert blocked_for_others(code) == (code, 0o600)


def test_shell_secrets_missing_from_every_env_file_are_named(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("KIOKU_TELEGRAM__TOKEN=1\n")
    shell = {
        "KIOKU_HOME": "/x",
        "KIOKU_LOG__LEVEL": "debug",
        "KIOKU_TELEGRAM__TOKEN": "1",
        "KIOKU_SLACK__BOT_TOKEN": "2",
        "OPENAI_API_KEY": "3",
        "PATH": "/bin",
    }
    assert shell_only_secrets(shell, [env, tmp_path / "missing.env"]) == [
        "KIOKU_SLACK__BOT_TOKEN",
        "OPENAI_API_KEY",
    ]


def test_a_providers_key_is_covered_by_the_model_key_in_env(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("KIOKU_LLM__API_KEY=sk\n")
    assert shell_only_secrets({"ANTHROPIC_API_KEY": "sk"}, [env]) == []
