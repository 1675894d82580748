"""A fake Telegram Bot API server on 127.0.0.1 for driving python-telegram-bot in tests.

Calls arrive as `POST /bot<token>/<method>` with form-encoded bodies (non-string values
JSON-encoded). The test pushes updates (`dm`, `group`, `push`), reads back what the bot
called (`calls`, `sent`), and scripts faults per method (`fail`): a 429 with
`retry_after`, a 5xx, a 400 with a description, a dropped connection, a hang, or a
slow answer held until the test releases it.
`getUpdates` honours `offset` (confirms everything before it) and long-polls for up
to `timeout` seconds. Updates pushed before the bot starts wait for its first getUpdates,
as they wait on Telegram's server while kioku is down (`date=` dates a message in the
past); `edit` queues the `edited_message` of a message pushed before. Raw input goes
in as bytes: a whole update exactly as given (`inject`, a recorded one), an update's
fields after a new `update_id` (`push_raw`), or a whole getUpdates answer, given to the
poll waiting now or the next (`answer_raw`).
What the fake sends of its own (a message, getMe, a sent message) starts from recorded
real payloads (`telegram_recorded`), re-pointed at the fake's ids.
Files are served as Telegram serves them: `file` registers bytes (and the size Telegram
declares for them), `getFile` names their path, and `GET /file/bot<token>/<path>` gives
the bytes; `photo`, `voice`, `audio` and `document` make the message fields that carry them, and
`fail("download", ...)` scripts faults on the download itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web

from tests.fakes.telegram_recorded import answer, recorded, repoint

TOKEN = "123456:TEST-token"
_RECORDED_BOT = answer("getMe")  # a real getMe answer, its bot re-pointed to ours
BOT = repoint(_RECORDED_BOT, {_RECORDED_BOT["id"]: 999000}) | {
    "first_name": "Kioku",
    "username": "kioku_bot",
}
_SENDER_KEYS = ("id", "is_bot", "first_name", "username")  # a Message's `from` (the Bot API)
_MESSAGE = recorded("private-text-cyrillic-emoji")["message"]  # a real DM


@dataclass(frozen=True)
class Call:
    """One Bot API call: `params` are the raw form values (strings)."""

    method: str
    params: dict[str, str]
    files: dict[str, Upload] = field(default_factory=dict)
    """Files uploaded with the call (multipart), by form field."""

    def json(self, key: str) -> Any:
        return json.loads(self.params[key])

    @property
    def text(self) -> str:
        return self.params.get("text", "")


@dataclass(frozen=True)
class Upload:
    """A file the bot uploaded (sendDocument): its name, media type and bytes."""

    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class Fault:
    """`kind`: "error" (status + description, `retry_after` for 429), "drop", "hang", or
    "slow" (answered as usual once `gate` is set: a response that takes its time)."""

    kind: str
    status: int = 0
    description: str = ""
    retry_after: int | None = None
    migrate_to: int | None = None
    gate: asyncio.Event | None = None


def too_many(retry_after: int) -> Fault:
    return Fault("error", 429, f"Too Many Requests: retry after {retry_after}", retry_after)


def upgraded(to: int) -> Fault:
    """A group that became a supergroup: its old id refused, the new one named
    (Bot API ResponseParameters.migrate_to_chat_id)."""
    description = "Bad Request: group chat was upgraded to a supergroup chat"
    return Fault("error", 400, description, migrate_to=to)


def bad_gateway() -> Fault:
    return Fault("error", 502, "Bad Gateway")


def cant_parse() -> Fault:
    return Fault("error", 400, "Bad Request: can't parse entities: unexpected end tag")


def slow(gate: asyncio.Event) -> Fault:
    return Fault("slow", gate=gate)


DROP = Fault("drop")
HANG = Fault("hang")
BOT_FILE_LIMIT = 20 * 1024 * 1024  # getFile refuses bigger files: "file is too big"


@dataclass(frozen=True)
class _File:
    path: str
    data: bytes
    declared: int  # the file_size getFile gives
    chunked: bool  # served without a Content-Length


class FakeTelegram:
    """Use as `async with FakeTelegram() as tg:`; `tg.base_url` goes to `base_url`."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.port = 0
        self._updates: list[tuple[int, bytes]] = []  # (update_id, the update's JSON)
        self._raw_answers: deque[bytes] = deque()
        self._update_ids = itertools.count(1)
        self._message_ids: dict[str, itertools.count[int]] = defaultdict(
            lambda: itertools.count(100_000)
        )
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.webhook: dict[str, str] | None = None
        self._closing = asyncio.Event()  # releases hung requests so the server can stop
        self._files: dict[str, _File] = {}
        self.downloads: list[str] = []  # file paths fetched, in order

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing.set()
        async with self._changed:  # a long poll a client left behind ends now
            self._changed.notify_all()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # -- what the test scripts ------------------------------------------------------------

    def fail(self, method: str, *faults: Fault) -> None:
        """The next calls of `method` meet these faults, in order, then succeed again."""
        self._faults[method].extend(faults)

    async def push(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update under a new update_id (the same message twice = a redelivery)."""
        update = {"update_id": next(self._update_ids), **update}
        await self._queue(update["update_id"], json.dumps(update).encode())
        return update

    async def push_raw(self, fields: bytes) -> int:
        """Queue an update whose JSON is `{"update_id": N, <fields>}`, byte for byte;
        return N."""
        update_id = next(self._update_ids)
        await self._queue(update_id, b'{"update_id": %d, ' % update_id + fields + b"}")
        return update_id

    async def inject(self, raw: bytes) -> int:
        """Queue `raw`, a whole update, byte for byte; return its update_id (later pushes
        number after it, as Telegram's ids only grow)."""
        update_id = json.loads(raw)["update_id"]
        self._update_ids = itertools.count(max(self.new_update_id(), update_id + 1))
        await self._queue(update_id, raw)
        return update_id

    def new_update_id(self) -> int:
        """An update_id after every one queued so far, for an update made elsewhere."""
        return next(self._update_ids)

    async def answer_raw(self, body: bytes) -> None:
        """Answer the getUpdates waiting now (or the next) with `body`, byte for byte."""
        async with self._changed:
            self._raw_answers.append(body)
            self._changed.notify_all()

    async def _queue(self, update_id: int, raw: bytes) -> None:
        async with self._changed:
            self._updates.append((update_id, raw))
            self._changed.notify_all()

    async def dm(self, user: int, text: str | None, **extra: Any) -> dict[str, Any]:
        chat = {"id": user, "type": "private", "first_name": f"User{user}"}
        return await self.push({"message": self.message(chat, user, text, **extra)})

    async def group(
        self, chat: int, user: int, text: str, *, chat_type: str = "supergroup", **extra: Any
    ) -> dict[str, Any]:
        where = {"id": chat, "type": chat_type, "title": "The group"}
        return await self.push({"message": self.message(where, user, text, **extra)})

    def message(
        self, chat: dict[str, Any], user: int, text: str | None, **extra: Any
    ) -> dict[str, Any]:
        """A Message object: a recorded DM's, sent by `user` in `chat`; `entities` are
        found for @mentions and a leading /command."""
        sender = {**_MESSAGE["from"], "id": user, "first_name": f"User{user}", "last_name": "X"}
        sender["username"] = f"user{user}"
        message: dict[str, Any] = {
            **{key: value for key, value in _MESSAGE.items() if key != "text"},
            "message_id": next(self._message_ids[str(chat["id"])]),
            "date": int(time.time()),
            "chat": chat,
            "from": sender,
        }
        if text is not None:
            message["text"] = text
            entities = _entities(text)
            if entities:
                message["entities"] = entities
        message.update(extra)
        return message

    async def edit(self, update: dict[str, Any], text: str) -> dict[str, Any]:
        """Queue the edit of the message in `update` (as `push` returned it) to `text`."""
        return await self.push({"edited_message": edited(update["message"], text)})

    def host(self, file_id: str, data: bytes, *, path: str = "documents/file") -> None:
        """Serve `data` as the file `file_id` (an id a recorded update names)."""
        self._files[file_id] = _File(f"{path}_{len(self._files) + 1}", data, len(data), False)

    def file(
        self,
        data: bytes,
        *,
        path: str = "documents/file",
        declared: int | None = None,
        chunked: bool = False,
    ) -> dict[str, Any]:
        """Serve `data` as a file; the fields every Bot API file object starts with.
        `declared` is the size Telegram claims (default: the real one); `chunked` sends
        the bytes without a Content-Length."""
        number = len(self._files) + 1
        file_id = f"file-{number}"
        size = len(data) if declared is None else declared
        self._files[file_id] = _File(f"{path}_{number}", data, size, chunked)
        return {"file_id": file_id, "file_unique_id": f"unique-{number}", "file_size": size}

    def photo(self, *sizes: tuple[bytes, int, int]) -> list[dict[str, Any]]:
        """A message's `photo`: each (bytes, width, height) a PhotoSize, smallest first."""
        ordered = sorted(sizes, key=lambda size: size[1] * size[2])
        return [
            {**self.file(data, path="photos/file"), "width": width, "height": height}
            for data, width, height in ordered
        ]

    def voice(self, data: bytes, duration: int, **declared: Any) -> dict[str, Any]:
        """A message's `voice`: an OGG/Opus note, as Telegram's clients record them."""
        fields = self.file(data, path="voice/file", **declared)
        return {**fields, "duration": duration, "mime_type": "audio/ogg"}

    def audio(
        self, data: bytes, duration: int, file_name: str, mime_type: str, **declared: Any
    ) -> dict[str, Any]:
        """A message's `audio`: a music or recorded file sent to be played, not a voice note."""
        fields = self.file(data, path="music/file", **declared)
        return {
            **fields,
            "duration": duration,
            "file_name": file_name,
            "mime_type": mime_type,
            "performer": "Aiko",
            "title": file_name.rpartition(".")[0],
        }

    def document(
        self, data: bytes, file_name: str, mime_type: str, **declared: Any
    ) -> dict[str, Any]:
        """A message's `document`: any file sent as a file."""
        fields = self.file(data, path="documents/file", **declared)
        return {**fields, "file_name": file_name, "mime_type": mime_type}

    def sent(self, method: str = "sendMessage") -> list[Call]:
        return [call for call in self.calls if call.method == method]

    async def wait_for(
        self, method: str = "sendMessage", count: int = 1, within: float = 5.0
    ) -> list[Call]:
        """Wait until `method` was called `count` times; return those calls."""

        async def enough() -> list[Call]:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.sent(method)) >= count)
            return self.sent(method)

        return await asyncio.wait_for(enough(), within)

    # -- the server ---------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        if request.match_info["token"] != TOKEN:
            return _answer({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        params, files = await _form(request)
        async with self._changed:
            self.calls.append(Call(method, params, files))
            self._changed.notify_all()
        faults = self._faults.get(method)
        if faults:
            fault = faults.popleft()
            if fault.kind == "slow" and fault.gate is not None:
                await fault.gate.wait()
                return await self._ok(method, params)
            if fault.kind == "hang":
                await self._closing.wait()
                return web.Response(status=503)
            if fault.kind == "drop":
                assert request.transport is not None
                request.transport.abort()
                return web.Response()
            body: dict[str, Any] = {
                "ok": False,
                "error_code": fault.status,
                "description": fault.description,
            }
            if fault.retry_after is not None:
                body["parameters"] = {"retry_after": fault.retry_after}
            if fault.migrate_to is not None:
                body["parameters"] = {"migrate_to_chat_id": fault.migrate_to}
            return _answer(body, fault.status)
        return await self._ok(method, params)

    async def _ok(self, method: str, params: dict[str, str]) -> web.Response:
        if method == "getUpdates":  # the updates' own bytes, whatever they hold
            body = await self._get_updates(params)
            return web.Response(body=body, content_type="application/json")
        try:
            result = await self._result(method, params)
        except _Refused as refusal:
            return _answer({"ok": False, "error_code": 400, "description": str(refusal)}, 400)
        return _answer({"ok": True, "result": result})

    async def _result(self, method: str, params: dict[str, str]) -> Any:
        if method == "getMe":
            return BOT
        if method == "setWebhook":
            self.webhook = params
            return True
        if method in ("sendMessage", "editMessageText", "sendDocument"):
            return self._sent_message(method, params)
        if method == "getFile":
            return self._get_file(params.get("file_id", ""))
        return True

    def _get_file(self, file_id: str) -> dict[str, Any]:
        file = self._files.get(file_id)
        if file is None:
            raise _Refused("Bad Request: wrong file_id or the file is temporarily unavailable")
        if file.declared > BOT_FILE_LIMIT:
            raise _Refused("Bad Request: file is too big")
        return {
            "file_id": file_id,
            "file_unique_id": file_id.replace("file", "unique"),
            "file_size": file.declared,
            "file_path": file.path,
        }

    async def _download(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != TOKEN:
            return _answer({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        path = request.match_info["path"]
        async with self._changed:
            self.downloads.append(path)
            self._changed.notify_all()
        faults = self._faults.get("download")
        fault = faults.popleft() if faults else None
        if fault is not None and fault.kind == "slow" and fault.gate is not None:
            await fault.gate.wait()
        elif fault is not None and fault.kind == "hang":
            await self._closing.wait()
            return web.Response(status=503)
        elif fault is not None and fault.kind == "drop":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        elif fault is not None:
            body = {"ok": False, "error_code": fault.status, "description": fault.description}
            return _answer(body, fault.status)
        file = next((f for f in self._files.values() if f.path == path), None)
        if file is None:
            return _answer({"ok": False, "error_code": 404, "description": "Not Found"}, 404)
        if not file.chunked:
            return web.Response(body=file.data, content_type="application/octet-stream")
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(file.data), 64 * 1024):
            await response.write(file.data[start : start + 64 * 1024])
        await response.write_eof()
        return response

    async def _get_updates(self, params: dict[str, str]) -> bytes:
        offset = int(params.get("offset", "0") or 0)
        timeout = float(params.get("timeout", "0") or 0)
        async with self._changed:
            self._updates = [u for u in self._updates if u[0] >= offset]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(
                        lambda: bool(self._updates or self._raw_answers) or self._closing.is_set()
                    ),
                    timeout,
                )
            if self._raw_answers:
                return self._raw_answers.popleft()
            updates = b", ".join(raw for _, raw in self._updates[:100])
            return b'{"ok": true, "result": [' + updates + b"]}"

    def _sent_message(self, method: str, params: dict[str, str]) -> dict[str, Any]:
        """A recorded sendMessage answer, re-pointed at this chat, message and bot."""
        chat = params["chat_id"]
        if method == "editMessageText":
            message_id = int(params["message_id"])
        else:
            message_id = next(self._message_ids[chat])
        sent = answer("sendMessage")
        if int(chat) > 0:
            where = {**sent["chat"], "id": int(chat)}
        else:
            where = {"id": int(chat), "title": "The group", "type": "supergroup"}
        return sent | {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": where,
            "from": {key: BOT[key] for key in _SENDER_KEYS},
            "text": params.get("text", ""),
        }


def edited(message: dict[str, Any], text: str) -> dict[str, Any]:
    """`message` as an `edited_message` says it is after an edit to `text`, shaped as the
    recorded ones (edited-message*.json): its id, sender, chat and `date` as sent, then an
    `edit_date` after it, and the new text (a caption, if it had one) with its entities."""
    field, entities = (
        ("caption", "caption_entities") if "caption" in message else ("text", "entities")
    )
    edit_date = max(int(time.time()), message["date"] + 1)
    result: dict[str, Any] = {}
    for key, value in message.items():
        if key not in (field, entities):
            result[key] = value
        if key == "date":
            result["edit_date"] = edit_date
    result[field] = text
    found = _entities(text)
    if found:
        result[entities] = found
    return result


class _Refused(Exception):
    """A call the Bot API answers with 400 and this description."""


async def _form(request: web.Request) -> tuple[dict[str, str], dict[str, Upload]]:
    """A call's form values, and the files of a multipart upload apart from them."""
    params: dict[str, str] = {}
    files: dict[str, Upload] = {}
    for key, value in (await request.post()).items():
        if isinstance(value, web.FileField):
            files[key] = Upload(value.filename, value.content_type, value.file.read())
        else:
            params[key] = str(value)
    return params, files


def _answer(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status)


def _entities(text: str) -> list[dict[str, Any]]:
    """Mentions, hashtags and a leading command, with offsets in UTF-16 units as Telegram
    gives them."""
    entities = []
    for index, word in _words(text):
        if word.startswith("@") and len(word) > 1:
            kind = "mention"
        elif word.startswith("/") and index == 0:
            kind = "bot_command"
        elif word.startswith("#") and len(word) > 1:
            kind = "hashtag"
        else:
            continue
        offset = len(text[:index].encode("utf-16-le")) // 2
        length = len(word.encode("utf-16-le")) // 2
        entities.append({"type": kind, "offset": offset, "length": length})
    return entities


def _words(text: str) -> list[tuple[int, str]]:
    words, start = [], None
    for index, char in enumerate([*text, " "]):
        if char.isspace():
            if start is not None:
                words.append((start, text[start:index].rstrip(",.!?:;")))
                start = None
        elif start is None:
            start = index
    return words
