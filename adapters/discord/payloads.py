"""Gateway data made whole where Discord leaves out a field discord.py indexes.

discord.py 2.7 reads some fields with `data[key]`: an event Discord really sent without one
raises in its parser and is lost. Where Discord's documentation says what an absent field
means, `completing` fills it with that value before discord.py parses the event; nothing
else is touched, and anything not shaped like the event is left to discord.py's own checks.
"""

from __future__ import annotations

from typing import Any

import discord

DEFAULT_ATTACHMENT_LIMIT = 10 * 1024 * 1024
"""Discord's upload limit without Nitro or boosts, "10 MiB for all users"; an interaction's
`attachment_size_limit` is "the maximum of these values" (developers/reference.mdx,
Uploading Files)."""


def complete_interaction(data: Any, application_id: int | None) -> None:
    """INTERACTION_CREATE, as discord.py's Interaction reads it. Recorded interactions
    (Discord4J's InteractionCreate.json of 2021) and the docs' own examples
    (developers/interactions/application-commands.mdx) lack fields that came later or that
    the examples leave out; each takes the value the docs give it."""
    if not isinstance(data, dict):
        return
    # Sent since April 2025 (developers/change-log.mdx, "Per-Attachment File Upload").
    data.setdefault("attachment_size_limit", DEFAULT_ATTACHMENT_LIMIT)
    # "Read-only property, always 1" (developers/interactions/receiving-and-responding.mdx).
    data.setdefault("version", 1)
    # The gateway of an application delivers that application's interactions only.
    if application_id is not None:
        data.setdefault("application_id", str(application_id))
    member = data.get("member")
    if isinstance(member, dict):
        # Guild member `flags`: "defaults to 0" (developers/resources/guild.mdx).
        member.setdefault("flags", 0)


def completing(client: discord.Client) -> None:
    """Make `client`'s INTERACTION_CREATE parser complete each interaction first (discord.py
    keeps its parsers, one per dispatch name, on the client's connection state)."""
    parsers = client._connection.parsers
    parse = parsers["INTERACTION_CREATE"]

    def parse_completed(data: Any) -> Any:
        complete_interaction(data, client.application_id)
        return parse(data)

    parsers["INTERACTION_CREATE"] = parse_completed
