"""The forms of the Me page about time: the person's time zone (set or clear, as
`kioku people tz` and `/timezone`), and cancelling one of their reminders."""

from __future__ import annotations

import structlog
from aiohttp import web

from memory.schedule.jobs import NoSuchJob, cancel_job
from memory.schedule.timezones import NoSuchPerson, set_timezone
from memory.schedule.timing import BadSchedule
from web.context import context, person
from web.forms import form
from web.pages_home import home

log = structlog.get_logger("kioku.web")


async def timezone(request: web.Request) -> web.Response:
    """POST /timezone: `zone` an IANA name; `clear` (any value) goes back to the default."""
    who = person(request)
    fields = await form(request)
    sent = fields.get("zone", "").strip()
    clear = "clear" in fields
    if not clear and not sent:
        return await home(
            request,
            error="Type a time zone such as Asia/Tokyo or Europe/Berlin, or use "
            "“Use the default”. Nothing was changed.",
            zone_draft=sent,
        )
    try:
        await set_timezone(context(request).store, who, None if clear else sent)
    except (BadSchedule, NoSuchPerson) as exc:
        return await home(request, error=f"{exc}. Nothing was changed.", zone_draft=sent)
    log.info("web_timezone_set", person=who, cleared=clear)
    notice = "Your times follow the default zone now." if clear else f"Your time zone is {sent}."
    return await home(request, notice=notice)


async def cancel(request: web.Request) -> web.Response:
    """POST /reminders/{id}/cancel: one of the signed-in person's jobs, and only theirs."""
    who = person(request)
    raw = request.match_info["job"]
    try:
        job = await cancel_job(context(request).store, int(raw), who)
    except (ValueError, NoSuchJob):
        return await home(
            request,
            error=f"You have no reminder {raw[:20]}; the list below shows yours. "
            "Nothing was changed.",
        )
    log.info("web_job_cancelled", person=who, job=job.id)
    label = f"“{job.name}”" if job.name else f"{job.id}"
    return await home(request, notice=f"Cancelled reminder {label}.")


def routes() -> list[web.RouteDef]:
    return [
        web.post("/timezone", timezone),
        web.post(r"/reminders/{job:\d+}/cancel", cancel),
    ]
