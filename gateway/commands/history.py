"""/undo and /history: a person takes back what they said in a direct message.

Both run in the conversation's line, after the turns sent before them, so they never
delete under a reply being written. /undo acts at once (the last exchange is on the
person's screen); /history forget lists the session and waits for the person's "yes"
(`gateway.turns.deletions`), as the model's `history_delete` tool does. Groups are refused:
a group's history belongs to the group and only the owner deletes it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import structlog

from agent.deletions import PendingDeletion
from gateway.commands.registry import Request
from gateway.turns.deletions import ask_to_confirm
from memory.history.erase import erase, survey
from memory.history.exchange import last_exchange
from memory.history.listing import last_dm_session, list_sessions
from memory.history.selection import Asker, Selection

if TYPE_CHECKING:
    from gateway.commands.handlers import Commands

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


async def undo(commands: Commands, request: Request) -> str | None:
    if request.person is None:
        return "I don't know you yet: send me a direct message first."
    person = request.person

    async def work() -> str:
        await commands.control.refresh_session(request.key)
        entry = commands.control.open_session(request.key)
        if entry is None:
            return NOTHING_TO_UNDO
        session = entry.session
        turns = await last_exchange(commands.store, session.id)
        if not turns:
            return NOTHING_TO_UNDO
        [said] = await commands.store.messages(session.id, after=turns[0] - 1, limit=1)
        plan = await survey(commands.store, Asker.of_person(person), Selection(messages=turns))
        erased = await erase(commands.store, plan, keep_open=True)
        if plan.sessions:
            await commands.control.refresh_session(request.key)
        else:
            commands.agent.drop_last_exchange(session.id)
        log.info("history_undone", person=person, session=session.id, turns=erased.turns)
        replies = erased.turns - 1
        return (
            f"Removed your last message ({_short(said.content)}) and {replies} "
            f"{'turn' if replies == 1 else 'turns'} of my reply from our history."
        )

    return (
        None
        if commands.control.later(request.key, request.inbound, work)
        else BUSY.format(name=request.command.name)
    )


async def history(commands: Commands, request: Request) -> str | None:
    argument = request.command.argument.strip().lower()
    if argument == "forget":
        return await forget_session(commands, request)
    if argument:
        return f"Unknown /history {argument!r}. {HISTORY_USAGE}"
    if request.person is None:
        return "I don't know you yet: send me a direct message first."
    sessions = await list_sessions(commands.store, request.person, dms_only=True, limit=LISTED)
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


async def forget_session(commands: Commands, request: Request) -> str | None:
    if request.person is None:
        return "I don't know you yet: send me a direct message first."
    person = request.person

    async def work() -> str:
        await commands.control.refresh_session(request.key)
        entry = commands.control.open_session(request.key)
        if entry is not None:
            target = entry.session.id
        else:
            last = await last_dm_session(commands.store, person)
            if last is None:
                return "You have no direct-message session with me to delete."
            target = last.id
        plan = await survey(commands.store, Asker.of_person(person), Selection(sessions=(target,)))
        # The reply is the list: it counts as shown once this job hands it over.
        commands.agent.services.deletions.offer(
            PendingDeletion(request.key, person, plan, shown_at=time.monotonic())
        )
        return ask_to_confirm(plan)

    return (
        None
        if commands.control.later(request.key, request.inbound, work)
        else BUSY.format(name=request.command.name)
    )


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
