"""Slack's two doors read within limits before slack-bolt sees a byte of them.

slack_sdk's Socket Mode client decodes each websocket message with `json.loads` and
slack-bolt's HTTP handler decodes each body the same way, neither with a limit: a message
nested past Python's recursion limit fails with a traceback at ERROR, and bolt's
request-building reads fields of the envelope as if their types were right. Here an
envelope (a Socket Mode message or an HTTP body) is checked for size and nesting, decoded
once, and its shape checked where bolt reads it (`read_envelope`): only what bolt would
fail on is refused, since Slack leaves optional fields out or sends them as null. One that
fails is dropped with a log line (`slack_event_malformed`). Over HTTP a body is read only
up to MAX_EVENT_BYTES (413 past it), its signature verified (401) before it is decoded,
and a body bolt could not read gets 400 (one that is not even UTF-8 gets it at once: it
can be neither signed text nor an event). A form-encoded body, a slash command, is decoded
and checked by `commands.read_form` instead, after the same limit and signature check.
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

from adapters.slack.commands import check_command, is_interactive, read_form
from inputs.limits import loads

log = structlog.get_logger("kioku.slack")

MAX_EVENT_BYTES = 1024 * 1024
"""One envelope at most. A real event is some kilobytes, tens at most: a message of up to
40,000 characters with its blocks and file metadata."""

# What Slack may send is taken as it comes: a field documented as optional may be absent,
# null or hold keys kioku does not know. Every authorization of a workspace outside
# Enterprise Grid carries `"enterprise_id": null`, an interactive payload `"enterprise":
# null` (tests/fixtures/recorded/slack/app_mention_enterprise_null.json,
# block_actions_enterprise_null.json). Refused is only what slack-bolt would fail on while
# building its request (slack_bolt/request/internals.py `build_context` and the extract_*
# functions it calls), matching listeners (slack_bolt/request/payload_utils.py `is_event`)
# and skipping its own events (middleware/ignoring_self_events). A body bolt can read but
# no listener takes (an unknown type, an event without one) is acknowledged and ignored:
# adapters/slack/unread.py.

# Read by internals.py as an id or an object holding one: `"id" in org`, then `org.get("id")`
# (extract_enterprise_id, extract_team_id, extract_user_id, extract_channel_id).
_IDS = ("enterprise", "team", "user", "channel")
# Where those extract_* functions look for them: the body, then (by recursion) its first
# authorization, its event, and the event's changed message, deleted message, reacted item
# and assistant thread (each only when it is an object).
_INNER = ("event", "message", "previous_message", "item", "assistant_thread")
# Lists internals.py indexes: `len(payload["authorizations"])`, `payload["authorizations"][0]`
# when not null; `len(body["response_urls"])`, `response_urls[0].get(...)` whenever present.
_FIRST_IS_OBJECT = {"authorizations": False, "response_urls": True}  # name -> null refused

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
    """The decoded envelope, or None (logged) when it is over a limit or of a shape
    slack-bolt would fail on: a Socket Mode message `{"type", "envelope_id", "payload"}`
    whose payload is an Events API body or an interactive payload, or (over HTTP) the body
    itself."""
    try:
        size = len(raw.encode())
        if size > MAX_EVENT_BYTES:
            raise Malformed(f"{size:,} bytes, over the limit of {MAX_EVENT_BYTES:,}")
        envelope = loads(raw, what="the envelope")
        body = _socket_payload(envelope) if socket_mode else envelope
        if body is not None:
            _check_body(body)
    except ValueError as problem:  # Malformed, InputRefused, JSONDecodeError, UnicodeError
        log.warning("slack_event_malformed", problem=str(problem)[:PROBLEM_CHARS])
        return None
    return envelope  # type: ignore[no-any-return]


def _socket_payload(message: Any) -> Any:
    """What a Socket Mode message carries (an Events API body for `events_api`, a payload
    for `interactive` and `slash_commands`), or None for one that carries nothing (hello,
    disconnect: tests/fixtures/recorded/slack/socket_hello.json, socket_disconnect.json)."""
    # slack_sdk/socket_mode/async_client.py run_message_listeners: `message.get("type")`;
    # request.py SocketModeRequest.from_dict takes type, envelope_id and payload as given.
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise Malformed("a Socket Mode message that is not an object with a string type")
    if "payload" not in message:
        return None
    if not isinstance(message.get("envelope_id"), str):  # what the acknowledgement names
        raise Malformed("a Socket Mode message whose envelope_id is not a string")
    # slack_bolt/adapter/socket_mode/internals.py build_headers: the retry reason becomes a
    # header, which build_normalized_headers takes only as a string (or a list).
    reason = message.get("retry_reason")
    if reason is not None and not isinstance(reason, str):
        raise Malformed(f"a Socket Mode message whose retry_reason is {_kind(reason)}")
    return message["payload"]


def _check_body(body: Any) -> None:
    """`body` (an Events API body or an interactive payload) is an object slack-bolt can
    build its request from and dispatch (one holding a `command` as a slash command)."""
    if not isinstance(body, dict):
        raise Malformed(f"the body is a JSON {type(body).__name__}, not an object")
    if "event" in body and not isinstance(body["event"], dict):
        # ignoring_self_events: `req.body.get("event", {}).get("bot_id")`, null included;
        # payload_utils.is_event: `"type" in body["event"]`.
        raise Malformed(f"the body's event is {_kind(body['event'])}, not an object")
    for name, null_refused in _FIRST_IS_OBJECT.items():
        if name not in body or (body[name] is None and not null_refused):
            continue
        items = body[name]
        if not isinstance(items, list):
            raise Malformed(f"the body's {name} is {_kind(items)}, not a list")
        if items and not isinstance(items[0], dict):
            raise Malformed(f"the body's first {name} item is {_kind(items[0])}, not an object")
    authorizations = body.get("authorizations")
    _check_ids("the body", body)
    if authorizations:
        _check_ids("the body's first authorization", authorizations[0])
    if "command" in body:  # bolt takes any body holding one for a slash command
        check_command(body)


def _check_ids(where: str, holder: dict[str, Any]) -> None:
    """The ids internals.py reads in `holder` and the objects it recurses into."""
    for name in _IDS:
        value = holder.get(name)
        if value is not None and not isinstance(value, str | dict):
            raise Malformed(f"{where}'s {name} is {_kind(value)}, not an id or an object")
    for name in _INNER:
        inner = holder.get(name)
        if isinstance(inner, dict):
            _check_ids(f"{where}'s {name}", inner)


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


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
        body: str | dict[str, Any] | None
        if request.content_type == FORM:
            # bolt takes a decoded body only as "socket_mode", whose one effect is to skip
            # its signature check, done above.
            body, mode = _form_body(text), "socket_mode"
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


def _form_body(text: str) -> dict[str, Any] | None:
    """A form post decoded: a slash command's fields, or an interactive payload's JSON,
    read within the same limits as any envelope (it is what Socket Mode would carry)."""
    fields = read_form(text)
    if fields is None or not is_interactive(fields):
        return fields
    return read_envelope(fields["payload"], socket_mode=False)


def _refused(status: int, problem: str) -> web.Response:
    log.warning("slack_event_malformed", problem=problem)
    return web.Response(status=status, text=problem)
