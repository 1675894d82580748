"""The conversation as the agent sees it, independent of any SDK, and the `Provider` protocol.

Each provider converts these types to and from its own wire format, so the agent loop,
the session store and the tests speak one language whatever model answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant"]
StopReason = Literal["end", "tool_use", "max_tokens"]
OnText = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks to run tool `name`; `id` pairs it with the `ToolResult` sent back.
    `refusal` is set when its arguments could not be used (then `arguments` is empty):
    the call is answered with it as an error, not run."""

    id: str
    name: str
    arguments: dict[str, Any]
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Image:
    """An image the person sent, ready for the wire: downscaled, EXIF-free, in one of
    the types both APIs take (image/jpeg, image/png, image/gif, image/webp).
    `stand_in` is the text that replaces it once it is no longer among a session's
    latest images, and for a provider that cannot take it."""

    media_type: str
    data: bytes = field(repr=False)
    stand_in: str


@dataclass(frozen=True, slots=True)
class Document:
    """A PDF sent whole (Anthropic's document block); `stand_in` as for `Image`,
    holding the text kioku read from it."""

    media_type: str
    data: bytes = field(repr=False)
    stand_in: str


Block = Text | Image | Document | ToolCall | ToolResult
Attached = Image | Document
"""The blocks of a person's files; only user messages hold them."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn. Users send text and tool results; the assistant sends text and tool calls."""

    role: Role
    content: tuple[Block, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.content, tuple):
            object.__setattr__(self, "content", tuple(self.content))
        misplaced = ToolCall if self.role == "user" else (ToolResult, Image, Document)
        for block in self.content:
            if isinstance(block, misplaced):
                raise ValueError(f"a {self.role} message cannot hold a {type(block).__name__}")

    @classmethod
    def user(cls, text: str) -> ChatMessage:
        return cls("user", (Text(text),))

    @classmethod
    def tool_results(cls, results: Sequence[ToolResult]) -> ChatMessage:
        return cls("user", tuple(results))


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: `input_schema` is a JSON Schema object."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model call. `system` reaches the API byte-identical (prompt caching relies on it);
    `max_tokens=None` means the provider's configured default."""

    system: str
    messages: Sequence[ChatMessage]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. `input_tokens` counts only input neither read from nor written
    to the prompt cache, so the prompt size is `total_input_tokens`."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The assembled answer. `stop_reason` is "tool_use" whenever the reply holds tool
    calls and was not cut off; with "max_tokens" any tool call may be truncated."""

    content: tuple[Block, ...]
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.content if isinstance(block, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [block for block in self.content if isinstance(block, ToolCall)]

    def as_message(self) -> ChatMessage:
        """The reply as the assistant turn to append to the conversation."""
        return ChatMessage("assistant", self.content)


def stop_reason_for(content: Sequence[Block], truncated: bool) -> StopReason:
    """One rule for both providers: some local servers say "stop" even after tool calls."""
    if truncated:
        return "max_tokens"
    return "tool_use" if any(isinstance(block, ToolCall) for block in content) else "end"


class Provider(Protocol):
    """A model endpoint. `complete` streams text to `on_text` as it arrives (in order, awaited
    one at a time) and returns the whole reply; failures raise `ProviderError` subclasses."""

    name: str
    model: str
    context_window: int

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply: ...

    async def aclose(self) -> None: ...
