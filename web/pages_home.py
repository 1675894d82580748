"""The first page after signing in: who the person is and the accounts linked to them."""

from __future__ import annotations

from aiohttp import web

from memory.access.identities import identities_of
from web.context import context, person, render


async def home(request: web.Request) -> web.Response:
    who = person(request)
    store = context(request).store
    found = await store.get_person(who)
    return render(
        request,
        "home.html",
        display_name=found.display_name if found else None,
        identities=await identities_of(store, who),
    )


def routes() -> list[web.RouteDef]:
    return [web.get("/", home)]
