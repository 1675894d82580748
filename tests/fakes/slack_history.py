"""What the fake Slack keeps of its conversations, and what it says when one changes.

Slack keeps every message, delivered or not: the fake keeps each message event it pushes
and each message kioku posts, and `keep` stores one "sent while kioku was down" without
pushing it. A message is kept as Slack stores it: the event (`dm`, `mention`) without what
only its delivery carries (`channel`, `channel_type`, `event_ts`), as a `message`; an edit
changes the kept text, a deletion removes it.
`conversations.history` and `conversations.replies` read them back with Slack's
documented time pagination (docs.slack.dev/reference/methods/conversations.history and
…/conversations.replies): only messages after `oldest` and before `latest` (the ones at
either end only with `inclusive`), at most `limit`; history lists a channel's top-level
messages (a thread's parent, a reply also sent to the channel), newest first; replies a
thread, its parent and replies, earliest first; `has_more` when the limit left some out.
The answers are the recorded ones (web_conversations_history.json,
web_conversations_replies.json) holding the kept messages. `refuse` makes one channel's
reads answer a recorded refusal (web_missing_scope_history.json, web_not_in_channel.json…).

`edited` and `deleted` build the `message_changed` / `message_deleted` events Slack sends
when a kept or pushed message changes, from the recorded ones (message_changed_group.json,
a capture from a real workspace, and message_deleted_channel.json).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tests.fakes.recorded import RECORDINGS, recorded_json

RECORDED = RECORDINGS / "slack"
METHODS = ("conversations.history", "conversations.replies")
_DELIVERY_ONLY = ("channel", "channel_type", "event_ts")


def _recorded(name: str) -> Any:
    return recorded_json(RECORDED / f"{name}.json")


def _ts(value: Any) -> Decimal:
    return Decimal(str(value))


class SlackHistory:
    """The kept messages of every channel, and the refusals scripted per channel."""

    def __init__(self, message_ts: Callable[[], str]) -> None:
        self._message_ts = message_ts
        self._kept: dict[str, list[dict[str, Any]]] = {}
        self._refusals: dict[str, dict[str, Any]] = {}

    def keep(self, event: dict[str, Any]) -> dict[str, Any]:
        """Keep the message `event` carries (sent while nobody was connected); returns it."""
        self._kept.setdefault(event["channel"], []).append(_as_kept(event))
        return event

    def refuse(self, channel: str, answer: str) -> None:
        """Every later read of `channel` answers the recorded refusal `answer`."""
        self._refusals[channel] = _recorded(answer)

    def answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        """The whole answer (with its `ok`) of a history method."""
        channel = str(args.get("channel"))
        if channel in self._refusals:
            return self._refusals[channel]
        kept = self._kept.get(channel, [])
        if method == "conversations.history":
            listed = [m for m in kept if _top_level(m)]
            listed.sort(key=lambda m: _ts(m["ts"]), reverse=True)
            answer: dict[str, Any] = _recorded("web_conversations_history")
        else:
            thread = _ts(args.get("ts"))
            listed = [m for m in kept if _ts(m.get("thread_ts", m["ts"])) == thread]
            listed.sort(key=lambda m: _ts(m["ts"]))
            answer = _recorded("web_conversations_replies")
        listed = [m for m in listed if _within(m, args)]
        limit = int(args.get("limit") or 100)
        answer |= {"messages": listed[:limit], "has_more": len(listed) > limit}
        if not answer["has_more"]:
            answer.pop("response_metadata", None)
        return answer

    def edited(self, original: dict[str, Any], text: str) -> dict[str, Any]:
        """The `message_changed` event of `original` (an event the fake built) now saying
        `text`."""
        before = self._current(original)
        ts = self._message_ts()
        after = before | {"text": text, "edited": {"user": before.get("user"), "ts": ts}}
        self._replace(original, after)
        event = _recorded("message_changed_group")["event"]
        return event | self._where(original, ts) | {"message": after, "previous_message": before}

    def deleted(self, original: dict[str, Any]) -> dict[str, Any]:
        """The `message_deleted` event of `original`."""
        event = _recorded("message_deleted_channel")["event"]
        where = self._where(original, self._message_ts())
        before = self._current(original)
        self._replace(original, None)
        return event | where | {"previous_message": before, "deleted_ts": original["ts"]}

    def _current(self, original: dict[str, Any]) -> dict[str, Any]:
        """The kept form of `original` as it stands now (after earlier edits)."""
        for message in self._kept.get(original["channel"], []):
            if message["ts"] == original["ts"]:
                return dict(message)
        return _as_kept(original)

    def _replace(self, original: dict[str, Any], now: dict[str, Any] | None) -> None:
        kept = self._kept.get(original["channel"], [])
        kept[:] = [m for m in kept if m["ts"] != original["ts"]] + ([now] if now else [])

    def _where(self, original: dict[str, Any], ts: str) -> dict[str, Any]:
        kind = original.get("channel_type") or "channel"  # an app_mention says none
        return {"channel": original["channel"], "channel_type": kind, "ts": ts, "event_ts": ts}


def _as_kept(event: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in event.items() if k not in _DELIVERY_ONLY}
    return kept | {"type": "message"}


def _top_level(message: dict[str, Any]) -> bool:
    """In a channel's history: not a reply, unless also sent to the channel."""
    thread = message.get("thread_ts")
    return thread is None or thread == message["ts"] or message.get("subtype") == "thread_broadcast"


def _within(message: dict[str, Any], args: dict[str, Any]) -> bool:
    """After `oldest` and before `latest`, either end included only with `inclusive`."""
    ts = _ts(message["ts"])
    inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
    if "oldest" in args:
        oldest = _ts(args["oldest"])
        if ts < oldest or (ts == oldest and not inclusive):
            return False
    if "latest" in args:
        latest = _ts(args["latest"])
        if ts > latest or (ts == latest and not inclusive):
            return False
    return True
