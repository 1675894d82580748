"""GET /media/<id>: a kept file, as a download, to whom it belongs (`web.media_access`).

Anyone else, and an id that does not exist, gets the same 404: the page never says
whose a file is, or whether it exists.
"""

from __future__ import annotations

import asyncio

import structlog
from aiohttp import web

from memory.media import OutsideHome, media_item, media_path
from web.context import context, person
from web.media_access import download_headers, may_have
from web.pages_history import SESSION_ID

log = structlog.get_logger("kioku.web")


async def download(request: web.Request) -> web.Response:
    ctx = context(request)
    item = await media_item(ctx.store, int(request.match_info["id"]))  # SESSION_ID digits
    if item is None or not may_have(item, person(request)):
        raise web.HTTPNotFound()
    try:
        data = await asyncio.to_thread(lambda: media_path(ctx.settings.home, item).read_bytes())
    except (OSError, OutsideHome) as exc:
        log.warning("web_media_unreadable", media=item.id, error=str(exc))
        raise web.HTTPNotFound() from None
    return web.Response(body=data, headers=download_headers(item))


def routes() -> list[web.RouteDef]:
    return [web.get(f"/media/{{id:{SESSION_ID}}}", download)]
