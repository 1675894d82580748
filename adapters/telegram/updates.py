"""Telegram updates read one by one, within limits, before python-telegram-bot sees them.

python-telegram-bot parses a getUpdates answer whole: one update it cannot read (nested
past Python's recursion limit, of the wrong shape) fails the whole batch, and since the
offset never moves past it, every later poll fails the same way. So the answer is read
here first (`BoundedRequest` is the request getUpdates goes through): each update of its
`result` on its own, checked for size and nesting before it is decoded and for shape by
building it once. One that fails is dropped with a log line (`telegram_update_malformed`)
and replaced by its bare `update_id`, so the offset confirms it and the next poll moves
on. The webhook reads its one update per request through `read_update` too.

What is refused is only what would break python-telegram-bot or kioku, judged against
the Bot API's schema (core.telegram.org/bots/api#update) and recorded real traffic
(tests/fixtures/recorded/telegram/): optional fields may be absent, `null`, or carry keys
no release of the library knows yet. An update of a kind kioku does not read (a channel
post, a member change, a button press) is passed on as its bare `update_id`
without being built, so a shape the library cannot build there costs nothing. A message
whose parts kioku does not read (a poll, a giveaway, a story) fail to build is built
again from the parts kioku reads (`READ_FIELDS`) instead of being dropped, with the
fields a later Bot API made required filled in (a capture from 2016 has no `is_bot`).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web
from telegram import Bot, Update
from telegram.error import TelegramError
from telegram.request import HTTPXRequest

from inputs.limits import JSON_TOKENS, InputRefused, loads

log = structlog.get_logger("kioku.telegram")
JSONDict = dict[str, Any]

MAX_UPDATE_BYTES = 256 * 1024
"""One update's JSON at most. A real one is some tens of KB at the very most: 4,096
characters of text (the Bot API's sendMessage limit) with their entities, each character
escaped as up to 12 bytes (`\\ud83d\\ude02`: the Bot API escapes non-ASCII), and the
message it replies to."""

# The fields that carry a file (adapters/telegram/files.py).
_FILE_FIELDS = (
    "photo",
    "sticker",
    "animation",
    "video",
    "video_note",
    "voice",
    "audio",
    "document",
)

READ_FIELDS = frozenset(
    {
        # Message fields python-telegram-bot requires (Message.__init__) and kioku reads
        # (adapters/telegram/inbound.py, adapters/telegram/files.py).
        *("message_id", "date", "chat", "from", "sender_chat", "text", "caption"),
        *("entities", "caption_entities", "message_thread_id", "is_topic_message"),
        *("reply_to_message", "forum_topic_created"),
        *_FILE_FIELDS,
    }
)
"""A message rebuilt from these alone still says all kioku reads of it."""

READ_KINDS = ("message", "edited_message")
"""The kinds of update kioku reads, its `allowed_updates`: a new message, and an edit of
one (Telegram sends no deletions). Each holds a Message, read alike."""

# Fields python-telegram-bot requires that the Bot API added after traffic still around was
# sent (captures, older self-hosted servers), filled in where missing when a message is
# rebuilt; kioku reads none of them but `is_bot`, and before Bot API 3.0 (May 2017), which
# added it, bots never received other bots' messages.
_USER_SINCE: JSONDict = {"is_bot": False}  # User.is_bot: Bot API 3.0
_FILE_SINCE: JSONDict = {"file_unique_id": ""}  # every file's file_unique_id: Bot API 4.5
_STICKER_SINCE: JSONDict = {"is_animated": False, "is_video": False, "type": "regular"}
"""Sticker.is_animated (Bot API 4.4), is_video (5.7), type (6.2)."""

# python-telegram-bot builds objects without checking types: a wrong shape surfaces as
# one of these while building (a missing key, a str where a dict belongs, a date far
# outside the calendar: OverflowError, or OSError from the C library).
SHAPE_ERRORS = (LookupError, TypeError, ValueError, AttributeError, ArithmeticError, OSError)
PROBLEM_CHARS = 200
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class UpdatesMalformed(TelegramError):
    """The getUpdates answer as a whole is not one the Bot API gives: nothing in it can
    be told apart, so it is dropped and the poll asked again."""


class BoundedRequest(HTTPXRequest):
    """The HTTP request getUpdates goes through, reading its answer with `read_answer`."""

    def parse_json_payload(self, payload: bytes) -> JSONDict:
        return read_answer(payload)


def read_answer(payload: bytes) -> JSONDict:
    """The answer with each update read on its own: one refused becomes its bare
    `{"update_id"}`, or is left out if not even that can be read."""
    skeleton, spans = _hollow(payload.decode("utf-8", "replace"), keep=2)
    try:
        answer = loads(skeleton, what="the getUpdates answer")
    except InputRefused as exc:
        raise UpdatesMalformed(str(exc)) from None
    except ValueError as exc:
        raise UpdatesMalformed(f"the getUpdates answer is not JSON: {exc}") from None
    if not isinstance(answer, dict):
        raise UpdatesMalformed("the getUpdates answer is not a JSON object")
    # Bot API, "Making requests": the answer always has a Boolean `ok`; false comes with
    # `description`, `error_code` and maybe `parameters` (retry_after, migrate_to_chat_id),
    # which python-telegram-bot turns into its errors; true with `result`, for getUpdates
    # an Array of Update. Other keys pass through unread.
    if answer.get("ok") is False:
        return answer | {"result": None}
    result = answer.get("result")
    if answer.get("ok") is not True or not isinstance(result, list):
        raise UpdatesMalformed('the getUpdates answer is not {"ok": true, "result": [updates]}')
    updates = []
    for item in result:
        if not _is_placeholder(item, spans):
            _log(None, f"an update that is a JSON {type(item).__name__}, not an object")
            continue
        data, update_id = read_update(spans[item[0]])
        if data is not None:
            updates.append(data)
        elif update_id is not None:
            updates.append({"update_id": update_id})
    answer["result"] = updates
    return answer


def webhook_app(
    path: str, token: str, dispatch: Callable[[Update], Awaitable[None]], bot: Bot
) -> web.Application:
    """The webhook: a request without the secret token gets 403, a body over
    MAX_UPDATE_BYTES 413, one that is not an update kioku reads 400 (Telegram retries a
    few times, then gives up on it). 200 only once `dispatch` returned, the update then
    stored; if it raised, 500, and Telegram sends the update again later."""

    async def receive(request: web.Request) -> web.Response:
        sent = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(sent.encode(), token.encode()):
            log.warning("telegram_webhook_refused", remote=request.remote)
            return web.Response(status=403, text="wrong secret token")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            problem = f"a webhook body over the limit of {MAX_UPDATE_BYTES:,} bytes"
            _log(None, problem)
            return web.Response(status=413, text=problem)
        data, _ = read_update(body.decode("utf-8", "replace"))
        if data is None:
            return web.Response(status=400, text="the body is not an update kioku reads")
        try:
            await dispatch(Update.de_json(data, bot))
        except Exception:
            log.exception("telegram_delivery_failed", update_id=data["update_id"])
            return web.Response(status=500, text="kioku could not take the update now")
        return web.Response(text="ok")

    app = web.Application(client_max_size=MAX_UPDATE_BYTES)
    app.router.add_post(path, receive)
    return app


def read_update(raw: str) -> tuple[JSONDict | None, int | None]:
    """One update's JSON as python-telegram-bot can build it, or None when refused
    (logged); with the `update_id` whenever it can be read."""
    size = len(raw.encode())
    if size > MAX_UPDATE_BYTES:
        return _drop(raw, f"{size:,} bytes, over the limit of {MAX_UPDATE_BYTES:,} per update")
    try:
        data = loads(raw, what="the update")
    except InputRefused as exc:
        return _drop(raw, str(exc))
    except ValueError as exc:
        return _drop(raw, f"the update is not JSON: {exc}")
    update_id = _update_id(data)
    if update_id is None:
        _log(None, f"a JSON {type(data).__name__} that is not an object with an integer update_id")
        return None, None
    kind = next((kind for kind in READ_KINDS if data.get(kind) is not None), None)
    if kind is None:
        # Any other kind (one a server sends unasked) is confirmed unread, unbuilt.
        kinds = [str(key)[:40] for key in list(data)[:5] if key != "update_id"]
        log.info("telegram_update_ignored", update_id=update_id, kinds=kinds)
        return {"update_id": update_id}, update_id
    message = data[kind]
    if not isinstance(message, dict):  # Update.message is a Message object (the Bot API)
        _log(update_id, f"its {kind} is a JSON {type(message).__name__}, not an object")
        return None, update_id
    return _built(data, kind, update_id)


def _built(data: JSONDict, kind: str, update_id: int) -> tuple[JSONDict | None, int]:
    """`data` if python-telegram-bot builds it; else its message cut down to `READ_FIELDS`
    if that builds (a part kioku does not read has a shape this release cannot build:
    a newer Bot API, or an older one); else None, logged."""
    problem = _unbuildable(data)
    if problem is None:
        return data, update_id
    trimmed = {"update_id": update_id, kind: _read_parts(data[kind])}
    still = _unbuildable(trimmed)
    if still is not None:
        _log(update_id, still)
        return None, update_id
    log.info("telegram_update_trimmed", update_id=update_id, problem=problem[:PROBLEM_CHARS])
    return trimmed, update_id


def _unbuildable(data: JSONDict) -> str | None:
    """Why python-telegram-bot cannot build `data` as an `Update`; None when it can."""
    try:
        Update.de_json(data)
    except SHAPE_ERRORS as exc:
        return f"python-telegram-bot cannot build it: {type(exc).__name__}: {exc}"
    return None


def _read_parts(message: JSONDict) -> JSONDict:
    """The message with only the fields kioku reads, the message it replies to likewise;
    what a later Bot API made required but kioku never reads filled in where missing."""
    kept = {key: value for key, value in message.items() if key in READ_FIELDS}
    if isinstance(kept.get("from"), dict):
        kept["from"] = _USER_SINCE | kept["from"]
    for key in ("entities", "caption_entities"):
        if isinstance(kept.get(key), list):
            kept[key] = [_entity(entity) for entity in kept[key]]
    for key in _FILE_FIELDS:
        value = kept.get(key)
        if isinstance(value, list):
            kept[key] = [_file(item) for item in value]
        elif isinstance(value, dict):
            kept[key] = _file(value, _STICKER_SINCE if key == "sticker" else {})
    replied = kept.get("reply_to_message")
    if isinstance(replied, dict):
        kept["reply_to_message"] = _read_parts(replied)
    return kept


def _file(value: Any, since: JSONDict | None = None) -> Any:
    """A file with what a later Bot API added filled in, and without its thumbnail, which
    kioku never reads (pyTelegramBotAPI's test data has a document with `"thumbnail": {}`)."""
    if not isinstance(value, dict):
        return value
    return _FILE_SINCE | (since or {}) | {k: v for k, v in value.items() if k != "thumbnail"}


def _entity(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("user"), dict):
        return value | {"user": _USER_SINCE | value["user"]}
    return value


def _drop(raw: str, problem: str) -> tuple[None, int | None]:
    """Refuse an update too big or too deep to decode; its update_id is read from it
    with every nested value hollowed out, so the offset can still move past it."""
    try:
        outline = loads(_hollow(raw, keep=1)[0], what="the update")
    except ValueError:
        outline = None
    update_id = _update_id(outline)
    _log(update_id, problem)
    return None, update_id


def _update_id(value: Any) -> int | None:
    found = value.get("update_id") if isinstance(value, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def _log(update_id: int | None, problem: str) -> None:
    log.warning("telegram_update_malformed", update_id=update_id, problem=problem[:PROBLEM_CHARS])


def _is_placeholder(item: Any, spans: list[str]) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 1
        and isinstance(item[0], int)
        and 0 <= item[0] < len(spans)
    )


def _hollow(text: str, keep: int) -> tuple[str, list[str]]:
    """`text` with every array or object nested deeper than `keep` cut out and replaced by
    `[i]`, `i` indexing the returned cut-outs: the outline decodes cheaply whatever the
    parts hold. Brackets inside strings do not count; an unclosed part stays in place."""
    pieces: list[str] = []
    spans: list[str] = []
    depth, kept, cut = 0, 0, -1
    for match in JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth == keep + 1:
                cut = match.start()
        elif token in ("]", "}"):
            if depth == keep + 1 and cut >= 0:
                pieces += [text[kept:cut], f"[{len(spans)}]"]
                spans.append(text[cut : match.end()])
                kept, cut = match.end(), -1
            depth = max(0, depth - 1)
    pieces.append(text[kept:])
    return "".join(pieces), spans
