"""What every page handler needs: the daemon's parts, the signed-in person, rendering."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp_jinja2
from aiohttp import web

from config.settings import Settings
from memory.access.people import OWNER
from memory.access.web_tokens import WebSession
from memory.notes.journal import NotesJournal
from memory.notes.person_notes import PersonNotes
from memory.skills.library import SkillsLibrary
from memory.store.database import Store
from plumbing.meter import QUIET, Meter
from web.log_buffer import RecentErrors

StatusSource = Callable[[], Awaitable[dict[str, Any]]]


@dataclass
class WebContext:
    """The daemon's parts the page reads and changes (`status` is None outside the daemon;
    `meter` hears how long its searches take)."""

    settings: Settings
    store: Store
    status: StatusSource | None = None
    errors: RecentErrors = field(default_factory=RecentErrors)
    clock: Callable[[], float] = time.time
    meter: Meter = QUIET

    def notes(self, person: str) -> PersonNotes:
        return PersonNotes(
            self.settings.home, person, self.settings.memory.notes, NotesJournal(self.store)
        )

    def skills(self) -> SkillsLibrary:
        return SkillsLibrary(self.settings.home, self.settings.skills)


CONTEXT = web.AppKey("context", WebContext)
SESSION = web.RequestKey("web_session", WebSession)


def context(request: web.Request) -> WebContext:
    return request.app[CONTEXT]


def session(request: web.Request) -> WebSession:
    """The signed-in session (the auth middleware guarantees one on every private page)."""
    found: WebSession = request[SESSION]
    return found


def person(request: web.Request) -> str:
    return session(request).person


def render(request: web.Request, template: str, status: int = 200, **values: Any) -> web.Response:
    """A page, with what every page shows: who is signed in, their CSRF token, the owner menu."""
    signed_in: WebSession | None = request.get(SESSION)
    values.setdefault("notice", None)
    values.setdefault("error", None)
    return aiohttp_jinja2.render_template(
        template,
        request,
        {
            "person": signed_in.person if signed_in else None,
            "csrf": signed_in.csrf if signed_in else "",
            "is_owner": signed_in is not None and signed_in.person == OWNER,
            "path": request.path,
            **values,
        },
        status=status,
    )


def refusal(request: web.Request, status: int, message: str) -> web.Response:
    return render(request, "refused.html", status=status, message=message)
