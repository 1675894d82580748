"""A fake Slack on 127.0.0.1: the Web API methods kioku calls, and a Socket Mode websocket.

The real slack-bolt / slack_sdk talk to it unchanged (`base_url` = `fake.base_url`).
What it sends and answers is built from payloads Slack really sent
(tests/fixtures/recorded/slack/, `recorded`), ids re-pointed to this fake's workspace:
`dm`, `mention`, `event_callback` and `push` fill in a recorded event, body and Socket
Mode envelope; `auth.test`, `users.info` and the upload methods answer recorded answers.
Tests push Events API envelopes down the socket, or any message exactly as given
(`inject`; any bytes: `send_raw`), post any HTTP body exactly as given, signed
(`post_raw`), see the acknowledgements and every Web API call, make a method answer
`ratelimited` (429 + Retry-After), close the socket or make it go silent (no pongs,
nothing sent). `signed_headers` signs an HTTP Events API request the way Slack does.
Files: `file(data, name, mimetype)` makes a `files` item whose `url_private_download` on
this server serves `data` to a request bearing `bot_token` (401 otherwise), `hosted`
serves the files of a recorded payload; `downloads` records who asked, and
`fail_downloads` / `redirect_downloads` script the next answers.
Slash commands:
`slash_command` builds one whose `response_url` is served here (what is posted there is
in `responses`; `refuse_responses` makes the next ones fail), `push_command` sends it as
a `slash_commands` envelope, `form_body` encodes it as Slack posts one over HTTP; `dms`
names each user's DM channel with the bot (`conversations.open`, default `D0DM`).
History (`history`, tests/fakes/slack_history.py): every message pushed or posted is kept,
`history.keep` keeps one sent while kioku was down without pushing it, and
`conversations.history` / `conversations.replies` read them back; `history.edited` and
`history.deleted` build the edit and deletion events to push; `disconnect` sends Socket
Mode's recorded `disconnect`, after which the client connects again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from adapters.slack.scopes import SCOPES
from tests.fakes.recorded import RECORDINGS, recorded_json
from tests.fakes.slack_history import METHODS as HISTORY_METHODS
from tests.fakes.slack_history import SlackHistory

TEAM = "T0TEAM"
BOT_USER = "U0KIOKU"
BOT_ID = "B0KIOKU"
RECORDED = RECORDINGS / "slack"
SLACK_FILES = "https://files.slack.com/"


def recorded(name: str) -> Any:
    """A fresh copy of tests/fixtures/recorded/slack/`name`.json (see its PROVENANCE.md)."""
    return recorded_json(RECORDED / f"{name}.json")


@dataclass
class Call:
    """One Web API request as the fake saw it."""

    method: str
    args: dict[str, Any]
    authorization: str
    at: float  # loop time


@dataclass(frozen=True)
class Download:
    """One request for a file's bytes."""

    file_id: str
    authorization: str


@dataclass(frozen=True)
class Response:
    """One message posted to a slash command's `response_url`."""

    command: str  # the path part naming the command it answers
    body: dict[str, Any]


@dataclass
class _Socket:
    ws: web.WebSocketResponse
    silent: bool = False
    broken: bool = False  # a send failed on it: the client is closing it


