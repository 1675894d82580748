"""The Slack bot token scopes kioku uses, listed once: `kioku doctor --online` compares
them with the scopes Slack says the token has (the `x-oauth-scopes` header of every Web
API answer), and docs/slack.md lists the same. Each scope says what it is for, so a
report of a missing one tells the person what will not work."""

from __future__ import annotations

SCOPES: dict[str, str] = {
    "app_mentions:read": "hear mentions in channels (app_mention events)",
    "im:history": "read direct messages (message.im events), and catch up on them after "
    "downtime (conversations.history)",
    "channels:history": "catch up on threads in public channels and see edits there "
    "(conversations.replies, message.channels events)",
    "groups:history": "catch up on threads in private channels and see edits there "
    "(conversations.replies, message.groups events)",
    "mpim:history": "catch up on threads in group DMs and see edits there "
    "(conversations.replies, message.mpim events)",
    "chat:write": "answer (chat.postMessage)",
    "reactions:write": "show :eyes: while it works (reactions.add / reactions.remove)",
    "users:read": "know who is writing (users.info)",
    "files:read": "read shared files (url_private_download)",
    "im:write": "open a direct message for a scheduled task's answer (conversations.open)",
    "commands": "answer slash commands",
}
"""Every scope the adapter needs, with what it is for."""

SCOPES_FOR_SETTINGS: dict[str, tuple[str, str]] = {
    "files:write": (
        "media.long_replies_as_file",
        "upload a long answer as reply.md (files.getUploadURLExternal)",
    ),
}
"""Scopes needed only when a setting is on: scope -> (setting, what it is for)."""


def missing_scopes(granted: frozenset[str], settings_on: frozenset[str]) -> dict[str, str]:
    """The scopes kioku uses (those of SCOPES_FOR_SETTINGS only for a setting in
    `settings_on`) that are not among `granted`, each with what it is for."""
    wanted = dict(SCOPES)
    wanted |= {
        scope: f"{purpose} ({setting} = true)"
        for scope, (setting, purpose) in SCOPES_FOR_SETTINGS.items()
        if setting in settings_on
    }
    return {scope: purpose for scope, purpose in wanted.items() if scope not in granted}
