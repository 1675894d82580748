"""Slack's two doors read within limits before slack-bolt sees a byte of them.

slack_sdk's Socket Mode client decodes each websocket message with `json.loads` and
slack-bolt's HTTP handler decodes each body the same way, neither with a limit: a message
nested past Python's recursion limit fails with a traceback at ERROR, and bolt's
request-building reads fields of the envelope as if their types were right. Here an
envelope (a Socket Mode message or an HTTP body) is checked for size and nesting, decoded
once, and its shape checked where bolt reads it (`read_envelope`); one that fails is
dropped with a log line (`slack_event_malformed`). Over HTTP a body is read only up to
MAX_EVENT_BYTES (413 past it), its signature verified (401) before it is decoded, and a
body that is not an event gets 400 (one that is not even UTF-8 gets it at once: it can be
neither signed text nor an event). A form-encoded body, a slash command, is decoded and
checked by `slack_commands.read_form` instead, after the same limit and signature check.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from aiohttp import WSMessage, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack_commands import check_command, read_form
from config.limits import loads

log = structlog.get_logger("kioku.slack")

MAX_EVENT_BYTES = 1024 * 1024
"""One envelope at most. A real event is some kilobytes, tens at most: a message of up to
40,000 characters with its blocks and file metadata."""

# What slack-bolt reads of an Events API body while building its request and matching
# listeners, by the types Slack gives them; a key that is present never holds null.
# Objects bolt looks into (the body itself, the event, a changed message, ...):
_OBJECTS = ("event", "message", "previous_message", "item", "assistant_thread", "view")
_OBJECT_LISTS = ("authorizations", "response_urls")
_IDS = ("user", "team", "channel", "enterprise")  # an id, or an object holding one
_STRINGS = ("type", "subtype", "team_id", "enterprise_id", "user_id", "channel_id", "thread_ts")


PROBLEM_CHARS = 200
FORM = "application/x-www-form-urlencoded"
"""How Slack posts a slash command (and its `ssl_check`) over HTTP."""


class Malformed(ValueError):
    """An envelope kioku does not hand to slack-bolt."""


class BoundedSocketModeClient(SocketModeClient):
    """slack_sdk's aiohttp Socket Mode client, reading each message with `read_envelope`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._runs: set[asyncio.Future[None]] = set()  # held until done, as tasks must be
        super().__init__(*args, on_error_listeners=[_frame_refused], **kwargs)

    async def process_message(self) -> None:
        raw = await self.message_queue.get()
        if raw is None:
            return
        message = read_envelope(raw, socket_mode=True)
        if message is not None:
            run = asyncio.ensure_future(self.run_message_listeners(message, raw))
            self._runs.add(run)
            run.add_done_callback(self._runs.discard)


async def _frame_refused(message: WSMessage) -> None:
    """aiohttp refused a frame (over its 4 MiB limit, or a text frame that is not UTF-8)
    and closes the socket; the SDK connects again."""
    problem = f"the websocket refused a frame: {message.data}"[:PROBLEM_CHARS]
    log.warning("slack_event_malformed", problem=problem)


class BoundedSocketModeHandler(AsyncSocketModeHandler):
    """slack-bolt's Socket Mode handler on `BoundedSocketModeClient`."""

    def __init__(
        self, app: AsyncApp, app_token: str, *, web_client: AsyncWebClient, ping_interval: float
    ) -> None:
        # What bolt's own __init__ does, with the bounded client.
        self.app = app
        self.app_token = app_token
        self.client = BoundedSocketModeClient(
            app_token=app_token,
            logger=app.logger,
            web_client=web_client,
            ping_interval=ping_interval,
        )
        self.client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]


def read_envelope(raw: str, *, socket_mode: bool = False) -> dict[str, Any] | None:
    """The decoded envelope, or None (logged) when it is over a limit or of a shape that
    is not Slack's: a Socket Mode message `{"type", "envelope_id", "payload"}` whose
    payload is an Events API body, or (over HTTP) the body itself."""
    try:
        size = len(raw.encode())
        if size > MAX_EVENT_BYTES:
            raise Malformed(f"{size:,} bytes, over the limit of {MAX_EVENT_BYTES:,}")
        envelope = loads(raw, what="the envelope")
        if not socket_mode:
            _check_body(envelope)
            _check_if_command(envelope)
        elif (body := _socket_payload(envelope)) is not None:
            _check_body(body, typed=envelope["type"] == "events_api")
            _check_if_command(body)
    except ValueError as problem:  # Malformed, InputRefused, JSONDecodeError, UnicodeError
        log.warning("slack_event_malformed", problem=str(problem)[:PROBLEM_CHARS])
        return None
    return envelope  # type: ignore[no-any-return]


