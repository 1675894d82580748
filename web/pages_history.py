"""A person's history: their sessions by platform and date, one session's turns, search.

Only sessions the person took part in are shown: their own DMs, and group sessions
in which they spoke — the same set their searches cover. Any other session id is a
404, the same answer as an id that does not exist.
"""

from __future__ import annotations

import re
from itertools import groupby

from aiohttp import web
from markupsafe import Markup, escape

from memory.search.ranking import Scope, search
from memory.store.records import Session
from web.context import context, person, render

LISTED = 500
RESULTS = 10
SESSION_ID = "[0-9]{1,18}"
"""A session id in a path: ASCII digits, few enough for SQLite's 64-bit integers (else 404)."""
_MARKED = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


async def sessions(request: web.Request) -> web.Response:
    """Newest first, grouped by day; `?platform=` keeps one platform."""
    found = await context(request).store.recent_sessions(person(request), limit=LISTED)
    platforms = sorted({s.platform for s in found})
    wanted = request.query.get("platform", "")
    shown = [s for s in found if s.platform == wanted] if wanted in platforms else found
    days = [
        (day, list(group))
        for day, group in groupby(shown, key=lambda s: s.started_at.astimezone().date())
    ]
    return render(
        request,
        "sessions.html",
        days=days,
        platforms=platforms,
        platform=wanted if wanted in platforms else "",
    )


async def session(request: web.Request) -> web.Response:
    store = context(request).store
    session_id = int(request.match_info["id"])  # SESSION_ID digits
    found = await store.get_session(session_id)
    if found is None:
        raise web.HTTPNotFound()
    turns = await store.messages(session_id)
    who = person(request)
    if not _took_part(found, who, {t.speaker for t in turns}):
        raise web.HTTPNotFound()
    return render(request, "session.html", session=found, turns=turns)


async def search_page(request: web.Request) -> web.Response:
    query = request.query.get("q", "").strip()
    results = []
    if query:
        results = await search(
            context(request).store, query, Scope.of_person(person(request)), limit=RESULTS
        )
    return render(request, "search.html", query=query, results=results)


def highlighted(snippet: str) -> Markup:
    """A search snippet as HTML: its text escaped, the engine's `**word**` marks as <mark>."""
    parts: list[str] = []
    last = 0
    for match in _MARKED.finditer(snippet):
        parts += [str(escape(snippet[last : match.start()])), "<mark>"]
        parts += [str(escape(match.group(1))), "</mark>"]
        last = match.end()
    parts.append(str(escape(snippet[last:])))
    return Markup("".join(parts))


def _took_part(found: Session, who: str, speakers: set[str | None]) -> bool:
    return found.person == who if found.kind == "dm" else who in speakers


def routes() -> list[web.RouteDef]:
    return [
        web.get("/sessions", sessions),
        web.get(f"/sessions/{{id:{SESSION_ID}}}", session),
        web.get("/search", search_page),
    ]
