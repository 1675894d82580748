"""Messages kept in history without an answer: missed ones too old to answer, and those of
a person over budget. The model sees them once it answers that conversation again."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.base import Inbound
from agent.media.stored import file_stand_in
from gateway.sessions import Sessions
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, Session


async def keep_unanswered(
    store: Store,
    sessions: Sessions,
    messages: Sequence[Inbound],
    person: str | None,
    conversation: Conversation,
) -> Session | None:
    """Store `messages` unanswered in the conversation's session (returned; None when
    there were none)."""
    if not messages:
        return None
    session = await sessions.open(conversation)
    for inbound in messages:
        await store.append(
            session.id,
            NewMessage(
                role="user",
                content=unanswered_text(inbound),
                speaker=person,
                ts=inbound.received_at,
                platform_message_id=inbound.message_id,
            ),
        )
    return session


def unanswered_text(inbound: Inbound) -> str:
    """A missed message as stored unanswered: its files' stand-ins first, as every stored
    turn has them, saying they were not read (they were not fetched), then its text."""
    files = [
        f"{file_stand_in(item.kind, item.name)[:-1]}, not read]" for item in inbound.attachments
    ]
    return "\n".join(part for part in (*files, inbound.text.strip()) if part)
