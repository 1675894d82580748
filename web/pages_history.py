"""A person's history: their sessions by platform and date, one session's turns, search,
and deleting their own DM sessions or messages (with a confirmation, `web.deleting`).

Only sessions the person took part in are shown: their own DMs, and group sessions
in which they spoke — the same set their searches cover. Any other session id is a
404, the same answer as an id that does not exist. A group session they took part in
shows no Delete button: group history is the owner's to delete (`/admin/history`).
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from itertools import groupby

from aiohttp import web
from markupsafe import Markup, escape

from memory.history.selection import Asker, Selection
from memory.media import media_for_message
from memory.schedule.timezones import effective_zone, timezone_of
from memory.search.ranking import Scope, When, search
from memory.store.records import Message, Session
from web.context import context, person, render
from web.deleting import confirmed_deletion, deleted_notice
from web.media_access import may_have

LISTED = 500
RESULTS = 10
SESSION_ID = "[0-9]{1,18}"
"""A session or message id in a path: ASCII digits, few enough for SQLite's 64-bit
integers (else 404)."""
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
        notice=deleted_notice(request.query),
    )


async def session(request: web.Request) -> web.Response:
    """The session's turns, each with the files that came with it: a link to download
    those the person may have (`web.pages_media`), the name alone for the others."""
    found, turns = await _visible(request)
    who = person(request)
    own = found.kind == "dm" and found.person == who
    files = await media_for_message(context(request).store, [t.id for t in turns])
    return render(
        request,
        "session.html",
        session=found,
        turns=turns,
        own=own,
        files={
            turn: [(item, may_have(item, who)) for item in kept] for turn, kept in files.items()
        },
    )


async def delete_session(request: web.Request) -> web.StreamResponse:
    """POST /sessions/{id}/delete: the confirmation, then (confirmed) the whole session."""
    found, _ = await _visible(request)
    return await confirmed_deletion(
        request,
        Asker.of_person(person(request)),
        Selection(sessions=(found.id,)),
        back=f"/sessions/{found.id}",
        done="/sessions",
    )


async def delete_message(request: web.Request) -> web.StreamResponse:
    """POST /sessions/{id}/messages/{turn}/delete: the same, for one turn of the session."""
    found, turns = await _visible(request)
    turn_id = int(request.match_info["turn"])  # SESSION_ID digits
    if turn_id not in {t.id for t in turns}:
        raise web.HTTPNotFound()
    return await confirmed_deletion(
        request,
        Asker.of_person(person(request)),
        Selection(messages=(turn_id,)),
        back=f"/sessions/{found.id}#m{turn_id}",
        done="/sessions",
    )


async def _visible(request: web.Request) -> tuple[Session, list[Message]]:
    """The session in the path and its turns, if the person took part in it (else 404)."""
    store = context(request).store
    session_id = int(request.match_info["id"])  # SESSION_ID digits
    found = await store.get_session(session_id)
    if found is None:
        raise web.HTTPNotFound()
    turns = await store.messages(session_id)
    if not _took_part(found, person(request), {t.speaker for t in turns}):
        raise web.HTTPNotFound()
    return found, turns


async def search_page(request: web.Request) -> web.Response:
    query = request.query.get("q", "").strip()
    results = []
    if query:
        ctx, who = context(request), person(request)
        zone = effective_zone(
            await timezone_of(ctx.store, who), ctx.settings.schedule.default_timezone
        )
        when = When(datetime.fromtimestamp(ctx.clock(), zone))
        began = time.perf_counter()
        results = await search(ctx.store, query, Scope.of_person(who), limit=RESULTS, when=when)
        ctx.meter.search(time.perf_counter() - began)
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
        web.post(f"/sessions/{{id:{SESSION_ID}}}/delete", delete_session),
        web.post(
            f"/sessions/{{id:{SESSION_ID}}}/messages/{{turn:{SESSION_ID}}}/delete", delete_message
        ),
        web.get("/search", search_page),
    ]
