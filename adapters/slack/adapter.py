"""Slack: mentions in channels, direct messages and threads, through slack-bolt's AsyncApp.

Socket Mode (an app-level token) is the default: the bot dials out, so a home server
needs no public URL. HTTP Events API mode (a signing secret) serves `/slack/events`
on `listen`; each signature is verified and old timestamps refused. Either way each
envelope is read within limits first (`envelopes`), and bolt acknowledges an event once
kioku's listener has handed it to the gateway, which returns as soon as it is stored
(never after an answer): Slack is told "received" only for what kioku can no longer lose.
A retry that still comes (same message ts) is dropped by the gateway's dedupe.

A channel conversation lives in a thread: kioku answers a top-level mention in a new
thread under it and a mention inside a thread in that thread; each thread is its own
session. Direct messages are answered in place (in their thread if they have one).
Slash commands (`/link`, `/new`, every command of the gateway's) arrive through
`commands`, and every answer to one is ephemeral.

What was sent while kioku was away is read back from Slack's history (`history`): in
Socket Mode after each new connection (Slack greets each with `hello`), over HTTP once
at start, one pass at a time in the background. Edits and deletions of a person's
message reach the gateway as `Changed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog
from aiohttp import web
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import (
    Adapter,
    AdapterFailed,
    Address,
    EventHandler,
    MenuCommand,
    Outbound,
)
from adapters.catch_up import CatchUpSource, no_catch_up
from adapters.chunking import split_message
from adapters.long_reply import FILE_NAME, caption, file_bytes, goes_as_file
from adapters.slack.commands import ANY_COMMAND, SlackCommands, is_command
from adapters.slack.envelopes import BoundedSocketModeHandler, events_app
from adapters.slack.files import SlackFiles
from adapters.slack.history import SlackCatchUp, SlackHistory
from adapters.slack.inbound import DELETED, EDITED, to_changed, to_inbound
from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.unread import on_error
from config.load import ConfigError
from config.platform_settings import SlackSettings

log = structlog.get_logger("kioku.slack")

# Slack truncates text past 40,000 characters and advises 4,000; every chunk stays far below.
CHUNK_LIMIT = 3000
WORKING_REACTION = "eyes"
EVENTS_PATH = "/slack/events"


class SlackAdapter(Adapter):
    name = "slack"

    def __init__(
        self,
        deliver: EventHandler,
        *,
        bot_token: str,
        app_token: str | None = None,
        signing_secret: str | None = None,
        listen: str = "127.0.0.1:3000",
        base_url: str | None = None,
        ping_interval: float = 10.0,
        give_up_after: float = 300.0,
        commands: Sequence[MenuCommand] = (),
        catch_up: CatchUpSource = no_catch_up,
    ) -> None:
        super().__init__(deliver, catch_up)
        # The gateway's slash commands, each answered when Slack delivers it as a command.
        self.commands = tuple(commands)
        self._bot_token = bot_token
        self._app_token = app_token
        self._signing_secret = signing_secret
        self._listen = listen
        self._base_url = base_url or AsyncWebClient.BASE_URL
        self._files_base = base_url  # the file host a test Slack serves files on
        self._files: SlackFiles | None = None
        self._commands: SlackCommands | None = None
        self._ping_interval = ping_interval
        self._give_up_after = give_up_after
        self._client: AsyncWebClient | None = None
        self._socket: BoundedSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._bot_user_id: str | None = None
        self._names: dict[str, str | None] = {}
        self._reacting: set[tuple[str, str]] = set()
        self._catching_up = SlackCatchUp(self.catch_up, self.deliver)
        self.port: int | None = None  # HTTP mode's bound port, once started

    @classmethod
    def from_settings(
        cls,
        settings: SlackSettings,
        deliver: EventHandler,
        *,
        commands: Sequence[MenuCommand] = (),
        catch_up: CatchUpSource = no_catch_up,
    ) -> SlackAdapter:
        def secret(value: Any) -> str | None:
            return None if value is None else str(value.get_secret_value())

        bot_token = secret(settings.bot_token)
        if bot_token is None:
            raise ConfigError("slack.bot_token is not set")
        return cls(
            deliver,
            bot_token=bot_token,
            app_token=secret(settings.app_token),
            signing_secret=secret(settings.signing_secret),
            listen=settings.listen,
            base_url=settings.base_url,
            ping_interval=settings.silence_limit / 4,
            commands=commands,
            catch_up=catch_up,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self._app_token is None and self._signing_secret is None:
            raise ConfigError(
                "Slack needs KIOKU_SLACK__APP_TOKEN (xapp-..., Socket Mode, no public URL) or "
                "KIOKU_SLACK__SIGNING_SECRET (HTTP Events API mode, served on slack.listen); "
                "neither is set"
            )
        client = AsyncWebClient(
            token=self._bot_token,
            base_url=self._base_url,
            retry_handlers=[
                AsyncConnectionErrorRetryHandler(max_retry_count=2),
                AsyncRateLimitErrorRetryHandler(max_retry_count=5),
            ],
        )
        identity = await client.auth_test()
        self._bot_user_id = identity.get("user_id")
        self._client = client
        self._files = SlackFiles(self._bot_token, self._files_base)
        app = AsyncApp(
            client=client,
            signing_secret=self._signing_secret or "",
            request_verification_enabled=self._app_token is None,
            process_before_response=True,  # acknowledge what the gateway has stored
            raise_error_for_unhandled_request=True,  # for on_error to acknowledge it
        )
        app.error(on_error)
        self._catching_up.reader = SlackHistory(
            client,
            bot_user_id=self._bot_user_id,
            team=str(identity.get("team_id") or ""),
            files=self._files,
            name=self._name,
            refusals=self._catching_up.refusals,
        )
        # bolt runs the first listener that matches: edits and deletions before the rest.
        app.event({"type": "message", "subtype": (EDITED, DELETED)})(self._on_change)
        app.event("message")(self._on_event)
        app.event("app_mention")(self._on_event)
        self._commands = SlackCommands(client, self.deliver, self._name, self._bot_user_id)
        app.command(ANY_COMMAND)(self._commands.on_command)
        if self._app_token is not None:
            await self._start_socket_mode(app, self._app_token)
        else:
            await self._start_http(app)
            self._catching_up.request()  # no hello over HTTP: once, now that events flow
        log.info(
            "slack_started",
            mode="socket" if self._app_token else "http",
            team=identity.get("team_id"),
            bot_user=self._bot_user_id,
        )

    async def _start_socket_mode(self, app: AsyncApp, app_token: str) -> None:
        assert self._client is not None
        # Asking for the first URL here makes a bad app token fail start() with Slack's
        # error; the SDK alone would retry it forever.
        opened = await self._client.apps_connections_open(app_token=app_token)
        handler = BoundedSocketModeHandler(
            app, app_token, web_client=self._client, ping_interval=self._ping_interval
        )
        handler.client.wss_uri = opened["url"]
        handler.client.message_listeners.append(self._catching_up.on_socket_message)
        self._socket = handler
        await handler.connect_async()
        self._watchdog = asyncio.create_task(self._watch(handler), name="slack-watchdog")

    async def _start_http(self, app: AsyncApp) -> None:
        host, _, port = self._listen.rpartition(":")
        if not port.isdigit():
            raise ConfigError(f"slack.listen must be host:port, not {self._listen!r}")
        assert self._signing_secret is not None
        runner = web.AppRunner(events_app(app, EVENTS_PATH, self._signing_secret))
        await runner.setup()
        site = web.TCPSite(runner, host.strip("[]") or "127.0.0.1", int(port))
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = runner.addresses[0][1]

    async def stop(self) -> None:
        await self._catching_up.close()
        if self._watchdog is not None:
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)
            self._watchdog = None
        if self._socket is not None:
            socket, self._socket = self._socket, None
            await socket.close_async()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        if self._files is not None:
            files, self._files = self._files, None
            await files.aclose()

    async def _watch(self, handler: BoundedSocketModeHandler) -> None:
        """The SDK pings and reconnects by itself (a silent socket misses its pong and is
        replaced) but never gives up; after `give_up_after` seconds without a live
        connection, report the failure so the supervisor restarts kioku's Slack side
        and `kioku status` shows it down."""
        loop = asyncio.get_running_loop()
        down_since: float | None = None
        while True:
            await asyncio.sleep(self._ping_interval)
            if await handler.client.is_connected():
                down_since = None
                continue
            now = loop.time()
            if down_since is None:
                log.warning("slack_socket_down")
                down_since = now
            elif now - down_since >= self._give_up_after:
                self.failed(
                    AdapterFailed(
                        f"Slack Socket Mode has had no connection for {now - down_since:.0f} s"
                    )
                )
                return

    # -- inbound -----------------------------------------------------------------------------

    async def _on_event(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """A direct message or a mention, as `to_inbound` decides, with the sender's name."""
        if self._files is None:
            return  # stopped while bolt was still dispatching
        inbound = to_inbound(body, event, self._bot_user_id, self._files)
        if inbound is None:
            return
        # to_inbound accepted it, so event["user"] is a non-empty string.
        inbound = replace(inbound, sender_name=await self._name(event["user"]))
        try:
            await self.deliver(inbound)
        except Exception:
            log.exception("slack_deliver_failed", chat=inbound.chat)

    async def _on_change(self, event: dict[str, Any]) -> None:
        """A message edited or deleted: the gateway updates or erases its stored turn."""
        changed = to_changed(event, self._bot_user_id)
        if changed is None:
            return
        try:
            await self.deliver(changed)
        except Exception:
            log.exception("slack_deliver_failed", chat=changed.chat)

    async def _name(self, user: str) -> str | None:
        """The person's display name, asked once per user while the adapter runs."""
        if user in self._names:
            return self._names[user]
        assert self._client is not None
        try:
            info = (await self._client.users_info(user=user))["user"]
        except SlackApiError as exc:
            log.warning("slack_users_info_failed", user=user, error=str(exc))
            return None
        profile = info.get("profile") or {}
        name = profile.get("display_name") or info.get("real_name") or info.get("name")
        self._names[user] = name
        return name

    # -- outbound ----------------------------------------------------------------------------

    async def send(self, message: Outbound) -> None:
        """Post the reply in chunks, in the asking message's thread (or, with `long_as_file`,
        a reply longer than one chunk as one `reply.md` file there); raise if Slack refuses."""
        if self._client is None or self._commands is None:
            raise AdapterFailed("the Slack adapter is not running")
        address = message.address
        chunks = split_message(message.text, CHUNK_LIMIT)
        if is_command(address.reply_to):
            await self._commands.answer(address, chunks)  # only ever ephemeral
            return
        try:
            if goes_as_file(message, len(chunks)) and await self._uploaded(address, message.text):
                return
            for chunk in chunks:
                await self._client.chat_postMessage(
                    channel=address.chat,
                    text=to_mrkdwn(chunk),
                    thread_ts=_reply_thread(address),
                    mrkdwn=True,
                )
        finally:
            await self._done(address)

    async def _uploaded(self, address: Address, text: str) -> bool:
        """One Markdown file in the thread, its first line as the comment when short; False
        if Slack refuses it (without the `files:write` scope): then it goes as messages."""
        assert self._client is not None
        first = caption(text)
        try:
            await self._client.files_upload_v2(
                channel=address.chat,
                thread_ts=_reply_thread(address),
                content=file_bytes(text),
                filename=FILE_NAME,
                title=FILE_NAME,
                initial_comment=to_mrkdwn(first) if first else None,
            )
        except SlackApiError as exc:
            log.warning("slack_reply_file_refused", chat=address.chat, error=str(exc))
            return False
        return True

    async def direct_chat(self, user: str) -> str:
        """The DM channel (`D…`) with `user`, the one their messages come from, so a
        scheduled task's turn joins their DM session."""
        if self._client is None:
            raise AdapterFailed("the Slack adapter is not running")
        opened = await self._client.conversations_open(users=user)
        return str(opened["channel"]["id"])

    async def working(self, address: Address) -> None:
        """React to the asking message while the model works; `send` removes it."""
        if self._client is None or address.reply_to is None or is_command(address.reply_to):
            return  # a slash command is no message to react to
        key = (address.chat, address.reply_to)
        try:
            await self._client.reactions_add(
                channel=address.chat, timestamp=address.reply_to, name=WORKING_REACTION
            )
        except SlackApiError as exc:
            if exc.response.get("error") != "already_reacted":
                raise
        self._reacting.add(key)

    async def _done(self, address: Address) -> None:
        key = (address.chat, address.reply_to or "")
        if key not in self._reacting or self._client is None:
            return
        self._reacting.discard(key)
        try:
            await self._client.reactions_remove(
                channel=address.chat, timestamp=key[1], name=WORKING_REACTION
            )
        except SlackApiError as exc:
            log.warning("slack_reaction_remove_failed", chat=address.chat, error=str(exc))


def _reply_thread(address: Address) -> str | None:
    """A channel reply goes in the thread (a new one under the asking message if need be);
    a direct message is answered in place unless it was in a thread."""
    if address.thread:
        return address.thread
    if address.chat.startswith("D"):
        return None
    return address.reply_to
