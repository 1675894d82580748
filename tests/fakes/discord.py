"""A fake Discord (REST + websocket gateway) on 127.0.0.1, driven through the real discord.py.

    async with FakeDiscord() as discord_:
        settings = DiscordSettings(token="t", api_base=discord_.api_base,
                                   gateway_url=discord_.gateway_url)
        ...
        await discord_.push(discord_.dm("hello"))          # MESSAGE_CREATE on the live socket
        post = await discord_.next_post()                   # POST /channels/{id}/messages
        post.body["allowed_mentions"], post.body["message_reference"]

One guild (`GUILD_ID`) with a text channel (`CHANNEL_ID`), a public thread under it
(`THREAD_ID`) and a role the bot holds (`BOT_ROLE_ID`). Faults on demand:
`rate_limit(times)` answers the next sends with 429 (retry_after, X-RateLimit headers,
`Via` so discord.py believes Discord sent it), `refuse(status)` fails the next send,
`drop_connection(code)` closes the socket, `go_silent()` makes the live connection stop
acknowledging heartbeats and dispatching, `send_raw(frame)` sends any bytes as a frame and
`inject(payload)` any gateway payload (a recorded one) exactly as given.
Files: `attachment(name, type, data)` (and `voice_message(data, seconds)`) serve `data`
at the attachment's `url` on this server, as Discord's CDN does (`on_this_cdn` points a
recorded payload's attachment urls here); `refuse_downloads`
answers the next downloads with an error status.

The world is a recorded one (tests/fixtures/recorded/discord/, see PROVENANCE.md): the bot,
guild, channels and role are those of the recorded READY and GUILD_CREATE, which the fake
sends as recorded but for the session id and resume URL (its own); messages start from a
recorded MESSAGE_CREATE. Only the people (ALICE, strangers) and message ids are made here.

History, edits and deletions: every message `push`ed is kept in its channel's history,
which `GET /channels/{id}/messages?after=&limit=` answers as Discord does (newest first;
tests/fakes/discord_history.py); `sent_while_away(message)` only keeps it there, as a
message sent while kioku was not connected. `edit(message, text)` dispatches MESSAGE_UPDATE,
`delete(message)` MESSAGE_DELETE, `delete_bulk(messages)` MESSAGE_DELETE_BULK;
`history.refuse(channel, 403, "missing_access")` makes a channel refuse; `refuse_resume()`
makes the next RESUME fail (INVALID_SESSION, not resumable), so the client IDENTIFYs again.

Application commands: `PUT`/`GET` of the global and guild command lists are kept in
`commands` (by scope: "global" or the guild id) and logged in `command_puts`;
`refuse_commands(status)` fails the next upserts. `interact(interaction(name, value))`
dispatches INTERACTION_CREATE (built from the recorded payloads in
tests/fixtures/recorded/discord/interaction_*.json); `next_answer()` is the next thing
discord.py sent for an interaction: the callback (defer), the deferred answer filled in
(`PATCH .../messages/@original`) or a followup, each with whether only the asker sees it.
`expire(interaction)` makes its token answer 401 Invalid Webhook Token, as Discord does
after 15 minutes.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.discord_history import ChannelHistory
from tests.fakes.recorded import RECORDINGS, recorded_json

SHUTDOWN_WAIT = 1.0
DISCORD_EPOCH_MS = 1_420_070_400_000
RECORDED = RECORDINGS / "discord"
EPHEMERAL = 1 << 6
_counter = itertools.count()


def snowflake(at: datetime | None = None) -> int:
    """An id shaped like Discord's (timestamp << 22, of now or `at`): 18-19 digits, rising."""
    ms = int((at.timestamp() if at is not None else time.time()) * 1000)
    return ((ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) % 4096)


def recorded(name: str) -> dict[str, Any]:
    """A recorded gateway payload (a whole frame), freshly loaded."""
    return recorded_json(RECORDED / name)


