"""The agent as the gateway sees it: respond, tidy up after a turn, close a session.

It keeps each open session's frozen prompt and conversation in memory, and owns the
background reviews it starts, so that shutdown can cancel them.
"""

from __future__ import annotations

import structlog

from agent.budget import Budgets
from agent.compaction import compact, needs_compaction
from agent.live import LiveSession, SkillsIndex, open_live
from agent.loop import FORCE_ANSWER, TurnRunner
from agent.media.reader import MediaReader
from agent.memory_providers.scopes import scope_of
from agent.providers import NoProvider, OnText, Provider, ProviderError
from agent.reflection import fallback_title, review, title_and_summary
from agent.tidy import tidy_due
from agent.tools.context import Services
from agent.tools.registry import ToolRegistry
from agent.turn import Turn, TurnOutcome
from agent.usage import ChargedProvider, Payer, charger, payer_of
from memory.notes.auto import reflection_on
from memory.store.records import Session
from memory.store.usage import UsageKind
from plumbing.tasks import Tasks

log = structlog.get_logger("kioku.agent")


async def no_skills(_person: str | None) -> str:
    return ""


class Agent:
    """The model side of every conversation, as the gateway sees it.

    It owns the `LiveSession` of each open session (frozen prompt and tools, the
    conversation so far), the `TurnRunner` that answers turns, the provider (closed with
    the agent) and the background reviews it starts, which `aclose` cancels. The store,
    notes and skills it reads and writes belong to `services`; the gateway decides when
    sessions open and close, and runs one turn at a time per session. `media` reads the
    files people send (for the provider's model) before the gateway builds their turn;
    it is closed with the agent.
    """

    def __init__(
        self,
        provider: Provider,
        services: Services,
        registry: ToolRegistry,
        skills_index: SkillsIndex = no_skills,
        media: MediaReader | None = None,
    ) -> None:
        self.provider = provider
        self.media = media if media is not None else MediaReader(services.settings, provider.name)
        self.services = services
        self.registry = registry
        self.skills_index = skills_index
        self.runner = TurnRunner(provider, services, registry)
        self.budgets = Budgets(services)
        self._live: dict[int, LiveSession] = {}
        self._background = Tasks()
        self._reviewing: set[int] = set()
        self._tidying: set[str] = set()

    @property
    def has_model(self) -> bool:
        return not isinstance(self.provider, NoProvider)

    async def respond(self, turn: Turn, on_text: OnText | None = None) -> TurnOutcome:
        """Answer one message; the gateway runs one turn at a time per session. The
        providers' recall starts first, so it runs beside the opening of a new session."""
        recalling = self.runner.start_recall(turn)
        try:
            live = await self.live(turn.session)
            return await self.runner.run(live, turn, on_text, recalling)
        finally:
            if recalling is not None and not recalling.done():
                recalling.cancel()

    async def live(self, session: Session) -> LiveSession:
        """The open session's state, built (prompt frozen) on first use. A removed
        session's id can be given to a new one, so the external id must match too."""
        live = self._live.get(session.id)
        if live is None or live.session.external_id != session.external_id:
            live = await open_live(session, self.services, self.registry, self.skills_index)
            self._live[session.id] = live
        return live

    async def after_turn(self, session_id: int, speaker: str | None) -> None:
        """Call once the reply is delivered: compacts if needed, starts a due review; for
        a speaker over budget, neither (they renew with the budget)."""
        live = self._live.get(session_id)
        if live is None or not self.has_model:
            return
        settings = self.services.settings
        if needs_compaction(live, self.provider.context_window, settings.agent.compaction):
            if not await self.budgets.may_spend(speaker):
                log.info("background_skipped_over_budget", session=session_id)
                return
            charged = self._charged(live, speaker, "compaction")
            summary = await compact(live, charged, settings.agent.compaction)
            if summary:
                await self.services.store.set_open_summary(live.session, summary)
        reflection = settings.agent.reflection
        if reflection.enabled and live.turns_since_reflection >= reflection.every_user_turns:
            live.turns_since_reflection = 0
            self._background.spawn(self._reflect(live, speaker), f"reflect-{session_id}")

    async def close_session(self, session_id: int, reason: str) -> None:
        """Final review, then title and summary, then the session is closed in the store.

        Only a session still open in the store is closed this way: one that a deletion
        removed or ended meanwhile must not get a review, title or summary written from
        the live copy, which may still hold the deleted turns. A person over budget gets
        no review and no model-written summary: the title is their opening words.
        """
        live = self._live.pop(session_id, None)
        session = await self.services.store.get_session(session_id)
        if (
            session is None
            or session.ended_at is not None
            or (live is not None and live.session.external_id != session.external_id)
        ):
            log.info("session_close_skipped", session=session_id, reason=reason)
            return
        title = summary = None
        if (
            live is not None
            and self.has_model
            and live.user_turns
            and await self.budgets.may_spend(live.session.person)
        ):
            if self.services.settings.agent.reflection.enabled and live.turns_since_reflection:
                await self._review(live, live.session.person)
            try:
                charged = self._charged(live, live.session.person, "summary")
                title, summary = await title_and_summary(live, charged)
            except ProviderError as exc:
                log.warning("summary_failed", session=session_id, error=str(exc))
                title = fallback_title(live)
        elif live is not None:
            title = fallback_title(live)
        closed = await self.services.store.finish_open_session(
            session, reason, title=title, summary=summary
        )
        if closed and summary and self.services.providers is not None:
            await self.services.providers.session_closed(scope_of(session), summary)
        if closed and session.kind == "dm" and reason != "shutdown":  # it would be cancelled
            self.tidy_later(session.person, session_id)
        log.info(
            "session_closed" if closed else "session_close_skipped",
            session=session_id,
            reason=reason,
        )

    def drop_last_exchange(self, session_id: int) -> bool:
        """Take the person's latest message and the reply to it out of the open session's
        live copy (/undo, once the store's turns are gone); False if there is none."""
        live = self._live.get(session_id)
        return live is not None and live.drop_last_exchange((FORCE_ANSWER,))

    async def reload(self, session_id: int) -> bool:
        """Rebuild an open session's live copy from the store once a stored turn of it was
        changed or removed outside a turn (a platform's edit or deletion), keeping its
        frozen prompt so the provider's cache still hits; False if it has no live copy
        (the next turn builds one from the store anyway)."""
        live = self._live.get(session_id)
        if live is None:
            return False
        await live.reload(self.services)
        return True

    def forget(self, session_id: int) -> None:
        """Drop a session's in-memory state without a review (e.g. its person was forgotten)."""
        self._live.pop(session_id, None)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel background reviews, close the media reader's clients and the provider."""
        await self._background.cancel()
        try:
            await self.media.aclose()
        finally:
            await self.provider.aclose()

    def tidy_later(self, person: str | None, session_id: int | None) -> None:
        """Start a background tidy of the person's notes files that are due, unless one runs
        for them already: after a session closes and after a review, never awaited by a reply."""
        if person is None or not self.has_model or person in self._tidying:
            return
        self._tidying.add(person)
        self._background.spawn(self._tidy(person, session_id), f"tidy-{person}")

    async def _tidy(self, person: str, session_id: int | None) -> None:
        try:
            services = self.services
            if not await self.budgets.may_spend(person):
                log.info("tidy_skipped_over_budget", person=person)
                return
            notes = services.notes(person)
            charged = ChargedProvider(
                self.provider,
                services.settings.llm,
                charger(services.store, "tidy", Payer(person, None, session_id)),
            )
            await tidy_due(charged, services.store, notes, services.settings, session_id)
        except (ProviderError, TimeoutError) as exc:
            log.warning("tidy_failed", person=person, error=repr(exc))
        finally:
            self._tidying.discard(person)

    async def _reflect(self, live: LiveSession, speaker: str | None) -> None:
        """A review in the background, then a tidy of the notes it may have filled; for a
        speaker over budget, neither (they renew with the budget)."""
        if not await self.budgets.may_spend(speaker):
            log.info("background_skipped_over_budget", session=live.session.id)
            return
        await self._review(live, speaker)
        self.tidy_later(speaker or live.session.person, live.session.id)

    async def _review(self, live: LiveSession, speaker: str | None) -> None:
        """One review of `live` for the person whose memory it may change, unless that
        person turned reflection off for themself (`/memory auto off`)."""
        if live.session.id in self._reviewing:
            return
        self._reviewing.add(live.session.id)
        try:
            person = speaker or live.session.person
            if person is not None and not await reflection_on(self.services.store, person):
                log.info("reflection_skipped", session=live.session.id, reason="person_off")
                return
            ctx = live.tool_context(self.services, person)
            charged = self._charged(live, speaker, "reflection")
            await review(live, charged, self.registry, ctx, self.services.settings.agent.reflection)
        except (ProviderError, TimeoutError) as exc:
            log.warning("reflection_failed", session=live.session.id, error=repr(exc))
        finally:
            self._reviewing.discard(live.session.id)

    def _charged(self, live: LiveSession, person: str | None, kind: UsageKind) -> Provider:
        """The provider for background work on `live` caused by `person`, charged as `kind`."""
        services = self.services
        charged = charger(services.store, kind, payer_of(live.session, person), services.meter)
        return ChargedProvider(self.provider, self.services.settings.llm, charged)

    async def idle(self) -> None:
        """Wait for the background reviews running now, so tests wait on them, not on time."""
        while len(self._background):
            await self._background.wait()
