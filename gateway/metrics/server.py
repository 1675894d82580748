"""`/metrics` on `metrics.listen`, owned by the daemon: served for its `async with`.

Off unless `metrics.listen` is set. With `metrics.token` set every scrape must carry
`Authorization: Bearer <token>` (a 401 otherwise); without one, the settings refuse any
address but this machine's own (`config.metrics_settings.check_metrics_listen`). The exposition
is rendered off the event loop: the figures sit in lock-guarded metric objects, and
reading the process's /proc entries for RSS and open files is file I/O.
"""

from __future__ import annotations

import asyncio
import hmac

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from config.metrics_settings import MetricsSettings
from gateway.metrics.exported import Metrics
from gateway.metrics.state import Sources, refresh

log = structlog.get_logger("kioku.metrics")
UNAUTHORIZED = "/metrics needs the header `Authorization: Bearer <metrics.token>`.\n"


class MetricsServer:
    """Serves `metrics` (with the moment's figures from `sources`) on `settings.listen`."""

    def __init__(self, settings: MetricsSettings, metrics: Metrics, sources: Sources) -> None:
        self.settings = settings
        self.metrics = metrics
        self.sources = sources
        self.port: int | None = None
        """The port bound (the one asked for, or the one picked for port 0)."""
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._scrape)
        return app

    async def start(self) -> None:
        """Serve, or log why not: a taken port must not keep the chats from running."""
        if self.settings.listen is None:
            return
        host, _, port = self.settings.listen.rpartition(":")
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host.strip("[]"), int(port))
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            log.error("metrics_unavailable", listen=self.settings.listen, error=str(exc))
            return
        self._runner = runner
        self.port = runner.addresses[0][1]
        log.info("metrics_serving", listen=self.settings.listen, port=self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> MetricsServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _scrape(self, request: web.Request) -> web.Response:
        if not self._allowed(request):
            return web.Response(
                status=401, text=UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"}
            )
        await refresh(self.metrics, self.sources)
        body = await asyncio.to_thread(generate_latest, self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    def _allowed(self, request: web.Request) -> bool:
        if self.settings.token is None:
            return True
        expected = f"Bearer {self.settings.token.get_secret_value()}".encode()
        given = request.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, expected)
