"""The protocol an external memory provider implements, and the scope it is given.

Every hook is optional: `MemoryProvider` gives each a default that does nothing, so a
provider overrides only what its service can do. kioku decides the scope of every call
(exactly one person, or one group chat) and never passes another scope's identifiers;
whatever a provider returns is data, safety-scanned, fenced and capped before the
model sees it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from agent.providers.base import Usage

ScopeKind = Literal["person", "group"]


@dataclass(frozen=True)
class Scope:
    """One person (`person:<id>`) or one group chat (`group:<conversation key>`).

    `key` is the only identifier a provider sees; it is stable, so a provider may use
    it as its own container or namespace name (`container_tag`)."""

    kind: ScopeKind
    id: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True)
class Health:
    """What `kioku doctor` and `kioku status` show for a provider."""

    ok: bool
    detail: str


@dataclass(frozen=True)
class ProviderTool:
    """A tool a provider offers the model; kioku names it `<provider>__<name>`."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Before:
    """The turn just before an exchange in its session (kioku's last answer, or a
    message it never answered): `role` "user" or "assistant"."""

    turn_id: int
    role: str
    text: str


@dataclass(frozen=True)
class TurnRecord:
    """One exchange to mirror: the person's message and kioku's answer. `turn_ids` are
    the store's ids of the two turns, so a later `delete` can name them. `before` is
    the turn said just before it in the session (None at a session's start), for a
    provider that reads an exchange in its context; one that keeps its text must also
    erase it when `delete` names `before.turn_id`."""

    user_text: str
    assistant_text: str
    turn_ids: tuple[int, ...]
    meta: Mapping[str, str] = field(default_factory=dict)
    before: Before | None = None


@dataclass(frozen=True)
class Passage:
    """One turn of kioku's own history found by its lexical search: `turn_id` is the
    store's id of the turn, `text` what was said."""

    turn_id: int
    text: str
    ts: datetime


LexicalSearch = Callable[[Scope, str, int], Awaitable[Sequence[Passage]]]
"""kioku's built-in search within one scope: (scope, query, limit) -> turns, best first."""


ProviderCharge = Callable[[Scope, str, Usage, str | None], Awaitable[None]]
"""A model call a provider made for a scope: (scope, model, its tokens, the endpoint's base
URL) -> charged to the scope's person or group."""


async def no_charge(_scope: Scope, _model: str, _usage: Usage, _base_url: str | None) -> None:
    """The charge of a provider run outside the daemon with no history (a probe, a health
    check): nobody's message caused its calls."""


@dataclass(frozen=True)
class Host:
    """What kioku lends a provider, set as `provider.host` before `start`.

    `data_dir` is the provider's own folder (`$KIOKU_HOME/providers/<name>/`, mode 0700),
    for any database or cache it keeps; `search` is kioku's lexical search, limited to the
    scope it is given, for providers that fuse their hits with it; `charge` records a
    model call it made for a scope (an embedding), so its cost shows in `kioku usage`."""

    data_dir: Path
    search: LexicalSearch
    charge: ProviderCharge = no_charge


class ProviderError(Exception):
    """A provider call failed; the message says why (no credentials in it)."""


class MemoryProvider:
    """Base class of every provider; each hook's default does nothing.

    `name` is the settings key (`[providers.<name>]`); `erases` says whether `forget` and
    `delete` really remove data at the service (the README lists it per provider).
    `settings` is the provider's own section as a plain mapping (credentials as
    `pydantic.SecretStr` where the section declares them).
    """

    name: ClassVar[str]
    erases: ClassVar[bool] = False
    host: Host

    async def start(self, settings: Mapping[str, Any]) -> None:
        """Connect; raise `ProviderError` if the provider cannot work with `settings`."""

    async def stop(self) -> None:
        """Release connections; safe to call twice."""

    async def health(self) -> Health:
        return Health(True, "no health check")

    async def prompt_block(self, scope: Scope) -> str:
        """Text frozen into the system prompt when a session of `scope` opens."""
        return ""

    async def recall(self, scope: Scope, query: str, limit: int) -> Sequence[str]:
        """Up to `limit` pieces of context for the message `query`, best first."""
        return ()

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        """Mirror one exchange (called from the background queue, with retries)."""

    async def session_closed(self, scope: Scope, summary: str) -> None:
        """A session of `scope` ended with this summary."""

    async def note_written(self, scope: Scope, target: str, operation: str, text: str) -> None:
        """A built-in note changed: `target` "memory" or "user", `operation` add/replace/remove."""

    def tools(self) -> Sequence[ProviderTool]:
        return ()

    async def call(self, name: str, arguments: Mapping[str, Any], scope: Scope) -> str:
        """Run one of `tools()` for `scope`; raise `ProviderError` with a reason."""
        raise ProviderError(f"{self.name} has no tool {name!r}")

    async def forget(self, scope: Scope) -> None:
        """Remove everything the service holds for `scope` (a person is forgotten)."""

    async def delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        """Remove what was recorded from these turns (history was deleted)."""
