"""Settings: sources in the right order, and every mistake reported with where to fix it."""

from __future__ import annotations

import json
import logging
import stat
import tomllib
from pathlib import Path

import pytest

from config.load import ConfigError, load_settings
from config.logs import configure_logging
from config.paths import ensure_home


def write(home: Path, name: str, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / name).write_text(text)


def test_defaults_without_any_file(home: Path) -> None:
    settings = load_settings()
    assert settings.home == home.resolve()
    assert settings.memory.notes.memory_limit == 2200
    assert settings.memory.notes.user_limit == 1375
    assert settings.llm.provider == "anthropic"


def test_environment_beats_dotenv_beats_toml(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        home,
        "config.toml",
        '[llm]\nmodel = "from-toml"\nbase_url = "http://toml"\n[memory.notes]\nuser_limit = 999\n',
    )
    write(home, ".env", "KIOKU_LLM__MODEL=from-dotenv\nKIOKU_LLM__BASE_URL=http://dotenv\n")
    monkeypatch.setenv("KIOKU_LLM__MODEL", "from-env")
    settings = load_settings()
    assert settings.llm.model == "from-env"
    assert settings.llm.base_url == "http://dotenv"
    assert settings.memory.notes.user_limit == 999


def test_dotenv_may_hold_other_programs_variables(home: Path) -> None:
    write(home, ".env", "ANTHROPIC_API_KEY=sk-ant-other\nPATH_EXTRA=/opt\n")
    assert load_settings().llm.api_key is None


def test_unknown_key_in_toml_names_file_section_and_key(home: Path) -> None:
    write(home, "config.toml", "[memory.notes]\nmemory_limt = 3000\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    report = str(caught.value)
    assert str(home / "config.toml") in report
    assert "[memory.notes] memory_limt" in report
    assert "unknown setting" in report


def test_bad_value_in_environment_names_the_variable_and_what_is_expected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_MEMORY__NOTES__USER_LIMIT", "lots")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "environment: KIOKU_MEMORY__NOTES__USER_LIMIT" in str(caught.value)
    assert "valid integer" in str(caught.value)


def test_discord_command_guilds_may_be_toml_numbers(home: Path) -> None:
    write(home, "config.toml", "[discord]\ncommand_guilds = [123456789012345678]\n")
    assert load_settings().discord.command_guilds == ["123456789012345678"]


def test_a_discord_command_guild_that_is_no_id_says_how_to_find_one(home: Path) -> None:
    write(home, "config.toml", '[discord]\ncommand_guilds = ["my server"]\n')
    with pytest.raises(ConfigError) as caught:
        load_settings()
    report = str(caught.value)
    assert "[discord] command_guilds" in report
    assert "'my server' is not a Discord server id" in report and "Copy Server ID" in report


def test_unknown_variable_in_dotenv_names_the_file(home: Path) -> None:
    write(home, ".env", "KIOKU_LLM__PROVIDR=openai\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert f"{home / '.env'}: KIOKU_LLM__PROVIDR" in str(caught.value)


def test_broken_toml_reports_the_line(home: Path) -> None:
    write(home, "config.toml", "[llm]\nmodel = \n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "not valid TOML" in str(caught.value)
    assert "line 2" in str(caught.value)


def test_invalid_secret_value_is_not_echoed(home: Path) -> None:
    write(home, "config.toml", '[llm]\napi_key = ["sk-secret-123"]\n')
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "[llm] api_key" in str(caught.value)
    assert "sk-secret-123" not in str(caught.value)


def test_home_is_created_private(home: Path) -> None:
    ensure_home(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_config_show_masks_secrets_and_is_valid_toml(kioku, home: Path) -> None:
    write(home, "config.toml", '[llm]\napi_key = "sk-ant-very-secret"\n')
    result = kioku("config", "show")
    assert result.returncode == 0, result.stderr
    assert "sk-ant-very-secret" not in result.stdout
    shown = tomllib.loads(result.stdout)
    assert shown["llm"]["api_key"] == "********"
    assert shown["memory"]["notes"]["memory_limit"] == 2200


def test_config_show_json(kioku, home: Path) -> None:
    result = kioku("config", "show", "--json", env={"KIOKU_LLM__API_KEY": "sk-env-secret"})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["llm"]["api_key"] == "********"
    assert data["home"] == str(home.resolve())


def test_config_check_exits_1_with_the_problems_and_no_traceback(kioku, home: Path) -> None:
    write(home, "config.toml", '[log]\nlevel = "loud"\n')
    result = kioku("config", "check")
    assert result.returncode == 1
    assert "[log] level" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_check_ok(kioku) -> None:
    result = kioku("config", "check")
    assert result.returncode == 0
    assert "Configuration OK" in result.stdout


def test_http_request_lines_are_not_logged_because_urls_can_hold_tokens(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure_logging("debug", "json")
        logging.getLogger("httpx").info(
            "HTTP Request: POST https://api.telegram.org/bot1:SECRET/getMe"
        )
        logging.getLogger("kioku.test").info("kept")
    finally:
        root.handlers[:], root.level = handlers, level
    err = capsys.readouterr().err
    assert "SECRET" not in err and "kept" in err


@pytest.mark.parametrize("zone", ["Mars/Olympus", "America"])
def test_a_default_timezone_that_is_no_zone_is_refused_with_an_example(
    home: Path, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    monkeypatch.setenv("KIOKU_SCHEDULE__DEFAULT_TIMEZONE", zone)
    with pytest.raises(ConfigError, match="is not a time zone; give an IANA name such as"):
        load_settings()


def test_tidy_every_that_is_no_duration_says_how_to_write_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_MEMORY__NOTES__TIDY_EVERY", "weekly")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "KIOKU_MEMORY__NOTES__TIDY_EVERY" in str(caught.value)
    assert "write a number and a unit" in str(caught.value)


def test_tidy_at_above_the_whole_cap_is_refused(home: Path) -> None:
    write(home, "config.toml", "[memory.notes]\ntidy_at = 1.5\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "[memory.notes] tidy_at" in str(caught.value)
    assert "less than or equal to 1" in str(caught.value)


def test_tidy_every_0_turns_the_tidy_by_age_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().memory.notes.tidy_every_seconds == 7 * 86_400
    monkeypatch.setenv("KIOKU_MEMORY__NOTES__TIDY_EVERY", "0")
    assert load_settings().memory.notes.tidy_every_seconds is None
