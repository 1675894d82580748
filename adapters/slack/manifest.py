"""The Slack app manifest kioku needs, built from the gateway's slash-command menu.

Slack's "Create New App → From a manifest" takes it as YAML (or JSON), with the app's
scopes, events and one slash command per command of the registry, so a command added to
the gateway is one that Slack offers. docs/slack.md shows the Socket Mode manifest (a
test keeps it equal to this one) and `kioku setup` prints it while connecting Slack.
The field names and limits are Slack's manifest schema (@slack/web-api's
`types/request/manifest.ts`): a command at most 32 characters with its `/`, a
description at most 2,000, a usage hint at most 1,000.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from adapters.base import MenuCommand
from adapters.slack import scopes

NAME = "kioku"
DESCRIPTION = "Your self-hosted assistant with a memory of its own"
SCOPES = tuple(sorted(scopes.SCOPES))  # what each is for: adapters/slack/scopes.py
# Mentions and DMs to answer; a channel's messages only for the edits and deletions of
# mentions (message_changed / message_deleted come as `message` events of the channel).
BOT_EVENTS = ("app_mention", "message.im", "message.channels", "message.groups", "message.mpim")


def manifest(commands: Sequence[MenuCommand], *, request_url: str | None = None) -> dict[str, Any]:
    """The manifest: Socket Mode, or with `request_url` (https://host/slack/events) the
    HTTP Events API, where every event and command is posted to that URL."""
    slash_commands = [_slash_command(command, request_url) for command in commands]
    events: dict[str, Any] = {"bot_events": list(BOT_EVENTS)}
    if request_url is not None:
        events = {"request_url": request_url, **events}
    return {
        "display_information": {"name": NAME, "description": DESCRIPTION},
        "features": {
            "app_home": {
                "home_tab_enabled": False,
                "messages_tab_enabled": True,
                "messages_tab_read_only_enabled": False,
            },
            "bot_user": {"display_name": NAME, "always_online": True},
            "slash_commands": slash_commands,
        },
        "oauth_config": {"scopes": {"bot": list(SCOPES)}},
        "settings": {
            "event_subscriptions": events,
            "interactivity": {"is_enabled": False},
            "org_deploy_enabled": False,
            "socket_mode_enabled": request_url is None,
            "token_rotation_enabled": False,
        },
    }


def manifest_yaml(commands: Sequence[MenuCommand], *, request_url: str | None = None) -> str:
    """The manifest as the YAML one pastes into Slack."""
    document = manifest(commands, request_url=request_url)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def _slash_command(command: MenuCommand, request_url: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": f"/{command.name}", "description": command.summary}
    if command.argument:
        entry["usage_hint"] = command.argument
    if request_url is not None:
        entry["url"] = request_url
    entry["should_escape"] = False  # kioku reads mentions and links as typed
    return entry
