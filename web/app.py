"""The web page as an aiohttp application, and the server the daemon runs it in.

`create_app` needs only a `WebContext` (settings, an open store, optionally the
daemon's status), so tests run the same application on port 0 without a daemon.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from config.settings import Settings
from memory.spending import usd
from memory.store.database import Store
from plumbing.meter import QUIET, Meter
from web import (
    auth,
    pages_admin,
    pages_admin_history,
    pages_history,
    pages_home,
    pages_media,
    pages_notes,
    pages_skills,
    pages_time,
)
from web.context import CONTEXT, StatusSource, WebContext
from web.forms import form_limit
from web.links import base_url, split_listen

log = structlog.get_logger("kioku.web")
TEMPLATES = Path(__file__).with_name("templates")
MAX_REQUEST_LINE = 8 * 1024
"""The method, path and query: a search query or a sign-in link is far shorter."""
MAX_HEADER_FIELD = 8 * 1024
"""One header line (a cookie holds one session id)."""
MAX_HEADERS = 100
"""A browser sends about twenty; proxies add a few."""


class _ServerLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """The logger of aiohttp's request handler. A request its HTTP parser refused (over a
    limit above, a NUL byte, a bad percent sign) is the client's mistake: aiohttp answers
    it with a plain 400 and would log a traceback at ERROR; here it is one INFO line.
    Anything else (a bug in a page) is logged by aiohttp as before."""

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            reason = (exc_info.message.splitlines() or [""])[0][:100]  # not the bytes it quotes
            log.info("web_request_malformed", status=exc_info.code, reason=reason)
            return
        super().exception(msg, *args, exc_info=exc_info, **kwargs)


def create_app(ctx: WebContext) -> web.Application:
    app = web.Application(
        middlewares=[auth.guard],
        client_max_size=form_limit(ctx.settings),
        handler_args={
            "max_line_size": MAX_REQUEST_LINE,
            "max_field_size": MAX_HEADER_FIELD,
            "max_headers": MAX_HEADERS,
            "logger": _ServerLog(logging.getLogger("aiohttp.server")),
        },
    )
    app[CONTEXT] = ctx
    env = aiohttp_jinja2.setup(
        app,
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["highlighted"] = pages_history.highlighted
    env.filters["local"] = local
    env.filters["epoch"] = lambda seconds: local(datetime.fromtimestamp(seconds, UTC))
    env.filters["usd"] = usd
    env.filters["megabytes"] = lambda size: f"{size / 1_048_576:,.1f} MB"
    env.filters["kilobytes"] = lambda size: (
        f"{size / 1024:,.0f} KB" if size >= 1024 else f"{size} B"
    )
    for module in (
        auth,
        pages_home,
        pages_time,
        pages_notes,
        pages_history,
        pages_media,
        pages_skills,
        pages_admin,
        pages_admin_history,
    ):
        app.add_routes(module.routes())
    return app


def local(when: datetime) -> str:
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


class WebServer:
    """The page on `web.listen`, owned by the daemon: served for its `async with`."""

    def __init__(
        self, settings: Settings, store: Store, status: StatusSource, meter: Meter = QUIET
    ) -> None:
        self.ctx = WebContext(settings, store, status, meter=meter)
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Serve, or log why not: a taken port must not keep the chats from running."""
        web_settings = self.ctx.settings.web
        if not web_settings.enabled:
            return
        runner = web.AppRunner(create_app(self.ctx), access_log=None)
        await runner.setup()
        try:
            host, port = split_listen(web_settings.listen)
            await web.TCPSite(runner, host, port).start()
        except (OSError, ValueError) as exc:
            await runner.cleanup()
            log.error("web_unavailable", listen=web_settings.listen, error=str(exc))
            return
        self._runner = runner
        self.ctx.errors.install()
        log.info("web_serving", listen=web_settings.listen, url=base_url(web_settings))

    async def stop(self) -> None:
        if self._runner is not None:
            self.ctx.errors.uninstall()
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> WebServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