@dataclass
class FakeSlack:
    users: dict[str, str] = field(default_factory=dict)  # user id -> display name
    retry_after: int = 1
    calls: list[Call] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)
    connections: int = 0  # websockets ever opened
    bot_token: str = "xoxb-test"
    downloads: list[Download] = field(default_factory=list)
    uploads: dict[str, bytes] = field(default_factory=dict)  # file id -> bytes (files_upload_v2)
    dms: dict[str, str] = field(default_factory=dict)  # user -> DM channel with the bot
    responses: list[Response] = field(default_factory=list)  # posted to response_urls
    # What every answer's x-oauth-scopes header says the token has: all kioku uses.
    scopes: str = ",".join(SCOPES)

    def __post_init__(self) -> None:
        self._ratelimited: dict[str, int] = {}
        self._errors: dict[str, str] = {}
        self._sockets: list[_Socket] = []
        self._changed = asyncio.Condition()
        self._ts = itertools.count(1)
        self._last_us = 0  # the newest ts given, in microseconds
        self.history = SlackHistory(self.message_ts)
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._files: dict[str, tuple[bytes, str, bool]] = {}  # id -> bytes, type, chunked
        self._download_faults: list[web.Response] = []
        self._response_faults: list[int] = []

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> FakeSlack:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/files-pri/{team}-{file}/download/{name}", self._download)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/commands/{team}/{command}/{secret}", self._respond)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        for socket in self._sockets:
            await socket.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeSlack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def env(self) -> dict[str, str]:
        """A daemon's settings that point its Slack adapter at this fake, with its bot token."""
        return {"KIOKU_SLACK__BOT_TOKEN": self.bot_token, "KIOKU_SLACK__BASE_URL": self.base_url}

    # -- what tests do -------------------------------------------------------------------------

    def ratelimit(self, method: str, times: int = 1) -> None:
        """The next `times` calls of `method` answer 429 with `Retry-After`."""
        self._ratelimited[method] = times

    def refuse(self, method: str, error: str = "invalid_auth") -> None:
        """Every later call of `method` answers `{"ok": false, "error": error}`."""
        self._errors[method] = error

    def made(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    @property
    def posted(self) -> list[dict[str, Any]]:
        return [call.args for call in self.made("chat.postMessage")]

    async def wait_for(self, predicate: Callable[[], bool], within: float = 10.0) -> None:
        """Wait until `predicate()` holds; checked after every request, ack and socket change."""
        async with asyncio.timeout(within):
            async with self._changed:
                await self._changed.wait_for(predicate)

    async def wait_posts(self, count: int, within: float = 10.0) -> list[dict[str, Any]]:
        await self.wait_for(lambda: len(self.posted) >= count, within)
        return self.posted

    async def push(
        self, event: dict[str, Any], *, event_id: str | None = None, retry: int = 0
    ) -> str:
        """Send an events_api envelope down the newest open socket; return its envelope id."""
        if _a_message(event):
            self.history.keep(event)  # what Slack delivers, it keeps
        message = envelope(event_callback(event, event_id), retry=retry)
        await self._deliver(json.dumps(message))
        return str(message["envelope_id"])

    async def _deliver(self, text: str) -> None:
        """Send `text` down the newest open socket; if the client is closing that one (after
        a frame it refused, before `closed` shows it), down the next one it opens, as Slack
        delivers an envelope again on a new connection."""
        while True:
            await self.wait_for(lambda: self._open() is not None)
            socket = self._open()
            assert socket is not None
            try:
                await socket.ws.send_str(text)
                return
            except ConnectionError:
                socket.broken = True

    async def inject(self, message: Any) -> None:
        """Send `message` (any JSON value: a recorded Socket Mode message) down the newest
        open socket exactly as given."""
        await self.send_raw(json.dumps(message).encode())

    async def post_raw(
        self, url: str, body: bytes, secret: str, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """POST `body` exactly as given to an HTTP-mode adapter's `url`, signed with
        `secret` as Slack signs it (`headers` added); its status and text."""
        sent = {**signed_headers(secret, body), **(headers or {})}
        async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=sent) as r:
            return r.status, await r.text()

    def hosted(self, payload: Any, data: bytes) -> Any:
        """`payload` with every link to Slack's file host pointed at this server, each of
        its `files` served here with `data` (as the file's own mimetype)."""
        text = json.dumps(payload).replace(SLACK_FILES, f"http://127.0.0.1:{self.port}/")
        moved = json.loads(text)
        for item in _files_of(moved):
            mimetype = item.get("mimetype") or "application/octet-stream"
            self._files[str(item.get("id"))] = (data, mimetype, False)
        return moved

    async def send_raw(self, frame: bytes, kind: WSMsgType = WSMsgType.TEXT) -> None:
        """Send `frame` down the newest open socket byte for byte, valid UTF-8 or not (a
        client refusing a frame that big may close the socket while it is still sent)."""
        await self.wait_for(lambda: self._open() is not None)
        socket = self._open()
        assert socket is not None
        with contextlib.suppress(ConnectionError):
            await socket.ws.send_frame(frame, kind)

    async def disconnect(self) -> None:
        """Ask the client to connect again, as Slack does before it rotates a socket (the
        recorded socket_disconnect.json)."""
        await self.inject(recorded("socket_disconnect"))

    async def close_socket(self) -> None:
        """Close the open socket from the server's side, as Slack does when it rotates them."""
        socket = self._open()
        if socket is not None:
            await socket.ws.close()

    def go_silent(self) -> None:
        """The open socket stays open but answers no ping and sends nothing more."""
        socket = self._open()
        if socket is not None:
            socket.silent = True

    def file(
        self,
        data: bytes,
        name: str,
        mimetype: str,
        *,
        declared: int | None = None,
        served_as: str | None = None,
        chunked: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        """A `files` item served here, the recorded one of file_share_photo_channel.json
        without what describes that photo (its thumbnails and size); `declared` is the
        size Slack claims (default: the real one), `served_as` the download's
        Content-Type (default: `mimetype`); `chunked` sends the bytes without a
        Content-Length."""
        file_id = f"F{len(self._files) + 1:08d}"
        self._files[file_id] = (data, served_as or mimetype, chunked)
        [shape] = recorded("file_share_photo_channel")["event"]["files"]
        kept = {k: v for k, v in shape.items() if not k.startswith(("thumb_", "original_"))}
        return kept | {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rpartition(".")[2],
            "size": len(data) if declared is None else declared,
            "mode": "hosted",
            "url_private": f"http://127.0.0.1:{self.port}/files-pri/{TEAM}-{file_id}/{name}",
            "url_private_download": (
                f"http://127.0.0.1:{self.port}/files-pri/{TEAM}-{file_id}/download/{name}"
            ),
            **extra,
        }

    def fail_downloads(self, *statuses: int) -> None:
        """The next downloads get these statuses instead of the bytes."""
        self._download_faults.extend(web.Response(status=s, text="refused") for s in statuses)

    def redirect_downloads(self, location: str) -> None:
        """The next download is redirected to `location` (where the token must not follow)."""
        self._download_faults.append(web.Response(status=302, headers={"Location": location}))

    def message_ts(self) -> str:
        """A new message's `ts`: now, as Slack stamps it, and later than every one before."""
        self._last_us = max(time.time_ns() // 1000, self._last_us + 1)
        return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    def dm(self, user: str, text: str, *, channel: str = "D0DM", **extra: Any) -> dict[str, Any]:
        """The recorded message.im event (message_im_docs.json) from `user`."""
        event = recorded("message_im_docs")["event"]
        ts = self.message_ts()
        said = {"channel": channel, "user": user, "text": text}
        return event | said | {"ts": ts, "event_ts": ts} | extra

    def mention(self, user: str, text: str, *, channel: str = "C0CHAN", **extra: Any) -> dict:
        """The recorded app_mention event (socket_app_mention.json) from `user`."""
        event = recorded("socket_app_mention")["payload"]["event"]
        ts = self.message_ts()
        said = {"channel": channel, "user": user, "text": f"<@{BOT_USER}> {text}"}
        return event | said | {"ts": ts, "event_ts": ts} | extra

    # -- slash commands ---------------------------------------------------------------------------

    def slash_command(
        self, user: str, command: str, text: str = "", *, channel: str = "D0DM", **extra: Any
    ) -> dict[str, Any]:
        """A slash command as Slack sends it (the shape of the recorded
        tests/fixtures/recorded/slack/slash_command_*.json), answerable on this server."""
        serial = next(self._ts)
        return {
            "token": "verification-token",
            "team_id": TEAM,
            "team_domain": "test",
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0KIOKU",
            "is_enterprise_install": "false",
            "response_url": f"http://127.0.0.1:{self.port}/commands/{TEAM}/{serial}/secret",
            "trigger_id": f"{serial}.{serial}.{uuid.uuid4().hex}",
            **extra,
        }

    async def push_command(self, payload: dict[str, Any]) -> str:
        """Send a slash_commands envelope down the newest open socket; return its envelope id."""
        await self.wait_for(lambda: self._open() is not None)
        socket = self._open()
        assert socket is not None
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": "slash_commands",
            "accepts_response_payload": True,
        }
        await socket.ws.send_str(json.dumps(envelope))
        return envelope_id

    def answers_to(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """What was posted to the `response_url` of `payload`, in order."""
        path = urllib.parse.urlsplit(payload["response_url"]).path.split("/")[3]
        return [response.body for response in self.responses if response.command == path]

    def refuse_responses(self, *statuses: int) -> None:
        """The next posts to a response_url get these statuses (Slack: 404 once used up)."""
        self._response_faults.extend(statuses)

    async def _respond(self, request: web.Request) -> web.Response:
        self.responses.append(Response(request.match_info["command"], await request.json()))
        await self._notify()
        if self._response_faults:
            return web.Response(status=self._response_faults.pop(0), text="used_url")
        return web.Response(text="ok")

    # -- the server ----------------------------------------------------------------------------

    def _open(self) -> _Socket | None:
        live = [
            socket
            for socket in self._sockets
            if not socket.ws.closed and not socket.silent and not socket.broken
        ]
        return live[-1] if live else None

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        elif request.can_read_body:
            args.update(await request.post())
        auth = request.headers.get("Authorization", "")
        self.calls.append(Call(method, args, auth, asyncio.get_running_loop().time()))
        await self._notify()
        if self._ratelimited.get(method, 0) > 0:
            self._ratelimited[method] -= 1
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=429,
                headers={"Retry-After": str(self.retry_after)},
            )
        if method in self._errors:
            return web.json_response({"ok": False, "error": self._errors[method]})
        scopes = {"x-oauth-scopes": self.scopes}
        if method in HISTORY_METHODS:
            return web.json_response(self.history.answer(method, args), headers=scopes)
        return web.json_response({"ok": True, **self._answer(method, args)}, headers=scopes)

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return _answer("web_auth_test")
        if method == "apps.connections.open":
            return {"url": f"ws://127.0.0.1:{self.port}/socket"}
        if method == "users.info":
            user = str(args.get("user"))
            name = self.users.get(user, user.lower())
            answer = _answer("web_users_info")
            answer["user"] |= {"id": user, "team_id": TEAM, "name": name, "real_name": name}
            answer["user"]["profile"] |= {"display_name": name, "real_name": name, "team": TEAM}
            return answer
        if method == "chat.postMessage":
            return {"channel": args.get("channel"), "ts": self._posted(args)}
        if method == "conversations.open":  # the DM with the bot, where `dm` writes from
            return {"channel": {"id": self.dms.get(str(args.get("users")), "D0DM")}}
        if method == "chat.postEphemeral":
            return {"message_ts": self.message_ts()}
        if method.startswith("files."):
            return self._file_answer(method, args)
        return {}

    def _posted(self, args: dict[str, Any]) -> str:
        """Keep what kioku posted as Slack keeps a bot's message (app_message_own.json)."""
        ts = self.message_ts()
        said = {"channel": args.get("channel"), "text": args.get("text"), "ts": ts}
        thread = {"thread_ts": args["thread_ts"]} if args.get("thread_ts") else {}
        self.history.keep(recorded("app_message_own")["event"] | said | thread)
        return ts

    async def _download(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file"]
        auth = request.headers.get("Authorization", "")
        self.downloads.append(Download(file_id, auth))
        await self._notify()
        if auth != f"Bearer {self.bot_token}":
            return web.Response(status=401, text="not_authed")
        if self._download_faults:
            return self._download_faults.pop(0)
        if file_id not in self._files:
            return web.Response(status=404, text="file_not_found")
        data, content_type, chunked = self._files[file_id]
        if not chunked:
            return web.Response(body=data, headers={"Content-Type": content_type})
        response = web.StreamResponse(headers={"Content-Type": content_type})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(data), 64 * 1024):
            await response.write(data[start : start + 64 * 1024])
        await response.write_eof()
        return response

    # -- uploads (files_upload_v2: get an upload URL, POST the bytes there, complete) -------------

    def shared_files(self) -> list[tuple[dict[str, Any], list[bytes]]]:
        """Each completed upload: the completeUploadExternal arguments and its files' bytes."""
        shared = []
        for call in self.made("files.completeUploadExternal"):
            ids = [item["id"] for item in json.loads(call.args["files"])]
            shared.append((call.args, [self.uploads.get(file_id, b"") for file_id in ids]))
        return shared

    def _file_answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "files.getUploadURLExternal":
            file_id = f"F{len(self.made(method)):08d}"
            return _answer("web_files_get_upload_url_external") | {
                "upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}",
                "file_id": file_id,
            }
        if method == "files.completeUploadExternal":
            [shape] = _answer("web_files_complete_upload_external")["files"]
            return {
                "files": [
                    shape | {"id": item["id"], "title": item.get("title")}
                    for item in json.loads(args["files"])
                ]
            }
        return {}

    async def _upload(self, request: web.Request) -> web.Response:
        self.uploads[request.match_info["file_id"]] = await request.read()
        await self._notify()
        return web.Response(text=f"OK - {request.content_length}")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        socket = _Socket(ws)
        self._sockets.append(socket)
        self.connections += 1
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        await self._notify()
        async for message in ws:
            if socket.silent:
                continue
            if message.type == WSMsgType.PING:
                await ws.pong(message.data)
            elif message.type == WSMsgType.TEXT:
                envelope_id = json.loads(message.data).get("envelope_id")
                if envelope_id:
                    self.acks.append(envelope_id)
                    await self._notify()
        await self._notify()
        return ws


def event_callback(event: Any, event_id: str | None = None) -> dict[str, Any]:
    """The Events API body Slack sends for `event` (the same in Socket Mode and over HTTP):
    the recorded one of app_mention_enterprise_null.json, with its `"enterprise_id": null`."""
    return recorded("app_mention_enterprise_null") | {
        "event": event,
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
    }


def envelope(payload: Any, kind: str = "events_api", *, retry: int = 0) -> dict[str, Any]:
    """The Socket Mode message carrying `payload` (recorded: socket_app_mention.json, and
    socket_interactive_block_actions.json for `interactive`); a retry says so, as Slack does
    (socket_message_channels_retry.json)."""
    if kind == "events_api":
        message = recorded("socket_app_mention")
        message |= {"retry_attempt": retry, "retry_reason": "timeout" if retry else ""}
    else:
        message = recorded("socket_interactive_block_actions") | {"type": kind}
    return message | {"envelope_id": str(uuid.uuid4()), "payload": payload}


def _a_message(event: Any) -> bool:
    """Whether `event` is a well-formed new message (what Slack would keep)."""
    return (
        isinstance(event, dict)
        and event.get("type") in ("message", "app_mention")
        and "subtype" not in event
        and isinstance(event.get("channel"), str)
        and isinstance(event.get("ts"), str)
        and event["ts"].replace(".", "", 1).isdigit()
    )


def _answer(name: str) -> dict[str, Any]:
    """A recorded Web API answer without its `ok` (`_api` adds it)."""
    answer: dict[str, Any] = recorded(name)
    answer.pop("ok")
    return answer


def _files_of(payload: Any) -> list[dict[str, Any]]:
    """The `files` items anywhere in `payload`."""
    found: list[dict[str, Any]] = []
    if isinstance(payload, dict):
        items = payload.get("files")
        if isinstance(items, list):
            found += [item for item in items if isinstance(item, dict)]
        for value in payload.values():
            found += _files_of(value)
    elif isinstance(payload, list):
        for value in payload:
            found += _files_of(value)
    return found


def signed_headers(
    secret: str,
    body: bytes,
    *,
    timestamp: int | None = None,
    content_type: str = "application/json",
) -> dict[str, str]:
    """Slack's request signature: v0= HMAC-SHA256 of `v0:<timestamp>:<body>`."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + stamp.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": content_type,
    }


def form_body(payload: dict[str, Any]) -> bytes:
    """A slash command as Slack posts it over HTTP: form-encoded."""
    return urllib.parse.urlencode(payload).encode()
