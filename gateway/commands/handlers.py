"""The built-in slash commands: their declarations (`SLASH_COMMANDS`) and their answers.

In a group the notes commands (/memory, /remember, /forget) refuse and point to a direct
message, because a person's notes are private; /search searches the group's own history
and /skills lists the shared skills, which is what the group's sessions can use. /link
and /web refuse in a group too: a code or a sign-in link must not be read by others.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import structlog

from adapters.base import Inbound
from agent.agent import Agent
from gateway.commands import history, schedule
from gateway.commands.registry import Registry, Request, SlashCommand
from gateway.queues import LineState
from gateway.sessions import OpenSession
from memory.access.identities import get_person
from memory.access.web_tokens import issue_web_token
from memory.notes.files import NotesFileError
from memory.notes.format import FILE_NAMES, TARGETS, NotesState
from memory.notes.person_notes import PersonNotes
from memory.search.ranking import Scope, search
from memory.skills.library import SkillsLibrary
from memory.store.database import Store
from memory.store.records import SessionResult
from web.links import LOCAL_PLATFORMS, base_url, local_only, login_url

if TYPE_CHECKING:
    from gateway.identity import Identities

log = structlog.get_logger("kioku.commands")
SEARCH_SESSIONS = 5
HITS_SHOWN = 2

PRIVATE_IN_GROUP = (
    "Your notes are private, so /{name} works only in a direct message with me. "
    "Send it to me there."
)
UNKNOWN_PERSON = "I don't know you yet: send me a direct message first."
LINK_IN_GROUP = (
    "Send /link to me in a direct message: a code shown here could be used by anyone in this chat."
)
WEB_IN_GROUP = "A sign-in link must not be seen by others: send /web to me in a direct message."
WEB_LOCAL_ONLY = (
    "I can't send you a sign-in link that would open: the web page's address is {url}, and "
    "{why}. The owner should set web.public_url to the address your phone opens (e.g. "
    "https://kioku.example.org behind an https proxy), or web.listen to this machine's "
    "home-network or Tailscale/WireGuard address (e.g. 192.168.1.20:8765), then restart "
    "kioku. On the machine itself, `kioku web login` gives a link now."
)


class Control(Protocol):
    """What the commands may ask of the gateway for the conversation they came from."""

    def new_session(self, key: str, inbound: Inbound) -> bool: ...
    def stop(self, key: str) -> tuple[bool, int]: ...
    def line(self, key: str) -> LineState: ...
    def open_session(self, key: str) -> OpenSession | None: ...
    def later(self, key: str, inbound: Inbound, work: Callable[[], Awaitable[str]]) -> bool: ...
    async def refresh_session(self, key: str) -> None: ...


class Commands:
    """The answers to the slash commands of `registry` (the built-in ones unless a test
    brings its own), with what they need: the store, the agent, the identities and the
    gateway's controls of the conversation a command came from."""

    def __init__(
        self,
        store: Store,
        agent: Agent,
        identities: Identities,
        control: Control,
        registry: Registry[Commands] | None = None,
    ) -> None:
        self.store = store
        self.agent = agent
        self.identities = identities
        self.control = control
        self.registry = registry or SLASH_COMMANDS

    async def run(self, request: Request) -> str | None:
        """The reply to send now; None when the gateway replies later (/new)."""
        return await self.registry.run(self, request)

    async def help(self, request: Request) -> str:
        return self.registry.help()

    async def new(self, request: Request) -> str | None:
        if self.control.new_session(request.key, request.inbound):
            return None
        return "Too many messages are waiting here; send /stop first, then /new."

    async def stop(self, request: Request) -> str:
        cancelled, dropped = self.control.stop(request.key)
        if not cancelled and not dropped:
            return "Nothing to stop: no reply is being written."
        parts = ["Stopped the reply in progress."] if cancelled else []
        if dropped:
            parts.append(f"Dropped {_count(dropped, 'waiting message')}.")
        return " ".join(parts)

    async def status(self, request: Request) -> str:
        entry = self.control.open_session(request.key)
        if entry is None:
            lines = ["Session: none open; your next message starts one."]
        else:
            done = await self.store.session_activity(entry.session.id)
            started = entry.session.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
            lines = [
                f"Session: started {started}, {_count(done.user_turns, 'message')} so far "
                f"(id {entry.session.external_id})."
            ]
        line = self.control.line(request.key)
        busy = "a reply is being written" if line.busy else "no reply in progress"
        lines.append(f"Queue: {busy}, {_count(line.queued, 'message')} waiting.")
        provider = self.agent.provider
        model = f"{provider.name} {provider.model}" if self.agent.has_model else "none configured"
        lines.append(f"Model: {model}.")
        return "\n".join(lines)

    async def whoami(self, request: Request) -> str:
        if request.person is None:
            return UNKNOWN_PERSON
        person = await get_person(self.store, request.person)
        name = f" ({person.display_name})" if person and person.display_name else ""
        head = f"You are {request.person}{name}."
        if request.in_group:
            return f"{head} Send /whoami in a direct message to see your linked accounts."
        identities = await self.identities.identities_of(request.person)
        return f"{head}\nLinked accounts: {', '.join(identities) or 'none'}."

    async def link(self, request: Request) -> str:
        return await self.identities.link_command(
            request.inbound, request.person, request.command.argument
        )

    async def memory(self, request: Request) -> str:
        notes = self._notes(request)
        if isinstance(notes, str):
            return notes
        parts = []
        for target in TARGETS:
            try:
                parts.append(_describe(await notes.read(target)))
            except NotesFileError as exc:
                parts.append(f"{FILE_NAMES[target]} cannot be read: {exc}")
        return "\n\n".join(parts)

    async def remember(self, request: Request) -> str:
        notes = self._notes(request)
        if isinstance(notes, str):
            return notes
        if not request.command.argument:
            return "Tell me what to remember: /remember TEXT (it goes into your USER.md)."
        result = await notes.add("user", request.command.argument)
        return result.headline if result.ok else result.message

    async def forget(self, request: Request) -> str:
        notes = self._notes(request)
        if isinstance(notes, str):
            return notes
        text = request.command.argument
        if not text:
            return "Tell me what to forget: /forget TEXT removes the one note containing TEXT."
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
        result = await notes.remove(target, text)
        if result.ok:
            return result.headline
        if not holding:
            return (
                f"No note in USER.md or MEMORY.md contains {text.strip()!r}. Nothing was changed."
            )
        return result.message

    async def search(self, request: Request) -> str:
        query = request.command.argument
        if not query:
            return "Tell me what to look for: /search QUERY."
        inbound = request.inbound
        if request.in_group:
            scope = Scope.of_group(inbound.platform, inbound.chat)
        elif request.person is None:
            return UNKNOWN_PERSON
        else:
            scope = Scope.of_person(request.person)
        results = await search(self.store, query, scope, limit=SEARCH_SESSIONS)
        if not results:
            return f"Nothing found for {query!r}."
        return "\n".join([f"Found for {query!r}:", *(_result(r) for r in results)])

    async def skills(self, request: Request) -> str:
        person = None if request.in_group else request.person
        if not request.in_group and person is None:
            return UNKNOWN_PERSON
        services = self.agent.services
        library = SkillsLibrary(services.home, services.settings.skills)
        listing = await library.listing(person)
        if not listing.skills:
            return "No skills yet: kioku writes them as it learns how to do things for you."
        whose = "Shared skills" if person is None else "Your skills"
        lines = [f"{whose}:"]
        for listed in listing.skills:
            shared = " (shared)" if listed.skill.scope == "shared" and person else ""
            lines.append(f"- {listed.skill.name}{shared}: {listed.skill.doc.description}")
        return "\n".join(lines)

    async def web(self, request: Request) -> str:
        if request.person is None:
            return UNKNOWN_PERSON
        settings = self.agent.services.settings.web
        if not settings.enabled:
            return "The web page is off on this kioku (web.enabled = false)."
        why = local_only(settings)
        if why is not None and request.inbound.platform not in LOCAL_PLATFORMS:
            log.warning("web_link_refused_local_only", platform=request.inbound.platform)
            return WEB_LOCAL_ONLY.format(url=base_url(settings), why=why)
        person = request.person
        token = await issue_web_token(self.store, person, time.time())
        log.info("web_link_issued", person=person, by="chat")
        return (
            f"Your sign-in link (it works once, within 10 minutes):\n{login_url(settings, token)}"
        )

    def _notes(self, request: Request) -> PersonNotes | str:
        if request.person is None:
            return UNKNOWN_PERSON
        return self.agent.services.notes(request.person)


