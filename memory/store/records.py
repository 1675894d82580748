"""Plain records that cross layers: what the store returns and what search hands back.

Times are timezone-aware UTC `datetime`s here and unix seconds (REAL) in state.db:
8 bytes a row instead of a 32-character ISO string, converted only at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from memory.store.usage import UsageRecord

Role = Literal["user", "assistant", "tool"]
Kind = Literal["dm", "group"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool")
# Why a search hit matched: it says the query's phrases (quoted, identifiers, the query
# itself), holds all of its words, some of them, or is near it in meaning (vector recall).
Reason = Literal["phrase", "all words", "some words", "semantic", "period"]


def to_epoch(moment: datetime) -> float:
    """Unix seconds of an aware datetime; a naive one is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


@dataclass(frozen=True)
class Person:
    id: str
    display_name: str | None
    created_at: datetime


@dataclass(frozen=True)
class Conversation:
    """Where a session happens. A DM belongs to `person`; a group to `(platform, chat)`.

    `key` names the conversation (at most one open session per key); it defaults to
    one key per DM chat or group thread. The gateway may pass its own, e.g. one key
    per person across all their DMs.
    """

    platform: str
    chat: str
    kind: Kind = "dm"
    person: str | None = None
    thread: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        if not self.platform or self.chat is None:
            raise ValueError("a conversation needs a platform and a chat")
        if (self.kind == "dm") != (self.person is not None):
            raise ValueError("a DM conversation needs its person; a group conversation has none")
        if not self.key:
            key = (
                f"dm:{self.person}:{self.platform}:{self.chat}"
                if self.kind == "dm"
                else f"group:{self.platform}:{self.chat}:{self.thread}"
            )
            object.__setattr__(self, "key", key)

    @property
    def scope(self) -> str:
        """Who may read it: the DM's person, or everyone searching inside the group."""
        if self.kind == "group":
            return group_scope(self.platform, self.chat)
        return person_scope(self.person or "")


def person_scope(person: str) -> str:
    return f"person:{person}"


def group_scope(platform: str, chat: str) -> str:
    return f"group:{platform}:{chat}"


@dataclass(frozen=True)
class Usage:
    """Token counters reported by the provider, added up per session."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Session:
    id: int
    external_id: str
    conversation: str
    platform: str
    chat: str
    thread: str
    kind: Kind
    person: str | None
    title: str | None
    summary: str | None
    started_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    usage: Usage


@dataclass(frozen=True)
class Activity:
    """How far a session got: the messages the person sent, and when its last turn was."""

    user_turns: int
    last_at: datetime | None


@dataclass(frozen=True)
class Message:
    id: int
    session_id: int
    role: Role
    content: str
    speaker: str | None
    ts: datetime
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    platform_message_id: str | None = None


@dataclass(frozen=True)
class NewMessage:
    """A turn to store: what `Store.append` and imports take. `usage` are model calls
    written in the same transaction as the turn (a reply's: see `memory.store.usage`)."""

    role: Role
    content: str
    speaker: str | None = None
    ts: datetime | None = None
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    platform_message_id: str | None = None
    usage: tuple[UsageRecord, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, not {self.role!r}")
        if not isinstance(self.content, str):
            raise ValueError("content must be a string")


@dataclass(frozen=True)
class PastSession:
    """A finished session brought in from elsewhere (jsonl, Hermes), with its messages."""

    external_id: str
    conversation: Conversation
    messages: list[NewMessage]
    title: str | None = None
    summary: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    end_reason: str = "imported"
    usage: Usage = Usage()


@dataclass(frozen=True)
class ImportCounts:
    sessions_added: int = 0
    messages_added: int = 0
    messages_present: int = 0

    def __add__(self, other: ImportCounts) -> ImportCounts:
        return ImportCounts(
            self.sessions_added + other.sessions_added,
            self.messages_added + other.messages_added,
            self.messages_present + other.messages_present,
        )


@dataclass(frozen=True)
class IntegrityReport:
    """What `kioku doctor` shows: `ok` only if SQLite and the FTS index both check clean."""

    ok: bool
    schema_version: int
    problems: list[str]
    persons: int
    sessions: int
    messages: int
    size_bytes: int


@dataclass(frozen=True)
class Hit:
    """A matching turn, with its text highlighted (`**word**`) around the match, and why
    it matched."""

    message_id: int
    role: Role
    ts: datetime
    snippet: str
    content: str
    reason: Reason

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "role": self.role,
            "ts": iso(self.ts),
            "snippet": self.snippet,
            "content": self.content,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ContextTurn:
    message_id: int
    role: Role
    ts: datetime
    content: str

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "role": self.role,
            "ts": iso(self.ts),
            "content": self.content,
        }


@dataclass(frozen=True)
class SessionResult:
    """One session found by a search: its best turns and the turns around them."""

    session: str
    session_id: int
    platform: str
    title: str | None
    summary: str | None
    started_at: datetime
    score: float
    hits: list[Hit] = field(default_factory=list)
    context: list[ContextTurn] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "session_id": self.session_id,
            "platform": self.platform,
            "title": self.title,
            "summary": self.summary,
            "started_at": iso(self.started_at),
            "score": self.score,
            "hits": [hit.to_json() for hit in self.hits],
            "context": [turn.to_json() for turn in self.context],
        }
