"""/memory, /remember and /forget: a person reads and edits their own notes (USER.md,
MEMORY.md), and with /memory auto decides whether the background review may change them.
They refuse in a group and point to a direct message, because a person's notes are private.
/memory dates each entry from the journal; a change is journaled with the conversation's
open session.
"""

from __future__ import annotations

from datetime import tzinfo

import structlog

from agent.local_time import zone_of
from gateway.commands.context import Context
from inputs.text import shown
from memory.notes.auto import reflection_on, set_reflection
from memory.notes.files import NotesFileError
from memory.notes.format import FILE_NAMES, TARGETS, NotesState
from memory.notes.journal import Written
from memory.notes.origin import NoteOrigin
from memory.notes.repeats import repeated_entry
from memory.store.errors import StoreError

log = structlog.get_logger("kioku.commands")

_AUTO_USAGE = "/memory auto shows whether I review conversations for you; on or off changes it."
MEMORY_USAGE = "/memory shows your notes; " + _AUTO_USAGE

PRIVATE_IN_GROUP = (
    "Your notes are private, so /{name} works only in a direct message with me. "
    "Send it to me there."
)


async def memory(context: Context[str]) -> str:
    words = context.argument.lower().split()
    if words and words[0] == "auto":
        return await _auto(context, words[1:])
    if words:
        return f"Unknown /memory {shown(context.argument.strip())}. {MEMORY_USAGE}"
    notes = context.services.notes(context.person)
    zone = await zone_of(context.store, context.settings, context.person)
    parts = []
    for target in TARGETS:
        try:
            state = await notes.read(target)
        except NotesFileError as exc:
            parts.append(f"{FILE_NAMES[target]} cannot be read: {exc}")
            continue
        try:
            written = await notes.written(target, state.entries)
        except StoreError:
            written = {}
        parts.append(_describe(state, written, zone))
    return "\n\n".join(parts)


def _origin(context: Context[str]) -> NoteOrigin:
    """The person's own change, from the conversation's open session if there is one."""
    open_session = context.control.open_session(context.key)
    return NoteOrigin("person", open_session.session.id if open_session else None)


async def _auto(context: Context[str], words: list[str]) -> str:
    """/memory auto [on|off]: whether the background review may change this person's memory."""
    if words not in ([], ["on"], ["off"]):
        return f"Unknown /memory auto {shown(' '.join(words))}. {MEMORY_USAGE}"
    if words:
        await set_reflection(context.store, context.person, words[0] == "on")
        log.info("reflection_choice", person=context.person, on=words[0] == "on", by="chat")
    if not context.settings.agent.reflection.enabled:
        return (
            "Background review is off for everyone on this kioku (agent.reflection.enabled), "
            "so nothing is written without being asked. " + _AUTO_USAGE
        )
    if await reflection_on(context.store, context.person):
        head = "is now on" if words else "is on"
        return (
            f"Background review {head}: after a conversation I may note what seems worth "
            "keeping (in your notes and skills). /memory auto off stops that for you."
        )
    head = "is now off" if words else "is off"
    return (
        f"Background review {head} for you: I change your notes only when you or I decide it "
        "in a conversation. /memory auto on turns it back on."
    )


async def remember(context: Context[str]) -> str:
    if not context.argument:
        return "Tell me what to remember: /remember TEXT (it goes into your USER.md)."
    result = await context.services.notes(context.person).add(
        "user", context.argument, origin=_origin(context)
    )
    if result.kind in ("unchanged", "near_duplicate"):
        kept = repeated_entry(context.argument, result.entries)
        return f"Already noted: {kept}" if kept else result.headline
    return result.headline if result.ok else result.message


async def forget(context: Context[str]) -> str:
    text = context.argument
    if not text:
        return "Tell me what to forget: /forget TEXT removes the one note containing TEXT."
    notes = context.services.notes(context.person)
    try:
        states = [await notes.read(target) for target in TARGETS]
    except NotesFileError as exc:
        return f"Your notes cannot be read: {exc}"
    holding = [s for s in states if any(text.strip() in entry for entry in s.entries)]
    if len(holding) > 1:
        candidates = [e for s in holding for e in s.entries if text.strip() in e]
        listed = "\n".join(f"- {entry}" for entry in candidates)
        return (
            f"{text!r} is in notes of both USER.md and MEMORY.md; it must pick one. "
            f"Nothing was changed.\nCandidates:\n{listed}\n"
            "Send /forget with a longer piece of the one note to remove."
        )
    target = holding[0].target if holding else "user"
    result = await notes.remove(target, text, origin=_origin(context))
    if result.ok:
        return result.headline
    if not holding:
        return f"No note in USER.md or MEMORY.md contains {text.strip()!r}. Nothing was changed."
    return result.message


def _describe(state: NotesState, written: dict[str, Written], zone: tzinfo) -> str:
    """Each entry numbered, with the day it was written in the person's zone."""
    head = f"{state.file_name} ({state.usage})"
    if not state.entries:
        return f"{head}: empty."
    lines = [f"{head}:"]
    for number, (entry, finding) in enumerate(
        zip(state.entries, state.findings, strict=True), start=1
    ):
        blocked = f" [hidden from the assistant: {finding}]" if finding else ""
        when = written.get(entry)
        dated = f" ({when.at.astimezone(zone):%Y-%m-%d})" if when else ""
        lines.append(f"{number}. {entry}{dated}{blocked}")
    return "\n".join(lines)