SLASH_COMMANDS: Registry[Commands] = Registry(
    [
        SlashCommand(("help",), "this list", Commands.help),
        SlashCommand(("start",), "what Telegram sends first", Commands.help, listed=False),
        SlashCommand(("new", "reset"), "close this session and start a fresh one", Commands.new),
        SlashCommand(
            ("stop",), "stop the reply being written and drop the messages waiting", Commands.stop
        ),
        SlashCommand(("status",), "this conversation: session, queue, model", Commands.status),
        SlashCommand(
            ("whoami",), "who kioku knows you as, and your linked accounts", Commands.whoami
        ),
        SlashCommand(
            ("link",),
            "a code to link another account; with CODE, link this account",
            Commands.link,
            argument="[CODE]",
            direct_only=LINK_IN_GROUP,
        ),
        SlashCommand(
            ("memory",),
            "your notes (USER.md, MEMORY.md)",
            Commands.memory,
            direct_only=PRIVATE_IN_GROUP,
        ),
        SlashCommand(
            ("remember",),
            "add TEXT to your notes about you (USER.md)",
            Commands.remember,
            argument="TEXT",
            direct_only=PRIVATE_IN_GROUP,
        ),
        SlashCommand(
            ("forget",),
            "remove the note containing TEXT",
            Commands.forget,
            argument="TEXT",
            direct_only=PRIVATE_IN_GROUP,
        ),
        SlashCommand(
            ("search",), "search your past conversations", Commands.search, argument="QUERY"
        ),
        SlashCommand(
            ("undo",),
            "take back your last message and my reply to it (from history too)",
            history.undo,
            direct_only=history.GROUP_HISTORY,
        ),
        SlashCommand(
            ("history",),
            "your recent sessions; forget: delete this session (or the last one)",
            history.history,
            argument="[forget]",
            direct_only=history.GROUP_HISTORY,
        ),
        SlashCommand(
            ("forget_session",),
            "the same as /history forget",
            history.forget_session,
            direct_only=history.GROUP_HISTORY,
        ),
        SlashCommand(
            ("timezone",),
            "your time zone; ZONE sets it (Asia/Tokyo), clear unsets it",
            schedule.timezone,
            argument="[ZONE]",
            direct_only=schedule.TIMEZONE_IN_GROUP,
        ),
        SlashCommand(
            ("reminders",),
            "your reminders, 20 a page; cancel ID cancels one",
            schedule.reminders,
            argument="[page N | cancel ID]",
        ),
        SlashCommand(("skills",), "the skills kioku has learned for you", Commands.skills),
        SlashCommand(
            ("web",),
            "a sign-in link to the web page (notes, sessions, skills)",
            Commands.web,
            direct_only=WEB_IN_GROUP,
        ),
    ]
)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _describe(state: NotesState) -> str:
    head = f"{state.file_name} ({state.usage})"
    if not state.entries:
        return f"{head}: empty."
    lines = [f"{head}:"]
    for number, (entry, finding) in enumerate(
        zip(state.entries, state.findings, strict=True), start=1
    ):
        blocked = f" [hidden from the assistant: {finding}]" if finding else ""
        lines.append(f"{number}. {entry}{blocked}")
    return "\n".join(lines)


def _result(result: SessionResult) -> str:
    when = result.started_at.astimezone().strftime("%Y-%m-%d")
    title = result.title or "untitled session"
    lines = [f"• {title} ({result.platform}, {when})"]
    lines += [f"  {hit.role}: {hit.snippet}" for hit in result.hits[:HITS_SHOWN]]
    return "\n".join(lines)
