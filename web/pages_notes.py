"""A person's notes: both files with usage bars; add, edit and remove entries.

Every change is the memory tool's own operation (`PersonNotes.add/replace/remove`),
so the limits, the safety checks and the refusal messages are the tool's. An entry is
named by its full text (`old_text`), so an entry changed meanwhile elsewhere is a
clear "no entry contains" refusal rather than a change to the wrong entry.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from memory.notes.files import NotesFileError
from memory.notes.format import FILE_NAMES, ROLES, TARGETS, NotesState, Target
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import NotesResult
from web.context import context, person, render
from web.forms import form

_WEB = NoteOrigin("web")
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


async def _page(
    request: web.Request,
    target: str | None = None,
    result: NotesResult | None = None,
    fields: dict[str, str] | None = None,
) -> web.Response:
    notes = context(request).notes(person(request))
    files = []
    for name in TARGETS:
        try:
            files.append(_file(await notes.read(name)))
        except NotesFileError as exc:
            files.append({"target": name, "name": FILE_NAMES[name], "problem": str(exc)})
    refused = result is not None and not result.ok
    return render(
        request,
        "notes.html",
        status=400 if refused else 200,
        files=files,
        notice=result.headline if result and result.ok else None,
        error=result.message if refused else None,
        failed_target=target if refused else None,
        draft=(fields or {}).get("content", "") if refused else "",
        draft_old=(fields or {}).get("old_text", "") if refused else "",
    )


def _file(state: NotesState) -> dict[str, object]:
    target: Target = state.target
    return {
        "target": target,
        "name": state.file_name,
        "role": ROLES[target],
        "usage": state.usage,
        "percent": min(100, state.chars * 100 // state.limit),
        "over": state.over_limit,
        "entries": [
            {"text": entry, "blocked": str(finding) if finding else None}
            for entry, finding in zip(state.entries, state.findings, strict=True)
        ],
        "problem": None,
    }


def routes() -> list[web.RouteDef]:
    return [web.get("/notes", show), web.post("/notes/{target}/{action}", change)]
