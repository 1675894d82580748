"""Slack's slash commands as the gateway's `Inbound`, every answer private to the person.

Slack's client sends whatever starts with `/` as a slash command, never as a message, so
`/link`, `/new` or `/help` reach kioku only as one: a `slash_commands` Socket Mode
envelope, or a form-encoded POST over HTTP. Each is acknowledged at once (Slack waits
3 s), then handed to the gateway as the text `/name arguments`, addressed to kioku.

Every answer to a command is ephemeral (seen only by the person who typed it): a link
code, a sign-in link or someone's notes never appear in a channel. Answers go through
the command's `response_url` (Slack takes 5 uses within 30 minutes), and past that
through `chat.postEphemeral`. The command's message id (`command_id`) marks the answers
to it, so the adapter never posts them in public nor reacts to a message that does not
exist. A command counts as direct only when typed in the person's own DM with kioku:
the `D…` channel that `conversations.open` gives for them (asked once per person).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
import structlog
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import Address, EventHandler, Inbound
from adapters.slack.mrkdwn import from_slack, to_mrkdwn

log = structlog.get_logger("kioku.slack")

PLATFORM = "slack"
ANY_COMMAND = re.compile(r"^/")
"""Every command Slack delivers goes to the gateway: one it does not know gets /help."""
RESPOND_USES = 5
RESPOND_WITHIN = 30 * 60.0
"""Slack's limits on one `response_url`: 5 answers within 30 minutes."""
MAX_HELD = 1000
"""Commands whose `response_url` is kept at once; the oldest goes first past it."""
MAX_FORM_FIELDS = 100
PROBLEM_CHARS = 200
_PREFIX = "command:"
# What the gateway reads as a command name (gateway.commands.parsing.COMMAND).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# What kioku reads of a slash command, each a string, every one but `text` non-empty.
_REQUIRED = ("command", "user_id", "team_id", "channel_id", "trigger_id", "response_url")


class CommandMalformed(ValueError):
    """A slash command payload kioku does not hand to slack-bolt."""


def command_id(user: str, trigger: str) -> str:
    """The message id of a slash command: unique (Slack's trigger id), and saying whose."""
    return f"{_PREFIX}{user}:{trigger}"


def is_command(message_id: str | None) -> bool:
    """Whether a reply answers a slash command (so it must stay ephemeral)."""
    return message_id is not None and message_id.startswith(_PREFIX)


def check_command(payload: Any) -> None:
    """`payload` is a slash command as slack-bolt reads it and kioku uses it, or raise."""
    if not isinstance(payload, dict):
        raise CommandMalformed(f"a slash command that is a {type(payload).__name__}")
    for name in _REQUIRED:
        value = payload.get(name)
        if not isinstance(value, str) or not value:
            raise CommandMalformed(f"a slash command whose {name} is not a non-empty string")
    if not payload["command"].startswith("/"):
        raise CommandMalformed("a slash command whose command does not start with /")
    if not isinstance(payload.get("text", ""), str):
        raise CommandMalformed("a slash command whose text is not a string")


def read_form(text: str) -> dict[str, str] | None:
    """A form-encoded body over HTTP, decoded, or None (logged): a slash command, the
    `ssl_check` Slack sends to a command's URL, or an interactive payload (a button, a
    shortcut: its one field `payload` holds JSON, which the caller reads as an envelope).
    Decoded here, by its keys, because bolt takes any body containing the word "payload"
    (`/remember my payload`) for an interactive one and would drop the command."""
    try:
        fields = dict(parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS))
        if fields.get("ssl_check") != "1" and not is_interactive(fields):
            check_command(fields)
    except ValueError as problem:
        log.warning("slack_event_malformed", problem=str(problem)[:PROBLEM_CHARS])
        return None
    return fields


def is_interactive(fields: dict[str, str]) -> bool:
    """Whether a form post is an interactive payload: Slack posts those as the single
    field `payload` (api.slack.com/interactivity/handling#payloads); a command always
    carries `command`."""
    return "payload" in fields and "command" not in fields


@dataclass
class _Held:
    respond: AsyncRespond
    until: float
    uses: int = RESPOND_USES


