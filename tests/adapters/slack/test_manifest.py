"""The Slack app manifest is generated from the command registry: docs/slack.md shows
exactly that manifest, every command is in it within Slack's schema limits, and the HTTP
variant posts events and commands to kioku's URL."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from adapters.slack.manifest import manifest, manifest_yaml
from gateway.commands.builtin import SLASH_COMMANDS

DOC = Path(__file__).parents[3] / "docs" / "slack.md"
URL = "https://kioku.example.org/slack/events"


def documented() -> str:
    [block] = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.DOTALL)
    return block


def test_the_manifest_in_docs_slack_md_is_the_generated_one() -> None:
    assert documented() == manifest_yaml(SLASH_COMMANDS.menu())


def test_every_listed_command_is_a_slack_command_with_its_summary_and_argument() -> None:
    commands = manifest(SLASH_COMMANDS.menu())["features"]["slash_commands"]
    expected = [
        {"command": f"/{c.name}", "description": c.summary}
        | ({"usage_hint": c.argument} if c.argument else {})
        | {"should_escape": False}
        for c in SLASH_COMMANDS.menu()
    ]
    assert commands == expected
    assert {"/help", "/whoami", "/link", "/new", "/web"} <= {c["command"] for c in commands}


def test_every_command_is_within_slacks_manifest_limits() -> None:
    for command in manifest(SLASH_COMMANDS.menu())["features"]["slash_commands"]:
        assert re.fullmatch(r"/[a-z0-9_]{1,31}", command["command"]), command
        assert 0 < len(command["description"]) <= 2000, command
        assert len(command.get("usage_hint", "")) <= 1000, command


def test_the_manifest_asks_for_the_commands_scope() -> None:
    scopes = manifest(SLASH_COMMANDS.menu())["oauth_config"]["scopes"]["bot"]
    assert {"commands", "im:write", "chat:write", "im:history", "app_mentions:read"} <= set(scopes)


def test_the_http_manifest_posts_events_and_commands_to_kiokus_url() -> None:
    settings = yaml.safe_load(manifest_yaml(SLASH_COMMANDS.menu(), request_url=URL))
    assert settings["settings"]["socket_mode_enabled"] is False
    assert settings["settings"]["event_subscriptions"]["request_url"] == URL
    assert {c["url"] for c in settings["features"]["slash_commands"]} == {URL}


def test_the_socket_mode_manifest_names_no_url() -> None:
    document = manifest(SLASH_COMMANDS.menu())
    assert document["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in document["settings"]["event_subscriptions"]
    assert not [c for c in document["features"]["slash_commands"] if "url" in c]
