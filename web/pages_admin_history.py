"""The owner's view of everyone's history: the newest sessions of every person and group,
each with a Delete button (the same confirmation as a person's, `web.deleting`).

Group history belongs to no one person, so this is the only place on the page where it
is deleted. The auth middleware has already refused anyone but the owner.
"""

from __future__ import annotations

from aiohttp import web

from memory.history.listing import list_sessions
from memory.history.selection import Asker, Selection
from web.context import context, render
from web.deleting import confirmed_deletion, deleted_notice
from web.pages_history import SESSION_ID

LISTED = 200
HERE = "/admin/history"


async def history(request: web.Request) -> web.Response:
    found = await list_sessions(context(request).store, limit=LISTED)
    return render(
        request,
        "admin_history.html",
        sessions=found,
        limit=LISTED,
        notice=deleted_notice(request.query),
    )


async def delete_session(request: web.Request) -> web.StreamResponse:
    """POST /admin/history/{id}/delete: any session, DM or group, as the owner."""
    return await confirmed_deletion(
        request,
        Asker.owner(),
        Selection(sessions=(int(request.match_info["id"]),)),
        back=HERE,
        done=HERE,
    )


def routes() -> list[web.RouteDef]:
    return [
        web.get(HERE, history),
        web.post(f"{HERE}/{{id:{SESSION_ID}}}/delete", delete_session),
    ]
