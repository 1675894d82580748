"""A Slack event as the gateway's neutral `Inbound` (direct messages and mentions only) or
`Changed` (a message edited or deleted).

Channel messages reach kioku as `app_mention` events; a `message` event counts only in a
direct message (channel type `im`), so a mention is never taken twice. Bots, kioku
itself, joins and the like are not a person writing. A top-level mention in a
channel starts a thread (the answer goes under it), so the thread's later mentions
continue the same session. An edit (`message_changed`) or a deletion (`message_deleted`)
names its message by the same chat, thread and ts its `Inbound` had. The event comes off
the wire: one with a field of the wrong type is dropped with a log line instead of failing
the adapter's handler. Shared files are `Attachment`s downloaded through the adapter's
`SlackFiles`. A message's time is its `ts`, when Slack says it was sent.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from adapters.base import Changed, Inbound
from adapters.slack.files import FileShapeError, SlackFiles
from adapters.slack.mrkdwn import from_slack

PLATFORM = "slack"
# Message subtypes that are a person writing; edits, deletions, joins and the like are not.
_SPOKEN_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
EDITED, DELETED = "message_changed", "message_deleted"
_TS = re.compile(r"(\d{1,12})(?:\.(\d{1,6}))?")

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
        **({"received_at": sent_at(ts)} if is_ts(ts) else {}),
    )


def to_changed(event: Any, bot_user_id: str | None) -> Changed | None:
    """A person's message edited (`message_changed`, only when its text changed: Slack also
    sends one when a link preview is added) or deleted (`message_deleted`), named as its
    `Inbound` was; None for kioku's own messages and bots', or a malformed event (logged)."""
    try:
        return _changed(event, bot_user_id)
    except _Malformed as problem:
        log.warning("slack_event_malformed", problem=str(problem))
        return None


def _changed(event: Any, bot_user_id: str | None) -> Changed | None:
    if not isinstance(event, dict):
        raise _Malformed("the event is not an object")
    if event.get("subtype") not in (EDITED, DELETED):
        return None
    channel = _string(event, "channel")
    direct = event.get("channel_type") == "im" or _is_dm(channel)
    before = _object(event, "previous_message")
    if event.get("subtype") == DELETED:
        if not _a_person(before, bot_user_id):
            return None
        ts = _string(event, "deleted_ts")
        return Changed(PLATFORM, channel, ts, None, _thread(before, ts, direct))
    after = _object(event, "message")
    if not _a_person(after, bot_user_id):
        return None
    text = _optional(after, "text") or ""
    if before and _optional(before, "text") == text:
        return None  # a preview unfurled, a reply counted: the words are the same
    ts = _optional(after, "ts") or _string(before, "ts")
    return Changed(PLATFORM, channel, ts, from_slack(text, bot_user_id), _thread(after, ts, direct))


def _a_person(message: dict[str, Any], bot_user_id: str | None) -> bool:
    """Whether a message is a person's: not kioku's, not a bot's (nor unknown)."""
    user = message.get("user")
    return bool(user) and user != bot_user_id and not message.get("bot_id")


def _thread(message: dict[str, Any], ts: str, direct: bool) -> str:
    """The thread the message's `Inbound` had: its own thread, else none in a direct
    message and a new one under it in a channel."""
    return _optional(message, "thread_ts") or ("" if direct else ts)


def sent_at(ts: str) -> datetime:
    """When Slack says a message was sent: its `ts`, seconds and microseconds since 1970."""
    match = _TS.fullmatch(ts)
    if match is None:
        raise ValueError(f"{ts!r} is not a Slack timestamp")
    seconds, micros = match.group(1), (match.group(2) or "").ljust(6, "0")
    return datetime.fromtimestamp(int(seconds), UTC) + timedelta(microseconds=int(micros))


def is_ts(value: str) -> bool:
    """Whether `value` is a Slack message timestamp (a slash command's id is not)."""
    return _TS.fullmatch(value) is not None


def _is_dm(channel: Any) -> bool:
    return isinstance(channel, str) and channel.startswith("D")


def _string(event: dict[str, Any], name: str) -> str:
    value = event.get(name)
    if not isinstance(value, str) or not value:
        raise _Malformed(f"{name} is {type(value).__name__}, not a non-empty string")
    return value


def _object(event: dict[str, Any], name: str) -> dict[str, Any]:
    value = event.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Malformed(f"{name} is {type(value).__name__}, not an object")
    return value


def _optional(event: dict[str, Any], name: str) -> str | None:
    value = event.get(name)
    if value is not None and not isinstance(value, str):
        raise _Malformed(f"{name} is {type(value).__name__}, not a string")
    return value
