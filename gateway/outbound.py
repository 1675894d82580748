"""The one way out: every message kioku sends leaves through a `Dispatcher`.

A turn's answer, a command's reply, a reminder, a scheduled prompt's answer and a notice
(the owner claim) all go the same road: the outlet is looked up here (which adapter
runs the platform now, which chat a person's DM is), the reply is made into an
`Outbound` with `media.long_replies_as_file` applied (the adapter then splits it, sends
it as `reply.md` or renders its Markdown for the platform), and what went out is logged
here, never its words. Two verbs differ only in what a failure does: `send` raises it
(a reminder's attempt is recorded as failed and retried), `reply` logs it (the turn is
already stored; the conversation goes on).
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from adapters.base import Adapter, Address, Delta, Outbound
from agent.providers import OnText

log = structlog.get_logger("kioku.outbound")

Outlets = Callable[[str], Adapter | None]
"""The adapter serving a platform now, or None while it is down."""


class Undeliverable(RuntimeError):
    """The message cannot go out now (its platform is not connected, its person no longer
    has the identity it was meant for); a reminder's attempt is retried later."""


class Dispatcher:
    """Sends through `outlets`; `long_as_file` is `media.long_replies_as_file` as now set."""

    def __init__(self, outlets: Outlets, long_as_file: Callable[[], bool]) -> None:
        self._outlets = outlets
        self._long_as_file = long_as_file

    def outlet(self, platform: str) -> Adapter:
        """The adapter serving `platform`; `Undeliverable` while it is down."""
        adapter = self._outlets(platform)
        if adapter is None:
            raise Undeliverable(f"{platform} is not connected")
        return adapter

    async def direct(self, platform: str, user: str, thread: str = "") -> Address:
        """Where a message nobody asked for reaches `user` directly (a reminder by DM)."""
        chat = await self.outlet(platform).direct_chat(user)
        return Address(platform, chat, thread)

    async def send(self, address: Address, text: str, *, more: bool = False) -> None:
        """Deliver `text`; raise what stopped it (`Undeliverable`, the platform's error)."""
        adapter = self.outlet(address.platform)
        as_file = self._long_as_file()
        await adapter.send(Outbound(address, text, long_as_file=as_file, more=more))
        log.debug("message_sent", platform=address.platform, chars=len(text), long_as_file=as_file)

    async def reply(
        self, address: Address, text: str, session_id: int | None = None, *, more: bool = False
    ) -> None:
        """Deliver a reply; a failure is logged (the turn is already stored), never raised."""
        try:
            await self.send(address, text, more=more)
        except Undeliverable:
            log.warning("outlet_down", platform=address.platform, session=session_id)
        except Exception as exc:
            log.warning(
                "send_failed", platform=address.platform, session=session_id, error=repr(exc)
            )

    async def working(self, address: Address) -> None:
        """Show that an answer is being written, where the platform can; never raises."""
        adapter = self._outlets(address.platform)
        if adapter is None:
            return
        try:
            await adapter.working(address)
        except Exception as exc:
            log.warning("working_failed", platform=address.platform, error=repr(exc))

    def streamer(self, address: Address) -> OnText | None:
        """What receives an answer's text as it is written, on a platform that streams;
        after one failed piece the rest of that answer is not streamed."""
        adapter = self._outlets(address.platform)
        if adapter is None or not adapter.streams:
            return None
        broken = False

        async def on_text(text: str) -> None:
            nonlocal broken
            if broken:
                return
            try:
                await adapter.stream(Delta(address, text))
            except Exception as exc:
                broken = True
                log.warning("stream_failed", platform=address.platform, error=repr(exc))

        return on_text
