"""Edits and deletions made on a platform after a message was sent to kioku.

Before the message's turn begins, an edit changes what the turn will read (and what
the ledger holds for it); a deletion means there is no turn. Once the turn has begun,
the change waits in the conversation's line and is made to the stored turn after it.
A stored turn is edited in place (history and search show the new text, the old is
not kept) and never answered again; a deleted one is erased as `/undo` erases. The
session's live copy is rebuilt from the store, its prompt kept, in the conversation's
line: the model is next shown history as it now is.
"""

from __future__ import annotations

from typing import Protocol

import structlog

from adapters.base import Changed
from agent.agent import Agent
from gateway.queues import ConversationQueues
from gateway.sessions import Sessions
from gateway.turns.pending import Delivery, Pending
from gateway.turns.waiting import to_waiting
from memory.history.platform_edits import amend_said, erase_said
from memory.store import deliveries
from memory.store.database import Store

log = structlog.get_logger("kioku.gateway")


class Front(Protocol):
    """What of the gateway an edit needs: the held messages, the lines, the store."""

    store: Store
    pending: Pending
    queues: ConversationQueues
    sessions: Sessions
    agent: Agent


class Edits:
    def __init__(self, front: Front) -> None:
        self.front = front

    async def take(self, change: Changed) -> None:
        """Apply `change` where its message now is; nothing happens for a message kioku
        never took in (group chatter, or one older than the ledger and history)."""
        front = self.front
        delivery = (change.platform, change.chat, change.message_id)
        where, edited = front.pending.edit(delivery, change.text)
        if where == "queued":
            if edited is not None:
                await deliveries.rewrite(front.store, *delivery, to_waiting(edited))
            log.info(
                "message_changed_before_turn", platform=change.platform, deleted=change.deleted
            )
            return
        if where == "begun":
            line = front.pending.line(delivery)
            if line is not None:

                async def after_turn() -> None:
                    await self._change_stored(delivery, change)

                front.queues.submit(line, after_turn, name="message-changed", force=True)
                return
        await self._change_stored(delivery, change)

    async def _change_stored(self, delivery: Delivery, change: Changed) -> None:
        front = self.front
        if change.text is None:
            unsaid = await erase_said(front.store, *delivery)
            said = None if unsaid is None else unsaid.said
            if unsaid is not None and unsaid.session_removed:
                await front.sessions.recheck(unsaid.said.conversation)
        else:
            said = await amend_said(front.store, *delivery, change.text)
        if said is None:
            log.debug("message_changed_not_stored", platform=change.platform)
            return
        if said.is_open:
            # In the conversation's line, never under a turn of the session being answered.
            session_id = said.session_id

            async def reload() -> None:
                await front.agent.reload(session_id)

            front.queues.submit(said.conversation, reload, name="reload-session", force=True)
        log.info(
            "stored_message_changed",
            platform=change.platform,
            session=said.session_id,
            deleted=change.deleted,
        )
