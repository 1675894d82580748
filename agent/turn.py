"""What the gateway hands the agent for one message, and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agent.media.items import Prepared
from agent.prompt import TurnContext
from agent.tools.context import Origin
from memory.store.records import Session
from memory.store.usage import UsageKind


@dataclass(frozen=True)
class Said:
    """A message the person sent before the turn's own and never had answered (it was
    missed while kioku was away): stored as its own turn, at its own time, and answered
    together with the turn's message."""

    text: str
    when: datetime
    platform_message_id: str | None = None
    media: tuple[Prepared, ...] = ()


@dataclass(frozen=True)
class Turn:
    """One incoming message, already routed to its session by the gateway.

    `speaker` is None for a group member kioku does not know: the turn is the group's.
    `origin` is the chat the message came from (where a reminder made in the turn goes).
    `text` is what the person wrote (a caption, a voice note's transcript); `media` are
    the files they sent, already read: their stand-ins are stored with the text, their
    blocks go to the model, their files are kept. `earlier` are the person's messages
    before it that are answered with it, oldest first; `unanswered` are older ones still,
    stored before them and not shown to the model (too old to answer:
    `gateway.catch_up.max_age`). `stored`: the
    person's messages are stored already and their answer was cut off (kioku stopped
    during it): nothing is stored, and the model answers the session's history as it
    stands. `kind` is what its model calls are charged as: "schedule" for a scheduled
    prompt's turn.
    """

    session: Session
    speaker: str | None
    text: str
    context: TurnContext
    platform_message_id: str | None = None
    origin: Origin | None = None
    media: tuple[Prepared, ...] = ()
    earlier: tuple[Said, ...] = ()
    unanswered: tuple[Said, ...] = ()
    stored: bool = False
    kind: UsageKind = "reply"


@dataclass(frozen=True)
class TurnOutcome:
    """The reply to deliver. `error` holds the logged cause when `text` is an apology."""

    text: str
    error: str | None = None
    tool_calls: int = 0
