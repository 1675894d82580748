"""What was said to kioku on Slack while it was away, read back from Slack's history.

Slack delivers an event to whoever is connected when it happens: what was sent while kioku
was stopped, or while its socket was reconnecting, reaches nobody. Slack keeps it, though,
so a catch-up pass asks for it, chat by chat, after the newest message kioku saw there (the
gateway's cursors): a direct message's conversation with `conversations.history`, a thread
(in a DM or a channel) with `conversations.replies`, each with `oldest` = that message's ts
(Slack leaves out the message at `oldest` itself) and at most `max_messages`.

Each message found becomes the `Inbound` the live path would have made of it
(`inbound.to_inbound`): in a DM every message of the person's, as its `message.im` event;
in a channel's thread only a message that mentions kioku, as its `app_mention` event (the
rest of a thread is not for kioku). Kioku's own messages, bots' and subtypes the live path
ignores are left out the same way, and each has the time Slack says it was sent.

A chat Slack refuses to read (a scope the app lacks, a channel it left) is skipped and the
pass goes on; each kind of refusal is logged once, naming the scope or what to do.

`SlackCatchUp` says when: after each Socket Mode connection (Slack greets each one with
`hello`, the first and every reconnection alike), or once at start over HTTP; one pass at
a time, in the background, each handing the gateway one `Missed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import EventHandler, Inbound, Missed
from adapters.catch_up import CatchUpPasses, CatchUpPlan, CatchUpSource, Cursor
from adapters.slack.files import SlackFiles
from adapters.slack.inbound import PLATFORM, is_ts, sent_at, to_inbound

log = structlog.get_logger("kioku.slack")

Namer = Callable[[str], Awaitable[str | None]]

# What to do about each refusal Slack gives for a conversation's history.
_FIXES = {
    "missing_scope": "add the scope Slack names (OAuth & Permissions → Bot Token Scopes), "
    "then Reinstall to Workspace",
    "not_in_channel": "invite kioku back to the channel (/invite @kioku)",
    "channel_not_found": "kioku can no longer see the channel (deleted, or kioku removed)",
}


class SlackHistory:
    """Reads one catch-up pass's messages with the adapter's web client."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        bot_user_id: str | None,
        team: str,
        files: SlackFiles,
        name: Namer,
        refusals: set[tuple[str, str]],
    ) -> None:
        self._client = client
        self._bot_user_id = bot_user_id
        self._body = {"team_id": team}  # as an event's envelope names the workspace
        self._files = files
        self._name = name
        self._refusals = refusals  # (error, needed) already logged, over restarts too

    async def read(self, plan: CatchUpPlan) -> tuple[Inbound, ...]:
        """Every message after each cursor that kioku would have been handed live, oldest
        first."""
        found: list[Inbound] = []
        for cursor in plan.cursors:
            for message in await self._messages(cursor, plan.max_messages):
                inbound = self._inbound(cursor, message)
                if inbound is not None:  # so message["user"] is a non-empty string
                    found.append(replace(inbound, sender_name=await self._name(message["user"])))
        return tuple(sorted(found, key=lambda inbound: inbound.received_at))

    async def _messages(self, cursor: Cursor, limit: int) -> list[dict[str, Any]]:
        """The chat's messages after the cursor, as Slack lists them; none if refused."""
        try:
            if cursor.thread:
                answer = await self._client.conversations_replies(
                    channel=cursor.chat, ts=cursor.thread, oldest=cursor.message_id, limit=limit
                )
            else:
                answer = await self._client.conversations_history(
                    channel=cursor.chat, oldest=cursor.message_id, limit=limit
                )
        except SlackApiError as exc:
            self._refused(exc.response, cursor)
            return []
        messages = answer.get("messages")
        if not isinstance(messages, list):
            return []
        after = sent_at(cursor.message_id)
        # Only what came after the cursor, whatever else an answer holds (a thread's parent).
        return [
            message
            for message in messages
            if isinstance(message, dict)
            and isinstance(message.get("ts"), str)
            and is_ts(message["ts"])
            and sent_at(message["ts"]) > after
        ]

    def _inbound(self, cursor: Cursor, message: dict[str, Any]) -> Inbound | None:
        """The message as the live event Slack would have sent for it, read as that one."""
        if cursor.is_direct:
            event = message | {"type": "message", "channel": cursor.chat, "channel_type": "im"}
        elif f"<@{self._bot_user_id}>" in str(message.get("text") or ""):
            event = message | {"type": "app_mention", "channel": cursor.chat}
        else:
            return None  # in a channel, only a mention was ever kioku's to answer
        return to_inbound(self._body, event, self._bot_user_id, self._files)

    def _refused(self, answer: Any, cursor: Cursor) -> None:
        """Log a refusal the first time its kind is seen: the scope Slack says it needs."""
        error = str(answer.get("error") or "an error")
        needed = str(answer.get("needed") or "")
        if (error, needed) in self._refusals:
            return
        self._refusals.add((error, needed))
        log.warning(
            "slack_history_refused",
            platform=PLATFORM,
            error=error,
            needed=needed or None,
            chat=cursor.chat,
            fix=_FIXES.get(error, "see docs/slack.md, Catch-up and edits"),
        )


class SlackCatchUp:
    """The adapter's catch-up passes: `request` one, or let Socket Mode's `hello` do it."""

    def __init__(self, plan: CatchUpSource, deliver: EventHandler) -> None:
        self._plan = plan
        self._deliver = deliver
        self._passes = CatchUpPasses(PLATFORM, self._pass)
        self.reader: SlackHistory | None = None  # set once the adapter's client is up
        self.refusals: set[tuple[str, str]] = set()  # what the readers have logged

    def request(self) -> None:
        self._passes.request()

    async def on_socket_message(self, client: Any, message: dict[str, Any], raw: Any) -> None:
        """slack_sdk's listener of every Socket Mode message: after a `hello` events flow
        again, and what was sent while none did can be read."""
        if message.get("type") == "hello":
            self._passes.request()

    async def close(self) -> None:
        await self._passes.close()

    async def _pass(self) -> None:
        """Read what the gateway's plan names and hand it over as one `Missed`."""
        plan = await self._plan()
        if not plan.enabled or self.reader is None:
            return
        messages = await self.reader.read(plan)
        log.info("slack_caught_up", chats=len(plan.cursors), messages=len(messages))
        await self._deliver(Missed(PLATFORM, messages))
