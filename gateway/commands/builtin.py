"""The built-in slash commands (`SLASH_COMMANDS`): their names, help lines, where they may
be used and whether they need a known person. The answers live by concern beside this
module (conversation, people, notes, search, skills, history, schedule).

In a group the notes commands refuse and point to a direct message, because a person's
notes are private; /search searches the group's own history and /skills lists the
shared skills, which is what the group's sessions can use, whoever asks.
"""

from __future__ import annotations

from gateway.commands import (
    conversation,
    history,
    notes,
    people,
    schedule,
    search,
    skills,
    usage,
)
from gateway.commands.context import Context
from gateway.commands.registry import Registry, SlashCommand


async def help_text(context: Context[str | None]) -> str:
    return SLASH_COMMANDS.help()


SLASH_COMMANDS = Registry(
    [
        SlashCommand(("help",), "this list", help_text),
        SlashCommand(("start",), "what Telegram sends first", help_text, listed=False),
        SlashCommand(
            ("new", "reset"), "close this session and start a fresh one", conversation.new
        ),
        SlashCommand(
            ("stop",),
            "stop the reply being written and drop the messages waiting",
            conversation.stop,
        ),
        SlashCommand(("status",), "this conversation: session, queue, model", conversation.status),
        SlashCommand(
            ("whoami",),
            "who kioku knows you as, and your linked accounts",
            people.whoami,
            needs_person=True,
        ),
        SlashCommand(
            ("link",),
            "a code to link another account; with CODE, link this account",
            people.link,
            argument="[CODE]",
            direct_only=people.LINK_IN_GROUP,
        ),
        SlashCommand(
            ("memory",),
            "your notes (USER.md, MEMORY.md)",
            notes.memory,
            direct_only=notes.PRIVATE_IN_GROUP,
            needs_person=True,
        ),
        SlashCommand(
            ("remember",),
            "add TEXT to your notes about you (USER.md)",
            notes.remember,
            argument="TEXT",
            direct_only=notes.PRIVATE_IN_GROUP,
            needs_person=True,
        ),
        SlashCommand(
            ("forget",),
            "remove the note containing TEXT",
            notes.forget,
            argument="TEXT",
            direct_only=notes.PRIVATE_IN_GROUP,
            needs_person=True,
        ),
        SlashCommand(
            ("search",),
            "search your past conversations",
            search.search_mine,
            argument="QUERY",
            in_group=search.search_group,
            needs_person=True,
        ),
        SlashCommand(
            ("undo",),
            "take back your last message and my reply to it (from history too)",
            history.undo,
            direct_only=history.GROUP_HISTORY,
            needs_person=True,
        ),
        SlashCommand(
            ("history",),
            "your recent sessions; forget: delete this session (or the last one)",
            history.history,
            argument="[forget]",
            direct_only=history.GROUP_HISTORY,
            needs_person=True,
        ),
        SlashCommand(
            ("forget_session",),
            "the same as /history forget",
            history.forget_session,
            direct_only=history.GROUP_HISTORY,
            needs_person=True,
        ),
        SlashCommand(
            ("timezone",),
            "your time zone; ZONE sets it (Asia/Tokyo), clear unsets it",
            schedule.timezone,
            argument="[ZONE]",
            direct_only=schedule.TIMEZONE_IN_GROUP,
            needs_person=True,
        ),
        SlashCommand(
            ("reminders",),
            "your reminders, 20 a page; cancel ID cancels one",
            schedule.reminders,
            argument="[page N | cancel ID]",
            needs_person=True,
        ),
        SlashCommand(
            ("skills",),
            "the skills kioku has learned for you",
            skills.skills_mine,
            in_group=skills.skills_shared,
            needs_person=True,
        ),
        SlashCommand(
            ("usage",),
            "your model usage and its cost: today, this month, by kind",
            usage.usage,
            direct_only=usage.USAGE_IN_GROUP,
            needs_person=True,
        ),
        SlashCommand(
            ("web",),
            "a sign-in link to the web page (notes, sessions, skills)",
            people.web,
            direct_only=people.WEB_IN_GROUP,
            needs_person=True,
        ),
    ]
)
