"""The gateway's one entry to the slash commands: `Commands.run` gives a parsed command
its `Context` and hands it to the built-in registry, which answers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import Inbound
from agent.agent import Agent
from gateway.commands.builtin import SLASH_COMMANDS
from gateway.commands.context import Context, Control
from gateway.commands.parsing import Command
from memory.store.database import Store

if TYPE_CHECKING:
    from gateway.identity import Identities


class Commands:
    """What every command may use, held once: the store, the agent (and its services and
    settings), the identities and the gateway's controls of a conversation."""

    def __init__(
        self, store: Store, agent: Agent, identities: Identities, control: Control
    ) -> None:
        self.store = store
        self.agent = agent
        self.identities = identities
        self.control = control

    async def run(
        self, inbound: Inbound, person: str | None, key: str, command: Command
    ) -> str | None:
        """The reply to `command`, sent by `person` in the conversation `key`, to send now;
        None when the gateway replies later (/new, /undo)."""
        services = self.agent.services
        context = Context(
            command,
            inbound,
            key,
            person,
            self.store,
            services.settings,
            services,
            self.agent,
            self.identities,
            self.control,
        )
        return await SLASH_COMMANDS.run(context)
