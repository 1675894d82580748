"""The Discord adapter on discord.py: DMs, and guild messages that mention or reply to kioku.

discord.py keeps its own reconnects (RESUME, then IDENTIFY) and REST rate limits
(429 retry_after, buckets); this adapter adds a watchdog for the case they cannot see:
a connection that stays open but delivers nothing, not even heartbeat ACKs. The
watchdog then replaces the client in-process; if the new one cannot get READY, the
adapter reports `failed()` and the supervisor restarts it with backoff. Each gateway
frame is read within limits (`BoundedGateway`): one that cannot be read is dropped, not
allowed to end the connection.

After each READY (the first IDENTIFY, and a new one after a RESUME Discord refused; a RESUME
that succeeds has Discord replay what was missed itself) a catch-up pass reads what was
sent while kioku was away (adapters/discord/history.py) and hands it over as one `Missed`.
Edits and deletions are handed over as `Changed` (adapters/discord/changes.py), in turn
with the messages of their chat.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from typing import Any

import discord
import structlog
import yarl

from adapters.base import (
    Adapter,
    AdapterFailed,
    Address,
    Event,
    EventHandler,
    MenuCommand,
    Missed,
    Outbound,
)
from adapters.catch_up import CatchUpPasses, CatchUpSource, no_catch_up
from adapters.chunking import split_message
from adapters.discord.changes import deleted, edited
from adapters.discord.commands import ApplicationCommands
from adapters.discord.frames import BoundedGateway
from adapters.discord.history import HistoryReader
from adapters.discord.inbound import to_inbound
from adapters.discord.payloads import completing
from adapters.discord.turns import Turns
from adapters.long_reply import FILE_NAME, caption, file_bytes, goes_as_file
from config.platform_settings import DiscordSettings

log = structlog.get_logger("kioku.discord")

MESSAGE_LIMIT = 2000
# Discord acknowledges a heartbeat every 41.25 s; no frame at all for a bit over two
# intervals means the connection is dead even if the socket looks open.
READY_TIMEOUT = 60.0
CLOSE_TIMEOUT = 10.0
# The typing indicator stops by itself after this long if no reply ever comes (/stop).
TYPING_LIMIT = 300.0
# What discord.py raises building its user and application from an answer missing a field it
# indexes: Discord's published example application (developers/resources/application.mdx)
# has a team member without `role`, which discord.py's TeamMember reads.
LOGIN_PARSE_ERRORS = (KeyError, TypeError, ValueError)


def allowed_mentions(settings: DiscordSettings) -> discord.AllowedMentions:
    """People may be pinged by name and the asker by the reply; crowds and roles only if allowed."""
    mass = settings.allow_mass_mentions
    return discord.AllowedMentions(everyone=mass, roles=mass, users=True, replied_user=True)


class _Client(discord.Client):
    """A discord.py client that remembers when the gateway last sent anything."""

    def __init__(self, adapter: DiscordAdapter, **options: Any) -> None:
        # Debug events let every received frame (heartbeat ACKs included) be seen.
        super().__init__(enable_debug_events=True, **options)
        completing(self)
        self.adapter = adapter
        self.last_frame = asyncio.get_running_loop().time()

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        if event == "socket_raw_receive":
            self.last_frame = asyncio.get_running_loop().time()
            return
        if event == "socket_raw_send":
            return
        super().dispatch(event, *args, **kwargs)

    async def on_message(self, message: discord.Message) -> None:
        await self.adapter.on_message(self, message)

    async def on_ready(self) -> None:
        self.adapter.passes.request()

    async def on_raw_message_edit(self, update: discord.RawMessageUpdateEvent) -> None:
        if self.user is not None:
            change = edited(update, self.user, self.adapter.settings)
            if change is not None:
                await self.adapter.hand_over(change.chat, change.thread, change)

    async def on_raw_message_delete(self, gone: discord.RawMessageDeleteEvent) -> None:
        await self.adapter.gone(self, gone.channel_id, gone.guild_id, [gone.message_id])

    async def on_raw_bulk_message_delete(self, gone: discord.RawBulkMessageDeleteEvent) -> None:
        await self.adapter.gone(self, gone.channel_id, gone.guild_id, sorted(gone.message_ids))


class DiscordAdapter(Adapter):
    """One bot account; replies go to the channel (or thread) of the asking message."""

    name = "discord"

    def __init__(
        self,
        deliver: EventHandler,
        settings: DiscordSettings,
        *,
        commands: Sequence[MenuCommand] = (),
        catch_up: CatchUpSource = no_catch_up,
        ready_timeout: float = READY_TIMEOUT,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        super().__init__(deliver, catch_up)
        if settings.token is None:
            raise ValueError("the Discord adapter needs discord.token (KIOKU_DISCORD__TOKEN)")
        self.settings = settings
        # The gateway's slash commands, registered as application commands.
        self.commands = tuple(commands)
        self._app_commands = ApplicationCommands(self.commands, settings, deliver)
        self._tree: discord.app_commands.CommandTree | None = None
        self._sync: asyncio.Task[None] | None = None
        self.silence_limit = settings.silence_limit
        self.ready_timeout = ready_timeout
        self.guild_ready_timeout = guild_ready_timeout
        self._client: _Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._typing: dict[Address, asyncio.Task[None]] = {}
        self._turns = Turns(deliver)
        self._saved_endpoints: tuple[str, yarl.URL, type] | None = None
        self._history = HistoryReader(settings)
        self.passes = CatchUpPasses(self.name, self._catch_up_pass)

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._point_endpoints()
        try:
            await self._open_client()
        except BaseException:
            self._restore_endpoints()
            raise
        self._watchdog = asyncio.create_task(self._watch(), name="discord-watchdog")
        if self._client is not None and self._tree is not None:
            self._sync = asyncio.create_task(
                self._app_commands.sync(self._client, self._tree), name="discord-commands-sync"
            )

    async def stop(self) -> None:
        await self.passes.close()
        if self._sync is not None:
            self._sync.cancel()
            await asyncio.gather(self._sync, return_exceptions=True)
            self._sync = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)
            self._watchdog = None
        for task in list(self._typing.values()):
            task.cancel()
        await asyncio.gather(*self._typing.values(), return_exceptions=True)
        self._typing.clear()
        await self._close_client()
        self._restore_endpoints()

    def _point_endpoints(self) -> None:
        """discord.py reads its endpoints from class attributes and its websocket class from
        a module global: set them for the whole process."""
        if self._saved_endpoints is not None:
            return
        self._saved_endpoints = (
            discord.http.Route.BASE,
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY,
            discord.client.DiscordWebSocket,  # type: ignore[attr-defined]
        )
        discord.client.DiscordWebSocket = BoundedGateway  # type: ignore[attr-defined]
        if self.settings.api_base:
            discord.http.Route.BASE = self.settings.api_base.rstrip("/")
        if self.settings.gateway_url:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.gateway_url)

    def _restore_endpoints(self) -> None:
        if self._saved_endpoints is None:
            return
        base, gateway, websocket = self._saved_endpoints
        discord.http.Route.BASE = base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = gateway
        discord.client.DiscordWebSocket = websocket  # type: ignore[attr-defined]
        self._saved_endpoints = None

    async def _open_client(self) -> None:
        """Log in and connect; return once READY, raise if the gateway never gets there."""
        intents = discord.Intents.none()
        intents.guilds = intents.messages = intents.message_content = True
        client = _Client(
            self,
            intents=intents,
            allowed_mentions=allowed_mentions(self.settings),
            guild_ready_timeout=self.guild_ready_timeout,
        )
        tree = self._app_commands.attach(client)
        assert self.settings.token is not None
        try:
            await client.login(self.settings.token.get_secret_value())
        except LOGIN_PARSE_ERRORS as exc:
            await client.close()
            raise AdapterFailed(
                "discord.py could not read Discord's answer about this bot at login "
                f"(GET /users/@me, /oauth2/applications/@me: {type(exc).__name__}: {exc}); "
                "kioku cannot use the bot until discord.py reads that shape"
            ) from None
        except BaseException:
            await client.close()
            raise
        runner = asyncio.create_task(client.connect(reconnect=True), name="discord-gateway")
        # Current from now on: messages may arrive (and be answered) before on_ready fires.
        self._client, self._runner, self._tree = client, runner, tree
        runner.add_done_callback(self._gateway_ended)
        ready = asyncio.create_task(client.wait_until_ready(), name="discord-ready")
        await asyncio.wait(
            {runner, ready}, timeout=self.ready_timeout, return_when="FIRST_COMPLETED"
        )
        if not ready.done():
            ready.cancel()
            self._client = self._runner = self._tree = None
            await client.close()
            await asyncio.gather(runner, ready, return_exceptions=True)
            if runner.done() and not runner.cancelled() and runner.exception() is not None:
                raise runner.exception()  # type: ignore[misc]
            raise AdapterFailed(f"the Discord gateway did not get ready in {self.ready_timeout} s")
        log.info("discord_ready", user=str(client.user), guilds=len(client.guilds))

    async def _close_client(self) -> None:
        client, runner = self._client, self._runner
        self._client = self._runner = self._tree = None
        if client is None or runner is None:
            return
        self._app_commands.client_replaced()
        try:
            await asyncio.wait_for(client.close(), CLOSE_TIMEOUT)
        except TimeoutError:
            log.warning("discord_close_timeout", seconds=CLOSE_TIMEOUT)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)

    def _gateway_ended(self, runner: asyncio.Task[None]) -> None:
        """discord.py gave up reconnecting (bad token, intents not enabled, ...)."""
        if runner is not self._runner or runner.cancelled():
            return
        error = runner.exception() or AdapterFailed("the Discord gateway connection ended")
        log.error("discord_gateway_ended", error=repr(error))
        self.failed(error)

    async def _watch(self) -> None:
        """Replace a client that has received nothing for longer than `silence_limit`."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.silence_limit / 4)
            client = self._client
            if client is None:
                continue
            silent = loop.time() - client.last_frame
            if silent <= self.silence_limit:
                continue
            log.warning("discord_silent", seconds=round(silent, 1))
            try:
                await self._close_client()
                await self._open_client()
            except Exception as exc:
                log.error("discord_restart_failed", error=repr(exc))
                self.failed(exc)
                return

    # -- receiving ------------------------------------------------------------------------

    async def on_message(self, client: _Client, message: discord.Message) -> None:
        """Deliver in the order Discord sent: discord.py runs each event in its own task,
        so messages of one chat (or thread) take turns on a FIFO lock."""
        if client.user is None:
            return
        inbound = to_inbound(message, client.user, self.settings)
        if inbound is not None:
            await self.hand_over(inbound.chat, inbound.thread, inbound)

    async def hand_over(self, chat: str, thread: str, event: Event) -> None:
        await self._turns.hand_over(chat, thread, event)

    async def gone(
        self, client: _Client, channel_id: int, guild_id: int | None, message_ids: list[int]
    ) -> None:
        """Messages deleted on Discord: each erased from kioku's history, in turn."""
        for change in deleted(client, channel_id, guild_id, message_ids, self.settings):
            await self.hand_over(change.chat, change.thread, change)

    async def _catch_up_pass(self) -> None:
        """Read what each chat of the plan said after the last message kioku saw there, and
        hand it all over as one `Missed` (also when nothing was found)."""
        plan = await self.catch_up()
        if not plan.enabled:
            return
        messages = await self._history.read(self._connected(), plan)
        await self.deliver(Missed(self.name, messages))

    # -- sending --------------------------------------------------------------------------

    async def send(self, message: Outbound) -> None:
        """Post the reply in pieces of 2,000, the first replying to the asking message; or,
        with `long_as_file`, a reply longer than that as one `reply.md` file."""
        address = message.address
        self._stop_typing(address)
        if self._app_commands.owns(address.reply_to):
            chunks = split_message(message.text, MESSAGE_LIMIT)
            mentions = allowed_mentions(self.settings)
            await self._app_commands.answer(
                self._connected(), str(address.reply_to), chunks, mentions
            )
            return
        channel = self._channel(address)
        reference = None
        if address.reply_to is not None:
            reference = discord.MessageReference(
                message_id=int(address.reply_to), channel_id=channel.id, fail_if_not_exists=False
            )
        mentions = allowed_mentions(self.settings)
        chunks = split_message(message.text, MESSAGE_LIMIT)
        if goes_as_file(message, len(chunks)):
            document = discord.File(io.BytesIO(file_bytes(message.text)), FILE_NAME)
            try:
                await channel.send(
                    caption(message.text),
                    file=document,
                    reference=reference,  # type: ignore[arg-type]
                    allowed_mentions=mentions,
                )
                return
            except discord.Forbidden as exc:  # no Attach Files permission: as messages, then
                log.warning("discord_reply_file_refused", channel=str(channel.id), error=str(exc))
        for chunk in chunks:
            await channel.send(chunk, reference=reference, allowed_mentions=mentions)  # type: ignore[arg-type]
            reference = None

    async def working(self, address: Address) -> None:
        """Keep "kioku is typing..." up until the reply to `address` is sent; a command
        run as an application command shows Discord's own "thinking" instead."""
        if self._app_commands.owns(address.reply_to):
            return
        self._stop_typing(address)
        channel = self._channel(address)
        task = asyncio.create_task(self._type(channel), name=f"discord-typing-{channel.id}")
        self._typing[address] = task
        task.add_done_callback(lambda done: self._forget_typing(address, done))

    async def _type(self, channel: discord.PartialMessageable) -> None:
        try:
            async with channel.typing():
                await asyncio.sleep(TYPING_LIMIT)
        except discord.HTTPException as exc:
            log.warning("discord_typing_failed", channel=str(channel.id), error=repr(exc))

    def _stop_typing(self, address: Address) -> None:
        task = self._typing.pop(address, None)
        if task is not None:
            task.cancel()

    def _forget_typing(self, address: Address, task: asyncio.Task[None]) -> None:
        if self._typing.get(address) is task:
            del self._typing[address]

    async def direct_chat(self, user: str) -> str:
        """A Discord DM is a channel of its own: opened (or found) through the API."""
        client = self._connected()
        if not user.isdigit():
            raise ValueError(f"not a Discord user id: {user!r}")
        channel = await client.create_dm(discord.Object(int(user)))
        return str(channel.id)

    def _connected(self) -> _Client:
        client = self._client
        if client is None:
            raise AdapterFailed("the Discord client is not connected")
        return client

    def _channel(self, address: Address) -> discord.PartialMessageable:
        client = self._connected()
        channel_id = address.thread or address.chat
        if not channel_id.isdigit():
            raise ValueError(f"not a Discord channel id: {channel_id!r}")
        return client.get_partial_messageable(int(channel_id))
