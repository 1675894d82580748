"""What kioku does not read from Slack is acknowledged and let go, without a warning.

Slack delivers more than mentions and direct messages: every `message` subtype of the
events the app subscribes to, events it gets for other reasons (`member_joined_channel`
when it is added to a channel), interactive payloads (a button, a shortcut). slack-bolt
answers a request no listener takes with 404 and logs "Unhandled request" at WARNING, and
Slack sends a request that is not acknowledged again. With `raise_error_for_unhandled_request`
(an `AsyncApp` argument) bolt hands such a request to the app's error handler instead
(slack_bolt/app/async_app.py `async_dispatch`); `on_error`, registered with `app.error`,
acknowledges it (200, empty: the Socket Mode handler then acks the envelope) and logs it
at DEBUG. Any other error a listener raises is logged at ERROR, as bolt's own handler
does, and answered 500.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.response import BoltResponse

log = structlog.get_logger("kioku.slack")


async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
    """bolt's error handler: an unhandled request is acknowledged; anything else is logged."""
    if isinstance(error, BoltUnhandledRequestError):
        log.debug("slack_request_ignored", kind=_kind(body))
        return BoltResponse(status=200, body="")
    log.error("slack_listener_failed", error=repr(error)[:200], exc_info=error)
    return None


def _kind(body: dict[str, Any]) -> str:
    """The body's type, with the event's type for an Events API body ("event_callback/…")."""
    kind = body.get("type")
    event = body.get("event")
    if isinstance(event, dict):
        return f"{kind}/{event.get('type')}"
    return str(kind if kind is not None else body.get("command", "unknown"))