def _socket_payload(message: Any) -> Any:
    """What a Socket Mode message carries (an Events API body for `events_api`), or None
    for one that carries nothing (hello, disconnect)."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise Malformed("a Socket Mode message that is not an object with a string type")
    if "payload" not in message:
        return None
    if not isinstance(message.get("envelope_id"), str):
        raise Malformed("a Socket Mode message whose envelope_id is not a string")
    return message["payload"]


def _check_body(body: Any, *, typed: bool = True) -> None:
    """`body` has the shape slack-bolt reads: an object that (`typed`: an Events API body)
    says its type, and whose event, if any, says its own."""
    if not isinstance(body, dict):
        raise Malformed(f"the body is a JSON {type(body).__name__}, not an object")
    if typed and not isinstance(body.get("type"), str):
        raise Malformed("the body has no string type")
    _check_object("the body", body)
    event = body.get("event")
    if event is not None and not isinstance(event.get("type"), str):
        raise Malformed("the body's event has no string type")


def _check_if_command(body: dict[str, Any]) -> None:
    """bolt takes any body holding a `command` for a slash command: check it as one."""
    if "command" in body:
        check_command(body)


def _check_object(where: str, holder: dict[str, Any]) -> None:
    for name in (*_OBJECTS, *_OBJECT_LISTS, *_IDS, *_STRINGS):
        if name not in holder:
            continue
        value = holder[name]
        kinds = _KINDS[name]
        if not isinstance(value, kinds):
            wanted = " or ".join(kind.__name__ for kind in kinds)
            raise Malformed(f"{where}'s {name} is {type(value).__name__}, not {wanted}")
        if name in _OBJECTS:
            _check_object(f"{where}'s {name}", value)
        elif name in _OBJECT_LISTS:
            for item in value:
                if not isinstance(item, dict):
                    raise Malformed(f"{where}'s {name} holds a {type(item).__name__}")
                _check_object(f"{where}'s {name}", item)


_KINDS: dict[str, tuple[type, ...]] = {
    **{name: (dict,) for name in _OBJECTS},
    **{name: (list,) for name in _OBJECT_LISTS},
    **{name: (str, dict) for name in _IDS},
    **{name: (str,) for name in _STRINGS},
}


def events_app(app: AsyncApp, path: str, signing_secret: str) -> web.Application:
    """HTTP mode's server: bolt's handling behind a size cap, the signature check and
    `read_envelope`."""
    verifier = SignatureVerifier(signing_secret)

    async def receive(request: web.Request) -> web.Response:
        try:
            text = (await request.read()).decode()
        except web.HTTPRequestEntityTooLarge:
            return _refused(413, f"a body over the limit of {MAX_EVENT_BYTES:,} bytes")
        except UnicodeDecodeError:  # neither signed text nor an event: nothing to verify
            return _refused(400, "a body that is not UTF-8")
        if not verifier.is_valid(
            text,
            request.headers.get("X-Slack-Request-Timestamp", ""),
            request.headers.get("X-Slack-Signature", ""),
        ):
            log.warning("slack_request_refused", remote=request.remote)
            return web.Response(status=401, text="invalid request signature")
        body: str | dict[str, str] | None
        if request.content_type == FORM:
            # bolt takes a decoded body only as "socket_mode", whose one effect is to skip
            # its signature check, done above.
            body, mode = read_form(text), "socket_mode"
        else:
            body, mode = (None if read_envelope(text) is None else text), "http"
        if body is None:
            return web.Response(status=400, text="the body is not an event kioku reads")
        bolt_request = AsyncBoltRequest(
            body=body,
            query=request.query_string,
            headers=request.headers,  # type: ignore[arg-type]
            mode=mode,
        )
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    server = web.Application(client_max_size=MAX_EVENT_BYTES)
    server.router.add_post(path, receive)
    return server


def _refused(status: int, problem: str) -> web.Response:
    log.warning("slack_event_malformed", problem=problem)
    return web.Response(status=status, text=problem)
