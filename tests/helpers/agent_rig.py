"""An agent wired to a real store, notes and skills in this test's home, and a fake model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.agent import Agent
from agent.prompt import TurnContext
from agent.tools.context import Origin
from agent.turn import Turn
from config.settings import Settings
from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, Session
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.scripted_server import Received


@dataclass
class Rig:
    kind: str
    api: FakeAnthropic | FakeOpenAI
    agent: Agent
    store: Store
    settings: Settings
    home: Path

    # -- scripting the model ------------------------------------------------------------
    def say(self, *chunks: str, prompt_tokens: int | None = None) -> None:
        if isinstance(self.api, FakeAnthropic):
            usage = None if prompt_tokens is None else {"input_tokens": prompt_tokens}
            self.api.reply_text(*chunks, usage=usage)
        else:
            usage = None if prompt_tokens is None else {"prompt_tokens": prompt_tokens}
            self.api.reply_text(*chunks, usage=usage)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str, call_id: str = "t1") -> None:
        if isinstance(self.api, FakeAnthropic):
            self.api.reply_tool_use(name, arguments, tool_id=call_id)
        else:
            self.api.reply_tool_calls((name, arguments))

    def fail(self, status: int, headers: Mapping[str, str] | None = None) -> None:
        self.api.fail(status, headers=headers)

    # -- reading what the model was sent --------------------------------------------------
    def system_of(self, request: Received) -> str:
        body = request.json
        if self.kind == "anthropic":
            return "".join(block["text"] for block in body["system"])
        return body["messages"][0]["content"]

    def texts_of(self, request: Received) -> str:
        """Every text the conversation (not the system prompt) held, joined."""
        out: list[str] = []
        messages = request.json["messages"]
        for message in messages if self.kind == "anthropic" else messages[1:]:
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "text":
                    out.append(block["text"])
                elif block.get("type") == "tool_result":
                    out.append(str(block["content"]))
        return "\n".join(out)

    # -- conversations ------------------------------------------------------------------
    async def dm(self, person: str = "aiko", chat: str = "100") -> Session:
        await ensure_person(self.store, person)
        return await self.store.open_session(Conversation("telegram", chat, "dm", person))

    async def group(self, chat: str = "-500", members: tuple[str, ...] = ("aiko",)) -> Session:
        for person in members:
            await ensure_person(self.store, person)
        return await self.store.open_session(Conversation("discord", chat, "group"))

    def turn(
        self,
        session: Session,
        text: str,
        speaker: str = "aiko",
        name: str = "Aiko",
        identity: str | None = None,
    ) -> Turn:
        """A message of `speaker` from the session's own chat (`identity`: their account)."""
        context = TurnContext(
            when=datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
            platform=session.platform,
            speaker_name=name,
            is_group=session.kind == "group",
        )
        origin = Origin(session.platform, session.chat, session.thread, identity)
        return Turn(session=session, speaker=speaker, text=text, context=context, origin=origin)
