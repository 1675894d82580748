"""Deleting history on the page, in two steps: a confirmation page, then the erase.

Every Delete button posts to an address that first answers with the confirmation page
(what `survey` says will go); only the *Yes, delete* button on it, which posts the same
address again with `confirm=yes`, erases. Its form also carries `plan`, the plan's
fingerprint: when the history changed in between (a new turn in an open session), the
page asks again with the new plan rather than erasing something the person was not
shown. Both steps go through `memory.history.erase`, like the CLI and the chat commands;
the rights (a person deletes their own DMs, the owner anything) are checked there.
"""

from __future__ import annotations

from urllib.parse import urlencode

import structlog
from aiohttp import web
from multidict import MultiMapping

from memory.history.erase import UnknownHistory, erase, survey
from memory.history.plan import Plan, counted
from memory.history.selection import Asker, NotAllowed, Selection
from web.context import context, person, refusal, render
from web.forms import form

log = structlog.get_logger("kioku.web")
CONFIRM = "yes"
SHOWN_LINES = 50
CHANGED = (
    "This history changed since the confirmation page was shown, so nothing was deleted yet. "
    "Here is what would go now."
)


async def confirmed_deletion(
    request: web.Request, asker: Asker, selection: Selection, *, back: str, done: str
) -> web.StreamResponse:
    """The confirmation page for `selection`, or — when it is confirmed and unchanged —
    the erase and a 303 to `done` saying what went. `back` is where *Cancel* leads."""
    store = context(request).store
    try:
        plan = await survey(store, asker, selection)
    except NotAllowed as exc:
        log.warning("web_history_delete_refused", person=person(request), path=request.path)
        return refusal(request, 403, f"Not deleted: {exc}. Nothing was changed.")
    except UnknownHistory:
        raise web.HTTPNotFound() from None
    fields = await form(request)
    confirmed = fields.get("confirm") == CONFIRM
    if not confirmed or fields.get("plan") != fingerprint(plan):
        return render(
            request,
            "history_confirm.html",
            lines=plan.describe(limit=SHOWN_LINES),
            totals=plan.totals(),
            plan=fingerprint(plan),
            action=request.path,
            back=back,
            notice=CHANGED if confirmed else None,
        )
    erased = await erase(store, plan)
    log.info(
        "web_history_deleted",
        person=person(request),
        by="owner" if asker.is_owner else "person",
        sessions=erased.sessions,
        turns=erased.turns,
        files=erased.files,
        ended=len(erased.ended),
        wal_truncated=erased.wal_truncated,
    )
    counts = {"deleted_sessions": erased.sessions, "deleted_turns": erased.turns}
    if erased.ended:
        counts["ended"] = len(erased.ended)
    if not erased.wal_truncated:
        counts["wal"] = 1
    raise web.HTTPSeeOther(f"{done}?{urlencode(counts)}")


def fingerprint(plan: Plan) -> str:
    """What the plan takes, as ids: equal only when the same turns would go."""
    parts = [f"s{s.id}-{s.last_turn}" for s in plan.sessions]
    parts += [f"t{t.id}" for t in plan.turns]
    parts += [f"r{session_id}" for session_id in plan.retitled]
    return ".".join(parts)


def deleted_notice(query: MultiMapping[str]) -> str | None:
    """The notice after a deletion's redirect, from the counts in its query (numbers only,
    so a crafted link cannot put words on the page)."""
    try:
        sessions = int(query["deleted_sessions"])
        turns = int(query["deleted_turns"])
        ended = int(query.get("ended", "0"))
    except (KeyError, ValueError):
        return None
    if min(sessions, turns, ended) < 0:
        return None
    notice = f"Deleted {counted(sessions, turns)}; "
    if "wal" in query:
        notice += (
            "state.db was busy, so their last copies leave its write-ahead log at kioku's "
            "next checkpoint."
        )
    else:
        notice += "they are gone from kioku's database."
    if ended > 0:
        notice += (
            " The conversation that lost messages was ended: kioku starts a fresh one "
            "with the next message."
        )
    return notice
