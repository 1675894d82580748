"""The web page in-process for tests: a real Store in this test's KIOKU_HOME, on port 0."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from config.load import load_settings
from config.paths import ensure_home
from memory.access.codes import request_pairing
from memory.access.identities import ensure_person, link_identity
from memory.access.web_tokens import issue_web_token
from memory.store.database import Store
from web.app import create_app
from web.context import WebContext


@dataclass
class WebRig:
    ctx: WebContext
    url: str
    now: list[float] = field(default_factory=lambda: [time.time()])

    @property
    def store(self) -> Store:
        return self.ctx.store

    async def person(self, person: str, *identities: str) -> None:
        await ensure_person(self.store, person)
        for identity in identities:
            await link_identity(self.store, identity, person)

    async def token(self, person: str) -> str:
        return await issue_web_token(self.store, person, self.now[0])

    async def link(self, person: str) -> str:
        return f"{self.url}/login/{await self.token(person)}"

    async def pairing(self, identity: str, name: str | None = None) -> str:
        outcome = await request_pairing(
            self.store, identity.split(":")[0], identity, name, self.now[0]
        )
        assert outcome.code is not None
        return outcome.code

    def later(self, seconds: float) -> None:
        self.now[0] += seconds


@asynccontextmanager
async def web_rig(home: Path) -> AsyncIterator[WebRig]:
    settings = load_settings()
    async with await Store.open(ensure_home(home) / "state.db") as store:
        now = [time.time()]
        ctx = WebContext(settings, store, clock=lambda: now[0])
        runner = web.AppRunner(create_app(ctx), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            yield WebRig(ctx, f"http://127.0.0.1:{port}", now)
        finally:
            await runner.cleanup()
