"""The note of the last validation: trusted only while nothing the settings come from changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config.load import load_settings
from config.paths import ensure_home
from config.validated import RECORD, Essentials, recall


@pytest.fixture
def noted(home: Path) -> Path:
    ensure_home(home)
    (home / "config.toml").write_text('[llm]\napi_key = "sk-ant-kept-out"\n')
    load_settings()
    return home


def test_a_validation_is_noted_without_secrets_and_recalled(noted: Path) -> None:
    record = (noted / RECORD).read_text()
    assert "sk-ant-kept-out" not in record
    assert recall() == Essentials(noted.resolve(), 2200, 1375, 20 * 1024 * 1024)


def test_no_note_is_written_into_a_home_that_does_not_exist(home: Path) -> None:
    load_settings()
    assert not home.exists() and recall() is None


@pytest.mark.parametrize("change", ["config.toml", ".env", "environment", "case of a name"])
def test_any_change_to_a_source_means_validating_again(
    noted: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if change == "config.toml":
        (noted / "config.toml").write_text("[memory.notes]\nmemory_limit = 300\n")
    elif change == ".env":
        (noted / ".env").write_text("KIOKU_LLM__MODEL=other\n")
    elif change == "environment":
        monkeypatch.setenv("KIOKU_LLM__MODEL", "other")
    else:
        monkeypatch.setenv("kioku_llm__model", "other")
    assert recall() is None
    load_settings()
    assert recall() is not None


def test_a_damaged_note_is_not_trusted(noted: Path) -> None:
    record = json.loads((noted / RECORD).read_text())
    for damaged in ("not json", json.dumps([1]), json.dumps({**record, "user_limit": "lots"})):
        (noted / RECORD).write_text(damaged)
        assert recall() is None


def test_a_config_broken_after_a_good_run_is_reported_by_the_quick_commands(
    kioku, home: Path
) -> None:
    assert kioku("memory", "show", "--json").returncode == 0
    assert kioku("memory", "show", "--json").returncode == 0  # from the note
    (home / "config.toml").write_text("[memory.notes]\nmemory_limit = 3\n")
    for command in (["memory", "show", "--json"], ["search", "anything", "--json"]):
        done = kioku(*command)
        assert done.returncode == 1
        assert "[memory.notes] memory_limit" in done.stderr and "Traceback" not in done.stderr


def test_a_limit_changed_in_the_config_is_shown_at_once(kioku, home: Path) -> None:
    assert json.loads(kioku("memory", "show", "--json").stdout)["memory"]["limit"] == 2200
    (home / "config.toml").write_text("[memory.notes]\nmemory_limit = 300\n")
    assert json.loads(kioku("memory", "show", "--json").stdout)["memory"]["limit"] == 300
    assert json.loads(kioku("memory", "show", "--json").stdout)["memory"]["limit"] == 300
