"""A Slack event as the gateway's neutral `Inbound`: direct messages and mentions only.

Channel messages reach kioku as `app_mention` events; a `message` event counts only in a
direct message (channel type `im`), so a mention is never taken twice. Bots, kioku
itself, edits, deletions and joins are not a person writing. A top-level mention in a
channel starts a thread (the answer goes under it), so the thread's later mentions
continue the same session. The event comes off the wire: one with a field of the wrong
type is dropped with a log line instead of failing the adapter's handler. Shared files
are `Attachment`s downloaded through the adapter's `SlackFiles`.
"""

from __future__ import annotations

from typing import Any

import structlog

from adapters.base import Inbound
from adapters.slack.files import FileShapeError, SlackFiles
from adapters.slack.mrkdwn import from_slack

PLATFORM = "slack"
# Message subtypes that are a person writing; edits, deletions, joins and the like are not.
_SPOKEN_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})

log = structlog.get_logger("kioku.slack")


class _Malformed(ValueError):
    """A field kioku needs is missing or of the wrong type."""


def to_inbound(body: Any, event: Any, bot_user_id: str | None, files: SlackFiles) -> Inbound | None:
    """The event as kioku sees it, or None: not a person writing to kioku, or malformed
    (logged). `sender_name` is left to the caller, which asks Slack for it."""
    try:
        return _inbound(body, event, bot_user_id, files)
    except (_Malformed, FileShapeError) as problem:
        log.warning("slack_event_malformed", problem=str(problem))
        return None


def _inbound(body: Any, event: Any, bot_user_id: str | None, files: SlackFiles) -> Inbound | None:
    if not isinstance(event, dict) or not isinstance(body, dict):
        raise _Malformed("the event or its envelope is not an object")
    kind = event.get("type")
    if kind == "message" and event.get("channel_type") == "im":
        direct = True
    elif kind == "app_mention" and not _is_dm(event.get("channel")):
        direct = False
    else:
        return None
    user = event.get("user")
    if not user or user == bot_user_id or event.get("bot_id"):
        return None
    subtype = event.get("subtype")
    if subtype is not None and not isinstance(subtype, str):
        raise _Malformed(f"subtype is {type(subtype).__name__}, not a string")
    if subtype not in _SPOKEN_SUBTYPES:
        return None
    user = _string(event, "user")
    ts = _string(event, "ts")
    team = event.get("user_team") or event.get("team") or body.get("team_id")
    if not isinstance(team, str) or not team:
        raise _Malformed("no team (user_team, team or team_id) names the sender's workspace")
    return Inbound(
        platform=PLATFORM,
        chat=_string(event, "channel"),
        sender=f"{PLATFORM}:{team}:{user}",
        text=from_slack(_optional(event, "text") or "", bot_user_id),
        is_direct=direct,
        thread=_optional(event, "thread_ts") or ("" if direct else ts),
        addressed=not direct,
        message_id=ts,
        attachments=files.attachments(event.get("files")),
    )


def _is_dm(channel: Any) -> bool:
    return isinstance(channel, str) and channel.startswith("D")


def _string(event: dict[str, Any], name: str) -> str:
    value = event.get(name)
    if not isinstance(value, str) or not value:
        raise _Malformed(f"{name} is {type(value).__name__}, not a non-empty string")
    return value


def _optional(event: dict[str, Any], name: str) -> str | None:
    value = event.get(name)
    if value is not None and not isinstance(value, str):
        raise _Malformed(f"{name} is {type(value).__name__}, not a string")
    return value
