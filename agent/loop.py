"""One turn: store the message, call the model, run its tools, loop until it answers.

Every step is written to the store as it happens, the person's message before the
model is called, so a crash, a timeout or `/stop` never loses what was said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog

from agent.history import for_request, tool_row
from agent.live import LiveSession
from agent.local_time import in_zone, zone_of
from agent.media.items import Prepared
from agent.media.stored import compose_stored
from agent.memory_providers.base import Before, TurnRecord
from agent.memory_providers.scopes import scope_of
from agent.prompt import render_user_turn
from agent.providers import (
    ChatMessage,
    ChatRequest,
    ModelReply,
    OnText,
    Provider,
    ProviderError,
    Text,
    ToolCall,
    ToolResult,
)
from agent.tools.context import Services, ToolContext
from agent.tools.registry import ToolRegistry
from agent.turn import Said, Turn, TurnOutcome
from agent.usage import Payer, Pending, charge, payer_of
from memory.history.exchanges import turn_before
from memory.media import NewMedia, keep_media
from memory.store import records
from memory.store.errors import StoreError
from memory.store.usage import UsageKind

log = structlog.get_logger("kioku.agent")

WHILE_AWAY = (
    "(kioku: these messages were sent while kioku was offline, each shown with the time it "
    "was sent. Answer them together, in one reply.)"
)
FORCE_ANSWER = (
    "(kioku: the tool-round limit for this message is reached. Answer the person now with "
    "what you have; do not call more tools.)"
)
NO_ANSWER = "I could not finish that one — please try again or rephrase."
MAX_CALLS_PER_REPLY = 64
"""More tool calls than a model makes in one reply; the rest are answered, not run."""
NOT_RUN = (
    f"Not run: kioku runs at most {MAX_CALLS_PER_REPLY} tool calls from one reply. "
    "Call it again in your next reply if it is still needed."
)


class TurnRunner:
    """Runs turns for every session; holds no per-session state of its own."""

    def __init__(self, provider: Provider, services: Services, registry: ToolRegistry) -> None:
        self.provider = provider
        self.services = services
        self.registry = registry

    async def run(
        self,
        live: LiveSession,
        turn: Turn,
        on_text: OnText | None,
        recalling: asyncio.Task[str] | None = None,
    ) -> TurnOutcome:
        """Answer `turn`; `recalling` is its providers' recall already under way
        (`start_recall`), started here when not given."""
        store = self.services.store
        recalling = recalling or self.start_recall(turn)
        said, message_id = "", None
        if not turn.stored:
            said, message_id = await self._take(live, turn, recalling)
        ctx = live.tool_context(self.services, turn.speaker, turn.origin)
        calls = Calls(turn.kind, payer_of(live.session, turn.speaker), Pending())
        streamed: list[str] = []

        async def relay(delta: str) -> None:
            streamed.append(delta)
            if on_text is not None:
                await on_text(delta)

        replies: list[int] = []
        try:
            outcome = await self._rounds(live, ctx, relay, replies, calls)
        except ProviderError as exc:
            log.warning("turn_failed", session=live.session.id, error=str(exc))
            return TurnOutcome(exc.user_message, error=str(exc))
        except asyncio.CancelledError:
            partial = "".join(streamed).strip()
            note = f"{partial}\n\n(interrupted)" if partial else "(interrupted)"
            message = records.NewMessage(role="assistant", content=note, usage=calls.made.take())
            await asyncio.shield(store.append(live.session.id, message))
            live.add(ChatMessage("assistant", (Text(note),)))
            log.info("turn_interrupted", session=live.session.id)
            raise
        finally:
            left = calls.made.take()
            if left:  # no row stored after them (an empty reply): written on their own
                await asyncio.shield(store.record_usage(*left))
        if message_id is not None:
            await self._mirror(live, turn, said, outcome, (message_id, *replies))
        return outcome

    async def _take(
        self, live: LiveSession, turn: Turn, recalling: asyncio.Task[str] | None
    ) -> tuple[str, int]:
        """Store the person's messages (the older ones first, each at its own time) and
        add the turn to the live conversation; the stored text and its turn id."""
        for before in (*turn.unanswered, *turn.earlier):
            await self._store_said(live, turn.speaker, before)
        said = compose_stored(turn.text, turn.media)
        message_id = await self._store_said(
            live,
            turn.speaker,
            Said(turn.text, turn.context.when, turn.platform_message_id, turn.media),
        )
        media = [*(item for before in turn.earlier for item in before.media), *turn.media]
        attached = [block for item in media for block in item.blocks]
        text = await self._user_text(live, turn, said)
        recalled = await recalling if recalling is not None else ""
        live.add_user_turn(f"{text}\n\n{recalled}" if recalled else text, attached)
        live.user_turns += 1
        live.turns_since_reflection += 1
        return said, message_id

    def start_recall(self, turn: Turn) -> asyncio.Task[str] | None:
        """Ask the memory providers for this message's recall now, so that their time
        limit runs beside the session's opening (its prompt block) instead of after it;
        None when no provider is configured."""
        providers = self.services.providers
        query = turn.text or compose_stored(turn.text, turn.media)
        if providers is None or not query.strip():
            return None
        scope = scope_of(turn.session)
        return asyncio.create_task(providers.recall(scope, query), name=f"recall-{turn.session.id}")

    async def _mirror(
        self,
        live: LiveSession,
        turn: Turn,
        said: str,
        outcome: TurnOutcome,
        turn_ids: tuple[int, ...],
    ) -> None:
        """Queue the exchange for the memory providers (sent in the background)."""
        providers = self.services.providers
        if providers is None or outcome.error is not None:
            return
        # No speaker: in a group it would hand the group's providers a person's id.
        meta = {"platform": live.session.platform, "ts": repr(turn.context.when.timestamp())}
        prior = await turn_before(self.services.store, turn_ids[0])
        before = None if prior is None else Before(prior.turn_id, prior.role, prior.text)
        record = TurnRecord(said, outcome.text, turn_ids, meta, before)
        await providers.record_turn(scope_of(live.session), record)

    async def _store_said(self, live: LiveSession, speaker: str | None, said: Said) -> int:
        """Store one message of the person's, at its own time, with its files; its turn id."""
        message_id = await self.services.store.append(
            live.session.id,
            records.NewMessage(
                role="user",
                content=compose_stored(said.text, said.media),
                speaker=speaker,
                ts=said.when,
                platform_message_id=said.platform_message_id,
            ),
        )
        await self._keep(live, message_id, said.media)
        return message_id

    async def _keep(self, live: LiveSession, message_id: int, media: Sequence[Prepared]) -> None:
        """Keep a message's files beside its stored text (`media.keep`). A file that cannot
        be kept is logged and the turn goes on: its text, stand-ins included, is stored."""
        files = [
            NewMedia(item.keep.kind, item.keep.name, item.keep.mime, item.keep.data)
            for item in media
            if item.keep is not None
        ]
        if not files or not self.services.settings.media.keep:
            return
        try:
            await keep_media(
                self.services.store, self.services.home, live.session, message_id, files
            )
        except (OSError, LookupError, ValueError, StoreError) as exc:
            log.warning(
                "media_keep_failed",
                session=live.session.id,
                message=message_id,
                files=len(files),
                error=repr(exc),
            )

    async def _user_text(self, live: LiveSession, turn: Turn, said: str) -> str:
        zone = await zone_of(self.services.store, self.services.settings, turn.speaker)
        text = render_user_turn(said, in_zone(turn.context, zone))
        if turn.earlier:
            before = [
                render_user_turn(
                    compose_stored(item.text, item.media),
                    in_zone(replace(turn.context, when=item.when, reply_to=None), zone),
                )
                for item in turn.earlier
            ]
            text = "\n\n".join((WHILE_AWAY, *before, text))
        settings = self.services.settings.agent
        if (
            live.is_group
            and settings.group_private_notes
            and turn.speaker is not None
            and turn.speaker not in live.speakers_shown
        ):
            live.speakers_shown.add(turn.speaker)
            snapshot = await self.services.notes(turn.speaker).render_snapshot()
            text = f"{snapshot}\n\n{text}"
        return text

    async def _rounds(
        self,
        live: LiveSession,
        ctx: ToolContext,
        relay: OnText,
        replies: list[int],
        charged: Calls,
    ) -> TurnOutcome:
        """Call the model until it answers; the ids of the answer's stored turns go to
        `replies`, its calls to `charged`, each stored with the next row stored after it."""
        limit = self.services.settings.agent.max_tool_rounds
        answer: list[str] = []
        calls = 0
        for round_number in range(limit + 1):
            reply = await self._call(live, relay, charged)
            live.add(reply.as_message())
            if reply.text.strip():
                answer.append(reply.text.strip())
                said = records.NewMessage(
                    role="assistant", content=reply.text, usage=charged.made.take()
                )
                replies.append(await self.services.store.append(live.session.id, said))
            if not reply.tool_calls or round_number == limit:
                break
            results = await self._run_tools(reply.tool_calls, ctx, charged.made)
            calls += len(results)
            blocks: list[ToolResult | Text] = list(results)
            if round_number + 1 == limit:
                blocks.append(Text(FORCE_ANSWER))
            live.add(ChatMessage("user", tuple(blocks)))
        return TurnOutcome("\n\n".join(answer) or NO_ANSWER, tool_calls=calls)

    async def _call(self, live: LiveSession, relay: OnText, charged: Calls) -> ModelReply:
        messages = tuple(for_request(live.messages))
        request = ChatRequest(system=live.system, messages=messages, tools=live.tools)
        reply = await self.provider.complete(request, relay)
        live.prompt_tokens = reply.usage.total_input_tokens
        llm = self.services.settings.llm
        charged.made.add(charge(charged.kind, charged.payer, llm, self.provider.model, reply.usage))
        return reply

    async def _run_tools(
        self, calls: Sequence[ToolCall], ctx: ToolContext, made: Pending
    ) -> list[ToolResult]:
        """Independent calls run together; calls of sequential tools run in order among them.
        Calls past `MAX_CALLS_PER_REPLY` are answered `NOT_RUN` (and not stored); the first
        result stored takes the model calls waiting in `made`."""
        results = {call.id: ToolResult(call.id, NOT_RUN, True) for call in calls}
        running = calls[:MAX_CALLS_PER_REPLY]

        async def run(call: ToolCall) -> None:
            outcome = await self.registry.call(call.name, call.arguments, ctx, refusal=call.refusal)
            result = ToolResult(call.id, outcome.content, outcome.is_error)
            row = replace(tool_row(call, result, ctx.speaker), usage=made.take())
            await self.services.store.append(ctx.session_id, row)
            results[call.id] = result

        async def in_order(chain: list[ToolCall]) -> None:
            for call in chain:
                await run(call)

        sequential = [c for c in running if self.registry.is_sequential(c.name, ctx)]
        parallel = [c for c in running if not self.registry.is_sequential(c.name, ctx)]
        async with asyncio.TaskGroup() as group:
            group.create_task(in_order(sequential), name="tools-sequential")
            for call in parallel:
                group.create_task(run(call), name=f"tool-{call.name}")
        return [results[call.id] for call in calls]


@dataclass(frozen=True)
class Calls:
    """How a turn's model calls are charged (`kind`, `payer`), and those made but not stored."""

    kind: UsageKind
    payer: Payer
    made: Pending
