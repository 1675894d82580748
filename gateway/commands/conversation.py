"""/new, /stop and /status: the conversation a command came from, as the gateway runs it —
its session, its line of waiting messages and the model that answers. Anyone may send
them, known or not: they act on the conversation, not on a person's data.
"""

from __future__ import annotations

from gateway.commands.context import Context


async def new(context: Context[str | None]) -> str | None:
    if context.control.new_session(context.key, context.inbound):
        return None
    return "Too many messages are waiting here; send /stop first, then /new."


async def stop(context: Context[str | None]) -> str:
    cancelled, dropped = context.control.stop(context.key)
    if not cancelled and not dropped:
        return "Nothing to stop: no reply is being written."
    parts = ["Stopped the reply in progress."] if cancelled else []
    if dropped:
        parts.append(f"Dropped {count(dropped, 'waiting message')}.")
    return " ".join(parts)


async def status(context: Context[str | None]) -> str:
    entry = context.control.open_session(context.key)
    if entry is None:
        lines = ["Session: none open; your next message starts one."]
    else:
        done = await context.store.session_activity(entry.session.id)
        started = entry.session.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        lines = [
            f"Session: started {started}, {count(done.user_turns, 'message')} so far "
            f"(id {entry.session.external_id})."
        ]
    line = context.control.line(context.key)
    busy = "a reply is being written" if line.busy else "no reply in progress"
    lines.append(f"Queue: {busy}, {count(line.queued, 'message')} waiting.")
    agent = context.agent
    model = (
        f"{agent.provider.name} {agent.provider.model}" if agent.has_model else "none configured"
    )
    lines.append(f"Model: {model}.")
    return "\n".join(lines)


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
