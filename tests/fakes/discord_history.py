"""What the fake Discord keeps of its channels' messages, and serves over REST as Discord does.

`GET /channels/{id}/messages?after=&limit=` answers as Discord's documentation says
(developers/resources/message.mdx, Get Channel Messages): at most `limit` (default 50)
messages, "from newest to oldest"; with `after`, the ones right after that id (discord.py's
`history(after=..., oldest_first=True)` takes the first of the answer as its next `after` and
reverses each page). `GET /channels/{id}` answers a DM channel in the shape of the docs'
*Example DM Channel*, and the guild's channels and threads as the recorded GUILD_CREATE holds
them. Each message is kept in the shape of a recorded REST message (rest/channel_message.json):
the gateway's MESSAGE_CREATE carries `guild_id` and `member` besides, which REST leaves out.
A channel can be made to refuse (`refuse`), with a recorded error body.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.recorded import RECORDINGS, recorded_json

REST = RECORDINGS / "discord" / "rest"
GATEWAY_ONLY = ("guild_id", "member")  # "extra fields" of MESSAGE_CREATE (gateway-events.mdx)
DEFAULT_LIMIT = 50


def _answer(data: Any, status: int = 200) -> web.Response:
    # discord.py decodes only bodies whose Content-Type is exactly application/json.
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


@dataclass(frozen=True)
class Read:
    """One history request discord.py made: the channel, `after` and `limit` as sent."""

    channel: str
    after: str | None
    limit: int


@dataclass
class ChannelHistory:
    """Messages by channel, oldest first; `dm_recipients` names who each DM channel is with."""

    guild_channels: dict[str, dict[str, Any]]
    dm_recipients: dict[str, dict[str, Any]] = field(default_factory=dict)
    reads: list[Read] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._refusals: dict[str, tuple[int, str]] = {}
        self._gate: asyncio.Event | None = None
        self.reading = asyncio.Event()
        """Set once a history request has come in."""

    def keep(self, message: dict[str, Any]) -> None:
        """Keep a message (as the gateway would dispatch it) in its channel's history."""
        kept = recorded_json(REST / "channel_message.json")
        kept.update({k: v for k, v in copy.deepcopy(message).items() if k not in GATEWAY_ONLY})
        kept.pop("stickers", None)  # the recorded message's own sticker, not this one's
        channel = self._messages.setdefault(str(message["channel_id"]), [])
        channel.append(kept)
        channel.sort(key=lambda m: int(m["id"]))

    def replace(self, message: dict[str, Any]) -> None:
        """The message as edited: the kept one with the same id takes its fields."""
        for kept in self._messages.get(str(message["channel_id"]), []):
            if kept["id"] == message["id"]:
                kept.update({k: v for k, v in message.items() if k not in GATEWAY_ONLY})

    def remove(self, channel_id: str, ids: list[str]) -> None:
        channel = self._messages.get(channel_id, [])
        channel[:] = [m for m in channel if m["id"] not in ids]

    def messages(self, channel_id: int | str) -> list[dict[str, Any]]:
        """What the channel holds, oldest first."""
        return list(self._messages.get(str(channel_id), []))

    def refuse(self, channel_id: int | str, status: int, answer: str) -> None:
        """Answer every request for this channel with `status` and the recorded body
        `rest/<answer>.json` (403 missing_access, 404 unknown_channel)."""
        self._refusals[str(channel_id)] = (status, answer)

    def hold(self) -> asyncio.Event:
        """History requests wait until the returned event is set (a slow Discord)."""
        self._gate = asyncio.Event()
        return self._gate

    def _refused(self, channel_id: str) -> web.Response | None:
        refusal = self._refusals.get(channel_id)
        if refusal is None:
            return None
        status, answer = refusal
        return _answer(recorded_json(REST / f"{answer}.json"), status)

    async def get_messages(self, request: web.Request) -> web.Response:
        channel_id = request.match_info["channel"]
        after = request.query.get("after")
        limit = int(request.query.get("limit", DEFAULT_LIMIT))
        self.reads.append(Read(channel_id, after, limit))
        self.reading.set()
        if self._gate is not None:
            await self._gate.wait()
        refused = self._refused(channel_id)
        if refused is not None:
            return refused
        held = self._messages.get(channel_id, [])
        if after is not None:
            page = [m for m in held if int(m["id"]) > int(after)][:limit]
        else:
            page = held[-limit:]
        return _answer(list(reversed(page)))

    async def get_channel(self, request: web.Request) -> web.Response:
        channel_id = request.match_info["channel"]
        refused = self._refused(channel_id)
        if refused is not None:
            return refused
        if channel_id in self.guild_channels:
            return _answer(self.guild_channels[channel_id])
        recipient = self.dm_recipients.get(channel_id)
        if recipient is None:
            return _answer(recorded_json(REST / "unknown_channel.json"), 404)
        channel = recorded_json(REST / "dm_channel_docs_example.json")
        held = self._messages.get(channel_id)
        channel.update(
            id=channel_id,
            recipients=[recipient],
            last_message_id=held[-1]["id"] if held else None,
        )
        return _answer(channel)
