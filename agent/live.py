"""A session while it is open: its frozen prompt and tools, and the model's view of it.

Both the system prompt and the tool list are fixed when the session opens, because
together they are the cached prefix of every call; the notes written meanwhile reach
the model from the next session on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo

from agent.attached import brings_files, make_room, user_turn
from agent.history import normalise, rebuild, without_last_exchange
from agent.local_time import in_zone, zone_of
from agent.memory_providers.scopes import scope_of
from agent.prompt import PromptParts, TurnContext, build_system_prompt, render_user_turn
from agent.providers import Block, ChatMessage, ToolSpec
from agent.tools.context import Origin, Services, ToolContext
from agent.tools.registry import ToolRegistry
from memory.store.records import Message, Session

SkillsIndex = Callable[[str | None], Awaitable[str]]
"""The skills index for a person (None in groups): name and one line each."""


@dataclass
class LiveSession:
    """One open session as the model sees it; the `Agent` holds one per open session.

    It owns the prompt and tool list frozen at open (`system`, `tools`), the conversation
    so far in the model's terms (`messages`, rebuilt from the store on open, compacted in
    place), and the counters that decide when to reflect and compact. The store's rows
    stay the record; this is the working copy, dropped when the session closes.
    `images_in_context` is how many of the person's latest images stay images.
    """

    session: Session
    system: str
    tools: tuple[ToolSpec, ...]
    messages: list[ChatMessage]
    user_turns: int = 0
    turns_since_reflection: int = 0
    prompt_tokens: int = 0
    speakers_shown: set[str] = field(default_factory=set)
    images_in_context: int = 3

    @property
    def is_group(self) -> bool:
        return self.session.kind == "group"

    def add_user_turn(self, text: str, attached: Sequence[Block] = ()) -> None:
        """Append the person's turn, their text then their files' blocks (merged into the
        last turn if the model never answered). A turn bringing files makes room for
        them first (`agent.attached.make_room`); any other leaves earlier turns as sent."""
        turn = user_turn(text, attached)
        if brings_files(turn):
            self.messages = normalise(make_room(self.messages, turn, self.images_in_context))
        else:
            self.messages = normalise([*self.messages, turn])

    def add(self, message: ChatMessage) -> None:
        self.messages = normalise([*self.messages, message])

    def drop_last_exchange(self, notes: Collection[str] = ()) -> bool:
        """Take the person's latest message and the reply to it out of the model's view
        (/undo); False if there is none. `notes` are kioku's own texts in user turns."""
        remaining = without_last_exchange(self.messages, notes)
        if remaining is None:
            return False
        self.messages = remaining
        self.user_turns = max(0, self.user_turns - 1)
        self.turns_since_reflection = max(0, self.turns_since_reflection - 1)
        return True

    async def reload(self, services: Services) -> None:
        """Rebuild the conversation from the store's turns, keeping the frozen prompt and
        tools: on open, and after a stored turn changed or went outside the turn loop (a
        platform's edit or deletion), so the model's view never keeps the old text."""
        stored = await services.store.messages(self.session.id)
        speakers = {row.speaker for row in stored if row.role == "user"}
        zones = {
            speaker: await zone_of(services.store, services.settings, speaker)
            for speaker in speakers
        }
        self.messages = rebuild(stored, _stored_user_renderer(self.session, zones))
        self.user_turns = sum(1 for row in stored if row.role == "user")

    def tool_context(
        self, services: Services, speaker: str | None, origin: Origin | None = None
    ) -> ToolContext:
        return ToolContext(
            services=services,
            session_id=self.session.id,
            platform=self.session.platform,
            chat=self.session.chat,
            is_group=self.is_group,
            speaker=speaker,
            reveal_notes=not self.is_group or services.settings.agent.group_private_notes,
            conversation=self.session.conversation,
            origin=origin,
        )


async def open_live(
    session: Session,
    services: Services,
    registry: ToolRegistry,
    skills_index: SkillsIndex,
) -> LiveSession:
    """Freeze the prompt and tools of `session`, and load any turns it already has."""
    person = None if session.kind == "group" else session.person
    snapshot = await services.notes(person).render_snapshot() if person else ""
    providers, scope = services.providers, scope_of(session)
    parts = PromptParts(
        is_group=session.kind == "group",
        skills_index=await skills_index(person),
        notes_snapshot=snapshot,
        providers=await providers.prompt_block(scope) if providers else "",
        recalls=bool(providers and providers.admitting(scope)),
    )
    probe = ToolContext(
        services, session.id, session.platform, session.chat, parts.is_group, person, False
    )
    tools = tuple(
        ToolSpec(tool.name, tool.description, tool.input_schema)
        for tool in registry.available(probe)
    )
    live = LiveSession(
        session,
        build_system_prompt(parts),
        tools,
        [],
        images_in_context=services.settings.media.images_in_context,
    )
    await live.reload(services)
    return live


def _stored_user_renderer(
    session: Session, zones: dict[str | None, tzinfo]
) -> Callable[[Message], str]:
    """Stored turns show their time in each speaker's zone of today, as new turns do."""

    def render(row: Message) -> str:
        context = TurnContext(
            when=row.ts,
            platform=session.platform,
            speaker_name=row.speaker,
            is_group=session.kind == "group",
        )
        return render_user_turn(row.content, in_zone(context, zones[row.speaker]))

    return render
