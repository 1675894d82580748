"""A person's notes: both files with usage bars; add, edit and remove entries; when and
from which conversation each entry was written, and the journal of changes with an undo.

Every change is the memory tool's own operation (`PersonNotes.add/replace/remove`),
so the limits, the safety checks and the refusal messages are the tool's. An entry is
named by its full text (`old_text`), so an entry changed meanwhile elsewhere is a
clear "no entry contains" refusal rather than a change to the wrong entry. An undo is
`PersonNotes.revert`: only the person's own changes, refused if an entry changed since.
"""

from __future__ import annotations

from datetime import tzinfo

import structlog
from aiohttp import web

from memory.notes.files import NotesFileError
from memory.notes.format import FILE_NAMES, ROLES, TARGETS, NotesState, Target
from memory.notes.journal import JournalEvent, Written
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import NotesResult
from memory.schedule.timezones import effective_zone, timezone_of
from web.context import context, person, render
from web.forms import form

_WEB = NoteOrigin("web")
_UNDO = NoteOrigin("revert")
CHANGES_SHOWN = 30
EVENT_ID = "[0-9]{1,18}"
log = structlog.get_logger("kioku.web")


async def show(request: web.Request) -> web.Response:
    return await _page(request)


async def change(request: web.Request) -> web.Response:
    """POST /notes/{target}/{action}: add (content), replace (old_text, content), remove."""
    target = request.match_info["target"]
    action = request.match_info["action"]
    if target not in TARGETS or action not in ("add", "replace", "remove"):
        raise web.HTTPNotFound()
    who = person(request)
    fields = await form(request)
    notes = context(request).notes(who)
    if action == "add":
        result = await notes.add(target, fields.get("content", ""), origin=_WEB)
    elif action == "replace":
        result = await notes.replace(
            target, fields.get("old_text", ""), fields.get("content", ""), origin=_WEB
        )
    else:
        result = await notes.remove(target, fields.get("old_text", ""), origin=_WEB)
    log.info(
        "web_notes_changed",
        person=who,
        target=target,
        action=action,
        outcome=result.kind,
        changed=result.changed,
    )
    return await _page(request, target, result, fields)


async def revert(request: web.Request) -> web.Response:
    """POST /notes/revert/{event}: undo one journaled change of the signed-in person."""
    who = person(request)
    event_id = int(request.match_info["event"])
    result = await context(request).notes(who).revert(event_id, origin=_UNDO)
    log.info("web_notes_reverted", person=who, change=event_id, outcome=result.kind)
    return await _page(request, None, result)


async def _page(
    request: web.Request,
    target: str | None = None,
    result: NotesResult | None = None,
    fields: dict[str, str] | None = None,
) -> web.Response:
    ctx, who = context(request), person(request)
    notes = ctx.notes(who)
    zone = effective_zone(await timezone_of(ctx.store, who), ctx.settings.schedule.default_timezone)
    files = []
    for name in TARGETS:
        try:
            state = await notes.read(name)
        except NotesFileError as exc:
            files.append({"target": name, "name": FILE_NAMES[name], "problem": str(exc)})
            continue
        files.append(_file(state, await notes.written(name, state.entries), zone))
    events = await notes.journal.events(who, limit=CHANGES_SHOWN)
    refused = result is not None and not result.ok
    return render(
        request,
        "notes.html",
        status=400 if refused else 200,
        files=files,
        changes=[_change(event, zone) for event in events],
        notice=result.headline if result and result.ok else None,
        error=result.message if refused else None,
        failed_target=target if refused else None,
        draft=(fields or {}).get("content", "") if refused else "",
        draft_old=(fields or {}).get("old_text", "") if refused else "",
    )


def _file(state: NotesState, written: dict[str, Written], zone: tzinfo) -> dict[str, object]:
    target: Target = state.target
    return {
        "target": target,
        "name": state.file_name,
        "role": ROLES[target],
        "usage": state.usage,
        "percent": min(100, state.chars * 100 // state.limit),
        "over": state.over_limit,
        "entries": [
            {
                "text": entry,
                "blocked": str(finding) if finding else None,
                "written": _written(written.get(entry), zone),
            }
            for entry, finding in zip(state.entries, state.findings, strict=True)
        ],
        "problem": None,
    }


def _written(found: Written | None, zone: tzinfo) -> dict[str, object] | None:
    if found is None:
        return None
    return {
        "when": f"{found.at.astimezone(zone):%Y-%m-%d}",
        "source": found.source,
        "session": found.session_id,
        "event": found.event_id,
    }


def _change(event: JournalEvent, zone: tzinfo) -> dict[str, object]:
    done = {"add": "added to", "remove": "removed from", "replace": "replaced in"}
    return {
        "id": event.id,
        "when": f"{event.at.astimezone(zone):%Y-%m-%d %H:%M}",
        "source": event.source,
        "session": event.session_id,
        "reverts": event.reverts,
        "rows": [
            {
                "done": done[c.action],
                "file": c.file_name,
                "before": c.before,
                "after": c.after,
            }
            for c in event.changes
        ],
    }


def routes() -> list[web.RouteDef]:
    return [
        web.get("/notes", show),
        web.post(f"/notes/revert/{{event:{EVENT_ID}}}", revert),
        web.post("/notes/{target}/{action}", change),
    ]
