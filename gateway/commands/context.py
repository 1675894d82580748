"""What a command handler is given: the command, who sent it from where, and the parts of
kioku it may use — one `Context`, so no handler reaches through the agent for them.

`Context[str]` is what a command declared `needs_person` receives: the dispatcher has
already answered an unknown sender, so its handler never sees None.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from adapters.base import Inbound
from agent.agent import Agent
from agent.tools.context import Services
from config.settings import Settings
from gateway.commands.parsing import Command
from gateway.queues import LineState
from gateway.sessions import OpenSession
from memory.store.database import Store

if TYPE_CHECKING:
    from gateway.identity import Identities

# The sender's person: `str` once known, `str | None` for a command anyone may send.
Person = TypeVar("Person", str, str | None)


class Control(Protocol):
    """What the commands may ask of the gateway for the conversation they came from."""

    def new_session(self, key: str, inbound: Inbound) -> bool: ...
    def stop(self, key: str) -> tuple[bool, int]: ...
    def line(self, key: str) -> LineState: ...
    def open_session(self, key: str) -> OpenSession | None: ...
    def later(self, key: str, inbound: Inbound, work: Callable[[], Awaitable[str]]) -> bool: ...
    async def refresh_session(self, key: str) -> None: ...


@dataclass(frozen=True)
class Context(Generic[Person]):
    """One command as it came in (`inbound`, in the conversation `key`, from `person`)
    and what its handler may use: the store, the settings, the agent's services (notes,
    pending deletions, home), the agent itself, the identities and the gateway's
    `control` of this conversation."""

    command: Command
    inbound: Inbound
    key: str
    person: Person
    store: Store
    settings: Settings
    services: Services
    agent: Agent
    identities: Identities
    control: Control

    @property
    def in_group(self) -> bool:
        return not self.inbound.is_direct

    @property
    def argument(self) -> str:
        return self.command.argument

    def known(self) -> Context[str] | None:
        """This context, typed for a known sender; None when kioku does not know them."""
        return None if self.person is None else cast("Context[str]", self)