def recorded_answer(name: str) -> dict[str, Any]:
    """A recorded REST answer (tests/fixtures/recorded/discord/rest/), freshly loaded."""
    return recorded_json(RECORDED / "rest" / name)


_READY = recorded("ready.json")["d"]
_GUILD = recorded("guild_create.json")["d"]
_MESSAGE = recorded("message_create_guild_unaddressed.json")["d"]

BOT_ID = int(_READY["user"]["id"])
APP_ID = int(_READY["application"]["id"])
OWNER_ID = int(_GUILD["owner_id"])
GUILD_ID = int(_GUILD["id"])
CHANNEL_ID = int(_GUILD["channels"][1]["id"])
OTHER_CHANNEL_ID = int(_GUILD["channels"][2]["id"])
THREAD_ID = int(_GUILD["threads"][0]["id"])
BOT_ROLE_ID = next(
    int(role)
    for member in _GUILD["members"]
    if member["user"]["id"] == str(BOT_ID)
    for role in member["roles"]
)
ALICE_ID = snowflake()
ALICE_DM_ID = snowflake()


def user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
        "bot": bot,
    }


BOT_USER: dict[str, Any] = _READY["user"]
ALICE = user(ALICE_ID, "alice")


async def _message_body(request: web.Request) -> tuple[dict[str, Any], list[Upload]]:
    """A message post's JSON, and its files when it is multipart (`payload_json` holds
    the JSON then, `files[N]` the files)."""
    if not request.content_type.startswith("multipart/"):
        return await request.json(), []
    form = await request.post()
    files = [
        Upload(value.filename, value.file.read())
        for key, value in form.items()
        if isinstance(value, web.FileField) and key.startswith("files[")
    ]
    return json.loads(str(form["payload_json"])), files


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py only decodes bodies whose Content-Type is exactly application/json.
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


@dataclass(frozen=True)
class Upload:
    """A file discord.py attached to a message: its name and bytes."""

    filename: str
    data: bytes


@dataclass
class Post:
    """One message discord.py sent: the channel and the decoded JSON body."""

    channel_id: str
    body: dict[str, Any]
    files: list[Upload] = field(default_factory=list)
    """The files attached (a multipart post), in order."""

    @property
    def content(self) -> str:
        return self.body.get("content") or ""

    @property
    def reply_to(self) -> str | None:
        reference = self.body.get("message_reference")
        return None if reference is None else str(reference["message_id"])


@dataclass
class Answer:
    """What discord.py sent for an interaction: `kind` is "callback" (the first answer:
    type 5 defers, 4 is a message), "original" (the deferred answer filled in) or
    "followup"; `ephemeral` whether only the asker sees it, as Discord decides it (the
    deferred answer keeps the flags of the defer)."""

    interaction: str
    kind: str
    body: dict[str, Any]
    ephemeral: bool

    @property
    def content(self) -> str:
        data = self.body.get("data") if self.kind == "callback" else self.body
        return (data or {}).get("content") or ""


@dataclass
class _Connection:
    ws: web.WebSocketResponse
    silent: bool = False


