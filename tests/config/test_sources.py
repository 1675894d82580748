"""Where the settings come from: names in any case, JSON for lists and tables, the order."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.load import ConfigError, load_settings
from config.settings import Settings


def write(home: Path, name: str, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / name).write_text(text)


def test_a_list_or_table_takes_json_and_nested_names_merge_into_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_DISCORD__ALLOW", '["discord:7"]')
    monkeypatch.setenv("KIOKU_MCP__SERVERS", '{"notes": {"command": "notes-server"}}')
    monkeypatch.setenv("KIOKU_MCP__SERVERS__NOTES__ARGS", '["--quiet"]')
    monkeypatch.setenv("KIOKU_MCP__SERVERS__NOTES__ENV__TOKEN", "t0k3n")
    settings = load_settings()
    assert settings.discord.allow == ["discord:7"]
    server = settings.mcp.servers["notes"]
    assert (server.command, server.args, server.env) == (
        "notes-server",
        ["--quiet"],
        {"token": "t0k3n"},
    )


def test_names_are_read_in_any_case_and_an_empty_value_is_unset(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home, "config.toml", '[LLM]\nmodel = "from-toml"\n')
    monkeypatch.setenv("kioku_llm__base_url", "http://lower")
    monkeypatch.setenv("KIOKU_LLM__MODEL", "")
    settings = load_settings()
    assert (settings.llm.model, settings.llm.base_url) == ("from-toml", "http://lower")


def test_keyword_arguments_come_first_and_keep_the_other_sources(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home, ".env", "KIOKU_LLM__MODEL=from-dotenv\nKIOKU_LLM__BASE_URL=http://dotenv\n")
    monkeypatch.setenv("KIOKU_LLM__MODEL", "from-env")
    settings = Settings(llm={"model": "given"})
    assert (settings.llm.model, settings.llm.base_url) == ("given", "http://dotenv")


def test_unknown_names_are_ignored_in_the_environment_but_reported_from_dotenv(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_SOMETHING_ELSE", "1")
    load_settings()
    monkeypatch.delenv("KIOKU_SOMETHING_ELSE")
    write(home, ".env", "KIOKU_SOMETHING_ELSE=1\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert f"{home / '.env'}: KIOKU_SOMETHING_ELSE: unknown setting" in str(caught.value)


@pytest.mark.parametrize("where", ["environment", "dotenv"])
def test_a_list_that_is_not_json_names_the_variable_and_shows_the_form(
    where: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "environment":
        monkeypatch.setenv("KIOKU_OWNER__IDENTITIES", "telegram:1")
        source = "environment"
    else:
        write(home, ".env", "KIOKU_OWNER__IDENTITIES=telegram:1\n")
        source = str(home / ".env")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    report = str(caught.value)
    assert f"{source}: KIOKU_OWNER__IDENTITIES: not valid JSON" in report
    assert '["telegram:123"]' in report


def test_json_nested_past_the_limit_is_refused_with_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_OWNER__IDENTITIES", "[" * 100 + "]" * 100)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "environment: KIOKU_OWNER__IDENTITIES: the value nests deeper" in str(caught.value)


def test_a_third_party_providers_table_takes_json_lists_like_a_section(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_PROVIDERS__SCRIPTED__ENABLED", "true")
    monkeypatch.setenv("KIOKU_PROVIDERS__SCRIPTED__GROUPS", '["telegram:-100"]')
    scripted = load_settings().providers.configured()["scripted"]
    assert (scripted.enabled, scripted.groups) == (True, ["telegram:-100"])
    monkeypatch.setenv("KIOKU_PROVIDERS__SCRIPTED", "not a table")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "environment: KIOKU_PROVIDERS__SCRIPTED: not valid JSON" in str(caught.value)
