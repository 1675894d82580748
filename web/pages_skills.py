"""A person's skills: read, edit, delete their own; read the shared ones; see proposals.

Edits and deletions go through `SkillsLibrary.manage` and `.delete`, the code the
`skill_manage` tool and `kioku skills` use, so the same checks apply. Only the
person's own place is ever written: a shared skill is shown read-only.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from memory.skills.format import SkillError
from memory.skills.manage import SkillRequest
from web.context import context, person, render
from web.forms import form

log = structlog.get_logger("kioku.web")


async def listing(
    request: web.Request, error: str | None = None, notice: str | None = None
) -> web.Response:
    who = person(request)
    library = context(request).skills()
    found = await library.listing(who)
    proposals, _ = await library.pending()
    return render(
        request,
        "skills.html",
        status=400 if error else 200,
        skills=found.skills,
        problems=[str(p) for p in found.problems if p.scope == "personal"],
        proposals=[p for p in proposals if p.person == who],
        error=error,
        notice=notice,
    )


async def show(request: web.Request) -> web.Response:
    return await _skill(request)


async def edit(request: web.Request) -> web.Response:
    who = person(request)
    name = request.match_info["name"]
    content = (await form(request)).get("content", "")
    try:
        request_ = SkillRequest.from_mapping({"action": "edit", "name": name, "content": content})
        result = await context(request).skills().manage(who, request_, by=f"{who} (web)")
    except SkillError as exc:
        log.info("web_skill_edit_refused", person=who, skill=name)
        return await _skill(request, error=str(exc), draft=content)
    log.info("web_skill_edited", person=who, skill=name)
    return await _skill(request, notice=result.message)


async def delete(request: web.Request) -> web.Response:
    who = person(request)
    name = request.match_info["name"]
    try:
        await context(request).skills().delete(who, name)
    except SkillError as exc:
        return await listing(request, error=str(exc))
    log.info("web_skill_deleted", person=who, skill=name)
    return await listing(request, notice=f"Deleted {name} from your skills.")


async def _skill(
    request: web.Request,
    error: str | None = None,
    notice: str | None = None,
    draft: str | None = None,
) -> web.Response:
    who = person(request)
    name = request.match_info["name"]
    library = context(request).skills()
    try:
        view = await library.view(who, name, count_use=False)
    except SkillError:
        raise web.HTTPNotFound() from None
    entry = await library.entry(view.skill)
    return render(
        request,
        "skill.html",
        status=400 if error else 200,
        skill=view.skill,
        usage=entry.usage,
        content=draft if draft is not None else view.content,
        files=view.files,
        own=view.skill.scope == "personal",
        error=error,
        notice=notice,
    )


def routes() -> list[web.RouteDef]:
    return [
        web.get("/skills", listing),
        web.get("/skills/{name}", show),
        web.post("/skills/{name}/edit", edit),
        web.post("/skills/{name}/delete", delete),
    ]
