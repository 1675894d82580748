"""`kioku providers list` and `test`, and `kioku doctor`'s provider lines, with providers
installed through the entry point as a package installs them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.provider_plugins import install_plugins, pythonpath

Kioku = Callable[..., subprocess.CompletedProcess[str]]
SECRET = "sk-plugin-secret-value-1234567890"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": pythonpath(install_plugins(tmp_path / "site")),
        "KIOKU_PROVIDERS__NOTEBOOK__ENABLED": "true",
    }


def test_list_shows_configured_and_installed_providers(kioku: Kioku, env: dict[str, str]) -> None:
    done = kioku("providers", "list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["running"] is False
    providers = listed["providers"]
    assert providers["notebook"] == {
        "state": "enabled",
        "error": None,
        "erases": True,
        "sees": "all persons; no groups",
    }
    assert providers["supermemory"]["state"] == "disabled"
    assert providers["scripted"]["state"] == "not configured"


def test_test_runs_every_step_and_leaves_nothing_behind(
    kioku: Kioku, env: dict[str, str], home: Path
) -> None:
    done = kioku("providers", "test", "notebook", env=env)
    assert done.returncode == 0, done.stderr
    for step in ("start: ok", "health: ok", "record a probe exchange: ok", "recall: found"):
        assert step in done.stdout
    assert done.stdout.rstrip().endswith("notebook: works")
    assert list((home / "providers" / "notebook").glob("*.jsonl")) == []


def test_test_names_the_failing_step_without_the_key(kioku: Kioku, env: dict[str, str]) -> None:
    failing = {
        **env,
        "KIOKU_PROVIDERS__SCRIPTED_FAILING__BEHAVIOUR": "fail",
        "KIOKU_PROVIDERS__SCRIPTED_FAILING__API_KEY": SECRET,
    }
    done = kioku("providers", "test", "scripted_failing", env=failing)
    assert done.returncode == 1
    assert "scripted_failing: record a probe exchange: the service answered 500" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_test_of_an_unknown_provider_is_a_usage_error(kioku: Kioku, env: dict[str, str]) -> None:
    done = kioku("providers", "test", "nosuch", env=env)
    assert done.returncode == 2
    assert "no memory provider 'nosuch'" in done.stderr and "notebook" in done.stderr


def test_config_show_masks_a_plugins_credentials(kioku: Kioku, env: dict[str, str]) -> None:
    done = kioku("config", "show", env={**env, "KIOKU_PROVIDERS__NOTEBOOK__API_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout
    assert 'api_key = "********"' in done.stdout


def test_doctor_reports_each_enabled_provider(kioku: Kioku, env: dict[str, str]) -> None:
    done = kioku("doctor", env=env)
    assert "ok      provider notebook: 0 notebooks in" in done.stdout
    broken = kioku("doctor", env={**env, "KIOKU_PROVIDERS__NOTEBOOK__MAX_LINES": "0"})
    assert broken.returncode == 1
    assert "PROBLEM provider notebook: cannot start: providers.notebook.max_lines" in broken.stdout
    missing = kioku("doctor", env={**env, "KIOKU_PROVIDERS__NOSUCH__ENABLED": "true"})
    assert "PROBLEM provider nosuch: no memory provider named 'nosuch' is installed" in (
        missing.stdout
    )