class Responders:
    """The `respond` of each recent command, each for Slack's 5 uses within 30 minutes,
    at most `limit` at once."""

    def __init__(
        self, *, limit: int = MAX_HELD, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._limit = limit
        self._clock = clock

    def keep(self, message_id: str, respond: AsyncRespond) -> None:
        self._held[message_id] = _Held(respond, self._clock() + RESPOND_WITHIN)
        while len(self._held) > self._limit:
            self._held.popitem(last=False)

    def take(self, message_id: str) -> AsyncRespond | None:
        """One use of the command's `respond`; None once it is used up or expired."""
        held = self._held.get(message_id)
        if held is None:
            return None
        if held.until <= self._clock():
            del self._held[message_id]
            return None
        held.uses -= 1
        if held.uses == 0:
            del self._held[message_id]
        return held.respond


Namer = Callable[[str], Awaitable[str | None]]


class SlackCommands:
    """The slash-command listener and the private delivery of its answers."""

    def __init__(
        self,
        client: AsyncWebClient,
        deliver: EventHandler,
        name: Namer,
        bot_user_id: str | None,
    ) -> None:
        self._client = client
        self._deliver = deliver
        self._name = name
        self._bot_user_id = bot_user_id
        self._responders = Responders()
        self._dms: dict[str, str] = {}  # user -> their DM channel with kioku

    async def on_command(
        self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond
    ) -> None:
        """bolt's listener: acknowledge (bolt sends it once this returns, within Slack's 3 s:
        the gateway returns once it has taken the command in), and hand the command over."""
        await ack()
        user = command["user_id"]  # read_envelope / read_form checked every field used here
        name = command["command"][1:]
        arguments = from_slack(command.get("text", ""), self._bot_user_id)
        message_id = command_id(user, command["trigger_id"])
        inbound = Inbound(
            platform=PLATFORM,
            chat=command["channel_id"],
            sender=f"{PLATFORM}:{command['team_id']}:{user}",
            text=f"/{_gateway_name(name)} {arguments}".strip(),
            is_direct=await self._is_direct(command["channel_id"], user),
            addressed=True,
            message_id=message_id,
            sender_name=await self._name(user),
            kept_by_platform=False,
        )
        self._responders.keep(message_id, respond)
        log.info("slack_command", command=name, direct=inbound.is_direct)
        try:
            await self._deliver(inbound)
        except Exception:
            log.exception("slack_deliver_failed", chat=inbound.chat)

    async def answer(self, address: Address, chunks: Sequence[str]) -> None:
        """Each chunk ephemerally: through the command's `response_url` while Slack takes
        it, else `chat.postEphemeral` to the person in that channel."""
        assert address.reply_to is not None and is_command(address.reply_to)
        user = address.reply_to.removeprefix(_PREFIX).partition(":")[0]
        for chunk in chunks:
            text = to_mrkdwn(chunk)
            respond = self._responders.take(address.reply_to)
            if respond is not None and await _responded(respond, text):
                continue
            await self._client.chat_postEphemeral(channel=address.chat, user=user, text=text)

    async def _is_direct(self, channel: str, user: str) -> bool:
        """Typed in the person's own DM with kioku (not a DM between people, not a channel)."""
        if not channel.startswith("D"):
            return False
        if user not in self._dms:
            try:
                opened = await self._client.conversations_open(users=user)
            except SlackApiError as exc:
                log.warning("slack_conversations_open_failed", user=user, error=str(exc))
                return False
            found = opened.get("channel")
            if not isinstance(found, dict) or not isinstance(found.get("id"), str):
                log.warning("slack_conversations_open_failed", user=user, error="no channel id")
                return False
            self._dms[user] = found["id"]
        return self._dms[user] == channel


async def _responded(respond: AsyncRespond, text: str) -> bool:
    """Post through the `response_url`; False (logged) if Slack refuses it."""
    try:
        response = await respond(text=text, response_type="ephemeral")
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("slack_respond_failed", error=repr(exc))
        return False
    if response.status_code != 200:
        log.warning("slack_respond_failed", status=response.status_code, body=response.body[:100])
        return False
    return True


def _gateway_name(name: str) -> str:
    """The command's name as the gateway reads one: a command named in Slack outside its
    letters (`/kioku-help`) still comes as a command, answered as unknown with the help."""
    if _NAME.fullmatch(name):
        return name
    return "_".join(re.findall(r"[A-Za-z][A-Za-z0-9]*", name)) or "unknown"