@dataclass
class FakeDiscord:
    heartbeat_interval_ms: int = 41_250
    token: str = "test-token"
    posts: list[Post] = field(default_factory=list)
    typing: list[str] = field(default_factory=list)
    identifies: list[dict[str, Any]] = field(default_factory=list)
    resumes: int = 0
    rate_limited: int = 0
    opened_dms: list[int] = field(default_factory=list)
    # The application's flags: 1 << 19 is the Message Content intent turned on (limited).
    app_flags: int = 1 << 19
    application: dict[str, Any] | None = None
    """The answer to GET /oauth2/applications/@me instead of the fake's own (a recorded one)."""

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._live: _Connection | None = None
        self._sessions: set[str] = set()
        self.history = ChannelHistory(_guild_channels(), {str(ALICE_DM_ID): ALICE})
        self._seq = 0
        self._post_queue: asyncio.Queue[Post] = asyncio.Queue()
        self._typing_queue: asyncio.Queue[str] = asyncio.Queue()
        self._ready = asyncio.Condition()
        self._readies = 0
        self._limit_next = 0
        self._retry_after = 0.0
        self._refuse_next: int | None = None
        self._files: dict[str, bytes] = {}  # attachment id -> the bytes its url serves
        self._refuse_downloads: list[int] = []
        self.downloads: list[str] = []  # attachment ids fetched, in order
        self.commands: dict[str, list[dict[str, Any]]] = {}  # scope -> registered commands
        self.command_puts: list[tuple[str, list[dict[str, Any]]]] = []
        self.command_gets: list[str] = []  # scopes whose list was read, in order
        self._refuse_commands: list[int] = []
        self._commands_synced = asyncio.Condition()
        self.answers: list[Answer] = []
        self._answer_queue: asyncio.Queue[Answer] = asyncio.Queue()
        self._interactions: dict[str, dict[str, Any]] = {}  # token -> the interaction
        self._defer_flags: dict[str, int] = {}  # interaction id -> flags of its defer
        self._expired: set[str] = set()  # tokens past their 15 minutes

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_post("/api/v10/channels/{channel}/messages", self._post_message)
        app.router.add_get("/api/v10/channels/{channel}/messages", self.history.get_messages)
        app.router.add_get("/api/v10/channels/{channel}", self.history.get_channel)
        app.router.add_post("/api/v10/channels/{channel}/typing", self._typing)
        app.router.add_post("/api/v10/users/@me/channels", self._open_dm)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{channel}/{id}/{filename}", self._download)
        commands = "/api/v10/applications/{app}/commands"
        guild_commands = "/api/v10/applications/{app}/guilds/{guild}/commands"
        app.router.add_put(commands, self._put_commands)
        app.router.add_get(commands, self._get_commands)
        app.router.add_put(guild_commands, self._put_commands)
        app.router.add_get(guild_commands, self._get_commands)
        app.router.add_post("/api/v10/interactions/{id}/{token}/callback", self._callback)
        app.router.add_post("/api/v10/webhooks/{app}/{token}", self._followup)
        app.router.add_patch(
            "/api/v10/webhooks/{app}/{token}/messages/@original", self._edit_original
        )
        # A daemon still connected when the fake closes reconnects at once; the runner's
        # default would wait 60 s for that new connection's handler to end.
        self._runner = web.AppRunner(app, shutdown_timeout=SHUTDOWN_WAIT)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        if self._live is not None:
            await self._live.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/gateway"

    def env(self) -> dict[str, str]:
        """A daemon's settings that point its Discord adapter at this fake."""
        return {
            "KIOKU_DISCORD__TOKEN": self.token,
            "KIOKU_DISCORD__API_BASE": self.api_base,
            "KIOKU_DISCORD__GATEWAY_URL": self.gateway_url,
        }

    # -- what tests do --------------------------------------------------------------------

    @property
    def readies(self) -> int:
        """Sessions READY or RESUMED so far (what `wait_ready` counts)."""
        return self._readies

    async def wait_ready(self, count: int, within: float = 10.0) -> None:
        """Until `count` sessions have been READY or RESUMED in total."""
        async with self._ready:
            await asyncio.wait_for(self._ready.wait_for(lambda: self._readies >= count), within)

    async def next_post(self, within: float = 10.0) -> Post:
        return await asyncio.wait_for(self._post_queue.get(), within)

    async def next_typing(self, within: float = 10.0) -> str:
        """The channel of the next typing indicator discord.py sent."""
        return await asyncio.wait_for(self._typing_queue.get(), within)

    def pending_posts(self) -> int:
        return self._post_queue.qsize()

    def rate_limit(self, times: int = 1, retry_after: float = 0.2) -> None:
        self._limit_next = times
        self._retry_after = retry_after

    def refuse(self, status: int = 403) -> None:
        """The next send gets `status` (403: missing permissions) instead of a message."""
        self._refuse_next = status

    async def drop_connection(self, code: int = 4000) -> None:
        """Close the live socket: 4000 can be resumed (Discord's restarts), 4004 cannot
        (authentication failed)."""
        live, self._live = self._live, None
        assert live is not None, "no live gateway connection"
        await live.ws.close(code=code, message=b"fake close")

    def go_silent(self) -> None:
        """The live connection still reads, but acknowledges and dispatches nothing."""
        assert self._live is not None, "no live gateway connection"
        self._live.silent = True

    async def send_raw(self, frame: bytes, kind: WSMsgType = WSMsgType.TEXT) -> None:
        """Send `frame` on the live connection byte for byte, valid UTF-8 or not."""
        assert self._live is not None, "no live gateway connection"
        await self._live.ws.send_frame(frame, kind)

    async def inject(self, payload: str) -> None:
        """Send a gateway payload (a whole frame's JSON) on the live connection exactly as
        given: its sequence number, nulls and unknown keys included. An interaction's token
        answers from then on, as Discord's does once it has dispatched the interaction."""
        assert self._live is not None, "no live gateway connection"
        frame = json.loads(payload)
        if frame.get("t") == "INTERACTION_CREATE":
            self._interactions[frame["d"]["token"]] = frame["d"]
        await self._live.ws.send_str(payload)

    async def push(self, message: dict[str, Any]) -> dict[str, Any]:
        """MESSAGE_CREATE on the live socket; the channel's history keeps it too."""
        self.history.keep(message)
        await self._dispatch("MESSAGE_CREATE", message)
        return message

    def sent_while_away(self, message: dict[str, Any]) -> dict[str, Any]:
        """A message sent while kioku was not connected: in its channel's history (what
        `GET /channels/{id}/messages` answers), dispatched to nobody."""
        self.history.keep(message)
        return message

    async def edit(self, message: dict[str, Any], content: str) -> dict[str, Any]:
        """The author edits `message`: MESSAGE_UPDATE carries the whole message, as
        MESSAGE_CREATE did, with the new `content` and an `edited_timestamp`
        (developers/events/gateway-events.mdx, Message Update; recorded:
        message_update_edit_reply.json)."""
        edited = {**copy.deepcopy(message), "content": content, "edited_timestamp": _now_iso()}
        self.history.replace(edited)
        await self._dispatch("MESSAGE_UPDATE", edited)
        return edited

    async def delete(self, message: dict[str, Any]) -> None:
        """The author deletes `message`: MESSAGE_DELETE in the recorded shape (message_delete.json
        in a guild, message_delete_dm.json in a DM)."""
        guild = "guild_id" in message
        frame = recorded("message_delete.json" if guild else "message_delete_dm.json")
        frame["d"].update(id=message["id"], channel_id=message["channel_id"])
        if guild:
            frame["d"]["guild_id"] = message["guild_id"]
        self.history.remove(message["channel_id"], [message["id"]])
        await self._dispatch("MESSAGE_DELETE", frame["d"])

    async def delete_bulk(self, messages: list[dict[str, Any]]) -> None:
        """A moderator deletes guild messages of one channel at once: MESSAGE_DELETE_BULK in
        the recorded shape (message_delete_bulk_guild.json)."""
        data = recorded("message_delete_bulk_guild.json")["d"]
        data.update(ids=[m["id"] for m in messages], channel_id=messages[0]["channel_id"])
        self.history.remove(data["channel_id"], data["ids"])
        await self._dispatch("MESSAGE_DELETE_BULK", data)

    def refuse_resume(self) -> None:
        """Forget every session: the next RESUME is answered INVALID_SESSION, `d` false (as
        recorded: invalid_session.json), and the client must IDENTIFY anew."""
        self._sessions.clear()

    def dm(self, content: str, *, author: dict[str, Any] = ALICE, **extra: Any) -> dict[str, Any]:
        channel = ALICE_DM_ID if author is ALICE else int(author["id"]) + 1
        self.history.dm_recipients.setdefault(str(channel), author)
        return self.message(content, channel_id=channel, author=author, guild=False, **extra)

    def message(
        self,
        content: str,
        *,
        channel_id: int = CHANNEL_ID,
        author: dict[str, Any] = ALICE,
        guild: bool = True,
        mentions: list[dict[str, Any]] | None = None,
        mention_roles: list[int] | None = None,
        attachments: list[dict[str, Any]] | None = None,
        reply_to: dict[str, Any] | None = None,
        message_id: int | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE's data; `at` is when it was sent (its id holds that time too)."""
        data = copy.deepcopy(_MESSAGE)
        sent = at or datetime.now(UTC)
        data.update(
            id=str(message_id or snowflake(sent)),
            channel_id=str(channel_id),
            author=author,
            content=content,
            timestamp=sent.isoformat(),
            nonce=str(snowflake()),
            mentions=mentions or [],
            mention_roles=[str(role) for role in mention_roles or []],
            attachments=attachments or [],
        )
        if guild:
            data["member"]["roles"] = []
        else:
            del data["guild_id"], data["member"]
        if reply_to is not None:
            data["type"] = 19
            data["message_reference"] = {
                "message_id": reply_to["id"],
                "channel_id": reply_to["channel_id"],
                **({"guild_id": str(GUILD_ID)} if guild else {}),
            }
            data["referenced_message"] = reply_to
        return data

    def mention(self, content: str, **extra: Any) -> dict[str, Any]:
        """A guild message that starts with the bot's mention."""
        return self.message(f"<@{BOT_ID}> {content}", mentions=[BOT_USER], **extra)

    def attachment(
        self,
        filename: str,
        content_type: str | None,
        data: bytes = bytes(1024),
        *,
        declared: int | None = None,
    ) -> dict[str, Any]:
        """A message's attachment whose `url` serves `data`; `declared` is the size
        Discord claims (default: the real one)."""
        attachment_id = str(snowflake())
        self._files[attachment_id] = data
        url = f"http://127.0.0.1:{self._port}/attachments/{CHANNEL_ID}/{attachment_id}/{filename}"
        return {
            "id": attachment_id,
            "filename": filename,
            "size": len(data) if declared is None else declared,
            "url": f"{url}?ex=0&is=0&hm=0",
            "proxy_url": f"{url}?ex=0&is=0&hm=0",
            "content_type": content_type,
        }

    def voice_message(self, data: bytes, seconds: float) -> dict[str, Any]:
        """A voice message's attachment, as Discord's clients record them (OGG/Opus)."""
        return {
            **self.attachment("voice-message.ogg", "audio/ogg", data),
            "duration_secs": seconds,
            "waveform": "AAAAAAAAAAAA",
            "flags": 0,
        }

    def on_this_cdn(self, payload: str, files: dict[str, bytes] | None = None) -> str:
        """A recorded payload whose attachment urls (Discord's CDN and media proxy) point at
        this server instead, which serves `files` (attachment id -> bytes) there: recorded
        messages name files whose bytes were never published."""
        self._files.update(files or {})
        here = f"http://127.0.0.1:{self._port}/attachments/"
        for cdn in (
            "https://cdn.discordapp.com/attachments/",
            "https://media.discordapp.net/attachments/",
        ):
            payload = payload.replace(cdn, here)
        return payload

    def refuse_downloads(self, *statuses: int) -> None:
        """The next downloads get these statuses (404, 403, 500, ...) instead of the bytes."""
        self._refuse_downloads.extend(statuses)

    def bot_message(self, content: str, channel_id: int = CHANNEL_ID) -> dict[str, Any]:
        return self.message(content, channel_id=channel_id, author=BOT_USER)

    # -- application commands -----------------------------------------------------------

    def interaction(
        self,
        name: str,
        value: str | None = None,
        *,
        option: str | None = None,
        where: str = "guild",
        channel_id: int | None = None,
        author: dict[str, Any] = ALICE,
    ) -> dict[str, Any]:
        """A slash command `/name` (with `value` in its string option `option`, by default
        the one registered for `name`) run by `author`: `where` is "guild" (in
        `channel_id`, default CHANNEL_ID), "dm" (the bot's DM with them) or "private" (a DM
        between people, through a user-installed app).
        The recorded payload with this fake's ids; see PROVENANCE.md for what changes."""
        source = "guild" if where == "guild" else "private_channel"
        data = recorded(f"interaction_slash_command_{source}.json")["d"]
        interaction_id = str(snowflake())
        data.update(id=interaction_id, application_id=str(APP_ID), token=f"token-{snowflake()}")
        registered = self._registered(name, where == "guild")
        data["data"] = {"id": str(snowflake()), "name": name, "type": 1}
        if registered is not None:  # Discord names the command's id, and its guild if any
            data["data"]["id"] = registered["id"]
            if "guild_id" in registered:
                data["data"]["guild_id"] = registered["guild_id"]
        if value is not None:
            options = (registered or {}).get("options") or [{"name": "argument"}]
            data["data"]["options"] = [
                {"type": 3, "name": option or options[0]["name"], "value": value}
            ]
        if where == "guild":
            channel = str(channel_id or CHANNEL_ID)
            data.update(guild_id=str(GUILD_ID), channel_id=channel)
            data["guild"]["id"] = str(GUILD_ID)
            data["channel"].update(id=channel, guild_id=str(GUILD_ID))
            data["member"]["user"] = copy.deepcopy(author)
        else:
            dm = ALICE_DM_ID if author is ALICE else int(author["id"]) + 1
            channel = str(channel_id or dm)
            data.update(channel_id=channel, user=copy.deepcopy(author))
            data["channel"]["id"] = channel
            data["authorizing_integration_owners"] = {"1": author["id"]}
            if where == "dm":
                data["context"] = 1
        return data

    def _registered(self, name: str, in_guild: bool) -> dict[str, Any] | None:
        """Command `name` as registered where it would be run: the guild's own first."""
        scopes = [str(GUILD_ID), "global"] if in_guild else ["global"]
        for scope in scopes:
            for command in self.commands.get(scope, []):
                if command["name"] == name:
                    return command
        return None

    async def interact(self, interaction: dict[str, Any]) -> dict[str, Any]:
        """Dispatch INTERACTION_CREATE on the live socket; its answers are recorded."""
        self._interactions[interaction["token"]] = interaction
        await self._dispatch("INTERACTION_CREATE", interaction)
        return interaction

    async def next_answer(self, within: float = 10.0) -> Answer:
        return await asyncio.wait_for(self._answer_queue.get(), within)

    def pending_answers(self) -> int:
        return self._answer_queue.qsize()

    def expire(self, interaction: dict[str, Any]) -> None:
        """Its token is past Discord's 15 minutes: every use of it answers 401."""
        self._expired.add(interaction["token"])

    def refuse_commands(self, *statuses: int) -> None:
        """The next command upserts get these statuses (403: no applications.commands)."""
        self._refuse_commands.extend(statuses)

    async def wait_command_puts(self, count: int, within: float = 10.0) -> None:
        """Until `count` command lists have been PUT (or refused) in total."""
        async with self._commands_synced:
            await asyncio.wait_for(
                self._commands_synced.wait_for(lambda: len(self.command_puts) >= count), within
            )

    async def wait_command_gets(self, count: int, within: float = 10.0) -> None:
        """Until `count` command lists have been read in total."""
        async with self._commands_synced:
            await asyncio.wait_for(
                self._commands_synced.wait_for(lambda: len(self.command_gets) >= count), within
            )

    # -- REST -----------------------------------------------------------------------------

    async def _me(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        return _json(BOT_USER)  # the recorded READY's user: the same object

    async def _application(self, request: web.Request) -> web.Response:
        if self.application is not None:
            return _json(self.application)
        return _json(
            {
                "id": str(APP_ID),
                "name": "kioku",
                "description": "",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": user(OWNER_ID, "owner"),
                "verify_key": "0" * 64,
                "flags": self.app_flags,
            }
        )

    async def _post_message(self, request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        body, files = await _message_body(request)
        if self._refuse_next is not None:
            status, self._refuse_next = self._refuse_next, None
            return _json({"message": "Missing Permissions", "code": 50013}, status)
        if self._limit_next > 0:
            self._limit_next -= 1
            self.rate_limited += 1
            headers = {
                "Via": "1.1 google",
                "X-RateLimit-Limit": "5",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset-After": str(self._retry_after),
                "X-RateLimit-Bucket": "fake-bucket",
                "X-RateLimit-Scope": "user",
            }
            limited = recorded_answer("rate_limited_docs_example.json")
            return _json({**limited, "retry_after": self._retry_after}, 429, headers)
        post = Post(channel, body, files)
        self.posts.append(post)
        self._post_queue.put_nowait(post)
        sent = recorded_answer("create_message.json")
        sent.update(
            id=str(snowflake()),
            channel_id=channel,
            content=body.get("content") or "",
            timestamp=_now_iso(),
            mentions=[],
        )
        return _json(sent)

    async def _open_dm(self, request: web.Request) -> web.Response:
        """The DM channel with a user (alice's is ALICE_DM_ID, anyone else's their id + 1,
        as `dm` makes them)."""
        recipient = int((await request.json())["recipient_id"])
        channel = ALICE_DM_ID if recipient == ALICE_ID else recipient + 1
        self.opened_dms.append(recipient)
        return _json(
            {
                "id": str(channel),
                "type": 1,
                "last_message_id": None,
                "recipients": [user(recipient, "them")],
            }
        )

    async def _download(self, request: web.Request) -> web.Response:
        attachment_id = request.match_info["id"]
        self.downloads.append(attachment_id)
        if self._refuse_downloads:
            return web.Response(status=self._refuse_downloads.pop(0), text="refused")
        data = self._files.get(attachment_id)
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _put_commands(self, request: web.Request) -> web.Response:
        """Bulk overwrite: the scope holds exactly the list sent, each with the ids and
        version Discord adds."""
        scope = request.match_info.get("guild", "global")
        body = await request.json()
        async with self._commands_synced:
            self.command_puts.append((scope, body))
            self._commands_synced.notify_all()
        if self._refuse_commands:
            status = self._refuse_commands.pop(0)
            return _json({"message": "Missing Access", "code": 50001}, status)
        held = [
            {
                **command,
                "id": str(snowflake()),
                "application_id": str(APP_ID),
                "version": str(snowflake()),
                **({} if scope == "global" else {"guild_id": scope}),
            }
            for command in body
        ]
        self.commands[scope] = held
        return _json(held)

    async def _get_commands(self, request: web.Request) -> web.Response:
        scope = request.match_info.get("guild", "global")
        async with self._commands_synced:
            self.command_gets.append(scope)
            self._commands_synced.notify_all()
        return _json(self.commands.get(scope, []))

    def _answered(self, interaction: str, kind: str, body: dict[str, Any], flags: int) -> None:
        answer = Answer(interaction, kind, body, bool(flags & EPHEMERAL))
        self.answers.append(answer)
        self._answer_queue.put_nowait(answer)

    def _token_refused(self, token: str) -> web.Response | None:
        if token in self._expired:
            return _json({"message": "Invalid Webhook Token", "code": 50027}, 401)
        if token not in self._interactions:
            return _json({"message": "Unknown Webhook", "code": 10015}, 404)
        return None

    def _interaction_message(self, token: str, content: str, flags: int) -> dict[str, Any]:
        interaction = self._interactions[token]
        message = self.message(
            content,
            channel_id=int(interaction["channel_id"]),
            author=BOT_USER,
            guild="guild_id" in interaction,
        )
        return {**message, "flags": flags, "webhook_id": str(APP_ID)}

    async def _callback(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        refused = self._token_refused(token)
        if refused is not None:
            return refused
        interaction = request.match_info["id"]
        body = await request.json()
        flags = (body.get("data") or {}).get("flags") or 0
        self._defer_flags[interaction] = flags
        self._answered(interaction, "callback", body, flags)
        resource: dict[str, Any] = {"type": body["type"]}
        if body["type"] == 4:
            content = body["data"].get("content") or ""
            resource["message"] = self._interaction_message(token, content, flags)
        return _json(
            {
                "interaction": {
                    "id": interaction,
                    "type": 2,
                    "response_message_id": str(snowflake()),
                    "response_message_loading": body["type"] == 5,
                    "response_message_ephemeral": bool(flags & EPHEMERAL),
                },
                "resource": resource,
            }
        )

    async def _followup(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        refused = self._token_refused(token)
        if refused is not None:
            return refused
        body, _ = await _message_body(request)
        flags = body.get("flags") or 0
        self._answered(self._interactions[token]["id"], "followup", body, flags)
        return _json(self._interaction_message(token, body.get("content") or "", flags))

    async def _edit_original(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        refused = self._token_refused(token)
        if refused is not None:
            return refused
        body, _ = await _message_body(request)
        interaction = self._interactions[token]["id"]
        flags = self._defer_flags.get(interaction, 0)  # the deferred message keeps its own
        self._answered(interaction, "original", body, flags)
        return _json(self._interaction_message(token, body.get("content") or "", flags))

    async def _typing(self, request: web.Request) -> web.Response:
        self.typing.append(request.match_info["channel"])
        self._typing_queue.put_nowait(request.match_info["channel"])
        return web.Response(status=204)

    # -- gateway --------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        connection = _Connection(ws)
        self._live = connection
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
        async for frame in ws:
            if frame.type is not WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            op = payload.get("op")
            if op == 1 and not connection.silent:
                await ws.send_json({"op": 11})
            elif op == 2:
                self.identifies.append(payload["d"])
                await self._identify(connection)
            elif op == 6:
                await self._resume(connection, payload["d"])
        if self._live is connection:
            self._live = None
        return ws

    async def _identify(self, connection: _Connection) -> None:
        session = f"session-{snowflake()}"
        self._sessions.add(session)
        ready = {**copy.deepcopy(_READY), "session_id": session}
        ready["resume_gateway_url"] = self.gateway_url
        await self._send(connection, "READY", ready)
        await self._send(connection, "GUILD_CREATE", self._guild())
        await self._count_ready()

    async def _resume(self, connection: _Connection, data: dict[str, Any]) -> None:
        if data.get("session_id") not in self._sessions:
            await connection.ws.send_json(recorded("invalid_session.json"))
            return
        self.resumes += 1
        await self._send(connection, "RESUMED", {})
        await self._count_ready()

    async def _count_ready(self) -> None:
        async with self._ready:
            self._readies += 1
            self._ready.notify_all()

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        live = self._live
        assert live is not None, "no live gateway connection"
        if not live.silent:
            await self._send(live, event, data)

    async def _send(self, connection: _Connection, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        await connection.ws.send_json({"op": 0, "t": event, "s": self._seq, "d": data})

    def _guild(self) -> dict[str, Any]:
        return copy.deepcopy(_GUILD)


def _guild_channels() -> dict[str, dict[str, Any]]:
    """The guild's channels and threads as `GET /channels/{id}` answers them: as GUILD_CREATE
    holds them, with the `guild_id` a channel object names outside it."""
    return {
        channel["id"]: {**copy.deepcopy(channel), "guild_id": str(GUILD_ID)}
        for channel in [*_GUILD["channels"], *_GUILD["threads"]]
    }
