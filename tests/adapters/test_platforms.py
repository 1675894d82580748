"""The platform registry: one entry per platform, its settings section, when it runs, and
the adapter it builds."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.base import Inbound, MenuCommand
from adapters.cli.adapter import CliSocketAdapter
from adapters.discord.adapter import DiscordAdapter
from adapters.matrix.adapter import MatrixAdapter
from adapters.platforms import (
    PLATFORM_NAMES,
    PLATFORMS,
    Wiring,
    configured_adapters,
    platform_states,
)
from adapters.slack.adapter import SlackAdapter
from adapters.telegram.adapter import TelegramAdapter
from config.load import load_settings
from config.platform_settings import PlatformSettings
from config.settings import Settings

MENU = [MenuCommand("help", "this list")]


async def deliver(inbound: Inbound) -> None:
    return None


async def status() -> dict[str, Any]:
    return {}


WIRING = Wiring(deliver, status, MENU)


def test_the_platforms_in_the_order_identities_name_them() -> None:
    assert PLATFORM_NAMES == ("cli", "telegram", "discord", "slack", "matrix")


def test_every_platform_section_of_the_settings_has_an_entry() -> None:
    sections = {
        name
        for name, field in Settings.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, PlatformSettings)
    }
    assert sections == set(PLATFORM_NAMES)


def test_each_credential_is_a_field_of_its_platforms_section() -> None:
    settings = load_settings()
    for platform in PLATFORMS:
        section = platform.section(settings)
        assert isinstance(section, PlatformSettings)
        assert platform.credential is None or platform.credential in type(section).model_fields


def test_without_credentials_only_the_cli_socket_runs() -> None:
    adapters = configured_adapters(load_settings(), WIRING)
    assert [type(adapter) for adapter in adapters] == [CliSocketAdapter]


@pytest.mark.parametrize(
    ("name", "variable", "kind"),
    [
        ("telegram", "KIOKU_TELEGRAM__TOKEN", TelegramAdapter),
        ("discord", "KIOKU_DISCORD__TOKEN", DiscordAdapter),
        ("slack", "KIOKU_SLACK__BOT_TOKEN", SlackAdapter),
    ],
)
def test_a_platform_runs_once_its_credential_is_set(
    monkeypatch: pytest.MonkeyPatch, name: str, variable: str, kind: type
) -> None:
    monkeypatch.setenv(variable, "test-token")
    adapters = configured_adapters(load_settings(), WIRING)
    assert [adapter.name for adapter in adapters] == ["cli", name]
    assert isinstance(adapters[1], kind)


def test_matrix_runs_once_its_user_id_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_MATRIX__USER_ID", "@kioku:example.org")
    adapters = configured_adapters(load_settings(), WIRING)
    assert [adapter.name for adapter in adapters] == ["cli", "matrix"]
    assert isinstance(adapters[1], MatrixAdapter)


def test_slack_needs_its_bot_token_not_only_the_app_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KIOKU_SLACK__APP_TOKEN", "xapp-test")
    [slack] = [p for p in PLATFORMS if p.name == "slack"]
    assert not slack.configured(load_settings())
    assert slack.adapter(load_settings(), WIRING) is None


def test_telegram_gets_the_command_menu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_TELEGRAM__TOKEN", "test-token")
    [telegram] = [p for p in PLATFORMS if p.name == "telegram"]
    adapter = telegram.adapter(load_settings(), WIRING)
    assert isinstance(adapter, TelegramAdapter)
    assert [(c.command, c.description) for c in adapter.commands] == [("help", "this list")]


def test_states_list_every_platform_and_mark_the_ones_not_running() -> None:
    running = {
        "cli": {"state": "running", "since": "2026-01-01T00:00:00+00:00", "last_error": None}
    }
    states = platform_states(running)
    assert list(states) == list(PLATFORM_NAMES)
    assert states["cli"] == running["cli"]
    assert {states[name]["state"] for name in ("telegram", "discord", "slack")} == {
        "not configured"
    }
