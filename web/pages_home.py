"""The first page after signing in: who the person is, the accounts linked to them, how
long their history is kept (their choice over `history.keep_days`, as with
`kioku history keep`), their time zone and their reminders (forms in `web.pages_time`),
and what their model calls used and cost (`web.usage_view`)."""

from __future__ import annotations

import structlog
from aiohttp import web

from memory.access.identities import get_person, identities_of
from memory.history.retention import (
    FOREVER,
    UnknownPerson,
    effective_keep_days,
    keep_days_of,
    set_keep_days,
)
from web.context import context, person, render
from web.forms import form
from web.time_view import time_view
from web.usage_view import usage_view

log = structlog.get_logger("kioku.web")
MAX_KEEP_DAYS = 100_000
"""The most `history.keep_days` allows too."""


class BadKeepDays(ValueError):
    """A keep-days field that is not empty and not a whole number in range."""


async def home(
    request: web.Request,
    error: str | None = None,
    notice: str | None = None,
    draft: str | None = None,
    zone_draft: str | None = None,
) -> web.Response:
    who = person(request)
    ctx = context(request)
    found = await get_person(ctx.store, who)
    own = await keep_days_of(ctx.store, who)
    default = ctx.settings.history.keep_days
    return render(
        request,
        "home.html",
        status=400 if error else 200,
        display_name=found.display_name if found else None,
        identities=await identities_of(ctx.store, who),
        own_keep=own,
        default_keep=_days(default),
        kept=_days(effective_keep_days(own, default)),
        keep_draft=draft if draft is not None else ("" if own is None else str(own)),
        zone_draft=zone_draft,
        **await time_view(ctx, who),
        **await usage_view(ctx, who),
        error=error,
        notice=notice,
    )


async def keep(request: web.Request) -> web.Response:
    """POST /history/keep: `days` a whole number (0 = forever), or empty for the default."""
    who = person(request)
    sent = (await form(request)).get("days", "")
    try:
        days = parse_keep_days(sent)
        await set_keep_days(context(request).store, who, days)
    except (BadKeepDays, UnknownPerson) as exc:
        return await home(request, error=f"{exc}. Nothing was changed.", draft=sent)
    log.info("web_keep_days_set", person=who, keep_days=days)
    if days is None:
        notice = "Your history now follows the default."
    elif days == FOREVER:
        notice = "Your history is now kept forever."
    else:
        notice = f"Your direct messages are now kept {_days(days)}; older ones are deleted daily."
    return await home(request, notice=notice)


def parse_keep_days(sent: str) -> int | None:
    """The person's keep days from the form: None (empty), 0 (forever) or 1..MAX_KEEP_DAYS."""
    text = sent.strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_KEEP_DAYS:
        raise BadKeepDays(
            f"Keep days must be a whole number of days from 0 (forever) to {MAX_KEEP_DAYS:,}, "
            f"or empty to follow the default; {text[:20]!r} is not"
        )
    return int(text)


def _days(days: int | None) -> str:
    if days is None:
        return "forever"
    return "1 day" if days == 1 else f"{days:,} days"


def routes() -> list[web.RouteDef]:
    return [web.get("/", home), web.post("/history/keep", keep)]
