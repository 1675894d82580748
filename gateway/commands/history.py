"""/undo and /history: a person takes back what they said in a direct message.

Both run in the conversation's line, after the turns sent before them, so they never
delete under a reply being written. /undo acts at once (the last exchange is on the
person's screen); /history forget lists the session and waits for the person's "yes"
(`gateway.turns.deletions`), as the model's `history_delete` tool does. Groups are refused:
a group's history belongs to the group and only the owner deletes it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import structlog

from agent.deletions import PendingDeletion
from gateway.commands.context import Context
from gateway.turns.deletions import ask_to_confirm
from memory.history.erase import erase, survey
from memory.history.exchange import last_exchange
from memory.history.listing import last_dm_session, list_sessions
from memory.history.selection import Asker, Selection

log = structlog.get_logger("kioku.commands")

GROUP_HISTORY = (
    "/{name} works only in a direct message, for your own history: a group's history "
    "belongs to the group, and only kioku's owner deletes it (kioku history delete)."
)
LISTED = 10
HISTORY_USAGE = (
    "/history lists your recent direct-message sessions; /history forget deletes the "
    "session in progress (or, if none is open, the last one) after you confirm."
)
BUSY = "Too many messages are waiting here; send /stop first, then /{name} again."
NOTHING_TO_UNDO = "Nothing to undo: there is no message of yours in this conversation yet."


async def undo(context: Context[str]) -> str | None:
    person, store, control = context.person, context.store, context.control

    async def work() -> str:
        await control.refresh_session(context.key)
        entry = control.open_session(context.key)
        if entry is None:
            return NOTHING_TO_UNDO
        session = entry.session
        turns = await last_exchange(store, session.id)
        if not turns:
            return NOTHING_TO_UNDO
        [said] = await store.messages(session.id, after=turns[0] - 1, limit=1)
        plan = await survey(store, Asker.of_person(person), Selection(messages=turns))
        erased = await erase(store, plan, keep_open=True)
        if plan.sessions:
            await control.refresh_session(context.key)
        else:
            context.agent.drop_last_exchange(session.id)
        log.info("history_undone", person=person, session=session.id, turns=erased.turns)
        replies = erased.turns - 1
        return (
            f"Removed your last message ({_short(said.content)}) and {replies} "
            f"{'turn' if replies == 1 else 'turns'} of my reply from our history."
        )

    return _in_line(context, work)


async def history(context: Context[str]) -> str | None:
    argument = context.argument.strip().lower()
    if argument == "forget":
        return await forget_session(context)
    if argument:
        return f"Unknown /history {argument!r}. {HISTORY_USAGE}"
    sessions = await list_sessions(context.store, context.person, dms_only=True, limit=LISTED)
    if not sessions:
        return "You have no direct-message sessions with me yet."
    lines = ["Your recent sessions (newest first):"]
    for session in sessions:
        started = session.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        state = ", open" if session.is_open else ""
        lines.append(
            f"- {started} · {session.platform} · {session.title or 'untitled'} "
            f"(session {session.id}, {session.name}, "
            f"{session.turns} turn{'' if session.turns == 1 else 's'}{state})"
        )
    lines.append("Send /history forget to delete the session in progress or the last one.")
    return "\n".join(lines)


async def forget_session(context: Context[str]) -> str | None:
    person, store, control = context.person, context.store, context.control

    async def work() -> str:
        await control.refresh_session(context.key)
        entry = control.open_session(context.key)
        if entry is not None:
            target = entry.session.id
        else:
            last = await last_dm_session(store, person)
            if last is None:
                return "You have no direct-message session with me to delete."
            target = last.id
        plan = await survey(store, Asker.of_person(person), Selection(sessions=(target,)))
        # The reply is the list: it counts as shown once this job hands it over.
        context.services.deletions.offer(
            PendingDeletion(context.key, person, plan, shown_at=time.monotonic())
        )
        return ask_to_confirm(plan)

    return _in_line(context, work)


def _in_line(context: Context[str], work: Callable[[], Awaitable[str]]) -> str | None:
    """Queue `work` behind the conversation's earlier messages (its reply comes later);
    if the line is full, say so now."""
    if context.control.later(context.key, context.inbound, work):
        return None
    return BUSY.format(name=context.command.name)


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
